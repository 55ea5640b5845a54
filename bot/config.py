"""The one settings object, read from the environment in one place and validated at start-up.

A missing or malformed value stops the command with one line naming the
variable (:class:`ConfigError`), never a traceback. Secrets are ``SecretStr``
so that they never appear in a repr, a log line or an error message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from bot.errors import ArgoWhyError

_DESCRIPTIONS = {
    "SLACK_BOT_TOKEN": "the bot token (xoxb-...) of the Slack app",
    "SLACK_SIGNING_SECRET": "the Slack app's signing secret (HTTP mode)",
    "SLACK_CHANNEL": "the channel ID (C...) where webhook alerts are posted",
    "WEBHOOK_TOKEN": "the shared secret Argo CD's notifications webhook sends as Authorization: Bearer ...",
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

    slack_bot_token: SecretStr | None = Field(None, validation_alias="SLACK_BOT_TOKEN")
    slack_signing_secret: SecretStr | None = Field(None, validation_alias="SLACK_SIGNING_SECRET")
    slack_app_token: SecretStr | None = Field(None, validation_alias="SLACK_APP_TOKEN")
    slack_channel: str | None = Field(None, validation_alias="SLACK_CHANNEL")
    slack_api_url: str | None = Field(None, validation_alias="SLACK_API_URL")
    webhook_token: SecretStr | None = Field(None, validation_alias="WEBHOOK_TOKEN")
    redis_url: str | None = Field(None, validation_alias="REDIS_URL")
    git_provider: Literal["github", "gitlab"] | None = Field(None, validation_alias="GIT_PROVIDER")
    git_token: SecretStr | None = Field(None, validation_alias="GIT_TOKEN")
    git_api_url: str | None = Field(None, validation_alias="GIT_API_URL")
    approvers: Annotated[list[str], NoDecode] = Field(default_factory=list, validation_alias="APPROVERS")
    approvals_required: Literal[1, 2] = Field(1, validation_alias="APPROVALS_REQUIRED")
    port: int = Field(8080, ge=1, le=65535, validation_alias="PORT")
    workers: int = Field(4, ge=1, le=64, validation_alias="WORKERS")
    """Concurrent analyses per replica."""
    analysis_attempts: int = Field(3, ge=1, le=10, validation_alias="ANALYSIS_ATTEMPTS")
    slack_channel_interval_s: float = Field(1.0, ge=0, le=60, validation_alias="SLACK_CHANNEL_INTERVAL")
    """Seconds between two messages to one channel (Slack allows about one per second per channel)."""
    digest_threshold: int = Field(10, ge=1, validation_alias="DIGEST_THRESHOLD")
    digest_window_s: int = Field(60, ge=5, validation_alias="DIGEST_WINDOW_SECONDS")

    @field_validator("slack_channel")
    @classmethod
    def _channel(cls, v: str | None) -> str | None:
        if v and v[:1] not in ("C", "G", "D"):
            raise ValueError("must be a channel ID such as C0123456789, not a name")
        return v or None

    @field_validator("approvers", mode="before")
    @classmethod
    def _approvers(cls, v: object) -> object:
        if isinstance(v, str):
            ids = [p.strip() for p in v.replace(" ", ",").split(",") if p.strip()]
            bad = [i for i in ids if i[:1] not in ("U", "W", "S")]
            if bad:
                raise ValueError(f"expected Slack user (U...) or user-group (S...) IDs, got {', '.join(bad)}")
            return ids
        return v

    @field_validator("argocd_url", "slack_api_url", "git_api_url")
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
