"""The store's contract: the :class:`Store` protocol, its one error, and the pieces both implementations share.

Nothing here touches Redis; :mod:`bot.store.on_redis` and :mod:`bot.store.in_memory` implement the protocol
(the key table is in :mod:`bot.store`).
"""

from __future__ import annotations

import logging
import re
import secrets
from typing import Any, Protocol

from bot.errors import ArgoWhyError
from bot.store.fleet import FleetIndex
from bot.store.fleetentry import json_object
from bot.store.fleetobjects import FleetObjects
from bot.store.records import ThreadRef

log = logging.getLogger("bot.store")

THREAD_TTL_S = 30 * 24 * 3600
PR_TTL_S = 90 * 24 * 3600
AUDIT_MAXLEN = 100_000
# The digest job runs every few hours; a buffer nobody drained for a week is about a bot that was down.
DIGEST_TTL_S = 7 * 24 * 3600
# The longest mute (/argo mute takes up to 30 days) plus a day for the mute-expiry job to notice its end.
MUTED_TTL_S = 31 * 24 * 3600

KIND_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
# token_urlsafe(12) is exactly 16 characters of the url-safe base64 alphabet.
STATE_ID = re.compile(r"[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_-]{16}")


class StoreUnavailable(ArgoWhyError):
    """Redis is down, unreachable or read-only; the operation did not happen (or its outcome is unknown)."""

    def __init__(self, message: str, *, where: str, op: str) -> None:
        self.where = where
        self.op = op
        super().__init__(message)


