"""The durable work queue between the HTTP edge and the workers: at-least-once delivery with retries.

One interface, :class:`WorkQueue`, two implementations:

* :class:`RedisQueue` -- a Redis stream read through one consumer group, shared by every replica;
* :class:`MemoryQueue` -- the same semantics inside one process (``REDIS_URL`` unset): one replica only, and
  queued work is lost on restart. Its clock is injectable so tests can make entries idle without sleeping.

What callers can rely on (both implementations):

* :meth:`WorkQueue.enqueue_once` writes its dedupe mark and the entry together or not at all: an accepted alert
  is never lost to a mark left behind by a failed enqueue;
* every enqueued job is delivered to exactly one consumer at a time, and stays *pending* (delivered, not
  acknowledged) until that consumer calls :meth:`WorkQueue.ack` -- which the worker does only after Slack
  accepted the message. A consumer that dies leaves its entries pending; once they have been idle for
  ``min_idle_ms``, :meth:`WorkQueue.claim_stale` hands them to another consumer with ``deliveries`` counting
  every delivery so far (1 on the first read, 2 after the first claim, ...). A consumer working on a long job keeps
  it with :meth:`WorkQueue.touch`; one that stops hands it back at once with :meth:`WorkQueue.release` (the next
  ``claim_stale`` takes it, whatever its ``min_idle_ms``). Nothing is ever dropped silently:
  an entry leaves the queue by ``ack`` or by :meth:`WorkQueue.dead_letter`, which records why;
* jobs are JSON objects; a job that is not JSON-serialisable is refused at enqueue (``TypeError``). A stream
  entry that cannot be decoded (written by something else) is dead-lettered on sight, never handed out;
* :meth:`WorkQueue.depth` counts entries not yet acknowledged (waiting + pending), :meth:`WorkQueue.pending`
  the delivered-but-unacknowledged ones; both are cheap enough for every metrics scrape;
* Redis connection failures and timeouts surface as :class:`bot.store.StoreUnavailable` naming the host,
  never the password. If Redis comes back empty (restart without persistence, failover to an empty replica)
  the consumer group is recreated on the next read instead of failing forever with NOGROUP.

Redis keys (names are constructor arguments; these are the defaults):

=============================  ==================================================  ================================
key                            value                                               lifetime
=============================  ==================================================  ================================
``argo-why:jobs``              stream; field ``job`` = JSON job. Consumer group    no TTL: acked entries are deleted
                               ``workers`` (with its pending-entries list) lives   (XDEL); capped at ~``maxlen``
                               in it.
``argo-why:jobs:seen:<mark>``  ``"1"`` -- the mark of ``enqueue_once`` (a          ``ttl_s`` of the call
                               webhook's idempotency key, a sweep's)
``argo-why:dead``              stream; fields ``id``, ``job``, ``reason``,         no TTL; capped at ~10 000
                               ``retry``, ``deliveries``, ``at`` -- jobs given up  entries, oldest dropped
                               on (``revive`` moves one back to the jobs)
=============================  ==================================================  ================================

The ``maxlen`` cap (approximate, ``MAXLEN ~``) exists only so that a backlog with every worker down cannot
exhaust Redis memory: when it is reached the *oldest* entries are dropped even if unacknowledged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.queue.base import DEAD_MAXLEN, RELEASED_IDLE_MS, Entry, JobJSON, WorkQueue
from bot.queue.in_memory import MemoryQueue
from bot.queue.on_redis import RedisQueue

__all__ = ["DEAD_MAXLEN", "RELEASED_IDLE_MS", "Entry", "JobJSON", "MemoryQueue", "RedisQueue", "WorkQueue"]

if TYPE_CHECKING:
    # mypy proves here that both implementations satisfy the protocol.
    def _conforms(r: RedisQueue, m: MemoryQueue) -> tuple[WorkQueue, WorkQueue]:
        return r, m
