""":class:`MemoryStore`: the :class:`bot.store.Store` used when ``REDIS_URL`` is unset.

The same behaviour inside one process, lost on restart, and therefore only correct with exactly one replica.
Its clock is injectable so that tests (and only tests) can move time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from bot.store.base import (
    AUDIT_MAXLEN,
    DIGEST_TTL_S,
    MUTED_TTL_S,
    STATE_ID,
    THREAD_TTL_S,
    drift_start,
    fresh_approvals,
    new_state_id,
    thread_from_json,
)
from bot.store.fleet import MemoryFleetIndex
from bot.store.fleetentry import json_object
from bot.store.fleetobjects import MemoryFleetObjects
from bot.store.records import ThreadRef


class MemoryStore:
    """:class:`Store` in this process: one replica only, nothing survives a restart.

    Expiry is checked against ``clock`` on every read; expired entries are also swept every few hundred writes
    so that dedupe marks that are never read again do not pile up.
    """

    _SWEEP_EVERY = 512

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        # key -> (value, expires at); one dict per kind of key keeps the sweep trivial.
        self._seen: dict[str, float] = {}
        self._threads: dict[str, tuple[str, float]] = {}
        self._states: dict[str, tuple[str, float]] = {}
        self._mutes: dict[str, tuple[float, str]] = {}
        self._muted: dict[str, str] = {}
        self._muted_expires = 0.0
        self._drifting: dict[str, float] = {}
        self._outbox: dict[str, tuple[str, float]] = {}
        self._alerts: dict[str, dict[str, float]] = {}
        self._digest: dict[str, str] = {}
        self._digest_expires = 0.0
        self._locks: dict[str, tuple[str, float]] = {}
        self._approvals: dict[str, tuple[dict[str, str], float]] = {}
        self._prs: dict[str, str] = {}
        self._audit: list[dict[str, str]] = []
        self._messages: dict[str, tuple[str, float]] = {}
        self._buttons: dict[str, tuple[dict[str, str], float]] = {}
        self._writes = 0
        self.fleet = MemoryFleetIndex()
        self.fleet_objects = MemoryFleetObjects()

    def _wrote(self) -> None:
        self._writes += 1
        if self._writes % self._SWEEP_EVERY == 0:
            now = self._clock()
            self._seen = {k: exp for k, exp in self._seen.items() if exp > now}
            self._threads = {k: v for k, v in self._threads.items() if v[1] > now}
            self._states = {k: v for k, v in self._states.items() if v[1] > now}
            self._mutes = {k: v for k, v in self._mutes.items() if v[0] > now}
            self._locks = {k: v for k, v in self._locks.items() if v[1] > now}
            self._approvals = {k: v for k, v in self._approvals.items() if v[1] > now}
            self._messages = {k: v for k, v in self._messages.items() if v[1] > now}
            self._buttons = {k: v for k, v in self._buttons.items() if v[1] > now}
            self._outbox = {k: v for k, v in self._outbox.items() if v[1] > now}

    async def ping(self) -> None:
        return None

    async def first_seen(self, key: str, ttl_s: int) -> bool:
        now = self._clock()
        if self._seen.get(key, 0.0) > now:
            return False
        self._seen[key] = now + ttl_s
        self._wrote()
        return True

    async def forget(self, key: str) -> None:
        self._seen.pop(key, None)

    async def get_thread(self, app_key: str) -> ThreadRef | None:
        hit = self._threads.get(app_key)
        if hit is None or hit[1] <= self._clock():
            return None
        return thread_from_json(hit[0], app_key)

    async def save_thread(self, ref: ThreadRef, app_key: str) -> None:
        self._threads[app_key] = (json.dumps(asdict(ref)), self._clock() + THREAD_TTL_S)
        if ref.status == "drift" and not app_key.startswith("__"):
            self._drifting[app_key] = drift_start(ref)
        else:
            self._drifting.pop(app_key, None)
        self._wrote()

    async def drifting(self, count: int) -> list[tuple[str, float]]:
        return sorted(self._drifting.items(), key=lambda kv: (kv[1], kv[0]))[:count]

    async def forget_drifting(self, app_key: str) -> None:
        self._drifting.pop(app_key, None)

    async def put_state(self, kind: str, value: str, ttl_s: int) -> str:
        state_id = new_state_id(kind)
        self._states[state_id] = (value, self._clock() + ttl_s)
        self._wrote()
        return state_id

    async def get_state(self, state_id: str) -> str | bytes | None:
        if not STATE_ID.fullmatch(state_id):
            return None
        hit = self._states.get(state_id)
        if hit is None or hit[1] <= self._clock():
            return None
        return hit[0]

    async def set_mute(self, app_key: str, until: float, by: str) -> None:
        self._mutes[app_key] = (until, by)
        now = self._clock()
        if self._muted_expires <= now:
            self._muted.clear()
        self._muted[app_key] = json.dumps({"until": until, "by": by})
        self._muted_expires = now + MUTED_TTL_S
        self._wrote()

    async def ended_mutes(self, now: float) -> dict[str, str]:
        if self._muted_expires <= self._clock():
            self._muted.clear()
        out: dict[str, str] = {}
        for app_key, raw in self._muted.items():
            until = (json_object(raw) or {}).get("until")
            if not isinstance(until, int | float) or until <= now:
                out[app_key] = raw
        return out

    async def forget_mutes(self, ended: dict[str, str]) -> None:
        _pop_unchanged(self._muted, ended)

    async def mute_until(self, app_key: str, now: float) -> float | None:
        hit = self._mutes.get(app_key)
        if hit is None or hit[0] <= self._clock():
            return None
        return hit[0] if hit[0] > now else None

    async def note_alert(self, app_key: str, now: float, window_s: int, channel: str = "") -> int:
        alerts = self._alerts.setdefault(channel, {})
        alerts[app_key] = max(now, alerts.get(app_key, now))
        cutoff = now - window_s
        self._alerts[channel] = {k: t for k, t in alerts.items() if t > cutoff}
        return len(self._alerts[channel])

    async def add_to_digest(self, app_key: str, payload: dict[str, Any]) -> None:
        now = self._clock()
        if self._digest_expires <= now:
            self._digest.clear()
        self._digest[app_key] = json.dumps(payload)
        self._digest_expires = now + DIGEST_TTL_S

    async def peek_digest(self) -> dict[str, str]:
        if self._digest_expires <= self._clock():
            self._digest.clear()
        return dict(sorted(self._digest.items()))

    async def take_from_digest(self, taken: dict[str, str]) -> None:
        _pop_unchanged(self._digest, taken)

    async def acquire_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        now = self._clock()
        held = self._locks.get(name)
        if held is not None and held[1] > now:
            return False
        self._locks[name] = (owner, now + ttl_s)
        self._wrote()
        return True

    async def refresh_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        now = self._clock()
        held = self._locks.get(name)
        if held is None or held[1] <= now or held[0] != owner:
            return False
        self._locks[name] = (owner, now + ttl_s)
        return True

    async def release_lock(self, name: str, owner: str) -> None:
        held = self._locks.get(name)
        if held is not None and held[0] == owner and held[1] > self._clock():
            del self._locks[name]

    async def add_approval(self, fix_id: str, user: str, record: dict[str, Any], now: float,
                           ttl_s: int) -> dict[str, dict[str, Any]]:  # fmt: skip
        held = self._approvals.get(fix_id)
        users = dict(held[0]) if held is not None and held[1] > self._clock() else {}
        users.setdefault(user, json.dumps({**record, "at": now}))
        self._approvals[fix_id] = (users, self._clock() + ttl_s)
        self._wrote()
        return fresh_approvals(users, now, ttl_s)

    async def clear_approvals(self, fix_id: str) -> None:
        self._approvals.pop(fix_id, None)

    async def save_pr(self, fix_id: str, record: dict[str, Any]) -> None:
        self._prs[fix_id] = json.dumps(record)

    async def get_pr(self, fix_id: str) -> dict[str, Any] | None:
        return json_object(self._prs.get(fix_id))

    async def list_prs(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, r in sorted(self._prs.items()) if (v := json_object(r)) is not None}

    async def forget_pr(self, fix_id: str) -> None:
        self._prs.pop(fix_id, None)

    async def append_audit(self, record: dict[str, str]) -> str:
        self._audit.append({k: str(v) for k, v in record.items()})
        del self._audit[:-AUDIT_MAXLEN]
        return f"{int(self._clock() * 1000)}-{len(self._audit)}"

    async def remember_message(self, channel: str, ts: str, message: dict[str, Any], ttl_s: int) -> None:
        self._messages[f"{channel}:{ts}"] = (json.dumps(message), self._clock() + ttl_s)
        self._wrote()

    async def recall_message(self, channel: str, ts: str) -> dict[str, Any] | None:
        hit = self._messages.get(f"{channel}:{ts}")
        if hit is None or hit[1] <= self._clock():
            return None
        return json_object(hit[0])

    async def add_fix_button(self, fix_id: str, place: dict[str, str], ttl_s: int) -> None:
        held = self._buttons.get(fix_id)
        places = dict(held[0]) if held is not None and held[1] > self._clock() else {}
        places[f"{place.get('channel')}:{place.get('ts')}:{place.get('block_id')}"] = json.dumps(place)
        self._buttons[fix_id] = (places, self._clock() + ttl_s)
        self._wrote()

    async def fix_buttons(self, fix_id: str) -> list[dict[str, str]]:
        held = self._buttons.get(fix_id)
        if held is None or held[1] <= self._clock():
            return []
        return [p for v in held[0].values() if (p := json_object(v)) is not None]

    async def outbox_get(self, key: str) -> dict[str, Any] | None:
        hit = self._outbox.get(key)
        if hit is None or hit[1] <= self._clock():
            return None
        return json_object(hit[0])

    async def outbox_put(self, key: str, record: dict[str, Any], ttl_s: int) -> None:
        self._outbox[key] = (json.dumps(record), self._clock() + ttl_s)
        self._wrote()

    async def outbox_delete(self, key: str) -> None:
        self._outbox.pop(key, None)

    async def read_audit(self, count: int = 100) -> list[dict[str, str]]:
        return [dict(r) for r in self._audit[:count]]

    async def close(self) -> None:
        return None


def _pop_unchanged(held: dict[str, str], taken: dict[str, str]) -> None:
    """Remove the entries of ``taken`` from ``held`` that still have the value the caller read."""
    for key, value in taken.items():
        if held.get(key) == value:
            del held[key]
