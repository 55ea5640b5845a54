""":class:`RedisStore`: the :class:`bot.store.Store` every multi-replica install uses.

All replicas see the same state; every write is a single Redis command, a MULTI/EXEC transaction or a Lua
script, so two replicas racing on the same key cannot both win (dedupe, locks, approvals) and a digest drain
cannot lose or duplicate an entry. The keys are listed in :mod:`bot.store`.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import redis.asyncio
from redis.typing import EncodableT, FieldT

from bot.store.base import (
    AUDIT_MAXLEN,
    DIGEST_TTL_S,
    MUTED_TTL_S,
    PR_TTL_S,
    STATE_ID,
    THREAD_TTL_S,
    drift_start,
    fresh_approvals,
    new_state_id,
    text,
    thread_from_json,
)
from bot.store.connection import RedisGuard, connect
from bot.store.fleet import RedisFleetIndex
from bot.store.fleetentry import json_object
from bot.store.fleetobjects import RedisFleetObjects
from bot.store.records import ThreadRef

# Compare-and-act in one server-side step: a GET followed by PEXPIRE/DEL from the client could act on a lock
# that expired and was taken by another replica in between.
_REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
# Remove hash fields (ARGV: field, value, field, value, ...) whose value is still the one the caller read: what was
# written meanwhile (a newer alert for the same app, a new mute) is kept for the next round.
_HDEL_UNCHANGED = """
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
"""


class RedisStore:
    """:class:`Store` on Redis. Closing it closes the client only if the store created it (:meth:`from_url`)."""

    def __init__(self, client: redis.asyncio.Redis, prefix: str = "argo-why:") -> None:
        self._r = client
        self._p = prefix
        self._guard = RedisGuard(client)
        self._owns_client = False
        self._refresh = client.register_script(_REFRESH)
        self._release = client.register_script(_RELEASE)
        self._hdel_unchanged = client.register_script(_HDEL_UNCHANGED)
        self.fleet = RedisFleetIndex(client, prefix, self._guard)
        self.fleet_objects = RedisFleetObjects(client, prefix, self._guard)

    @classmethod
    def from_url(cls, url: str, prefix: str = "argo-why:") -> RedisStore:
        store = cls(connect(url), prefix)
        store._owns_client = True
        return store

    @property
    def client(self) -> redis.asyncio.Redis:
        """The underlying client, so a :class:`bot.queue.RedisQueue` can share its connection pool."""
        return self._r

    @property
    def where(self) -> str:
        return self._guard.where

    async def ping(self) -> None:
        with self._guard("ping"):
            await self._r.ping()

    async def first_seen(self, key: str, ttl_s: int) -> bool:
        with self._guard("first_seen"):
            return bool(await self._r.set(f"{self._p}seen:{key}", "1", nx=True, ex=ttl_s))

    async def forget(self, key: str) -> None:
        with self._guard("forget"):
            await self._r.delete(f"{self._p}seen:{key}")

    async def get_thread(self, app_key: str) -> ThreadRef | None:
        with self._guard("get_thread"):
            raw = await self._r.get(f"{self._p}thread:{app_key}")
        return None if raw is None else thread_from_json(text(raw), app_key)

    async def save_thread(self, ref: ThreadRef, app_key: str) -> None:
        drifting = f"{self._p}drifting"
        with self._guard("save_thread"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.set(f"{self._p}thread:{app_key}", json.dumps(asdict(ref)), ex=THREAD_TTL_S)
                if ref.status == "drift" and not app_key.startswith("__"):
                    pipe.zadd(drifting, {app_key: drift_start(ref)})
                else:
                    pipe.zrem(drifting, app_key)
                pipe.expire(drifting, THREAD_TTL_S)
                await pipe.execute()

    async def drifting(self, count: int) -> list[tuple[str, float]]:
        with self._guard("drifting"):
            rows: list[Any] = await self._r.zrange(f"{self._p}drifting", 0, count - 1, withscores=True)
        return [(text(k), float(v)) for k, v in rows]

    async def forget_drifting(self, app_key: str) -> None:
        with self._guard("forget_drifting"):
            await self._r.zrem(f"{self._p}drifting", app_key)

    async def put_state(self, kind: str, value: str, ttl_s: int) -> str:
        state_id = new_state_id(kind)
        with self._guard("put_state"):
            await self._r.set(f"{self._p}state:{state_id}", value, ex=ttl_s)
        return state_id

    async def get_state(self, state_id: str) -> str | bytes | None:
        if not STATE_ID.fullmatch(state_id):
            return None
        with self._guard("get_state"):
            raw: str | bytes | None = await self._r.get(f"{self._p}state:{state_id}")
        return raw

    async def set_mute(self, app_key: str, until: float, by: str) -> None:
        value = json.dumps({"until": until, "by": by})
        muted = f"{self._p}muted"
        with self._guard("set_mute"):
            async with self._r.pipeline(transaction=True) as pipe:
                # PXAT in the past is accepted by Redis and simply leaves no key: a mute that already ended.
                pipe.set(f"{self._p}mute:{app_key}", value, pxat=max(1, int(until * 1000)))
                # The index outlives the mute itself, so that the mute-expiry job can say that it ended.
                pipe.hset(muted, app_key, value)
                pipe.expire(muted, MUTED_TTL_S)
                await pipe.execute()

    async def ended_mutes(self, now: float) -> dict[str, str]:
        with self._guard("ended_mutes"):
            raw = await self._r.hgetall(f"{self._p}muted")
        out: dict[str, str] = {}
        for k, v in raw.items():
            data = json_object(v)
            until = data.get("until") if data else None
            if not isinstance(until, int | float) or until <= now:
                out[text(k)] = text(v)
        return out

    async def forget_mutes(self, ended: dict[str, str]) -> None:
        if ended:
            with self._guard("forget_mutes"):
                await self._hdel_unchanged(keys=[f"{self._p}muted"], args=[x for kv in ended.items() for x in kv])

    async def mute_until(self, app_key: str, now: float) -> float | None:
        with self._guard("mute_until"):
            raw = await self._r.get(f"{self._p}mute:{app_key}")
        data = json_object(raw)
        if data is None or not isinstance(data.get("until"), int | float):
            return None
        until = float(data["until"])
        # Also compare with the caller's clock: Redis expires on its own clock, which may lag this replica's.
        return until if until > now else None

    async def note_alert(self, app_key: str, now: float, window_s: int, channel: str = "") -> int:
        key = f"{self._p}alerts:{channel}" if channel else f"{self._p}alerts"
        with self._guard("note_alert"):
            async with self._r.pipeline(transaction=True) as pipe:
                # GT: a replica reporting late with an older `now` must not move an app back in time.
                pipe.zadd(key, {app_key: now}, gt=True)
                pipe.zremrangebyscore(key, "-inf", now - window_s)
                pipe.zcard(key)
                pipe.expire(key, window_s)
                results = await pipe.execute()
        return int(results[2])

    async def add_to_digest(self, app_key: str, payload: dict[str, Any]) -> None:
        key = f"{self._p}digest"
        value = json.dumps(payload)
        with self._guard("add_to_digest"):
            async with self._r.pipeline(transaction=True) as pipe:
                # A hash, not a list: the digest says where each app stands now, once, however often it fired.
                pipe.hset(key, app_key, value)
                pipe.expire(key, DIGEST_TTL_S)
                await pipe.execute()

    async def peek_digest(self) -> dict[str, str]:
        with self._guard("peek_digest"):
            raw = await self._r.hgetall(f"{self._p}digest")
        return {text(k): text(v) for k, v in sorted(raw.items())}

    async def take_from_digest(self, taken: dict[str, str]) -> None:
        if taken:
            with self._guard("take_from_digest"):
                await self._hdel_unchanged(keys=[f"{self._p}digest"], args=[x for kv in taken.items() for x in kv])

    async def acquire_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        with self._guard("acquire_lock"):
            return bool(await self._r.set(f"{self._p}lock:{name}", owner, nx=True, px=ttl_s * 1000))

    async def refresh_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        with self._guard("refresh_lock"):
            return bool(await self._refresh(keys=[f"{self._p}lock:{name}"], args=[owner, ttl_s * 1000]))

    async def release_lock(self, name: str, owner: str) -> None:
        with self._guard("release_lock"):
            await self._release(keys=[f"{self._p}lock:{name}"], args=[owner])

    async def add_approval(self, fix_id: str, user: str, record: dict[str, Any], now: float,
                           ttl_s: int) -> dict[str, dict[str, Any]]:  # fmt: skip
        key = f"{self._p}approvals:{fix_id}"
        value = json.dumps({**record, "at": now})
        with self._guard("add_approval"):
            async with self._r.pipeline(transaction=True) as pipe:
                # HSETNX: clicking twice never moves a user's approval forward in time, nor counts it twice
                pipe.hsetnx(key, user, value)
                pipe.expire(key, ttl_s)
                pipe.hgetall(key)
                *_, raw = await pipe.execute()
        return fresh_approvals(raw, now, ttl_s)

    async def clear_approvals(self, fix_id: str) -> None:
        with self._guard("clear_approvals"):
            await self._r.delete(f"{self._p}approvals:{fix_id}")

    async def save_pr(self, fix_id: str, record: dict[str, Any]) -> None:
        key = f"{self._p}prs"
        value = json.dumps(record)
        with self._guard("save_pr"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.hset(key, fix_id, value)
                pipe.expire(key, PR_TTL_S)
                await pipe.execute()

    async def get_pr(self, fix_id: str) -> dict[str, Any] | None:
        with self._guard("get_pr"):
            return json_object(await self._r.hget(f"{self._p}prs", fix_id))

    async def list_prs(self) -> dict[str, dict[str, Any]]:
        with self._guard("list_prs"):
            raw = await self._r.hgetall(f"{self._p}prs")
        return {text(k): v for k, r in sorted(raw.items()) if (v := json_object(r)) is not None}

    async def forget_pr(self, fix_id: str) -> None:
        with self._guard("forget_pr"):
            await self._r.hdel(f"{self._p}prs", fix_id)

    async def append_audit(self, record: dict[str, str]) -> str:
        fields: dict[FieldT, EncodableT] = {k: str(v) for k, v in record.items()}
        with self._guard("append_audit"):
            return text(await self._r.xadd(f"{self._p}audit", fields, maxlen=AUDIT_MAXLEN, approximate=True))

    async def remember_message(self, channel: str, ts: str, message: dict[str, Any], ttl_s: int) -> None:
        value = json.dumps(message)
        with self._guard("remember_message"):
            await self._r.set(f"{self._p}message:{channel}:{ts}", value, ex=ttl_s)

    async def recall_message(self, channel: str, ts: str) -> dict[str, Any] | None:
        with self._guard("recall_message"):
            raw = await self._r.get(f"{self._p}message:{channel}:{ts}")
        return json_object(raw)

    async def add_fix_button(self, fix_id: str, place: dict[str, str], ttl_s: int) -> None:
        key = f"{self._p}buttons:{fix_id}"
        field = f"{place.get('channel')}:{place.get('ts')}:{place.get('block_id')}"
        with self._guard("add_fix_button"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.hset(key, field, json.dumps(place))
                pipe.expire(key, ttl_s)
                await pipe.execute()

    async def fix_buttons(self, fix_id: str) -> list[dict[str, str]]:
        with self._guard("fix_buttons"):
            raw = await self._r.hgetall(f"{self._p}buttons:{fix_id}")
        return [p for v in raw.values() if (p := json_object(v)) is not None]

    async def outbox_get(self, key: str) -> dict[str, Any] | None:
        with self._guard("outbox_get"):
            return json_object(await self._r.get(f"{self._p}post:{key}"))

    async def outbox_put(self, key: str, record: dict[str, Any], ttl_s: int) -> None:
        value = json.dumps(record)
        with self._guard("outbox_put"):
            await self._r.set(f"{self._p}post:{key}", value, ex=ttl_s)

    async def outbox_delete(self, key: str) -> None:
        with self._guard("outbox_delete"):
            await self._r.delete(f"{self._p}post:{key}")

    async def read_audit(self, count: int = 100) -> list[dict[str, str]]:
        with self._guard("read_audit"):
            rows = await self._r.xrange(f"{self._p}audit", count=count)
        return [{text(k): text(v) for k, v in fields.items()} for _, fields in rows or [] if fields]

    async def close(self) -> None:
        if self._owns_client:
            await self._r.aclose()
