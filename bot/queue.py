"""The durable work queue between the HTTP edge and the workers: at-least-once delivery with retries.

One interface, :class:`WorkQueue`, two implementations:

* :class:`RedisQueue` -- a Redis stream read through one consumer group, shared by every replica;
* :class:`MemoryQueue` -- the same semantics inside one process (``REDIS_URL`` unset): one replica only, and
  queued work is lost on restart. Its clock is injectable so tests can make entries idle without sleeping.

What callers can rely on (both implementations):

* every enqueued job is delivered to exactly one consumer at a time, and stays *pending* (delivered, not
  acknowledged) until that consumer calls :meth:`WorkQueue.ack` -- which the worker does only after Slack
  accepted the message. A consumer that dies leaves its entries pending; once they have been idle for
  ``min_idle_ms``, :meth:`WorkQueue.claim_stale` hands them to another consumer with ``deliveries`` counting
  every delivery so far (1 on the first read, 2 after the first claim, ...). Nothing is ever dropped silently:
  an entry leaves the queue by ``ack`` or by :meth:`WorkQueue.dead_letter`, which records why;
* jobs are JSON objects; a job that is not JSON-serialisable is refused at enqueue (``TypeError``). A stream
  entry that cannot be decoded (written by something else) is dead-lettered on sight, never handed out;
* :meth:`WorkQueue.depth` counts entries not yet acknowledged (waiting + pending), :meth:`WorkQueue.pending`
  the delivered-but-unacknowledged ones; both are cheap enough for every metrics scrape;
* Redis connection failures and timeouts surface as :class:`bot.store.StoreUnavailable` naming the host,
  never the password. If Redis comes back empty (restart without persistence, failover to an empty replica)
  the consumer group is recreated on the next read instead of failing forever with NOGROUP.

Redis keys (names are constructor arguments; these are the defaults):

=====================  ==========================================================  ================================
key                    value                                                       lifetime
=====================  ==========================================================  ================================
``argo-why:jobs``      stream; field ``job`` = JSON job. Consumer group            no TTL: acked entries are deleted
                       ``workers`` (with its pending-entries list) lives in it.    (XDEL); capped at ~``maxlen``
``argo-why:dead``      stream; fields ``id``, ``job``, ``reason``,                  no TTL; capped at ~10 000
                       ``deliveries``, ``at`` -- jobs given up on                   entries, oldest dropped
=====================  ==========================================================  ================================

The ``maxlen`` cap (approximate, ``MAXLEN ~``) exists only so that a backlog with every worker down cannot
exhaust Redis memory: when it is reached the *oldest* entries are dropped even if unacknowledged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import redis.asyncio
import redis.exceptions
from redis.typing import EncodableT, FieldT

from bot.store import RedisGuard, connect, json_object, text

log = logging.getLogger(__name__)

DEAD_MAXLEN = 10_000
# XAUTOCLAIM examines at most 10 x COUNT pending entries per call; a few rounds find stale entries behind
# a long run of busy ones without turning one claim_stale into an unbounded scan.
_CLAIM_ROUNDS = 5


@dataclass
class Entry:
    id: str
    job: dict[str, Any]
    deliveries: int


class WorkQueue(Protocol):
    async def ensure(self) -> None:
        """Create the stream and consumer group if missing (idempotent; safe on every start of every replica)."""
        ...

    async def enqueue(self, job: dict[str, Any]) -> str:
        """Queue ``job``; the returned entry id is what the webhook answers with."""
        ...

    async def read(self, consumer: str, count: int = 1, block_ms: int = 1000) -> list[Entry]:
        """New entries for ``consumer`` (deliveries == 1), waiting up to ``block_ms`` (0: do not wait)."""
        ...

    async def ack(self, entry_id: str) -> None:
        """Done with the entry: remove it. Unknown or already-acked ids are ignored."""
        ...

    async def claim_stale(self, consumer: str, min_idle_ms: int, count: int = 10) -> list[Entry]:
        """Take over entries delivered to anyone and not acked for ``min_idle_ms``, oldest first."""
        ...

    async def dead_letter(self, entry: Entry, reason: str) -> None:
        """Give up on the entry: record it with ``reason`` in the dead-letter stream, then remove it."""
        ...

    async def depth(self) -> int: ...

    async def pending(self) -> int: ...

    async def close(self) -> None: ...


# --- Redis ---------------------------------------------------------------------------------------------------


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

    async def dead_letter(self, entry: Entry, reason: str) -> None:
        await self._bury(entry.id, json.dumps(entry.job), reason, entry.deliveries)

    async def _bury(self, entry_id: str, job: str, reason: str, deliveries: int) -> None:
        record: dict[FieldT, EncodableT] = {
            "id": entry_id,
            "job": job,
            "reason": reason,
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
        """The oldest ``count`` dead letters: ``id``, ``job`` (dict, or the raw text if unreadable), ``reason``,
        ``deliveries``, ``at`` (for operators and tests; not part of :class:`WorkQueue`)."""
        with self._guard("dead_letters"):
            rows = await self._r.xrange(self.dead, count=count)
        out: list[dict[str, Any]] = []
        for _, fields in rows or []:
            if fields is None:
                continue
            f = {text(k): text(v) for k, v in fields.items()}
            raw = f.get("job", "")
            job = json_object(raw)
            out.append(
                {
                    "id": f.get("id", ""),
                    "job": raw if job is None else job,
                    "reason": f.get("reason", ""),
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


# --- memory --------------------------------------------------------------------------------------------------


@dataclass
class _Delivery:
    consumer: str
    at: float
    deliveries: int


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq)


class MemoryQueue:
    """:class:`WorkQueue` in this process, with Redis stream semantics (ids ``<ms>-<seq>``, pending list).

    ``clock`` drives ids and idle times; waiting in :meth:`read` uses the event loop's real time, so a frozen
    test clock cannot make a blocking read hang.
    """

    def __init__(self, clock: Callable[[], float] = time.time, maxlen: int = 100_000) -> None:
        self._clock = clock
        self.maxlen = maxlen
        self._entries: dict[str, str] = {}  # id -> job JSON, in id order: the stream
        self._waiting: deque[str] = deque()  # never delivered, oldest first
        self._pending: dict[str, _Delivery] = {}
        self._dead: list[dict[str, Any]] = []
        self._last = (0, -1)
        self._wakeups: list[asyncio.Future[None]] = []

    async def close(self) -> None:
        return None

    async def ensure(self) -> None:
        return None

    async def enqueue(self, job: dict[str, Any]) -> str:
        value = json.dumps(job)
        ms = int(self._clock() * 1000)
        # Like Redis: ids grow strictly even when the clock stands still or steps back.
        self._last = (ms, 0) if ms > self._last[0] else (self._last[0], self._last[1] + 1)
        entry_id = f"{self._last[0]}-{self._last[1]}"
        self._entries[entry_id] = value
        self._waiting.append(entry_id)
        while len(self._entries) > self.maxlen:
            oldest = next(iter(self._entries))
            del self._entries[oldest]
            self._pending.pop(oldest, None)
            if self._waiting and self._waiting[0] == oldest:
                self._waiting.popleft()
        for f in self._wakeups:
            if not f.done():
                f.set_result(None)
        return entry_id

    def _take(self, consumer: str, count: int) -> list[Entry]:
        out: list[Entry] = []
        now = self._clock()
        while self._waiting and len(out) < count:
            entry_id = self._waiting.popleft()
            self._pending[entry_id] = _Delivery(consumer, now, 1)
            out.append(Entry(entry_id, json.loads(self._entries[entry_id]), 1))
        return out

    async def read(self, consumer: str, count: int = 1, block_ms: int = 1000) -> list[Entry]:
        entries = self._take(consumer, count)
        if entries or block_ms <= 0:
            return entries
        wakeup: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._wakeups.append(wakeup)
        try:
            await asyncio.wait({wakeup}, timeout=block_ms / 1000)
        finally:
            self._wakeups.remove(wakeup)
        return self._take(consumer, count)

    async def ack(self, entry_id: str) -> None:
        self._pending.pop(entry_id, None)
        if self._entries.pop(entry_id, None) is not None and entry_id in self._waiting:
            self._waiting.remove(entry_id)  # acked before delivery: XDEL removes it from the stream too

    async def claim_stale(self, consumer: str, min_idle_ms: int, count: int = 10) -> list[Entry]:
        if count <= 0:
            return []
        now = self._clock()
        out: list[Entry] = []
        for entry_id in sorted(self._pending, key=_id_key):
            d = self._pending[entry_id]
            if (now - d.at) * 1000 >= min_idle_ms:
                d.consumer, d.at, d.deliveries = consumer, now, d.deliveries + 1
                out.append(Entry(entry_id, json.loads(self._entries[entry_id]), d.deliveries))
                if len(out) >= count:
                    break
        return out

    async def dead_letter(self, entry: Entry, reason: str) -> None:
        record = {"id": entry.id, "job": json.loads(json.dumps(entry.job)), "reason": reason}
        self._dead.append({**record, "deliveries": entry.deliveries, "at": self._clock()})
        del self._dead[:-DEAD_MAXLEN]
        await self.ack(entry.id)

    async def dead_letters(self, count: int = 100) -> list[dict[str, Any]]:
        """As :meth:`RedisQueue.dead_letters`."""
        return [dict(d) for d in self._dead[:count]]

    async def depth(self) -> int:
        return len(self._entries)

    async def pending(self) -> int:
        return len(self._pending)


if TYPE_CHECKING:
    # mypy proves here that both implementations satisfy the protocol.
    def _conforms(r: RedisQueue, m: MemoryQueue) -> tuple[WorkQueue, WorkQueue]:
        return r, m
