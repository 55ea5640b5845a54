"""The records the store keeps for the rest of the bot, typed: the Slack thread of an app.

Guarantee: :class:`ThreadRef` is read leniently (unknown fields from a newer replica are dropped, an unreadable
entry reads as ``None``: it costs a new thread, never a lost alert). Its key and lifetime are listed in
:mod:`bot.store`, which owns them.
"""

from __future__ import annotations

import logging
from dataclasses import field, fields
from typing import Any, Literal

from pydantic.dataclasses import dataclass

log = logging.getLogger("bot.state")  # its name from before the move to the store: log filters keep working
COUNTED_KEYS = 50


@dataclass
class ThreadRef:
    """Where the bot last talked about an app in Slack, and what it said there."""

    app: str
    channel: str
    ts: str
    fingerprint: str
    status: Literal["drift", "synced", "failed"]
    unsettled_syncs: int = 1
    updated: float = 0.0
    last_alert: str = ""
    """Idempotency key of the last webhook counted, so that a redelivered job is not counted twice."""
    counted: list[str] = field(default_factory=list)
    """The idempotency keys counted in this episode (the last :data:`COUNTED_KEYS`): a job redelivered after others
    is not counted twice either."""
    report_state: str = ""
    """The :class:`ReportState` behind the parent as last posted, so that it can be rendered again (a PR link)."""
    since: float = 0.0
    """When the current drift episode began (reminders, the daily summary); 0 in entries written before it existed."""
    analysed: float = 0.0
    """When the analysis behind ``report_state`` began: an alert received before it needs no analysis of its own."""
    in_digest: bool = False
    """The app has no parent of its own: it was listed in the digest ``ts`` (its thread). Reminders and the daily
    summary count it like any drift, and speak in the digest's thread; nothing ever rewrites that message for it:
    its next alert gets a parent of its own (or the next digest)."""

    @classmethod
    def from_json_dict(cls, data: Any, app_key: str) -> ThreadRef | None:
        try:
            # Unknown fields are dropped so that a newer replica's extra field cannot break an older one mid-rollout.
            known = {f.name for f in fields(cls)}
            return cls(**{k: v for k, v in data.items() if k in known})
        except (ValueError, TypeError, AttributeError):
            # A thread map entry we cannot read only costs a new thread; it must not stop the alert.
            log.warning("unreadable thread map entry for %s; starting a new thread", app_key)
            return None
