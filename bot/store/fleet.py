"""The fleet index: the current findings of every OutOfSync app the bot analysed, as small keyed records.

An app's entry (:class:`FleetEntry`) holds its findings as :class:`bot.analysis.fleet.FleetFinding` lists (group,
kind, normalised path, writer, cause, object: about 120 bytes each, never the report), when it was analysed, when
its drift began, and the channel and thread of its alert. The alerts write it after every analysis (under the
app's lock); an app that turns Synced, or that Argo CD no longer lists (the sweep), is dropped. Entries older than
:data:`FLEET_STALE_S` are not read (an app the bot stopped hearing about does not stay fleet-wide forever).

The entry, its stored form and the reading back of many entries (the whole index, undecoded) are
:mod:`bot.store.fleetentry`'s. Two implementations of :class:`FleetIndex`: :class:`RedisFleetIndex` (every write is one
Lua script, so the reverse sets never disagree with the entries, whichever replica writes) and
:class:`MemoryFleetIndex` (the in-memory store's, one replica).

Redis keys (``<p>`` is the store's prefix):

=================================  ===========================================================  ====================
key                                value                                                        lifetime
=================================  ===========================================================  ====================
``<p>fleet:apps``                  hash app_key -> JSON :class:`FleetEntry` (``f``: findings    7 days after the last
                                   as 6-string lists, ``s``: their signature ids)                write
``<p>fleet:sig:<sig_id>``          set of the app keys having a finding of that signature       7 days after the last
                                   (group, kind, path, writer), for the thread's fleet line     add; emptied by drops
``<p>fleet:home``                  set of the Slack users who opened the App Home tab (the      30 days after the last
                                   sweep publishes the overview for them again)                 add
``<p>fleet:offer:<sig_id>``        JSON ``{"state", "rule", "key", "apps"}``: the system-level   14 days (the button's
                                   rule offered for a signature, so a parent shows its button   state's lifetime)
``<p>fleet:hours:<week>``          hash cause -> seconds OutOfSync that ISO week (``2026-W49``),  10 weeks after the
                                   added by each sweep; ``__last``: when the sweep last added   last add
``<p>fleet:ended:<week>``          list of JSON ``{"title", "url", "apps"}``: the rules merged  10 weeks after the
                                   that week and how many apps' drift they ended                last add
=================================  ===========================================================  ====================

The script builds the ``fleet:sig:`` key names from the prefix (a single Redis, as the bot uses; not Redis Cluster).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import redis.asyncio
from redis.client import NEVER_DECODE

from bot.store.fleetentry import FLEET_STALE_S as FLEET_STALE_S
from bot.store.fleetentry import FleetEntry as FleetEntry
from bot.store.fleetentry import as_text, json_object, read_entries

# The store's RedisGuard (bot.store.connection, which imports the protocol this module is part of).
Guard = Callable[[str], AbstractContextManager[None]]

FLEET_TTL_S = 7 * 24 * 3600
HOME_TTL_S = 30 * 24 * 3600
HISTORY_TTL_S = 10 * 7 * 24 * 3600
OFFER_TTL_S = 14 * 24 * 3600

# KEYS[1] the hash; ARGV: app, new entry JSON ('' = drop), sig key prefix, ttl, new sig ids...
_PUT = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local ok, decoded = pcall(cjson.decode, old)
  if ok and type(decoded) == 'table' and type(decoded['s']) == 'table' then
    for _, s in ipairs(decoded['s']) do redis.call('SREM', ARGV[3] .. s, ARGV[1]) end
  end
end
if ARGV[2] == '' then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[4])
for i = 5, #ARGV do
  redis.call('SADD', ARGV[3] .. ARGV[i], ARGV[1])
  redis.call('EXPIRE', ARGV[3] .. ARGV[i], ARGV[4])
end
return 1
"""


