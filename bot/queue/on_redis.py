""":class:`RedisQueue`: the :class:`bot.queue.WorkQueue` on a Redis stream read through one consumer group.

Shared by every replica; the keys are listed in :mod:`bot.queue`.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis.asyncio
import redis.exceptions
from redis.typing import EncodableT, FieldT

from bot.queue.base import DEAD_MAXLEN, RELEASED_IDLE_MS, Entry, JobJSON, job_text
from bot.store import RedisGuard, connect, json_object, text

log = logging.getLogger("bot.queue")

# XAUTOCLAIM examines at most 10 x COUNT pending entries per call; a few rounds find stale entries behind
# a long run of busy ones without turning one claim_stale into an unbounded scan.
_CLAIM_ROUNDS = 5

# The mark and the entry in one server-side step: a mark without its entry would answer Argo CD's retry
# "duplicate" for an alert that was never queued. XADD comes first: if anything fails after it, the worst case is
# a job queued twice (the worker is idempotent), never a job lost.
_ENQUEUE_ONCE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'job', ARGV[3])
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
return id
"""
# Touch (IDLE 0) or hand back (IDLE huge) an entry only while this consumer holds it: a plain XCLAIM would take it
# back from a consumer that has claimed it meanwhile.
_RECLAIM = """
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if p[1] and p[1][2] == ARGV[2] then
  redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'IDLE', ARGV[4], 'JUSTID')
  return 1
end
return 0
"""


