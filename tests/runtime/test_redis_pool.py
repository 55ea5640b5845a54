"""The bot's Redis connection pool (``bot.store.connection.WaitingPool``, issue 29), against a real redis-server.

* with every connection busy, a command waits for one to be released (up to ``wait_s``) instead of failing, and the
  pool never opens more than ``max_connections``;
* past ``wait_s`` the command fails as "unavailable" (:class:`StoreUnavailable` through the guard), and the pool
  is whole afterwards;
* a connection that cannot connect gives its slot back: with Redis gone, every command fails at once (it does not
  wait for a slot that a failed connection kept), and the pool serves again when Redis is back.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio
import redis.exceptions

from bot.store import StoreUnavailable
from bot.store.connection import RedisGuard, connect
from tests.harness.redis_server import RedisProxy


async def _clients(url: str) -> int:
    probe = redis.asyncio.Redis.from_url(url)
    try:
        return len(await probe.client_list()) - 1  # without the probe itself
    finally:
        await probe.aclose()


async def test_a_burst_waits_for_a_free_connection_and_never_opens_more(redis_url: str) -> None:
    client = connect(redis_url, max_connections=2, wait_s=5)
    try:
        # six commands that each hold their connection for 0.3 s, on two connections: three waves
        start = time.monotonic()
        answers = await asyncio.gather(*(client.blpop([f"pool-test:empty:{i}"], timeout=0.3) for i in range(6)))
        took = time.monotonic() - start
        assert answers == [None] * 6
        assert took >= 0.85, took  # they waited for each other: never more than two at once
        assert await _clients(redis_url) <= 2
        assert await client.ping()  # and the pool is whole
    finally:
        await client.aclose()


async def test_past_the_wait_a_command_is_unavailable_and_the_pool_stays_whole(redis_url: str) -> None:
    client = connect(redis_url, max_connections=1, wait_s=0.2)
    guard = RedisGuard(client)
    try:
        busy = asyncio.ensure_future(client.blpop(["pool-test:empty"], timeout=1))
        await asyncio.sleep(0.1)
        with pytest.raises(StoreUnavailable, match="No connection available"), guard("get"):
            await client.get("pool-test:key")
        assert await busy is None
        assert await client.set("pool-test:key", "1")  # the slot came back with the connection
    finally:
        await client.aclose()


async def test_connections_that_cannot_connect_give_their_slot_back(redis_url: str) -> None:
    async with RedisProxy(redis_url) as proxy:
        client = connect(proxy.url, max_connections=1, wait_s=5)
        try:
            assert await client.ping()
            proxy.cut_on(b"GET")  # Redis goes away at the next GET, and refuses connections until restored
            for _ in range(3):
                start = time.monotonic()
                with pytest.raises(redis.exceptions.ConnectionError):
                    await client.get("pool-test:key")
                assert time.monotonic() - start < 4, "waited for a slot a failed connection kept"
            proxy.restore()
            assert await client.ping()
        finally:
            await client.aclose()