class FleetIndex(Protocol):
    async def put(self, app_key: str, entry: FleetEntry) -> None:
        """Replace the app's entry (an entry without findings drops it)."""
        ...

    async def drop(self, app_key: str) -> None: ...

    async def entries(self, now: float) -> dict[str, FleetEntry]:
        """Every entry analysed less than :data:`FLEET_STALE_S` before ``now``, by app key."""
        ...

    async def get(self, app_keys: list[str], now: float) -> dict[str, FleetEntry]:
        """The entries of these apps (fresh ones only), by app key."""
        ...

    async def apps_with(self, sig_id: str) -> set[str]:
        """The app keys that have a finding of this signature."""
        ...

    async def app_keys(self) -> set[str]:
        """Every app key in the index, stale ones included (the sweep drops what Argo CD no longer lists)."""
        ...

    async def add_home_user(self, user: str) -> None: ...

    async def home_users(self) -> set[str]: ...

    async def add_hours(self, week: str, seconds: Mapping[str, float], now: float, cap_s: float) -> None:
        """Add OutOfSync time by cause for ``week``, scaled to the time since the last add (at most ``cap_s``):
        each cause's value is per second elapsed (the number of apps of that cause)."""
        ...

    async def hours(self, week: str) -> dict[str, float]:
        """Seconds OutOfSync by cause in ``week``."""
        ...

    async def add_ended(self, week: str, record: dict[str, Any]) -> None: ...

    async def put_offer(self, sig_id: str, offer: dict[str, Any]) -> None: ...

    async def get_offer(self, sig_id: str) -> dict[str, Any] | None: ...

    async def ended(self, week: str) -> list[dict[str, Any]]: ...


