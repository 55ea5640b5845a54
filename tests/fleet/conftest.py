"""Fixtures of the fleet tests: ``store``, each test run on both stores (a real Redis and the in-memory one), so
the fleet index behaves the same whichever the bot is given."""

from __future__ import annotations

import pytest

from bot.store import MemoryStore, RedisStore


@pytest.fixture(params=["redis", "memory"])
async def store(request: pytest.FixtureRequest, redis_url: str):  # type: ignore[no-untyped-def]
    if request.param == "memory":
        yield MemoryStore()
        return
    s = RedisStore.from_url(redis_url)
    yield s
    await s.close()
