"""Redis connections as the bot needs them (shared by the store and the queue): fail fast, never leak the password.

:func:`connect` builds a client tuned for answering webhooks in milliseconds; :class:`RedisGuard` turns
transient redis-py failures into :class:`bot.store.StoreUnavailable` naming the server, never its password.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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


def connect(url: str, *, max_connections: int = 64, wait_s: float = 2.0) -> redis.asyncio.Redis:
    """A client for ``url`` tuned for the bot: fail fast when Redis is gone, ride out a short blip.

    redis-py's default retries (10, up to 1 s apart) would hold a webhook for seconds while Redis is down; the
    webhook must answer in milliseconds, so two quick retries, then :class:`StoreUnavailable`. The socket
    timeout must stay above the longest ``block_ms`` a queue read uses (``bot.queue`` checks this). A burst of
    webhooks waits up to ``wait_s`` for one of the ``max_connections`` connections instead of failing at once
    (redis-py's default pool raises the moment its connections are all busy): :class:`WaitingPool`.
    """
    pool = WaitingPool.from_url(
        url,
        max_connections=max_connections,
        wait_s=wait_s,
        decode_responses=True,
        socket_connect_timeout=2,
        socket_timeout=10,
        health_check_interval=30,
        retry=Retry(ExponentialWithJitterBackoff(cap=0.2, base=0.01), retries=2),
    )
    return redis.asyncio.Redis.from_pool(pool)


class WaitingPool(redis.asyncio.ConnectionPool):
    """A connection pool that, with all ``max_connections`` in use, waits up to ``wait_s`` seconds for one to be
    released, then raises ``ConnectionError("No connection available.")`` (a :class:`StoreUnavailable` for the
    guard): what redis-py's ``BlockingConnectionPool`` does, without its condition variable and timer on every
    command (about 10 us of CPU per command, for each webhook: README, "Development", the benchmarks). The slots
    are a semaphore: taking one never waits while a connection is free.

    A slot belongs to a connection from :meth:`get_connection` until its :meth:`release`; a connection that fails
    to connect is released by redis-py inside ``get_connection``, before it holds a slot, and its slot is given back
    here.
    """

    def __init__(self, *, wait_s: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._wait_s = wait_s
        self._slots = asyncio.Semaphore(self.max_connections)
        self._holding: set[Any] = set()

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        if self._slots.locked():
            try:
                async with asyncio.timeout(self._wait_s):
                    await self._slots.acquire()
            except TimeoutError:
                raise redis.exceptions.ConnectionError("No connection available.") from None
        else:
            await self._slots.acquire()  # a slot is free: returns at once
        try:
            connection = await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
        except BaseException:
            self._slots.release()
            raise
        self._holding.add(connection)
        return connection

    async def release(self, connection: Any) -> None:
        try:
            await super().release(connection)
        finally:
            if connection in self._holding:
                self._holding.discard(connection)
                self._slots.release()


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
