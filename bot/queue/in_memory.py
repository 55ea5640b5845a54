""":class:`MemoryQueue`: the :class:`bot.queue.WorkQueue` inside one process (``REDIS_URL`` unset).

The same semantics as the Redis stream: one replica only, and queued work is lost on restart. Its clock is
injectable so tests can make entries idle without sleeping.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.queue.base import DEAD_MAXLEN, RELEASED_IDLE_MS, Entry, JobJSON, job_text


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
        self._dead_seq = 0
        self._marks: dict[str, float] = {}  # enqueue_once mark -> expiry
        self._last = (0, -1)
        self._wakeups: list[asyncio.Future[None]] = []

    async def close(self) -> None:
        return None

    async def ensure(self) -> None:
        return None

    async def enqueue(self, job: dict[str, Any] | JobJSON) -> str:
        value = job_text(job)
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

    async def enqueue_once(self, mark: str, ttl_s: int, job: dict[str, Any] | JobJSON) -> str | None:
        now = self._clock()
        if self._marks.get(mark, 0.0) > now:
            return None
        entry_id = await self.enqueue(job)  # refuses an unserialisable job before the mark is set
        if len(self._marks) > 4 * self.maxlen:  # expired marks that are never asked about again
            self._marks = {k: exp for k, exp in self._marks.items() if exp > now}
        self._marks[mark] = now + ttl_s
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

    async def touch(self, consumer: str, entry_id: str) -> bool:
        d = self._pending.get(entry_id)
        if d is None or d.consumer != consumer:
            return False
        d.at = self._clock()
        return True

    async def release(self, consumer: str, entry_id: str) -> None:
        d = self._pending.get(entry_id)
        if d is not None and d.consumer == consumer:
            d.at = self._clock() - RELEASED_IDLE_MS / 1000

    async def dead_letter(self, entry: Entry, reason: str, *, retry: bool = False) -> None:
        self._dead_seq += 1
        record = {"dead_id": f"{int(self._clock() * 1000)}-{self._dead_seq}", "id": entry.id,
                  "job": json.loads(json.dumps(entry.job)), "reason": reason, "retry": retry}  # fmt: skip
        self._dead.append({**record, "deliveries": entry.deliveries, "at": self._clock()})
        del self._dead[:-DEAD_MAXLEN]
        await self.ack(entry.id)

    async def dead_letters(self, count: int = 100) -> list[dict[str, Any]]:
        return [dict(d) for d in self._dead[:count]]

    async def revive(self, dead_id: str, job: dict[str, Any]) -> str:
        entry_id = await self.enqueue(job)
        self._dead = [d for d in self._dead if d["dead_id"] != dead_id]
        return entry_id

    async def depth(self) -> int:
        return len(self._entries)

    async def pending(self) -> int:
        return len(self._pending)
