"""bot.store: every behaviour on both MemoryStore and RedisStore (a real redis-server), plus Redis outages.

Time: the MemoryStore gets a fake clock; on Redis, "time passes" by shortening every key's remaining TTL by
the same amount (and deleting keys whose TTL runs out), which is what the server would do if we waited. One
test also waits for a real sub-second expiry, so the simulation cannot hide a key that never expires.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import pytest
import redis
import redis.asyncio

from bot.errors import ArgoWhyError
from bot.store import THREAD_TTL_S, MemoryStore, RedisStore, Store, StoreUnavailable, ThreadRef
from tests.fakes.clock import FakeClock
from tests.harness.redis_server import RedisProcess, free_port, redis_outage  # noqa: F401  (fixture)

PREFIX = "argo-why:"
DAY = 24 * 3600


async def age_redis_keys(url: str, seconds: float) -> None:
    """Make ``seconds`` pass for every key with a TTL, as far as the keys can tell."""
    client = redis.asyncio.Redis.from_url(url)
    try:
        async for key in client.scan_iter(match=f"{PREFIX}*"):
            left = await client.pttl(key)
            if left < 0:
                continue  # no TTL: nothing to age (the TTL test makes sure there is no such key)
            left -= int(seconds * 1000)
            if left <= 0:
                await client.delete(key)
            else:
                await client.pexpire(key, left)
    finally:
        await client.aclose()


@dataclass
class StoreKit:
    kind: str
    url: str = ""
    clock: FakeClock | None = None
    memory: MemoryStore | None = None

    @property
    def durable(self) -> bool:
        return self.memory is None

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Store]:
        """A store bound to the running loop; for memory, the one instance (it *is* the state)."""
        if self.memory is not None:
            yield self.memory
            return
        store = RedisStore.from_url(self.url)
        try:
            yield store
        finally:
            await store.close()

    def now(self) -> float:
        return self.clock() if self.clock is not None else time.time()

    async def advance(self, seconds: float) -> None:
        if self.clock is not None:
            self.clock.now += seconds
        else:
            await age_redis_keys(self.url, seconds)


@pytest.fixture(params=["memory", "redis"])
def kit(request: pytest.FixtureRequest) -> StoreKit:
    if request.param == "memory":
        clock = FakeClock()
        return StoreKit("memory", clock=clock, memory=MemoryStore(clock))
    return StoreKit("redis", url=request.getfixturevalue("redis_url"))


# --- dedupe ---------------------------------------------------------------------------------------------------


async def test_first_seen_is_true_once_until_the_ttl_runs_out(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.first_seen("payments-api|9f3c|OutOfSync|t1", 60)
        assert not await s.first_seen("payments-api|9f3c|OutOfSync|t1", 60)
        assert await s.first_seen("payments-api|9f3c|OutOfSync|t2", 60)
        await kit.advance(59)
        assert not await s.first_seen("payments-api|9f3c|OutOfSync|t1", 60)
        await kit.advance(2)
        assert await s.first_seen("payments-api|9f3c|OutOfSync|t1", 60)


async def test_first_seen_has_exactly_one_winner_among_concurrent_callers(kit: StoreKit) -> None:
    async with kit.open() as s:
        results = await asyncio.gather(*(s.first_seen("same", 60) for _ in range(25)))
        assert results.count(True) == 1


async def test_forget_undoes_first_seen(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.first_seen("k", 60)
        await s.forget("k")
        assert await s.first_seen("k", 60)
        await s.forget("never-seen")  # harmless


async def test_redis_dedupe_mark_really_expires(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    raw = redis.asyncio.Redis.from_url(redis_url)
    try:
        assert await store.first_seen("k", 60)
        assert 59 <= await raw.ttl(f"{PREFIX}seen:k") <= 60
        await raw.pexpire(f"{PREFIX}seen:k", 5)
        await asyncio.sleep(0.02)
        assert await store.first_seen("k", 60)
    finally:
        await raw.aclose()
        await store.close()


# --- thread map -----------------------------------------------------------------------------------------------

REF = ThreadRef(
    app="payments-api",
    channel="C0123",
    ts="1755681118.000200",
    fingerprint="sha256:ab12",
    status="drift",
    unsettled_syncs=2,
    updated=1755681118.25,
)


def test_thread_map_round_trips_and_survives_a_new_client(kit: StoreKit) -> None:
    async def write() -> None:
        async with kit.open() as s:
            assert await s.get_thread("argocd/payments-api") is None
            await s.save_thread(replace(REF, status="failed"), "argocd/payments-api")
            await s.save_thread(REF, "argocd/payments-api")  # overwrites

    async def read() -> None:
        async with kit.open() as s:  # Redis: another client on another event loop, as after a restart
            got = await s.get_thread("argocd/payments-api")
            assert got == REF
            assert got is not REF
            assert await s.get_thread("argocd/other") is None

    # The reader in an event loop of its own, as after a restart: this test stays synchronous on purpose.
    asyncio.run(write())
    asyncio.run(read())


async def test_thread_map_entry_lasts_30_days_from_the_last_save(kit: StoreKit) -> None:
    async with kit.open() as s:
        await s.save_thread(REF, "a")
        await kit.advance(THREAD_TTL_S - 60)
        assert await s.get_thread("a") == REF
        await s.save_thread(REF, "a")  # saving again restarts the 30 days
        await kit.advance(THREAD_TTL_S - 60)
        assert await s.get_thread("a") == REF
        await kit.advance(61)
        assert await s.get_thread("a") is None


async def test_redis_thread_map_tolerates_unknown_fields_and_garbage(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    raw = redis.asyncio.Redis.from_url(redis_url)
    try:
        await raw.set(
            f"{PREFIX}thread:new", '{"app":"a","channel":"C","ts":"1.2","fingerprint":"f","status":"drift","x":1}'
        )
        assert await store.get_thread("new") == ThreadRef("a", "C", "1.2", "f", "drift")
        await raw.set(f"{PREFIX}thread:bad", "{not json")
        assert await store.get_thread("bad") is None
        await raw.set(f"{PREFIX}thread:short", '{"app":"a"}')
        assert await store.get_thread("short") is None
    finally:
        await raw.aclose()
        await store.close()


# --- button state ---------------------------------------------------------------------------------------------


async def test_state_ids_are_opaque_short_and_resolve_to_the_text_kept(kit: StoreKit) -> None:
    payload = json.dumps({"app": "payments-api", "report": {"causes": [1, 2]}, "who": None, "é": "ü"})

    async with kit.open() as s:
        sid = await s.put_state("diff", payload, 600)
        other = await s.put_state("diff", payload, 600)
        assert re.fullmatch(r"diff:[A-Za-z0-9_-]{16}", sid)
        assert sid != other
        assert "payments" not in sid  # opaque: nothing of the payload leaks into the id
        longest = await s.put_state("k" * 32, "{}", 600)
        assert len(sid) <= 100 and len(longest) <= 100
        got = await s.get_state(sid)
        assert got is not None and json.loads(got) == json.loads(payload)


async def test_state_expires_after_its_ttl(kit: StoreKit) -> None:
    async with kit.open() as s:
        sid = await s.put_state("approve", '{"pr": 7}', 600)
        await kit.advance(599)
        assert json.loads(await s.get_state(sid) or "null") == {"pr": 7}
        await kit.advance(2)
        assert await s.get_state(sid) is None


@pytest.mark.parametrize(
    "state_id",
    ["", "diff", "diff:short", "diff:" + "A" * 17, "Diff:" + "A" * 16, "../diff:" + "A" * 16, "x" * 5000, "diff:A*"],
)
async def test_malformed_or_unknown_state_ids_are_none(kit: StoreKit, state_id: str) -> None:
    async with kit.open() as s:
        assert await s.get_state(state_id) is None
        assert await s.get_state("diff:" + "A" * 16) is None  # well-formed, never issued


async def test_put_state_refuses_bad_kinds(kit: StoreKit) -> None:
    async with kit.open() as s:
        for kind in ["", "Diff", "a:b", "k" * 33, "1abc"]:
            with pytest.raises(ValueError):
                await s.put_state(kind, "{}", 60)


# --- mutes ----------------------------------------------------------------------------------------------------


async def test_mute_holds_until_its_end_and_then_expires_by_itself(kit: StoreKit) -> None:
    async with kit.open() as s:
        now = kit.now()
        until = now + 3600
        await s.set_mute("argocd/payments-api", until, "U042")
        assert await s.mute_until("argocd/payments-api", now) == until
        assert await s.mute_until("argocd/other", now) is None
        assert await s.mute_until("argocd/payments-api", until + 1) is None  # the caller's clock says over
        await kit.advance(3590)
        assert await s.mute_until("argocd/payments-api", now) == until
        await kit.advance(11)
        assert await s.mute_until("argocd/payments-api", now) is None  # gone even for a caller clock behind


async def test_mute_in_the_past_and_shortened_mute(kit: StoreKit) -> None:
    async with kit.open() as s:
        now = kit.now()
        await s.set_mute("a", now - 1, "U1")
        assert await s.mute_until("a", now) is None
        await s.set_mute("b", now + 3600, "U1")
        await s.set_mute("b", now + 60, "U2")  # the latest decision wins
        assert await s.mute_until("b", now) == now + 60


async def test_redis_mute_key_expires_at_until_in_real_time(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    raw = redis.asyncio.Redis.from_url(redis_url)
    try:
        await store.set_mute("a", time.time() + 0.1, "U1")
        assert await raw.exists(f"{PREFIX}mute:a") == 1
        await asyncio.sleep(0.2)
        assert await raw.exists(f"{PREFIX}mute:a") == 0
    finally:
        await raw.aclose()
        await store.close()


# --- alert rate -----------------------------------------------------------------------------------------------


async def test_note_alert_counts_distinct_apps_in_the_window(kit: StoreKit) -> None:
    async with kit.open() as s:
        t = kit.now()
        assert await s.note_alert("a", t, 60) == 1
        assert await s.note_alert("b", t + 10, 60) == 2
        assert await s.note_alert("a", t + 20, 60) == 2  # same app again: still two apps
        assert await s.note_alert("c", t + 65, 60) == 3  # a (t+20) and b (t+10) are still inside
        assert await s.note_alert("d", t + 79, 60) == 3  # b (t+10) fell out, a (t+20) is just inside
        assert await s.note_alert("d", t + 80, 60) == 2  # exactly window_s old is outside
        assert await s.note_alert("e", t + 200, 60) == 1  # everyone else fell out
        assert await s.note_alert("f", t + 199, 60) == 2  # a late report still counts


async def test_note_alert_does_not_move_an_app_back_in_time(kit: StoreKit) -> None:
    async with kit.open() as s:
        t = kit.now()
        await s.note_alert("a", t + 50, 60)
        await s.note_alert("a", t, 60)  # a late replica reports an older alert of the same app
        assert await s.note_alert("b", t + 100, 60) == 2  # a's time is still t+50


# --- digest ---------------------------------------------------------------------------------------------------


def _payloads(raw: dict[str, str]) -> list[Any]:
    return [json.loads(v) for v in raw.values()]


async def test_digest_is_peeked_latest_per_app_and_kept_until_taken(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.peek_digest() == {}
        await s.add_to_digest("argocd/web", {"n": 1})
        await s.add_to_digest("argocd/api", {"n": 2, "report": {"causes": ["hpa"]}})
        await s.add_to_digest("argocd/web", {"n": 3})
        seen = await s.peek_digest()
        assert list(seen) == ["argocd/api", "argocd/web"]
        assert _payloads(seen) == [{"n": 2, "report": {"causes": ["hpa"]}}, {"n": 3}]
        assert await s.peek_digest() == seen  # a bot that stops before Slack accepted the digest loses nothing
        await s.take_from_digest(seen)
        assert await s.peek_digest() == {}


async def test_taking_the_digest_keeps_what_was_added_meanwhile(kit: StoreKit) -> None:
    async with kit.open() as s:
        await s.add_to_digest("a", {"n": 1})
        await s.add_to_digest("b", {"n": 2})
        seen = await s.peek_digest()
        await s.add_to_digest("b", {"n": 3})  # a newer alert of b while the digest was being posted
        await s.add_to_digest("c", {"n": 4})
        await s.take_from_digest(seen)
        assert _payloads(await s.peek_digest()) == [{"n": 3}, {"n": 4}]


async def test_concurrent_adds_and_takes_lose_nothing(kit: StoreKit) -> None:
    async with kit.open() as s:
        posted: list[Any] = []

        async def flusher() -> None:
            for _ in range(30):
                seen = await s.peek_digest()
                posted.extend(_payloads(seen))
                await s.take_from_digest(seen)
                await asyncio.sleep(0)

        adds = (s.add_to_digest(f"app-{i:03d}", {"i": i}) for i in range(120))
        await asyncio.gather(flusher(), *adds)
        posted.extend(_payloads(await s.peek_digest()))
        assert sorted({d["i"] for d in posted}) == list(range(120))  # none lost


async def test_untaken_digest_expires_after_a_week(kit: StoreKit) -> None:
    async with kit.open() as s:
        await s.add_to_digest("a", {"n": 1})
        await kit.advance(6 * DAY)
        await s.add_to_digest("b", {"n": 2})  # every add restarts the week
        await kit.advance(6 * DAY)
        assert _payloads(await s.peek_digest()) == [{"n": 1}, {"n": 2}]
        await kit.advance(7 * DAY + 1)
        assert await s.peek_digest() == {}


# --- ended mutes, drifting threads, the outbox -------------------------------------------------------------------


async def test_ended_mutes_are_listed_until_forgotten_and_a_new_mute_survives_forgetting(kit: StoreKit) -> None:
    async with kit.open() as s:
        now = kit.now()
        await s.set_mute("argocd/a", now + 60, "U1")
        await s.set_mute("argocd/b", now + 3600, "U2")
        assert await s.ended_mutes(now) == {}
        ended = await s.ended_mutes(now + 61)
        assert list(ended) == ["argocd/a"] and json.loads(ended["argocd/a"]) == {"until": now + 60, "by": "U1"}
        await s.set_mute("argocd/a", now + 7200, "U3")  # muted again before the job forgot the old one
        await s.forget_mutes(ended)
        assert list(await s.ended_mutes(now + 7201)) == ["argocd/a", "argocd/b"]
        await s.forget_mutes(await s.ended_mutes(now + 7201))
        assert await s.ended_mutes(now + 7201) == {}


async def test_drifting_threads_are_listed_oldest_first_and_leave_when_synced(kit: StoreKit) -> None:
    async with kit.open() as s:
        await s.save_thread(replace(REF, since=300.0), "argocd/c")
        await s.save_thread(replace(REF, since=100.0), "argocd/a")
        await s.save_thread(replace(REF, since=0.0, updated=200.0), "argocd/b")  # saved before `since` existed
        await s.save_thread(replace(REF, since=50.0), "__digest__")  # not an app
        assert await s.drifting(10) == [("argocd/a", 100.0), ("argocd/b", 200.0), ("argocd/c", 300.0)]
        assert await s.drifting(1) == [("argocd/a", 100.0)]
        await s.save_thread(replace(REF, status="synced"), "argocd/a")
        await s.forget_drifting("argocd/b")
        assert await s.drifting(10) == [("argocd/c", 300.0)]


async def test_outbox_records_round_trip_expire_and_are_deleted(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.outbox_get("parent:argocd/web") is None
        await s.outbox_put("parent:argocd/web", {"marker": "m1", "at": 1.5}, 60)
        assert await s.outbox_get("parent:argocd/web") == {"marker": "m1", "at": 1.5}
        await s.outbox_put("parent:argocd/web", {"channel": "C1", "ts": "1.000100"}, 60)
        assert await s.outbox_get("parent:argocd/web") == {"channel": "C1", "ts": "1.000100"}
        await s.outbox_delete("parent:argocd/web")
        assert await s.outbox_get("parent:argocd/web") is None
        await s.outbox_put("job:1-0:1", {"channel": "C1", "ts": "2.0"}, 60)
        await kit.advance(61)
        assert await s.outbox_get("job:1-0:1") is None


# --- locks ----------------------------------------------------------------------------------------------------


async def test_lock_is_exclusive_refreshable_and_released_only_by_its_owner(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.acquire_lock("sweep", "r1", 30)
        assert not await s.acquire_lock("sweep", "r2", 30)
        assert not await s.acquire_lock("sweep", "r1", 30)  # not re-entrant: the holder refreshes
        assert await s.acquire_lock("digest", "r2", 30)  # other names are independent
        assert not await s.refresh_lock("sweep", "r2", 30)
        await kit.advance(20)
        assert await s.refresh_lock("sweep", "r1", 30)
        await kit.advance(20)  # 40 s after acquiring: only the refresh keeps it
        assert not await s.acquire_lock("sweep", "r2", 30)
        await s.release_lock("sweep", "r2")  # not the owner: no effect
        assert not await s.acquire_lock("sweep", "r2", 30)
        await s.release_lock("sweep", "r1")
        assert await s.acquire_lock("sweep", "r2", 30)


async def test_expired_lock_is_lost_and_its_old_owner_cannot_touch_the_new_one(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.acquire_lock("sweep", "r1", 30)
        await kit.advance(31)
        assert not await s.refresh_lock("sweep", "r1", 30)
        assert await s.acquire_lock("sweep", "r2", 30)
        await s.release_lock("sweep", "r1")
        assert not await s.refresh_lock("sweep", "r1", 30)
        assert not await s.acquire_lock("sweep", "r3", 30)  # still r2's


async def test_lock_has_exactly_one_winner_among_concurrent_replicas(kit: StoreKit) -> None:
    async with kit.open() as s:
        results = await asyncio.gather(*(s.acquire_lock("leader", f"r{i}", 30) for i in range(20)))
        assert results.count(True) == 1


# --- approvals, pull requests, audit ---------------------------------------------------------------------------


async def test_approvals_count_each_user_once_keep_the_first_time_and_expire(kit: StoreKit) -> None:
    async with kit.open() as s:
        t0 = kit.now()
        first = await s.add_approval("shop:abc", "U1", {"origin": "parent"}, t0, DAY)
        assert set(first) == {"U1"} and first["U1"]["at"] == t0 and first["U1"]["origin"] == "parent"
        await kit.advance(60)
        again = await s.add_approval("shop:abc", "U1", {"origin": "thread"}, t0 + 60, DAY)
        assert again == first  # the same person twice never counts twice, nor moves forward in time
        both = await s.add_approval("shop:abc", "U2", {}, t0 + 60, DAY)
        assert set(both) == {"U1", "U2"}
        assert set(await s.add_approval("shop:other", "U3", {}, t0 + 60, DAY)) == {"U3"}  # per fix
        await s.clear_approvals("shop:abc")
        assert set(await s.add_approval("shop:abc", "U2", {}, t0 + 61, DAY)) == {"U2"}
        await kit.advance(DAY + 1)  # 24 h after the last add: all gone
        assert set(await s.add_approval("shop:abc", "U1", {}, t0 + DAY + 62, DAY)) == {"U1"}


async def test_an_approval_older_than_the_ttl_does_not_count_even_if_the_key_lives_on(kit: StoreKit) -> None:
    async with kit.open() as s:
        t0 = kit.now()
        await s.add_approval("shop:abc", "U1", {}, t0, DAY)
        await kit.advance(DAY - 10)
        await s.add_approval("shop:abc", "U2", {}, t0 + DAY - 10, DAY)  # renews the key's TTL...
        await kit.advance(20)
        fresh = await s.add_approval("shop:abc", "U3", {}, t0 + DAY + 10, DAY)
        assert set(fresh) == {"U2", "U3"}  # ...but U1's approval is 24 h old: expired


async def test_concurrent_approvals_by_different_users_all_count(kit: StoreKit) -> None:
    async with kit.open() as s:
        now = kit.now()
        results = await asyncio.gather(*(s.add_approval("f", f"U{i}", {}, now, DAY) for i in range(10)))
        assert max(len(r) for r in results) == 10
        assert sorted(len(r) for r in results) == list(range(1, 11))  # each add saw the ones before it


async def test_pull_request_records_round_trip_and_are_listed(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.get_pr("shop:abc") is None and await s.list_prs() == {}
        await s.save_pr("shop:abc", {"number": 42, "url": "https://github.com/acme/gitops/pull/42"})
        await s.save_pr("web:def", {"number": 7})
        assert (await s.get_pr("shop:abc") or {})["number"] == 42
        assert list(await s.list_prs()) == ["shop:abc", "web:def"]
        await s.forget_pr("shop:abc")
        assert list(await s.list_prs()) == ["web:def"]


async def test_messages_with_fix_buttons_and_the_places_of_a_fix_are_remembered(kit: StoreKit) -> None:
    async with kit.open() as s:
        assert await s.recall_message("C1", "1.1") is None and await s.fix_buttons("f") == []
        await s.remember_message("C1", "1.1", {"text": "t", "blocks": [{"type": "divider"}]}, DAY)
        assert await s.recall_message("C1", "1.1") == {"text": "t", "blocks": [{"type": "divider"}]}
        place = {"channel": "C1", "ts": "1.1", "block_id": "argo-why-fix-all"}
        await s.add_fix_button("f", place, DAY)
        await s.add_fix_button("f", place, DAY)  # the same place twice is one place
        await s.add_fix_button("f", {**place, "ts": "1.2"}, DAY)
        assert sorted(p["ts"] for p in await s.fix_buttons("f")) == ["1.1", "1.2"]
        await kit.advance(DAY + 1)
        assert await s.recall_message("C1", "1.1") is None and await s.fix_buttons("f") == []


async def test_audit_records_are_appended_in_order(kit: StoreKit) -> None:
    async with kit.open() as s:
        await s.append_audit({"user": "U1", "decision": "refused", "reason": "not an approver"})
        await s.append_audit({"user": "U2", "decision": "approved", "count": "1"})
        assert await s.read_audit() == [
            {"user": "U1", "decision": "refused", "reason": "not an approver"},
            {"user": "U2", "decision": "approved", "count": "1"},
        ]


# --- Redis specifics: keys, TTLs, outages ---------------------------------------------------------------------


async def test_redis_uses_exactly_the_documented_keys_each_with_a_ttl(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    raw = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
    try:
        now = time.time()
        await store.first_seen("k", 120)
        await store.save_thread(REF, "argocd/web")
        sid = await store.put_state("diff", '{"x": 1}', 600)
        await store.set_mute("argocd/web", now + 3600, "U1")
        await store.note_alert("argocd/web", now, 300)
        await store.add_to_digest("argocd/web", {"x": 1})
        await store.outbox_put("parent:argocd/web", {"marker": "m"}, 3600)
        await store.acquire_lock("sweep", "r1", 45)
        await store.refresh_lock("sweep", "r1", 50)
        await store.add_approval("argocd/web:abc", "U1", {}, now, DAY)
        await store.save_pr("argocd/web:abc", {"number": 1})
        await store.append_audit({"user": "U1"})
        expected = {
            f"{PREFIX}seen:k": 120,
            f"{PREFIX}thread:argocd/web": THREAD_TTL_S,
            f"{PREFIX}state:{sid}": 600,
            f"{PREFIX}mute:argocd/web": 3600,
            f"{PREFIX}muted": 31 * DAY,
            f"{PREFIX}alerts": 300,
            f"{PREFIX}digest": 7 * DAY,
            f"{PREFIX}drifting": THREAD_TTL_S,
            f"{PREFIX}post:parent:argocd/web": 3600,
            f"{PREFIX}lock:sweep": 50,
            f"{PREFIX}approvals:argocd/web:abc": DAY,
            f"{PREFIX}prs": 90 * DAY,
        }
        # the audit stream has no TTL on purpose (a record of decisions); it is capped instead
        assert {k async for k in raw.scan_iter("*")} == {*expected, f"{PREFIX}audit"}
        assert await raw.pttl(f"{PREFIX}audit") == -1 and await raw.xlen(f"{PREFIX}audit") == 1
        for key, ttl in expected.items():
            assert ttl - 2 <= await raw.pttl(key) / 1000 <= ttl, key
    finally:
        await raw.aclose()
        await store.close()


async def test_redis_prefix_separates_installs(redis_url: str) -> None:
    a = RedisStore.from_url(redis_url, prefix="team-a:")
    b = RedisStore.from_url(redis_url, prefix="team-b:")
    try:
        assert await a.first_seen("k", 60)
        assert await b.first_seen("k", 60)
        assert await a.acquire_lock("sweep", "r1", 30)
        assert await b.acquire_lock("sweep", "r1", 30)
    finally:
        await a.close()
        await b.close()


STORE_OPS: list[tuple[str, Callable[[RedisStore], Awaitable[object]]]] = [
    ("ping", lambda s: s.ping()),
    ("first_seen", lambda s: s.first_seen("k", 60)),
    ("forget", lambda s: s.forget("k")),
    ("get_thread", lambda s: s.get_thread("a")),
    ("save_thread", lambda s: s.save_thread(REF, "a")),
    ("put_state", lambda s: s.put_state("diff", "{}", 60)),
    ("get_state", lambda s: s.get_state("diff:" + "A" * 16)),
    ("set_mute", lambda s: s.set_mute("a", time.time() + 60, "U1")),
    ("mute_until", lambda s: s.mute_until("a", time.time())),
    ("note_alert", lambda s: s.note_alert("a", time.time(), 60)),
    ("add_to_digest", lambda s: s.add_to_digest("a", {})),
    ("peek_digest", lambda s: s.peek_digest()),
    ("take_from_digest", lambda s: s.take_from_digest({"a": "{}"})),
    ("ended_mutes", lambda s: s.ended_mutes(time.time())),
    ("forget_mutes", lambda s: s.forget_mutes({"a": "{}"})),
    ("drifting", lambda s: s.drifting(10)),
    ("forget_drifting", lambda s: s.forget_drifting("a")),
    ("outbox_get", lambda s: s.outbox_get("k")),
    ("outbox_put", lambda s: s.outbox_put("k", {}, 60)),
    ("outbox_delete", lambda s: s.outbox_delete("k")),
    ("acquire_lock", lambda s: s.acquire_lock("l", "o", 30)),
    ("refresh_lock", lambda s: s.refresh_lock("l", "o", 30)),
    ("release_lock", lambda s: s.release_lock("l", "o")),
    ("add_approval", lambda s: s.add_approval("f", "U1", {}, time.time(), 60)),
    ("clear_approvals", lambda s: s.clear_approvals("f")),
    ("save_pr", lambda s: s.save_pr("f", {})),
    ("get_pr", lambda s: s.get_pr("f")),
    ("list_prs", lambda s: s.list_prs()),
    ("forget_pr", lambda s: s.forget_pr("f")),
    ("append_audit", lambda s: s.append_audit({"a": "b"})),
    ("read_audit", lambda s: s.read_audit()),
    ("remember_message", lambda s: s.remember_message("C", "1", {}, 60)),
    ("recall_message", lambda s: s.recall_message("C", "1")),
    ("add_fix_button", lambda s: s.add_fix_button("f", {}, 60)),
    ("fix_buttons", lambda s: s.fix_buttons("f")),
]


@pytest.mark.parametrize(("name", "op"), STORE_OPS, ids=[n for n, _ in STORE_OPS])
async def test_every_operation_raises_store_unavailable_when_nothing_listens(
    name: str, op: Callable[[RedisStore], Awaitable[object]]
) -> None:
    port = free_port()

    store = RedisStore.from_url(f"redis://argo:hunter2@127.0.0.1:{port}/0")
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable) as caught:
            await op(store)
        assert time.monotonic() - started < 2  # fails fast: a webhook must not hang on a dead Redis
    finally:
        await store.close()
    err = caught.value
    assert isinstance(err, ArgoWhyError)
    assert f"127.0.0.1:{port}" in str(err)
    assert err.op == name
    assert "hunter2" not in str(err) and "hunter2" not in repr(err)
    assert isinstance(err.__cause__, redis.exceptions.ConnectionError)


async def test_outage_mid_test_raises_store_unavailable_and_recovers(redis_outage: RedisProcess) -> None:  # noqa: F811
    def require_password() -> None:
        with redis.Redis(port=redis_outage.port) as admin:
            admin.config_set("requirepass", "hunter2")

    require_password()
    url = f"redis://:hunter2@127.0.0.1:{redis_outage.port}/0"

    store = RedisStore.from_url(url)
    try:
        assert await store.first_seen("k", 60)
        assert await store.acquire_lock("sweep", "r1", 30)
        assert await store.refresh_lock("sweep", "r1", 30)  # the Lua script is now cached by that server
        redis_outage.stop()  # the pooled connection is now dead, and reconnecting is refused
        for op in (store.ping(), store.first_seen("k2", 60), store.peek_digest()):
            with pytest.raises(StoreUnavailable) as caught:
                await op
            assert f"127.0.0.1:{redis_outage.port}" in str(caught.value)
            assert "hunter2" not in str(caught.value)
        redis_outage.start()
        require_password()
        await store.ping()  # the same store reconnects by itself
        assert await store.first_seen("k", 60)  # no persistence: Redis came back empty
        assert await store.acquire_lock("sweep", "r2", 30)
        assert await store.refresh_lock("sweep", "r2", 30)  # script cache empty: reloaded transparently
        await store.release_lock("sweep", "r2")
        assert await store.acquire_lock("sweep", "r3", 30)
    finally:
        await store.close()


async def test_memory_store_sweeps_expired_entries() -> None:
    clock = FakeClock()
    store = MemoryStore(clock)

    for i in range(600):
        await store.first_seen(f"k{i}", 10)
    clock.now += 11
    for i in range(600):
        await store.first_seen(f"n{i}", 10)
    assert await store.first_seen("k1", 10)  # expired marks behave as absent, swept or not
    assert len(store._seen) <= 700  # the sweep dropped most of the expired k* marks
