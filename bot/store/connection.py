"""Redis connections as the bot needs them (shared by the store and the queue): fail fast, never leak the password.

:func:`connect` builds a client tuned for answering webhooks in milliseconds; :class:`RedisGuard` turns
transient redis-py failures into :class:`bot.store.StoreUnavailable` naming the server, never its password.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis.asyncio
import redis.exceptions
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from bot.store.base import StoreUnavailable

# What "Redis is down" looks like from redis-py. ReadOnlyError is what a client gets from a replica that has
# just been demoted during a failover: for the bot that is the same as unavailable, and just as transient.
# OSError / TimeoutError cover the rare socket errors redis-py lets through unwrapped.
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,
    TimeoutError,
    OSError,
)


def connect(url: str) -> redis.asyncio.Redis:
    """A client for ``url`` tuned for the bot: fail fast when Redis is gone, ride out a short blip.

    redis-py's default retries (10, up to 1 s apart) would hold a webhook for seconds while Redis is down; the
    webhook must answer in milliseconds, so two quick retries, then :class:`StoreUnavailable`. The socket
    timeout must stay above the longest ``block_ms`` a queue read uses (``bot.queue`` checks this).
    """
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        url,
        # A burst of webhooks waits up to 2 s for a free connection instead of failing at once
        # (the default pool raises MaxConnectionsError the moment its 100 connections are busy).
        max_connections=64,
        timeout=2,
        decode_responses=True,
        socket_connect_timeout=2,
        socket_timeout=10,
        health_check_interval=30,
        retry=Retry(ExponentialWithJitterBackoff(cap=0.2, base=0.01), retries=2),
    )
    return redis.asyncio.Redis.from_pool(pool)


class RedisGuard:
    """Turns transient redis-py failures into :class:`StoreUnavailable` naming the server, never its password."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        kw = client.connection_pool.connection_kwargs
        if kw.get("path"):
            self.where = f"unix:{kw['path']}"
        else:
            self.where = f"{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
        password = kw.get("password")
        self._secret = password if isinstance(password, str) and password else None

    @contextmanager
    def __call__(self, op: str) -> Iterator[None]:
        try:
            yield
        except _UNAVAILABLE as e:
            detail = f"{type(e).__name__}: {e}"
            if self._secret:
                # redis-py does not put the password in its messages today; make sure it never will here.
                detail = detail.replace(self._secret, "***")
            raise StoreUnavailable(
                f"Redis at {self.where} is unavailable ({op}): {detail}", where=self.where, op=op
            ) from e
