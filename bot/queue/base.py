"""The queue's contract: the :class:`WorkQueue` protocol and the :class:`Entry` it hands out (no Redis here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

DEAD_MAXLEN = 10_000


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
