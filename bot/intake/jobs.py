"""What travels through the durable queue, typed: one model per job kind, with a version.

The queue (:mod:`bot.queue`) carries JSON objects; this module is the only place that turns a job into
that JSON (:meth:`Job.payload`) and back (:func:`parse_job`). Guarantees:

* every job carries ``version``; :func:`parse_job` accepts exactly :data:`JOB_VERSION` (jobs written
  before versions existed had the same shape and read as version 1) and rejects anything else,
  an unknown ``type`` or a malformed field with :class:`JobRejected` and a reason, so the worker
  dead-letters the entry instead of crashing on it; a newer job shape gets a new version number;
* fields that are not the job's are ignored: ``revived`` (how often the dead-letter job queued it again) rides
  along with a job without changing its shape;
* :meth:`WebhookBody.of_application` is the body the notifications template renders for an Application, for the
  alerts the scheduler raises itself (drift without a sync sends no webhook);
* the webhook body (the contract, README "The Slack bot: `argo-why serve`") is validated once, at the edge,
  by :class:`WebhookBody`; the worker receives it typed;
* :func:`app_key` is the one way an Application is named in the store (thread map, mutes, digest);
* :class:`ActionId` lists the Slack buttons' ``action_id`` values (a contract).

Pure: pydantic only, no I/O.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bot.errors import ArgoWhyError

JOB_VERSION = 1
DEDUPE_TTL_S = 7 * 24 * 3600
"""How long an alert's idempotency key (and the scheduler's own marks) keep a repeat from being queued."""
_NAME = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"


class ActionId(StrEnum):
    """The ``action_id`` of every button the bot posts (a contract: README, "The Slack bot: `argo-why serve`")."""

    SHOW_DIFF = "show_diff"
    MUTE = "mute"
    RECHECK = "recheck"
    OPEN_PR = "open_pr"
    APPROVE = "approve"


def app_key(name: str, namespace: str | None) -> str:
    """``namespace/name``, or ``name`` when the namespace is unknown: the key of an app in the store."""
    return f"{namespace}/{name}" if namespace else name


class JobRejected(ArgoWhyError):
    """A queue entry that is not a job this replica can do; the reason goes to the dead-letter stream."""


# --- the webhook body (contract) -----------------------------------------------------------------------


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AppRef(_Loose):
    name: str = Field(pattern=_NAME)
    namespace: str | None = Field(None, pattern=_NAME)
    project: str | None = None


class SyncInfo(_Loose):
    status: Literal["Synced", "OutOfSync", "Unknown"]
    revision: str | None = None


class OperationState(_Loose):
    phase: str | None = None
    startedAt: str | None = None
    finishedAt: str | None = None


class ResourceRef(_Loose):
    group: str | None = None
    version: str | None = None
    kind: str
    namespace: str | None = None
    name: str


class Health(_Loose):
    status: str | None = None


class WebhookBody(_Loose):
    """What Argo CD's notifications webhook must send; other fields are ignored.

    The contract: README, "The Slack bot: `argo-why serve`".
    """

    app: AppRef
    sync: SyncInfo
    operationState: OperationState | None = None
    health: Health | None = None
    outOfSyncResources: list[ResourceRef] | None = None
    argocdUrl: str | None = None

    @property
    def app_key(self) -> str:
        return app_key(self.app.name, self.app.namespace)

    @classmethod
    def of_application(cls, app: dict[str, Any], argocd_url: str | None = None) -> WebhookBody | None:
        """The body the notifications template (``deploy/``) renders for ``app``, an Application as Argo CD's API
        returns it (what the scheduler's sweep alerts with); ``None`` when the Application lacks what the contract
        requires."""
        try:
            return cls.model_validate(webhook_body_of(app, argocd_url))
        except (ValidationError, AttributeError, TypeError):
            return None

    def idempotency_key(self) -> str:
        """app, revision, sync status and operation finish time: the notifications controller retries."""
        finished = self.operationState.finishedAt if self.operationState else None
        raw = "|".join([self.app.namespace or "", self.app.name, self.sync.revision or "", self.sync.status,
                        finished or ""])  # fmt: skip
        return "webhook:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def webhook_body_of(app: dict[str, Any], argocd_url: str | None = None) -> dict[str, Any]:
    """The JSON the notifications template of ``deploy/argocd-notifications.yaml`` renders for an Application."""
    meta, spec, status = app["metadata"], app.get("spec") or {}, app.get("status") or {}
    op, sync = status.get("operationState"), status.get("sync") or {}
    return {
        "app": {"name": meta["name"], "namespace": meta.get("namespace"), "project": spec.get("project")},
        "sync": {"status": sync.get("status"), "revision": sync.get("revision")},
        "operationState": {k: op.get(k) for k in ("phase", "startedAt", "finishedAt")} if op else None,
        "health": {"status": (status.get("health") or {}).get("status")},
        "outOfSyncResources": [
            {k: r.get(k) for k in ("group", "version", "kind", "namespace", "name")}
            for r in status.get("resources") or [] if r.get("status") == "OutOfSync"
        ],
        "argocdUrl": argocd_url,
    }  # fmt: skip


# --- jobs ------------------------------------------------------------------------------------------------


class _Job(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    version: Literal[1] = 1  # JOB_VERSION

    def payload(self) -> dict[str, Any]:
        """The JSON object the queue carries."""
        return self.model_dump(mode="json")

    def payload_json(self) -> str:
        """:meth:`payload` as JSON text, serialized by pydantic's own serializer (a quarter of the time of
        ``json.dumps(payload())``: the webhook's intake does it for every alert)."""
        return self.model_dump_json()


class WebhookJob(_Job):
    """An accepted Argo CD alert: analyse the app and post (or update) its thread."""

    type: Literal["webhook"] = "webhook"
    body: WebhookBody
    received: float
    key: str
    """The alert's idempotency key; a redelivered job with the same key does not count its sync twice."""

    @property
    def app(self) -> str:
        return self.body.app.name


class CommandJob(_Job):
    """``/argo why|diff|mute <app>``: analyse (or mute) and answer in the channel, if the app is visible there;
    ``/argo drift [page]``: the overview of the apps routed to the channel (``app`` empty), to the user alone."""

    type: Literal["command"] = "command"
    command: Literal["why", "diff", "mute", "drift"]
    app: str
    app_namespace: str | None = None
    channel: str
    user: str
    response_url: str | None = None
    mute_s: int | None = None
    """``mute``: for how long, in seconds (as the person wrote it: ``duration``)."""
    duration: str | None = None
    page: int = 1
    """``drift``: the page of the overview."""


class HomeJob(_Job):
    """Someone opened the bot's App Home tab: publish the drift overview for them."""

    type: Literal["home"] = "home"
    user: str


class ButtonJob(_Job):
    """A click on Show diff, Re-check or Mute 24h; ``state`` is the opaque id the button carried."""

    type: Literal["show_diff", "recheck", "mute"]
    state: str
    channel: str
    thread_ts: str | None = None
    user: str


class NoteJob(_Job):
    """A sentence to say in a thread (e.g. who muted the app), delivered with the queue's guarantees."""

    type: Literal["note"] = "note"
    channel: str
    thread_ts: str | None = None
    text: str


class FixJob(_Job):
    """A click on Open PR or Approve: ``user`` is the signed payload's ``user.id``, never the button's value."""

    type: Literal["open_pr", "approve"]
    state: str
    channel: str
    message_ts: str
    thread_ts: str | None = None
    block_id: str | None = None
    user: str
    blocks: list[dict[str, Any]] = Field(default_factory=list)
    """The clicked message's blocks as the payload carried them (used only when the store has no copy)."""


Job = Annotated[WebhookJob | CommandJob | ButtonJob | NoteJob | FixJob | HomeJob, Field(discriminator="type")]
_JOB: TypeAdapter[Job] = TypeAdapter(Job)


def parse_job(raw: dict[str, Any]) -> Job:
    """The typed job of a queue entry, or :class:`JobRejected` saying why this replica cannot do it."""
    version = raw.get("version", JOB_VERSION)  # entries from before versions had version 1's shape
    if version != JOB_VERSION:
        raise JobRejected(f"job version {version!r} (this replica reads version {JOB_VERSION})")
    try:
        return _JOB.validate_python(raw)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err.get("loc", ())) or "job"
        raise JobRejected(f"unreadable {raw.get('type')!r} job: {where}: {err.get('msg', 'invalid')}") from e
