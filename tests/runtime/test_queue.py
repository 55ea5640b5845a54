"""bot.queue: every behaviour on both MemoryQueue and RedisQueue (a real redis-server), plus Redis outages.

Idle time: the MemoryQueue gets a fake clock; on Redis the tests really wait, with idle thresholds of tens
of milliseconds so that the whole file stays fast.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
import redis
import redis.asyncio

from bot.queue import Entry, MemoryQueue, RedisQueue, WorkQueue
from bot.store import StoreUnavailable
from tests.fakes.clock import FakeClock
from tests.harness.redis_server import RedisProcess, free_port, redis_outage  # noqa: F401  (fixture)

IDLE_MS = 100  # long enough that a fresh delivery is not idle yet (even on a slow CI), short enough to wait for


@dataclass
class QueueKit:
    kind: str
    url: str = ""
    clock: FakeClock | None = None
    memory: MemoryQueue | None = None

    @asynccontextmanager
    async def open(self) -> AsyncIterator[WorkQueue]:
        """A queue bound to the running loop: on Redis a new client each time, as another replica would have."""
        if self.memory is not None:
            yield self.memory
            return
        queue = RedisQueue.from_url(self.url)
        try:
            yield queue
        finally:
            await queue.close()

    async def idle(self, ms: int) -> None:
        if self.clock is not None:
            self.clock.now += ms / 1000
        else:
            await asyncio.sleep(ms / 1000)

    async def dead_letters(self, q: WorkQueue) -> list[dict[str, object]]:
        assert isinstance(q, RedisQueue | MemoryQueue)
        return await q.dead_letters()


@pytest.fixture(params=["memory", "redis"])
def kit(request: pytest.FixtureRequest) -> QueueKit:
    if request.param == "memory":
        clock = FakeClock()
        return QueueKit("memory", clock=clock, memory=MemoryQueue(clock))
    return QueueKit("redis", url=request.getfixturevalue("redis_url"))


def ids(entries: list[Entry]) -> list[str]:
    return [e.id for e in entries]


async def test_enqueue_read_ack_and_counts(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        await q.ensure()  # idempotent: every replica calls it at start
        sent = [await q.enqueue({"type": "webhook", "n": n}) for n in range(3)]
        assert all(re.fullmatch(r"\d+-\d+", i) for i in sent)
        assert len(set(sent)) == 3
        assert (await q.depth(), await q.pending()) == (3, 0)

        first = await q.read("w1", count=2, block_ms=0)
        assert [(e.id, e.job, e.deliveries) for e in first] == [
            (sent[0], {"type": "webhook", "n": 0}, 1),
            (sent[1], {"type": "webhook", "n": 1}, 1),
        ]
        assert (await q.depth(), await q.pending()) == (3, 2)
        second = await q.read("w2", count=5, block_ms=0)  # each entry goes to one consumer only
        assert ids(second) == [sent[2]]
        assert await q.read("w1", count=5, block_ms=0) == []
        assert (await q.depth(), await q.pending()) == (3, 3)

        await q.ack(sent[1])
        assert (await q.depth(), await q.pending()) == (2, 2)
        await q.ack(sent[1])  # acking twice is harmless
        await q.ack("1-0")  # so is an unknown id
        await q.ack(sent[0])
        await q.ack(sent[2])
        assert (await q.depth(), await q.pending()) == (0, 0)


async def test_jobs_enqueued_before_ensure_are_delivered(kit: QueueKit) -> None:
    async with kit.open() as q:
        sent = await q.enqueue({"n": 1})
        await q.ensure()
        assert ids(await q.read("w1", block_ms=0)) == [sent]


def test_entry_of_a_dead_consumer_is_claimed_by_another_after_min_idle(kit: QueueKit) -> None:
    async def first_replica() -> str:
        async with kit.open() as q:
            await q.ensure()
            sent = await q.enqueue({"type": "webhook", "app": "payments-api"})
            (entry,) = await q.read("replica-a", block_ms=0)
            assert entry.deliveries == 1
            return sent  # ... and replica-a dies here: no ack, its client is gone

    async def second_replica(sent: str) -> None:
        async with kit.open() as q:
            assert await q.claim_stale("replica-b", IDLE_MS) == []  # not idle long enough yet
            await kit.idle(IDLE_MS + 10)
            (entry,) = await q.claim_stale("replica-b", IDLE_MS)
            assert (entry.id, entry.job, entry.deliveries) == (sent, {"type": "webhook", "app": "payments-api"}, 2)
            assert await q.claim_stale("replica-c", IDLE_MS) == []  # the claim reset the idle time
            assert await q.read("replica-c", block_ms=0) == []  # and it is not "new" either
            await kit.idle(IDLE_MS + 10)
            (again,) = await q.claim_stale("replica-c", IDLE_MS)  # replica-b died too
            assert again.deliveries == 3
            assert (await q.depth(), await q.pending()) == (1, 1)
            await q.ack(again.id)
            assert (await q.depth(), await q.pending()) == (0, 0)
            await kit.idle(IDLE_MS + 10)
            assert await q.claim_stale("replica-d", IDLE_MS) == []

    # Each replica in its own event loop, as in its own process: this test stays synchronous on purpose.
    sent = asyncio.run(first_replica())
    asyncio.run(second_replica(sent))


async def test_claim_stale_takes_the_oldest_first_and_honours_count(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        sent = [await q.enqueue({"n": n}) for n in range(3)]
        await q.read("dead", count=3, block_ms=0)
        await kit.idle(IDLE_MS + 10)
        assert ids(await q.claim_stale("w", IDLE_MS, count=2)) == sent[:2]
        assert ids(await q.claim_stale("w", IDLE_MS, count=10)) == sent[2:]


async def test_dead_letter_records_the_job_and_removes_it(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        sent = await q.enqueue({"type": "webhook", "app": "web"})
        await q.read("w1", block_ms=0)
        await kit.idle(IDLE_MS + 10)
        (entry,) = await q.claim_stale("w2", IDLE_MS)
        await q.dead_letter(entry, "Slack refused it 2 times: channel_not_found")
        assert (await q.depth(), await q.pending()) == (0, 0)
        await kit.idle(IDLE_MS + 10)
        assert await q.claim_stale("w3", IDLE_MS) == []
        assert await q.read("w3", block_ms=0) == []
        (dead,) = await kit.dead_letters(q)
        assert dead["id"] == sent
        assert dead["job"] == {"type": "webhook", "app": "web"}
        assert dead["reason"] == "Slack refused it 2 times: channel_not_found"
        assert dead["deliveries"] == 2


async def test_enqueue_once_queues_a_mark_once_and_never_leaves_a_mark_without_its_entry(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        first = await q.enqueue_once("webhook:abc", 60, {"n": 1})
        assert first is not None
        assert await q.enqueue_once("webhook:abc", 60, {"n": 2}) is None  # Argo CD's retry: a duplicate
        with pytest.raises(TypeError):
            await q.enqueue_once("webhook:def", 60, {"n": object()})
        assert await q.enqueue_once("webhook:def", 60, {"n": 3}) is not None  # the refused one left no mark
        assert [e.job for e in await q.read("w", count=5, block_ms=0)] == [{"n": 1}, {"n": 3}]


async def test_a_touched_entry_is_not_claimed_and_a_released_one_is_claimed_at_once(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        a = await q.enqueue({"n": 1})
        b = await q.enqueue({"n": 2})
        await q.read("w1", count=2, block_ms=0)
        await kit.idle(IDLE_MS + 10)
        assert await q.touch("w1", a)  # w1 is alive and working on a
        assert await q.touch("w9", b) is False  # not w9's: nothing happens
        assert ids(await q.claim_stale("w2", IDLE_MS)) == [b]  # b is idle, a is not
        assert await q.touch("w1", b) is False  # w2 holds b now: w1 must not take it back
        await q.release("w1", a)  # w1 stops: a is handed back without waiting
        (entry,) = await q.claim_stale("w3", 60_000)
        assert (entry.id, entry.deliveries) == (a, 2)
        await q.release("w1", a)  # no longer w1's: nothing happens
        assert await q.claim_stale("w4", 60_000) == []


async def test_dead_letters_marked_for_retry_can_be_revived(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        await q.enqueue({"type": "webhook", "n": 1})
        await q.enqueue({"type": "note", "n": 2})
        (e1, e2) = await q.read("w", count=2, block_ms=0)
        e1_reason = "Argo CD at https://argocd.example.com failed (503)"
        await q.dead_letter(e1, e1_reason, retry=True)
        await q.dead_letter(e2, "unreadable")
        dead = await kit.dead_letters(q)
        assert [(d["retry"], d["reason"]) for d in dead] == [(True, e1_reason), (False, "unreadable")]
        revived = await q.revive(str(dead[0]["dead_id"]), {"type": "webhook", "n": 1, "revived": 1})
        assert [d["id"] for d in await kit.dead_letters(q)] == [e2.id]
        (entry,) = await q.read("w", block_ms=0)
        assert (entry.id, entry.job) == (revived, {"type": "webhook", "n": 1, "revived": 1})


async def test_read_waits_up_to_block_ms_and_wakes_on_enqueue(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        started = time.monotonic()
        assert await q.read("w", block_ms=60) == []
        assert time.monotonic() - started >= 0.05

        async def later() -> str:
            await asyncio.sleep(0.05)
            return await q.enqueue({"n": 1})

        started = time.monotonic()
        got, sent = await asyncio.gather(q.read("w", block_ms=3000), later())
        assert ids(got) == [sent]
        assert time.monotonic() - started < 1


async def test_unserialisable_job_is_refused(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        with pytest.raises(TypeError):
            await q.enqueue({"when": object()})
        assert await q.depth() == 0


async def test_jobs_come_back_as_copies(kit: QueueKit) -> None:
    async with kit.open() as q:
        await q.ensure()
        job = {"body": {"resources": [1]}}
        await q.enqueue(job)
        job["body"]["resources"].append(2)
        (entry,) = await q.read("w", block_ms=0)
        assert entry.job == {"body": {"resources": [1]}}


# --- Redis specifics ------------------------------------------------------------------------------------------


async def test_redis_unreadable_entries_are_dead_lettered_not_delivered(redis_url: str) -> None:
    q = RedisQueue.from_url(redis_url)
    raw = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
    try:
        await q.ensure()
        bad = await raw.xadd("argo-why:jobs", {"job": "{not json"})
        other = await raw.xadd("argo-why:jobs", {"something": "else"})
        good = await q.enqueue({"n": 1})
        assert ids(await q.read("w", count=10, block_ms=0)) == [good]
        dead = await q.dead_letters()
        assert [(d["id"], d["job"], d["reason"]) for d in dead] == [
            (bad, "{not json", "unreadable job field"),
            (other, "", "unreadable job field"),
        ]
        assert (await q.depth(), await q.pending()) == (1, 1)
    finally:
        await raw.aclose()
        await q.close()


async def test_redis_keys_are_the_documented_ones_and_acked_entries_are_deleted(redis_url: str) -> None:
    q = RedisQueue.from_url(redis_url)
    raw = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
    try:
        await q.ensure()
        a = await q.enqueue({"n": 1})
        await q.enqueue({"n": 2})
        (_, eb) = await q.read("w", count=2, block_ms=0)
        await q.ack(a)
        await q.dead_letter(eb, "no")
        await q.enqueue_once("webhook:abc", 600, {"n": 3})
        (ec,) = await q.read("w", block_ms=0)
        await q.ack(ec.id)
        assert {k async for k in raw.scan_iter("*")} == {
            "argo-why:jobs",
            "argo-why:dead",
            "argo-why:jobs:seen:webhook:abc",
        }
        assert 598 <= await raw.ttl("argo-why:jobs:seen:webhook:abc") <= 600
        assert await raw.xlen("argo-why:jobs") == 0
        assert await raw.ttl("argo-why:jobs") == -1 and await raw.ttl("argo-why:dead") == -1  # bounded by MAXLEN
        groups = await raw.xinfo_groups("argo-why:jobs")
        assert [g["name"] for g in groups] == ["workers"]
    finally:
        await raw.aclose()
        await q.close()


async def test_redis_recreates_the_group_when_redis_lost_its_data(redis_url: str) -> None:
    q = RedisQueue.from_url(redis_url)
    raw = redis.asyncio.Redis.from_url(redis_url)
    try:
        await q.ensure()
        await raw.flushall()  # what a restart without persistence looks like from here
        assert (await q.depth(), await q.pending()) == (0, 0)
        assert await q.claim_stale("w", 0) == []
        assert await q.read("w", block_ms=0) == []  # NOGROUP -> group recreated, not an error
        sent = await q.enqueue({"n": 1})
        assert ids(await q.read("w", block_ms=0)) == [sent]
    finally:
        await raw.aclose()
        await q.close()


async def test_redis_read_refuses_a_block_longer_than_the_socket_timeout(redis_url: str) -> None:
    q = RedisQueue.from_url(redis_url)
    try:
        with pytest.raises(ValueError, match="socket timeout"):
            await q.read("w", block_ms=60_000)
    finally:
        await q.close()


async def test_memory_queue_caps_its_length_like_maxlen() -> None:
    q = MemoryQueue(FakeClock(), maxlen=3)
    sent = [await q.enqueue({"n": n}) for n in range(5)]
    assert await q.depth() == 3
    assert ids(await q.read("w", count=10, block_ms=0)) == sent[2:]


QUEUE_OPS: list[tuple[str, Callable[[RedisQueue], Awaitable[object]]]] = [
    ("ensure", lambda q: q.ensure()),
    ("enqueue", lambda q: q.enqueue({"n": 1})),
    ("enqueue_once", lambda q: q.enqueue_once("m", 60, {"n": 1})),
    ("touch", lambda q: q.touch("w", "1-0")),
    ("release", lambda q: q.release("w", "1-0")),
    ("revive", lambda q: q.revive("1-0", {"n": 1})),
    ("dead_letters", lambda q: q.dead_letters()),
    ("read", lambda q: q.read("w", block_ms=0)),
    ("ack", lambda q: q.ack("1-0")),
    ("claim_stale", lambda q: q.claim_stale("w", 10)),
    ("dead_letter", lambda q: q.dead_letter(Entry("1-0", {}, 1), "x")),
    ("depth", lambda q: q.depth()),
    ("pending", lambda q: q.pending()),
]


@pytest.mark.parametrize(("name", "op"), QUEUE_OPS, ids=[n for n, _ in QUEUE_OPS])
async def test_every_operation_raises_store_unavailable_when_nothing_listens(
    name: str, op: Callable[[RedisQueue], Awaitable[object]]
) -> None:
    port = free_port()

    q = RedisQueue.from_url(f"redis://:hunter2@127.0.0.1:{port}/0")
    try:
        with pytest.raises(StoreUnavailable) as caught:
            await op(q)
    finally:
        await q.close()
    assert f"127.0.0.1:{port}" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    assert caught.value.op == name


async def test_outage_mid_test_raises_store_unavailable_and_recovers(redis_outage: RedisProcess) -> None:  # noqa: F811
    q = RedisQueue.from_url(redis_outage.url)
    try:
        await q.ensure()
        await q.enqueue({"n": 1})
        redis_outage.stop()
        for op in (q.enqueue({"n": 2}), q.read("w", block_ms=0), q.depth()):
            with pytest.raises(StoreUnavailable):
                await op
        redis_outage.start()
        assert await q.read("w", block_ms=0) == []  # back, empty, group recreated on the fly
        sent = await q.enqueue({"n": 3})
        assert ids(await q.read("w", block_ms=0)) == [sent]
    finally:
        await q.close()