class RedisFleetIndex:
    def __init__(self, client: redis.asyncio.Redis, prefix: str, guard: Guard) -> None:
        self._r = client
        self._hash = f"{prefix}fleet:apps"
        self._sig = f"{prefix}fleet:sig:"
        self._guard = guard
        self._put = client.register_script(_PUT)
        self._home = f"{prefix}fleet:home"
        self._hours = f"{prefix}fleet:hours:"
        self._ended = f"{prefix}fleet:ended:"
        self._offer = f"{prefix}fleet:offer:"

    async def put(self, app_key: str, entry: FleetEntry) -> None:
        if not entry.findings:
            await self.drop(app_key)
            return
        sigs = sorted({f.sig_id for f in entry.findings})
        with self._guard("fleet_put"):
            await self._put(keys=[self._hash], args=[app_key, entry.to_json(), self._sig, FLEET_TTL_S, *sigs])

    async def drop(self, app_key: str) -> None:
        with self._guard("fleet_drop"):
            await self._put(keys=[self._hash], args=[app_key, "", self._sig, FLEET_TTL_S])

    async def entries(self, now: float) -> dict[str, FleetEntry]:
        with self._guard("fleet_entries"):
            # undecoded: the client would decode the thousands of values one Python call each, read_entries decodes
            # them in one pass
            raw = await self._r.execute_command(  # type: ignore[no-untyped-call]
                "HGETALL", self._hash, **{NEVER_DECODE: True}
            )
        return read_entries(raw.items(), now)

    async def get(self, app_keys: list[str], now: float) -> dict[str, FleetEntry]:
        if not app_keys:
            return {}
        with self._guard("fleet_get"):
            raw = await self._r.execute_command(  # type: ignore[no-untyped-call]
                "HMGET", self._hash, *app_keys, **{NEVER_DECODE: True}
            )
        return read_entries(zip(app_keys, raw, strict=True), now)

    async def apps_with(self, sig_id: str) -> set[str]:
        with self._guard("fleet_apps_with"):
            return {as_text(m) for m in await self._r.smembers(f"{self._sig}{sig_id}")}

    async def app_keys(self) -> set[str]:
        with self._guard("fleet_app_keys"):
            return {as_text(k) for k in await self._r.hkeys(self._hash)}

    async def add_home_user(self, user: str) -> None:
        with self._guard("fleet_home"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.sadd(self._home, user)
                pipe.expire(self._home, HOME_TTL_S)
                await pipe.execute()

    async def home_users(self) -> set[str]:
        with self._guard("fleet_home_users"):
            return {as_text(m) for m in await self._r.smembers(self._home)}

    async def add_hours(self, week: str, seconds: Mapping[str, float], now: float, cap_s: float) -> None:
        key = f"{self._hours}{week}"
        with self._guard("fleet_hours"):
            last = await self._r.hget(key, "__last")
            elapsed = min(cap_s, max(0.0, now - float(last))) if last is not None else cap_s
            async with self._r.pipeline(transaction=True) as pipe:
                for cause, per_s in seconds.items():
                    pipe.hincrbyfloat(key, cause, per_s * elapsed)
                pipe.hset(key, "__last", now)
                pipe.expire(key, HISTORY_TTL_S)
                await pipe.execute()

    async def hours(self, week: str) -> dict[str, float]:
        with self._guard("fleet_hours_read"):
            raw = await self._r.hgetall(f"{self._hours}{week}")
        return {as_text(k): float(v) for k, v in raw.items() if as_text(k) != "__last"}

    async def add_ended(self, week: str, record: dict[str, Any]) -> None:
        key = f"{self._ended}{week}"
        with self._guard("fleet_ended"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.rpush(key, json.dumps(record))
                pipe.expire(key, HISTORY_TTL_S)
                await pipe.execute()

    async def put_offer(self, sig_id: str, offer: dict[str, Any]) -> None:
        with self._guard("fleet_offer"):
            await self._r.set(f"{self._offer}{sig_id}", json.dumps(offer), ex=OFFER_TTL_S)

    async def get_offer(self, sig_id: str) -> dict[str, Any] | None:
        with self._guard("fleet_offer_read"):
            return json_object(await self._r.get(f"{self._offer}{sig_id}"))

    async def ended(self, week: str) -> list[dict[str, Any]]:
        with self._guard("fleet_ended_read"):
            raw = await self._r.lrange(f"{self._ended}{week}", 0, -1)
        return [r for r in (json_object(x) for x in raw) if r is not None]


class MemoryFleetIndex:
    """The same in this process (the in-memory store: one replica)."""

    def __init__(self) -> None:
        self._entries: dict[str, str] = {}
        self._sigs: dict[str, set[str]] = {}
        self._home: set[str] = set()
        self._hours: dict[str, dict[str, float]] = {}
        self._ended: dict[str, list[dict[str, Any]]] = {}
        self._offers: dict[str, str] = {}

    async def put(self, app_key: str, entry: FleetEntry) -> None:
        await self.drop(app_key)
        if not entry.findings:
            return
        self._entries[app_key] = entry.to_json()
        for f in entry.findings:
            self._sigs.setdefault(f.sig_id, set()).add(app_key)

    async def drop(self, app_key: str) -> None:
        old = FleetEntry.from_json(self._entries.pop(app_key, None))
        for f in old.findings if old else ():
            members = self._sigs.get(f.sig_id)
            if members is not None:
                members.discard(app_key)
                if not members:
                    del self._sigs[f.sig_id]

    async def entries(self, now: float) -> dict[str, FleetEntry]:
        return read_entries(self._entries.items(), now)

    async def get(self, app_keys: list[str], now: float) -> dict[str, FleetEntry]:
        return read_entries(((k, self._entries.get(k)) for k in app_keys), now)

    async def apps_with(self, sig_id: str) -> set[str]:
        return set(self._sigs.get(sig_id, ()))

    async def app_keys(self) -> set[str]:
        return set(self._entries)

    async def add_home_user(self, user: str) -> None:
        self._home.add(user)

    async def home_users(self) -> set[str]:
        return set(self._home)

    async def add_hours(self, week: str, seconds: Mapping[str, float], now: float, cap_s: float) -> None:
        have = self._hours.setdefault(week, {})
        last = have.get("__last")
        elapsed = min(cap_s, max(0.0, now - last)) if last is not None else cap_s
        for cause, per_s in seconds.items():
            have[cause] = have.get(cause, 0.0) + per_s * elapsed
        have["__last"] = now

    async def hours(self, week: str) -> dict[str, float]:
        return {k: v for k, v in self._hours.get(week, {}).items() if k != "__last"}

    async def add_ended(self, week: str, record: dict[str, Any]) -> None:
        self._ended.setdefault(week, []).append(json.loads(json.dumps(record)))

    async def ended(self, week: str) -> list[dict[str, Any]]:
        return [dict(r) for r in self._ended.get(week, [])]

    async def put_offer(self, sig_id: str, offer: dict[str, Any]) -> None:
        self._offers[sig_id] = json.dumps(offer)

    async def get_offer(self, sig_id: str) -> dict[str, Any] | None:
        return json_object(self._offers.get(sig_id))
