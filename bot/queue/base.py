"""The queue's contract: the :class:`WorkQueue` protocol and the :class:`Entry` it hands out (no Redis here)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

DEAD_MAXLEN = 10_000
# What release() sets an entry's idle time to: older than any claim_stale threshold, so the next claim takes it.
RELEASED_IDLE_MS = 10 * 365 * 24 * 3600 * 1000


class JobJSON(str):
    """A job already serialized (``json.dumps`` of its payload): what the queue stores as it is, where the caller
    needed the text anyway (the webhook checks it can be stored; serializing twice was a tenth of its time)."""


def job_text(job: dict[str, Any] | JobJSON) -> str:
    """The JSON text the queue stores for ``job``."""
    return job if isinstance(job, JobJSON) else json.dumps(job)


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

    async def enqueue_once(self, mark: str, ttl_s: int, job: dict[str, Any] | JobJSON) -> str | None:
        """Queue ``job`` unless ``mark`` was used within ``ttl_s``: the entry id, or ``None`` for a duplicate.

        The mark and the entry are written together or not at all, so a failed enqueue never leaves a mark that
        would make the retry look like a duplicate."""
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

    async def touch(self, consumer: str, entry_id: str) -> bool:
        """Reset the idle time of an entry ``consumer`` still holds (a long job is not taken over while it runs);
        False when another consumer has claimed it meanwhile (or it is gone)."""
        ...

    async def release(self, consumer: str, entry_id: str) -> None:
        """Hand an entry ``consumer`` holds back at once: the next :meth:`claim_stale` of any consumer takes it,
        whatever its ``min_idle_ms`` (graceful shutdown). Nothing happens if ``consumer`` no longer holds it."""
        ...

    async def dead_letter(self, entry: Entry, reason: str, *, retry: bool = False) -> None:
        """Give up on the entry: record it with ``reason`` in the dead-letter stream, then remove it. ``retry``
        marks it as worth doing again once its cause is gone (Argo CD unavailable): see :meth:`revive`."""
        ...

    async def dead_letters(self, count: int = 100) -> list[dict[str, Any]]:
        """The oldest ``count`` dead letters: ``dead_id`` (their id in the dead-letter stream), ``id`` (the entry's),
        ``job`` (dict, or the raw text if unreadable), ``reason``, ``retry``, ``deliveries``, ``at``."""
        ...

    async def revive(self, dead_id: str, job: dict[str, Any]) -> str:
        """Queue ``job`` again and remove the dead letter ``dead_id``, both or neither; the new entry id."""
        ...

    async def depth(self) -> int: ...

    async def pending(self) -> int: ...

    async def close(self) -> None: ...