class Store(Protocol):
    @property
    def fleet(self) -> FleetIndex:
        """The fleet index (:mod:`bot.store.fleet`): the current findings of every OutOfSync app."""
        ...

    @property
    def fleet_objects(self) -> FleetObjects:
        """The objects the bot last read of each app (:mod:`bot.store.fleetobjects`), for the system-level rule."""
        ...

    async def ping(self) -> None: ...

    async def first_seen(self, key: str, ttl_s: int) -> bool:
        """True exactly once per ``key`` within ``ttl_s`` seconds, across all replicas."""
        ...

    async def forget(self, key: str) -> None:
        """Undo :meth:`first_seen` for ``key``: the next first_seen is True again (the enqueue after it failed)."""
        ...

    async def get_thread(self, app_key: str) -> ThreadRef | None: ...

    async def save_thread(self, ref: ThreadRef, app_key: str) -> None: ...

    async def put_state(self, kind: str, value: str, ttl_s: int) -> str:
        """Keep ``value`` (a state's JSON text, as :class:`bot.store.state.StateModel` writes it) ``ttl_s`` seconds
        under a new opaque id of ``kind``."""
        ...

    async def get_state(self, state_id: str) -> str | bytes | None:
        """The JSON text kept under ``state_id``; ``None`` when expired, never issued or malformed."""
        ...

    async def set_mute(self, app_key: str, until: float, by: str) -> None: ...

    async def mute_until(self, app_key: str, now: float) -> float | None: ...

    async def note_alert(self, app_key: str, now: float, window_s: int, channel: str = "") -> int:
        """Record an alert for ``app_key``; return how many distinct apps alerted in the last ``window_s`` in the same
        ``channel`` (a storm in one team's channel does not push another team's alerts into a digest)."""
        ...

    async def ended_mutes(self, now: float) -> dict[str, str]:
        """The mutes that ended by ``now`` and were not yet forgotten: app key -> the raw JSON ``{"until", "by"}``."""
        ...

    async def forget_mutes(self, ended: dict[str, str]) -> None:
        """Drop these ended mutes from the index, each only if unchanged since :meth:`ended_mutes` (a new mute of
        the same app set meanwhile stays)."""
        ...

    async def add_to_digest(self, app_key: str, payload: dict[str, Any]) -> None:
        """Buffer ``payload`` for the next digest; a later add for the same app replaces the earlier one."""
        ...

    async def peek_digest(self) -> dict[str, str]:
        """Every buffered payload, by app key, as raw JSON; nothing is removed (see :meth:`take_from_digest`)."""
        ...

    async def take_from_digest(self, taken: dict[str, str]) -> None:
        """Remove what :meth:`peek_digest` returned once Slack accepted the digest: each entry only if unchanged
        since, so that an alert buffered meanwhile for the same app waits for the next digest."""
        ...

    async def drifting(self, count: int) -> list[tuple[str, float]]:
        """The ``count`` apps drifting longest (thread status ``drift``), oldest first: (app key, drift start)."""
        ...

    async def forget_drifting(self, app_key: str) -> None:
        """Drop an app from :meth:`drifting` (its thread expired)."""
        ...

    async def outbox_get(self, key: str) -> dict[str, Any] | None:
        """What :class:`bot.slack.outbox.Outbox` recorded under ``key`` (an intent, or the posted message)."""
        ...

    async def outbox_put(self, key: str, record: dict[str, Any], ttl_s: int) -> None: ...

    async def outbox_delete(self, key: str) -> None: ...

    async def acquire_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        """Take the lock if nobody holds it. Not re-entrant: the holder itself gets False (use refresh_lock)."""
        ...

    async def refresh_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        """Extend the lock to ``ttl_s`` from now if ``owner`` still holds it; False if it was lost."""
        ...

    async def release_lock(self, name: str, owner: str) -> None:
        """Release the lock if ``owner`` holds it; a lock that passed to someone else is left alone."""
        ...

    async def add_approval(self, fix_id: str, user: str, record: dict[str, Any], now: float,
                           ttl_s: int) -> dict[str, dict[str, Any]]:  # fmt: skip
        """Record ``user``'s approval of ``fix_id`` (``record`` plus ``"at": now``) unless that user's approval is
        already there (its first time is kept); return every approval younger than ``ttl_s``, by user."""
        ...

    async def clear_approvals(self, fix_id: str) -> None: ...

    async def save_pr(self, fix_id: str, record: dict[str, Any]) -> None:
        """Remember a pull request opened for ``fix_id`` (replacing any earlier record of that fix)."""
        ...

    async def get_pr(self, fix_id: str) -> dict[str, Any] | None: ...

    async def list_prs(self) -> dict[str, dict[str, Any]]:
        """Every remembered pull request, by fix id (what the follow-up job polls)."""
        ...

    async def forget_pr(self, fix_id: str) -> None: ...

    async def append_audit(self, record: dict[str, str]) -> str:
        """Append a decision to the audit stream; its entry id."""
        ...

    async def remember_message(self, channel: str, ts: str, message: dict[str, Any], ttl_s: int) -> None:
        """Keep a message the bot posted (``{"text", "blocks"}``), so that one of its blocks can be replaced later."""
        ...

    async def recall_message(self, channel: str, ts: str) -> dict[str, Any] | None: ...

    async def add_fix_button(self, fix_id: str, place: dict[str, str], ttl_s: int) -> None:
        """Remember that a message carries a button for ``fix_id`` (``place``: channel, ts, block_id)."""
        ...

    async def fix_buttons(self, fix_id: str) -> list[dict[str, str]]:
        """Every place remembered for ``fix_id``, in no particular order."""
        ...

    async def read_audit(self, count: int = 100) -> list[dict[str, str]]:
        """The oldest ``count`` audit records (for operators and tests)."""
        ...

    async def close(self) -> None: ...


def text(value: bytes | str) -> str:
    """A Redis reply as str, whether or not the client was built with ``decode_responses``."""
    return value.decode() if isinstance(value, bytes) else value


def check_kind(kind: str) -> None:
    if not KIND_PATTERN.fullmatch(kind):
        raise ValueError(f"state kind must match {KIND_PATTERN.pattern}, got {kind!r}")


def new_state_id(kind: str) -> str:
    check_kind(kind)
    return f"{kind}:{secrets.token_urlsafe(12)}"


def drift_start(ref: ThreadRef) -> float:
    """When the episode of a drifting thread began (threads saved before ``since`` existed: their last update)."""
    return ref.since or ref.updated


def thread_from_json(raw: str, app_key: str) -> ThreadRef | None:
    data = json_object(raw)
    if data is None:
        log.warning("unreadable thread map entry for %s; starting a new thread", app_key)
        return None
    return ThreadRef.from_json_dict(data, app_key)


def fresh_approvals(raw: dict[str, Any], now: float, ttl_s: int) -> dict[str, dict[str, Any]]:
    """The approvals of ``raw`` (user -> JSON or dict) still younger than ``ttl_s``."""
    out: dict[str, dict[str, Any]] = {}
    for user, value in raw.items():
        record = value if isinstance(value, dict) else json_object(value)
        if record is not None and isinstance(record.get("at"), int | float) and now - record["at"] < ttl_s:
            out[text(user)] = record
    return out