class RedisQueue:
    """:class:`WorkQueue` on a Redis stream and consumer group."""

    def __init__(
        self,
        client: redis.asyncio.Redis,
        stream: str = "argo-why:jobs",
        group: str = "workers",
        dead: str = "argo-why:dead",
        maxlen: int = 100_000,
    ) -> None:
        self._r = client
        self.stream = stream
        self.group = group
        self.dead = dead
        self.maxlen = maxlen
        self._guard = RedisGuard(client)
        self._owns_client = False
        self._enqueue_once = client.register_script(_ENQUEUE_ONCE)
        self._reclaim = client.register_script(_RECLAIM)
        timeout = client.connection_pool.connection_kwargs.get("socket_timeout")
        # XREADGROUP BLOCK longer than the socket timeout would look like a dead server (TimeoutError).
        self._max_block_ms = None if timeout is None else int(float(timeout) * 1000) - 500

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisQueue:
        """A queue with its own client (closed by :meth:`close`); ``kwargs`` as for the constructor."""
        queue = cls(connect(url), **kwargs)
        queue._owns_client = True
        return queue

    async def close(self) -> None:
        if self._owns_client:
            await self._r.aclose()

    async def ensure(self) -> None:
        with self._guard("ensure"):
            try:
                # From id 0, not $: jobs enqueued before the group existed must be delivered too.
                await self._r.xgroup_create(self.stream, self.group, id="0", mkstream=True)
            except redis.exceptions.ResponseError as e:
                if "BUSYGROUP" not in str(e):
                    raise

    async def enqueue(self, job: dict[str, Any]) -> str:
        value = json.dumps(job)  # before the guard: an unserialisable job is a bug, not an outage
        with self._guard("enqueue"):
            entry_id = await self._r.xadd(self.stream, {"job": value}, maxlen=self.maxlen, approximate=True)
        return text(entry_id)

    async def enqueue_once(self, mark: str, ttl_s: int, job: dict[str, Any] | JobJSON) -> str | None:
        value = job_text(job)
        seen = f"{self.stream}:seen:{mark}"
        with self._guard("enqueue_once"):
            try:
                # EVALSHA by hand: every webhook comes through here, and redis-py's Script object adds a deprecation
                # shim and a Pipeline check to each call; one round trip either way
                entry_id = await self._r.execute_command(  # type: ignore[no-untyped-call]
                    "EVALSHA", self._enqueue_once.sha, 2, seen, self.stream, ttl_s, self.maxlen, value
                )
            except redis.exceptions.NoScriptError:  # a new or flushed server: the Script loads it, then EVALSHA
                entry_id = await self._enqueue_once(keys=[seen, self.stream], args=[ttl_s, self.maxlen, value])
        return None if entry_id is None else text(entry_id)

    async def read(self, consumer: str, count: int = 1, block_ms: int = 1000) -> list[Entry]:
        if self._max_block_ms is not None and block_ms > self._max_block_ms:
            raise ValueError(f"block_ms={block_ms} must stay below the Redis socket timeout ({self._max_block_ms} ms)")
        with self._guard("read"):
            try:
                reply = await self._xreadgroup(consumer, count, block_ms)
            except redis.exceptions.ResponseError as e:
                if "NOGROUP" not in str(e):
                    raise
                log.warning(
                    "consumer group %s on %s is gone (Redis lost its data?); recreating it", self.group, self.stream
                )
                await self.ensure()
                reply = await self._xreadgroup(consumer, count, block_ms)
            messages: list[Any] = []
            # RESP2 replies [[stream, messages]], RESP3 {stream: messages}; accept both.
            for _, msgs in reply.items() if isinstance(reply, dict) else reply:
                messages.extend(msgs)
            return await self._entries(messages, {})

    async def _xreadgroup(self, consumer: str, count: int, block_ms: int) -> Any:
        # BLOCK 0 means "forever" to Redis; here 0 means "do not wait".
        block = block_ms if block_ms > 0 else None
        return await self._r.xreadgroup(self.group, consumer, {self.stream: ">"}, count=count, block=block)

    async def _entries(self, messages: list[Any], deliveries: dict[str, int]) -> list[Entry]:
        out: list[Entry] = []
        for mid, fields in messages:
            if fields is None:
                continue  # deleted (trimmed) while pending: nothing left to deliver
            entry_id = text(mid)
            decoded = {text(k): text(v) for k, v in fields.items()}
            job = json_object(decoded.get("job"))
            n = deliveries.get(entry_id, 1)
            if job is None:
                # Handing it out would fail every worker forever; park it where a person can look at it.
                log.error("stream entry %s has no readable job; dead-lettering it", entry_id)
                await self._bury(entry_id, decoded.get("job", ""), "unreadable job field", n)
                continue
            out.append(Entry(entry_id, job, n))
        return out

    async def ack(self, entry_id: str) -> None:
        with self._guard("ack"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.xack(self.stream, self.group, entry_id)
                # Deleting acked entries keeps the stream as small as the backlog, and XLEN equal to depth().
                pipe.xdel(self.stream, entry_id)
                await pipe.execute()

    async def claim_stale(self, consumer: str, min_idle_ms: int, count: int = 10) -> list[Entry]:
        if count <= 0:
            return []
        with self._guard("claim_stale"):
            messages: list[Any] = []
            start = "0-0"
            try:
                for _ in range(_CLAIM_ROUNDS):
                    reply = await self._r.xautoclaim(
                        self.stream, self.group, consumer, min_idle_ms, start, count=count - len(messages)
                    )
                    # Redis 7: [next cursor, claimed messages, ids deleted while pending (already un-pended)]
                    messages.extend(reply[1])
                    start = text(reply[0])
                    if start == "0-0" or len(messages) >= count:
                        break
            except redis.exceptions.ResponseError as e:
                if "NOGROUP" not in str(e):
                    raise
                return []  # no group, so nothing pending; the next read recreates it
            messages = [m for m in messages if m[1] is not None]
            if not messages:
                return []
            # XAUTOCLAIM does not report delivery counts; XPENDING does (XAUTOCLAIM has just incremented them).
            async with self._r.pipeline(transaction=False) as pipe:
                for mid, _ in messages:
                    pipe.xpending_range(self.stream, self.group, min=mid, max=mid, count=1)
                infos = await pipe.execute()
            deliveries: dict[str, int] = {}
            for info in infos:
                for row in info:
                    deliveries[text(row["message_id"])] = int(row["times_delivered"])
            # An entry missing from XPENDING was acked meanwhile by its previous owner: it is done, skip it.
            return await self._entries([m for m in messages if text(m[0]) in deliveries], deliveries)

    async def touch(self, consumer: str, entry_id: str) -> bool:
        with self._guard("touch"):
            return bool(await self._reclaim(keys=[self.stream], args=[self.group, consumer, entry_id, 0]))

    async def release(self, consumer: str, entry_id: str) -> None:
        with self._guard("release"):
            await self._reclaim(keys=[self.stream], args=[self.group, consumer, entry_id, RELEASED_IDLE_MS])

    async def dead_letter(self, entry: Entry, reason: str, *, retry: bool = False) -> None:
        await self._bury(entry.id, json.dumps(entry.job), reason, entry.deliveries, retry=retry)

    async def revive(self, dead_id: str, job: dict[str, Any]) -> str:
        value = json.dumps(job)
        with self._guard("revive"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.xadd(self.stream, {"job": value}, maxlen=self.maxlen, approximate=True)
                pipe.xdel(self.dead, dead_id)
                entry_id, _ = await pipe.execute()
        return text(entry_id)

    async def _bury(self, entry_id: str, job: str, reason: str, deliveries: int, *, retry: bool = False) -> None:
        record: dict[FieldT, EncodableT] = {
            "id": entry_id,
            "job": job,
            "reason": reason,
            "retry": int(retry),
            "deliveries": deliveries,
            "at": f"{time.time():.3f}",
        }
        with self._guard("dead_letter"):
            # One transaction: the job is never both gone from the queue and missing from the dead letters.
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.xadd(self.dead, record, maxlen=DEAD_MAXLEN, approximate=True)
                pipe.xack(self.stream, self.group, entry_id)
                pipe.xdel(self.stream, entry_id)
                await pipe.execute()

    async def dead_letters(self, count: int = 100) -> list[dict[str, Any]]:
        with self._guard("dead_letters"):
            rows = await self._r.xrange(self.dead, count=count)
        out: list[dict[str, Any]] = []
        for dead_id, fields in rows or []:
            if fields is None:
                continue
            f = {text(k): text(v) for k, v in fields.items()}
            raw = f.get("job", "")
            job = json_object(raw)
            out.append(
                {
                    "dead_id": text(dead_id or ""),
                    "id": f.get("id", ""),
                    "job": raw if job is None else job,
                    "reason": f.get("reason", ""),
                    "retry": f.get("retry") == "1",
                    "deliveries": int(f.get("deliveries", "0")),
                    "at": float(f.get("at", "0")),
                }
            )
        return out

    async def depth(self) -> int:
        with self._guard("depth"):
            # Acked and dead-lettered entries are deleted, so the stream holds exactly waiting + pending.
            return int(await self._r.xlen(self.stream))

    async def pending(self) -> int:
        with self._guard("pending"):
            try:
                summary = await self._r.xpending(self.stream, self.group)
            except redis.exceptions.ResponseError as e:
                if "NOGROUP" not in str(e):
                    raise
                return 0
        return int(summary["pending"])
