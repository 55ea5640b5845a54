"""The one settings object, read from the environment in one place and validated at start-up.

A missing or malformed value stops the command with one line naming the
variable (:class:`ConfigError`), never a traceback. Secrets are ``SecretStr``
so that they never appear in a repr, a log line or an error message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from bot.errors import ArgoWhyError

_DESCRIPTIONS = {
    "ARGOCD_URL": "the Argo CD API server URL, e.g. https://argocd.example.com",
    "ARGOCD_TOKEN": "a read-only Argo CD API token (argocd account generate-token --account argo-why)",
}


class ConfigError(ArgoWhyError):
    """A configuration variable is missing or malformed."""

    exit_code = 2


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, case_sensitive=True)

    argocd_url: str | None = Field(None, validation_alias="ARGOCD_URL")
    argocd_token: SecretStr | None = Field(None, validation_alias="ARGOCD_TOKEN")
    argocd_ca_file: Path | None = Field(None, validation_alias="ARGOCD_CA_FILE")
    argocd_insecure: bool = Field(False, validation_alias="ARGOCD_INSECURE")
    argocd_timeout: float = Field(15.0, gt=0, validation_alias="ARGOCD_TIMEOUT")
    argocd_retries: int = Field(3, ge=0, le=10, validation_alias="ARGOCD_RETRIES")
    argocd_app_namespace: str | None = Field(None, validation_alias="ARGOCD_APP_NAMESPACE")
    kubeconfig: str | None = Field(None, validation_alias="KUBECONFIG")
    cluster_contexts: Annotated[dict[str, str], NoDecode] = Field(
        default_factory=dict, validation_alias="ARGOCD_CLUSTER_CONTEXTS"
    )
    """Destination cluster (server URL or name) -> kube context, ``server=context,name=context``."""

    @field_validator("argocd_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is None or v == "":
            return None
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v.rstrip("/")

    @field_validator("cluster_contexts", mode="before")
    @classmethod
    def _contexts(cls, v: object) -> object:
        if isinstance(v, str):
            out: dict[str, str] = {}
            for part in filter(None, (p.strip() for p in v.split(","))):
                cluster, sep, context = part.rpartition("=")
                if not sep or not cluster:
                    raise ValueError(f"expected cluster=context pairs separated by commas, got {part!r}")
                out[cluster] = context
            return out
        return v

    def require(self, *names: str) -> None:
        """Stop with one line naming the first of ``names`` that is not set."""
        for name in names:
            field = next(f for f, info in type(self).model_fields.items() if info.validation_alias == name)
            if getattr(self, field) in (None, ""):
                hint = _DESCRIPTIONS.get(name, "")
                raise ConfigError(f"{name} is not set" + (f": {hint}" if hint else ""))


def load_settings() -> Settings:
    """Read the environment; a malformed value raises :class:`ConfigError` naming the variable."""
    try:
        return Settings()
    except ValidationError as e:
        err = e.errors()[0]
        loc = err.get("loc") or ("?",)
        raise ConfigError(f"{loc[0]}: {err.get('msg', 'invalid value')}") from None
    except SettingsError as e:
        raise ConfigError(str(e)) from None
