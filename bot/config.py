"""The one settings object, read from the environment in one place and validated at start-up.

:class:`Settings` groups the variables by the part of the bot they configure (``argocd``, ``slack``, ``redis``, ``git``,
``runtime``); each group is read from the same flat environment variables that the README lists ("The Slack bot:
`argo-why serve`"; the names are the contract, the grouping is ours). The composition root hands each client the plain
values of its group, so a client never sees the whole settings object.

A missing or malformed value stops the command with one line naming the variable and what it takes, in the words of
:mod:`bot.wording.cli` (bounds in the variable's unit, never pydantic's own message)
(:class:`ConfigError`), never a traceback; every such value is reported at once, one line each, so that one
run shows all there is to fix. Secrets are ``SecretStr`` so that they never appear in a
repr, a log line or an error message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from bot.errors import ArgoWhyError
from bot.routing import RouteError, parse_approver_routes, parse_channel_routes
from bot.wording import cli as wording

_DESCRIPTIONS = {
    "SLACK_BOT_TOKEN": "the bot token (xoxb-...) of the Slack app",
    "SLACK_SIGNING_SECRET": "the Slack app's signing secret (HTTP mode)",
    "SLACK_CHANNEL": "the channel ID (C...) where webhook alerts are posted",
    "WEBHOOK_TOKEN": "the shared secret Argo CD's notifications webhook sends as Authorization: Bearer ...",
    "ARGOCD_URL": "the Argo CD API server URL, e.g. https://argocd.example.com",
    "ARGOCD_TOKEN": "a read-only Argo CD API token (argocd account generate-token --account argo-why)",
    "GIT_TOKEN": "a token that may push branches and open pull requests (GitHub) or merge requests (GitLab)",
    "GIT_API_URL": "the Git host's API base URL, e.g. https://gitlab.example.com/api/v4",
}

T = TypeVar("T")


class ConfigError(ArgoWhyError):
    """A configuration variable is missing or malformed (or several: one line each, see :meth:`of`)."""

    exit_code = 2

    @classmethod
    def of(cls, problems: list[str]) -> ConfigError:
        """One error for every problem found: the line itself when there is one, else a count and a line each."""
        if len(problems) == 1:
            return cls(problems[0])
        return cls("\n".join([wording.SETTINGS_PROBLEMS.format(count=len(problems)), *(f"  {p}" for p in problems)]))


def _unset(name: str) -> str:
    hint = _DESCRIPTIONS.get(name, "")
    return f"{name} is not set" + (f": {hint}" if hint else "")


def required(value: T | None, name: str) -> T:
    """``value``, or :class:`ConfigError` naming the variable ``name`` (with a hint) when it is not set."""
    if value is None or value == "":
        raise ConfigError(_unset(name))
    return value


def _url(v: str | None) -> str | None:
    if v is None or v == "":
        return None
    if not v.startswith(("http://", "https://")):
        raise ValueError(wording.SETTING_URL)
    return v.rstrip("/")


class _Group(BaseSettings):
    # Field names work too (populate_by_name), so tests and the demo build groups without the environment.
    # inf and nan are no number of seconds, workers or ports: refused like any other malformed number
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True, case_sensitive=True, allow_inf_nan=False)


class ArgoCDSettings(_Group):
    """Argo CD (read-only) and the clusters of its destinations."""

    url: str | None = Field(None, validation_alias="ARGOCD_URL")
    public_url: str | None = Field(None, validation_alias="ARGOCD_PUBLIC_URL")
    """Argo CD as people's browsers reach it, for the links in Slack (default: ``ARGOCD_URL``)."""
    token: SecretStr | None = Field(None, validation_alias="ARGOCD_TOKEN")
    ca_file: Path | None = Field(None, validation_alias="ARGOCD_CA_FILE")
    insecure: bool = Field(False, validation_alias="ARGOCD_INSECURE")
    timeout: float = Field(15.0, gt=0, validation_alias="ARGOCD_TIMEOUT")
    retries: int = Field(3, ge=0, le=10, validation_alias="ARGOCD_RETRIES")
    app_namespace: str | None = Field(None, validation_alias="ARGOCD_APP_NAMESPACE")
    kubeconfig: str | None = Field(None, validation_alias="KUBECONFIG")
    cluster_contexts: Annotated[dict[str, str], NoDecode] = Field(
        default_factory=dict, validation_alias="ARGOCD_CLUSTER_CONTEXTS"
    )
    """Destination cluster (server URL or name) -> kube context, ``server=context,name=context``."""

    @field_validator("url", "public_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        return _url(v)

    @property
    def link_url(self) -> str | None:
        """The base of every Argo CD link the bot shows: the public URL, else the API server's."""
        return self.public_url or self.url

    def for_people(self, text: str) -> str:
        """``text`` (an error message) with the internal ``ARGOCD_URL`` replaced by the public one, when set."""
        return text.replace(self.url, self.public_url) if self.url and self.public_url else text

    @field_validator("cluster_contexts", mode="before")
    @classmethod
    def _contexts(cls, v: object) -> object:
        if isinstance(v, str):
            out: dict[str, str] = {}
            for part in filter(None, (p.strip() for p in v.split(","))):
                cluster, sep, context = part.rpartition("=")
                if not sep or not cluster:
                    raise ValueError(wording.SETTING_CLUSTER_CONTEXTS.format(part=part))
                out[cluster] = context
            return out
        return v


class SlackSettings(_Group):
    """The Slack app: credentials, the alert channel, the Web API and its pace."""

    bot_token: SecretStr | None = Field(None, validation_alias="SLACK_BOT_TOKEN")
    signing_secret: SecretStr | None = Field(None, validation_alias="SLACK_SIGNING_SECRET")
    app_token: SecretStr | None = Field(None, validation_alias="SLACK_APP_TOKEN")
    channel: str | None = Field(None, validation_alias="SLACK_CHANNEL")
    api_url: str | None = Field(None, validation_alias="SLACK_API_URL")
    channel_interval_s: float = Field(1.0, ge=0, le=60, validation_alias="SLACK_CHANNEL_INTERVAL")
    """Seconds between two messages to one channel (Slack allows about one per second per channel)."""
    channel_routes: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict, validation_alias="CHANNEL_ROUTES")
    """AppProject glob -> channel (ID or ``#name``), first match wins (format: :mod:`bot.routing`)."""

    @field_validator("channel_routes", mode="before")
    @classmethod
    def _routes(cls, v: object) -> object:
        try:
            return parse_channel_routes(v)
        except RouteError as e:
            raise ValueError(str(e)) from None

    @field_validator("api_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        return _url(v)

    @field_validator("channel")
    @classmethod
    def _channel(cls, v: str | None) -> str | None:
        if v and v[:1] not in ("C", "G", "D"):
            raise ValueError(wording.SETTING_CHANNEL_ID)
        return v or None

    @property
    def socket_mode(self) -> bool:
        return self.app_token is not None


class RedisSettings(_Group):
    """Shared state; unset = the in-memory store (one replica)."""

    url: str | None = Field(None, validation_alias="REDIS_URL")

    @field_validator("url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        # redis-py's from_url takes these three; anything else would only fail at the first connection
        if v and not v.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(wording.SETTING_REDIS_URL)
        return v or None


class GitSettings(_Group):
    """Pull requests: the Git host, its token, and who may approve a fix in Slack."""

    provider: Literal["github", "gitlab"] | None = Field(None, validation_alias="GIT_PROVIDER")
    token: SecretStr | None = Field(None, validation_alias="GIT_TOKEN")
    api_url: str | None = Field(None, validation_alias="GIT_API_URL")
    approvers: Annotated[list[str], NoDecode] = Field(default_factory=list, validation_alias="APPROVERS")
    approvals_required: Literal[1, 2] = Field(1, validation_alias="APPROVALS_REQUIRED")
    approver_routes: Annotated[dict[str, list[str]], NoDecode] = Field(
        default_factory=dict, validation_alias="APPROVER_ROUTES"
    )
    """AppProject glob -> user and user-group IDs who may approve its apps' fixes; unmatched projects: ``APPROVERS``."""
    pr_poll_s: float = Field(60.0, ge=1, le=3600, validation_alias="PR_POLL_SECONDS")
    """How often the pull requests argo-why opened are looked at (merged, closed)."""
    argocd_cm_definition: str | None = Field(None, validation_alias="ARGOCD_CM_DEFINITION")
    """Browser URL of the file holding argocd-cm (a ConfigMap manifest or argo-helm values), for system-level
    rules; unset: found through the Application that manages the Argo CD namespace."""

    @field_validator("argocd_cm_definition")
    @classmethod
    def _check_cm_url(cls, v: str | None) -> str | None:
        return _url(v)

    @field_validator("api_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        return _url(v)

    @field_validator("provider", mode="before")
    @classmethod
    def _provider(cls, v: object) -> object:
        return (v.strip().lower() or None) if isinstance(v, str) else v

    @field_validator("approvals_required", mode="before")
    @classmethod
    def _approvals(cls, v: object) -> object:
        # The environment gives strings; Literal[1, 2] only accepts the ints.
        if isinstance(v, str):
            v = v.strip()
            if v not in ("1", "2"):
                raise ValueError(wording.SETTING_APPROVALS)
            return int(v)
        return v

    @field_validator("approver_routes", mode="before")
    @classmethod
    def _approver_routes(cls, v: object) -> object:
        try:
            return parse_approver_routes(v)
        except RouteError as e:
            raise ValueError(str(e)) from None

    @field_validator("approvers", mode="before")
    @classmethod
    def _approvers(cls, v: object) -> object:
        if isinstance(v, str):
            ids = [p.strip() for p in v.replace(" ", ",").split(",") if p.strip()]
            bad = [i for i in ids if i[:1] not in ("U", "W", "S")]
            if bad:
                raise ValueError(wording.SETTING_APPROVERS.format(bad=", ".join(bad)))
            return ids
        return v


class RuntimeSettings(_Group):
    """This replica: HTTP port, webhook secret, workers, retries and the digest."""

    port: int = Field(8080, ge=1, le=65535, validation_alias="PORT")
    metrics_port: int | None = Field(None, ge=1, le=65535, validation_alias="METRICS_PORT")
    """Set: ``GET /metrics`` is served on this port only (so that it can stay private); unset: on ``PORT``."""
    webhook_token: SecretStr | None = Field(None, validation_alias="WEBHOOK_TOKEN")
    workers: int = Field(4, ge=1, le=64, validation_alias="WORKERS")
    """Concurrent analyses per replica."""
    analysis_attempts: int = Field(3, ge=1, le=10, validation_alias="ANALYSIS_ATTEMPTS")
    digest_threshold: int = Field(10, ge=1, validation_alias="DIGEST_THRESHOLD")
    digest_window_s: int = Field(60, ge=5, validation_alias="DIGEST_WINDOW_SECONDS")
    shutdown_grace_s: float = Field(20.0, ge=0, le=600, validation_alias="SHUTDOWN_GRACE_SECONDS")
    """On SIGTERM, how long the jobs in hand may take to finish before they are handed back to other replicas."""
    sweep_s: float = Field(300.0, ge=0, validation_alias="SWEEP_SECONDS")
    """How often Argo CD is swept for apps that drift without having sent a webhook (0: never)."""
    dead_letter_retry_s: float = Field(60.0, ge=0, validation_alias="DEAD_LETTER_RETRY_SECONDS")
    """How often the analyses given up while Argo CD was unavailable are tried again, if it answers (0: never)."""
    remind_after_h: float = Field(24.0, ge=0, validation_alias="REMIND_AFTER_HOURS")
    """A thread still drifting this long gets a reminder, and again every as long (0: no reminders)."""
    daily_summary_at: str | None = Field("09:00", validation_alias="DAILY_SUMMARY_AT")
    """``HH:MM`` (UTC) of the daily summary of the apps drifting longest; empty or ``off``: none."""
    weekly_report_at: str | None = Field("mon 09:00", validation_alias="WEEKLY_REPORT_AT")
    """``DAY HH:MM`` (UTC) of the weekly report (chart of OutOfSync hours by cause); empty or ``off``: none."""
    fleet_min_apps: int = Field(3, ge=2, le=10_000, validation_alias="FLEET_MIN_APPS")
    """A finding (same kind, field and writer) in at least this many apps is fleet-wide."""

    @field_validator("daily_summary_at", mode="before")
    @classmethod
    def _at(cls, v: object) -> object:
        if v is None or (isinstance(v, str) and v.strip().lower() in ("", "off", "none")):
            return None
        hour, sep, minute = str(v).strip().partition(":")
        if not (sep and hour.isdigit() and minute.isdigit() and int(hour) < 24 and int(minute) < 60):
            raise ValueError(wording.SETTING_DAILY_AT)
        return f"{int(hour):02d}:{int(minute):02d}"

    @field_validator("weekly_report_at", mode="before")
    @classmethod
    def _weekly(cls, v: object) -> object:
        if v is None or (isinstance(v, str) and v.strip().lower() in ("", "off", "none")):
            return None
        day, _, at = str(v).strip().lower().partition(" ")
        try:
            hhmm = cls._at(at)
        except ValueError:
            hhmm = None
        # a day needs a time: "mon" or "mon off" would otherwise read as "mon None" and stop the scheduler
        if day not in ("mon", "tue", "wed", "thu", "fri", "sat", "sun") or hhmm is None:
            raise ValueError(wording.SETTING_WEEKLY_AT)
        return f"{day} {hhmm}"

    @model_validator(mode="after")
    def _ports_differ(self) -> RuntimeSettings:
        if self.metrics_port is not None and self.metrics_port == self.port:
            raise ValueError(wording.SETTING_PORTS_DIFFER)
        return self


class ViewSettings(_Group):
    """The drift page the bot serves at ``/view/<token>`` (signed, expiring links): off without ``VIEW_LINK_KEY``."""

    link_key: SecretStr | None = Field(None, validation_alias="VIEW_LINK_KEY")
    """The HMAC key that signs the links (at least 32 characters); unset: no page, no "Full diff" link."""
    link_ttl_s: int = Field(86400, ge=60, le=30 * 86400, validation_alias="VIEW_LINK_TTL")
    """How long a link works: seconds, or a number with ``s``, ``m``, ``h`` or ``d`` (default 24 h, at most 30 d)."""
    base_url: str | None = Field(None, validation_alias="VIEW_BASE_URL")
    """The bot as people's browsers reach it (the Ingress of ``/view/``), the base of every link."""

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        return _url(v)

    @field_validator("link_key")
    @classmethod
    def _key(cls, v: SecretStr | None) -> SecretStr | None:
        if v is None or not v.get_secret_value():
            return None
        if len(v.get_secret_value()) < 32:
            raise ValueError(wording.SETTING_VIEW_KEY)
        return v

    @field_validator("link_ttl_s", mode="before")
    @classmethod
    def _ttl(cls, v: object) -> object:
        if isinstance(v, str):
            text = v.strip().lower()
            unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(text[-1:], 0)
            number = text[:-1] if unit else text
            if not number.isdigit():
                raise ValueError(wording.SETTING_DURATION)
            return int(number) * (unit or 1)
        return v

    @model_validator(mode="after")
    def _base_url_with_key(self) -> ViewSettings:
        if self.link_key is not None and self.base_url is None:
            raise ValueError(wording.SETTING_VIEW_BASE_URL)
        return self

    @property
    def enabled(self) -> bool:
        return self.link_key is not None and self.base_url is not None


class Settings(BaseModel):
    """Everything the bot is configured with, by group; built once at start-up and passed explicitly."""

    model_config = ConfigDict(validate_assignment=True)

    argocd: ArgoCDSettings = Field(default_factory=ArgoCDSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    git: GitSettings = Field(default_factory=GitSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)
    view: ViewSettings = Field(default_factory=ViewSettings)

    def summary(self) -> str:
        """``NAME=value`` for every variable that is set, for the start-up log: a secret only says ``(set)``, and a
        URL loses its user and password (``redis://:pw@redis`` is ``redis://redis``)."""
        parts: list[str] = []
        for group in (self.slack, self.argocd, self.redis, self.git, self.runtime, self.view):
            for field_name, field in type(group).model_fields.items():
                value = getattr(group, field_name)
                if value is None or value == [] or value == {}:
                    continue
                shown: object
                if isinstance(value, SecretStr):
                    shown = "(set)"
                elif isinstance(value, str) and "://" in value:
                    shown = _without_credentials(value)
                elif isinstance(value, list):
                    shown = ",".join(map(str, value))
                elif isinstance(value, dict):
                    shown = ",".join(f"{k}={v}" for k, v in value.items())
                else:
                    shown = value
                parts.append(f"{field.validation_alias}={shown}")
        return " ".join(parts)

    def missing_for_serve(self, *, skip: frozenset[str] = frozenset()) -> list[str]:
        """What ``argo-why serve`` cannot start without, one line per unset variable (those in ``skip``, already
        reported as malformed, are not said twice)."""
        needed: list[tuple[object, str]] = [
            (self.slack.bot_token, "SLACK_BOT_TOKEN"), (self.slack.channel, "SLACK_CHANNEL"),
            (self.argocd.url, "ARGOCD_URL"), (self.argocd.token, "ARGOCD_TOKEN"),
            (self.runtime.webhook_token, "WEBHOOK_TOKEN"),
        ]  # fmt: skip
        if not self.slack.socket_mode:
            needed.append((self.slack.signing_secret, "SLACK_SIGNING_SECRET"))
        if self.git.provider is not None:
            needed.append((self.git.token, "GIT_TOKEN"))
            if self.git.provider == "gitlab":
                needed.append((self.git.api_url, "GIT_API_URL"))
        return [_unset(name) for value, name in needed if (value is None or value == "") and name not in skip]

    def check_serve(self) -> None:
        """What ``argo-why serve`` cannot start without; :class:`ConfigError` naming every one missing."""
        missing = self.missing_for_serve()
        if missing:
            raise ConfigError.of(missing)


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


G = TypeVar("G", bound=_Group)


def _read_group(group: type[G], problems: list[str], invalid: set[str]) -> G:
    """The group from the environment; its malformed variables are added to ``problems`` (one line each) and
    ``invalid``, and the group is read again with them at their defaults, so that what is missing can be told too."""
    try:
        return group()
    except SettingsError as e:
        problems.append(str(e))
        return cast(G, group.model_construct())
    except ValidationError as e:
        defaults: dict[str, object] = {}
        for err in e.errors():
            loc = err.get("loc") or ()
            name = str(loc[0]) if loc else ""
            field = next((f for f in group.model_fields.values() if f.validation_alias == name), None)
            msg = _in_words(err, field, name)
            problems.append(f"{name}: {msg}" if name else msg)
            if field is not None:
                invalid.add(name)
                defaults[name] = field.get_default(call_default_factory=True)
    try:
        # init values come before the environment: the malformed variables read as their defaults
        return cast(G, cast(Any, group)(**defaults))
    except ValidationError:
        return cast(G, group.model_construct())


def _unit(name: str) -> str | None:
    """The unit of a numeric variable, from its name (the README's convention): seconds or hours, else none."""
    if name.endswith(("_SECONDS", "_TIMEOUT", "_INTERVAL", "_TTL")):
        return "seconds"
    return "hours" if name.endswith("_HOURS") else None


def _in_words(err: ErrorDetails, field: FieldInfo | None, name: str) -> str:
    """Pydantic's error about one variable, said in argo-why's words (bot/wording/cli.py): what the variable takes,
    its bounds in its unit ("at most 30 days"), the value as written (never a secret's)."""
    kind, ctx, unit = err["type"], err.get("ctx") or {}, _unit(name)
    if kind == "value_error":  # our own validators: already a sentence of the wording
        return str(err["msg"]).removeprefix("Value error, ")
    given = err.get("input") if isinstance(err.get("input"), str) else str(err.get("input"))
    if field is not None and (kind.startswith(("int_", "float_", "bool_")) or kind in ("finite_number",)):
        if kind.startswith("bool_"):
            return wording.SETTING_BOOLEAN.format(given=given)
        bounds = {type(m).__name__: v for m in field.metadata for v in [getattr(m, type(m).__name__.lower(), None)]}
        low, above, high = bounds.get("Ge"), bounds.get("Gt"), bounds.get("Le")
        if low is not None and high is not None:
            said = wording.SETTING_BOUNDS["both"].format(
                low=wording.setting_amount(low, unit), high=wording.setting_amount(high, unit)
            )
        elif low is not None:
            said = wording.SETTING_BOUNDS["low"].format(low=wording.setting_amount(low, unit))
        elif above is not None:
            said = wording.SETTING_BOUNDS["above"].format(low=wording.setting_amount(above, unit))
        else:
            said = ""
        template = wording.SETTING_WHOLE_NUMBER if kind.startswith("int_") else wording.SETTING_NUMBER
        return template.format(bounds=said, given=given)
    limits = {"greater_than_equal": ("ge", wording.SETTING_AT_LEAST), "greater_than": ("gt", wording.SETTING_MORE_THAN),
              "less_than_equal": ("le", wording.SETTING_AT_MOST)}  # fmt: skip
    if kind in limits and isinstance(ctx.get(limits[kind][0]), (int, float)):
        return limits[kind][1].format(bound=wording.setting_amount(ctx[limits[kind][0]], unit))
    if kind == "literal_error":
        return wording.SETTING_CHOICE.format(choices=str(ctx.get("expected", "")).replace("'", ""), given=given)
    return wording.SETTING_INVALID


def load_settings(*, serve: bool = False) -> Settings:
    """Read the environment; every malformed value (and, for ``serve``, every missing one) is reported at once:
    :class:`ConfigError` with one line per variable."""
    problems: list[str] = []
    invalid: set[str] = set()
    settings = Settings.model_construct(
        argocd=_read_group(ArgoCDSettings, problems, invalid), slack=_read_group(SlackSettings, problems, invalid),
        redis=_read_group(RedisSettings, problems, invalid), git=_read_group(GitSettings, problems, invalid),
        runtime=_read_group(RuntimeSettings, problems, invalid), view=_read_group(ViewSettings, problems, invalid),
    )  # fmt: skip
    if serve:
        problems += settings.missing_for_serve(skip=frozenset(invalid))
    if problems:
        raise ConfigError.of(problems)
    return Settings(argocd=settings.argocd, slack=settings.slack, redis=settings.redis, git=settings.git,
                    runtime=settings.runtime, view=settings.view)  # fmt: skip
