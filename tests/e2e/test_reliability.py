"""Always on: exactly one parent per app and nothing posted twice or lost, under concurrency and faults.

Real redis-server processes, the fakes as local servers, bots in this process or in processes of their own:

* two bot instances on one Redis, 300 webhooks for 100 apps at once: exactly one parent per app, no reply twice;
* a bot killed (SIGKILL) after Slack accepted its parent but before it learnt so: the other bot delivers the job
  once, adopting that parent instead of posting another;
* SIGTERM mid-job: the job finishes within the grace period, or is handed back at once and finished by another
  replica, the exit status is 0; a digest interrupted by a stop is posted once by the next bot;
* the scheduler's leader stopped (SIGTERM, three times, Slack slow to answer) or killed mid-digest, or stopped while
  its digest lock is being taken: it leaves no lock in its name, and every app waiting in the digest is listed in
  exactly one digest, long before a lock left behind would have expired;
* Redis killed (SIGKILL, append-only file) under load: every webhook answered 202 is posted, every one answered
  "duplicate" was queued, nothing twice;
* Slack answering 429 and 500 in bursts: everything delivered once, every 429 counted;
* Argo CD down, then back: the failures are one digest, not a message per app; the dead-lettered analyses are
  done again once Argo CD answers, and the internal Argo CD URL is never shown.

No test asserts a duration: waits have generous limits and end as soon as the condition holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import random
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from bot.config import Settings, required
from bot.demo.runner import webhook_body
from tests.fakes.argocd import FakeArgoCD, app_from_case
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.fakes.slack import FakeSlack
from tests.harness.redis_server import RedisProcess, RedisProxy, durable_redis  # noqa: F401  (fixture)
from tests.harness.service_kit import CHANNEL, Bot, BotProcess, running, service_settings, until
from tests.paths import CASEBOOK

PUBLIC = "https://argocd.example.com"


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    s = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    s.slack.channel_interval_s = 0  # Slack's pace is not what these tests are about
    s.runtime.digest_threshold = 10_000  # one parent per app: no digest unless a test wants one
    s.runtime.fleet_min_apps = 10_000  # the apps share one drift: no fleet line may take a post a test holds back
    s.runtime.sweep_s = 0
    s.runtime.daily_summary_at = None
    s.runtime.remind_after_h = 0
    return s


def serve_apps(argocd: FakeArgoCD, kube: FakeKubernetes, count: int, case: str = "hpa-replicas-csa"
               ) -> list[dict[str, Any]]:  # fmt: skip
    """``count`` Applications drifting like the casebook scenario ``case``, named ``app-000``..."""
    folder = CASEBOOK / "cases" / case
    app, resources, renders = app_from_case(folder)
    kube.add(*context_from_case(folder))
    apps = []
    for i in range(count):
        copy_ = copy.deepcopy(app)
        copy_["metadata"]["name"] = f"app-{i:03d}"
        argocd.add_app(copy_, resources, renders)
        apps.append(copy_)
    return apps


def alert(app: dict[str, Any], sync: int = 0) -> dict[str, Any]:
    """The webhook of the ``sync``-th sync that did not settle ``app``."""
    body = webhook_body(app)
    return {**body, "operationState": {**body["operationState"], "finishedAt": f"2026-11-30T08:{sync:02d}:00Z"}}


def parents(slack: FakeSlack) -> Counter[str]:
    """How many top-level messages name each app."""
    return Counter(m["text"].split(" ", 1)[0] for m in slack.messages(CHANNEL))


def assert_nothing_twice(slack: FakeSlack) -> None:
    """No thread holds the same message twice (a reply posted again by a redelivered job)."""
    for parent in slack.messages(CHANNEL):
        texts = [m["text"] for m in slack.thread(CHANNEL, parent["ts"])]
        assert len(texts) == len(set(texts)), (parent["text"], Counter(texts).most_common(2))


async def settled(*bots: Bot, timeout: float = 60.0) -> None:
    await bots[0].settle(timeout)


# --- concurrency ---------------------------------------------------------------------------------------------------


async def test_two_bots_and_300_webhooks_for_100_apps_post_exactly_one_parent_per_app(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    apps = serve_apps(argocd, kube, 100)
    bodies = [alert(app, sync) for sync in range(3) for app in apps]
    random.Random(10).shuffle(bodies)

    async with running(settings, workers=4) as a, running(settings, workers=4) as b:
        answers = await asyncio.gather(*((a if i % 2 else b).webhook(body) for i, body in enumerate(bodies)))
        assert Counter(r.status_code for r in answers) == {202: 300}
        await settled(a, b)
    assert parents(slack) == Counter({app["metadata"]["name"]: 1 for app in apps})
    assert_nothing_twice(slack)


# --- a bot that dies or stops mid-job --------------------------------------------------------------------------------


async def post_webhook(url: str, settings: Settings, body: dict[str, Any]) -> httpx.Response:
    token = required(settings.runtime.webhook_token, "WEBHOOK_TOKEN").get_secret_value()
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        return await http.post("/webhooks/argocd", json=body, headers={"Authorization": f"Bearer {token}"})


@contextlib.asynccontextmanager
async def bot_process(settings: Settings, *, serve: bool = False) -> AsyncIterator[BotProcess]:
    process = BotProcess(settings, serve=serve)
    try:
        await process.ready()
        yield process
    finally:
        process.close()


async def parent_taken(process: BotProcess, settings: Settings, slack: FakeSlack, app: dict[str, Any]) -> None:
    """The alert of ``app`` through ``process``, until Slack has taken its parent (whose answer is held back)."""
    assert (await post_webhook(process.url, settings, alert(app))).status_code == 202
    await until(lambda: len(slack.messages(CHANNEL)) == 1, 30)


async def finished_by_another(settings: Settings, slack: FakeSlack, apps: list[dict[str, Any]], *,
                              claim_idle_ms: int) -> None:  # fmt: skip
    """Slack answers again; another bot takes over what the first left, and each app has its one parent."""
    slack.clear_injections()
    async with running(settings, claim_idle_ms=claim_idle_ms) as other:
        await other.settle(30)
    one_parent_with_its_thread(slack, apps)


def one_parent_with_its_thread(slack: FakeSlack, apps: Iterable[dict[str, Any]]) -> None:
    assert parents(slack) == Counter({app["metadata"]["name"]: 1 for app in apps})
    for parent in slack.messages(CHANNEL):
        assert slack.thread(CHANNEL, parent["ts"]), parent["text"]  # the explanation made it into the thread
    assert_nothing_twice(slack)


async def test_a_bot_killed_after_slack_took_its_parent_is_followed_by_one_delivery(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    apps = serve_apps(argocd, kube, 1)
    slack.slow_next("chat.postMessage", 60)  # the parent is posted; the answer never reaches the dying bot

    async with bot_process(settings) as dying:
        await parent_taken(dying, settings, slack, apps[0])
        dying.kill()  # SIGKILL between Slack accepting the parent and the bot saving it
    await finished_by_another(settings, slack, apps, claim_idle_ms=300)


@pytest.mark.parametrize(
    ("grace_s", "slack_answers_after_s"),
    [(0.5, 60), (30, 1)],
    ids=["grace-runs-out-job-handed-back", "job-finishes-within-grace"],
)
async def test_sigterm_finishes_the_job_in_hand_or_hands_it_back_at_once(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, grace_s: float,
    slack_answers_after_s: float,
) -> None:  # fmt: skip
    apps = serve_apps(argocd, kube, 1)
    settings.runtime.shutdown_grace_s = grace_s
    slack.slow_next("chat.postMessage", slack_answers_after_s)

    async with bot_process(settings, serve=True) as stopping:  # the real `argo-why serve`
        await parent_taken(stopping, settings, slack, apps[0])
        assert await stopping.terminate(), stopping.stderr()
    if slack_answers_after_s < grace_s:
        one_parent_with_its_thread(slack, apps)  # finished before the process left
        async with running(settings, workers=0) as idle:
            assert await idle.services.queue.depth() == 0  # and acknowledged
    else:
        # claim_idle_ms of a minute: only an entry handed back is taken before the test's limit
        await finished_by_another(settings, slack, apps, claim_idle_ms=60_000)


async def test_a_digest_cut_short_by_a_stop_is_posted_by_the_next_bot(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    apps = serve_apps(argocd, kube, 4)
    settings.runtime.digest_threshold = 1
    settings.runtime.shutdown_grace_s = 0.5
    settings.runtime.fleet_min_apps = 10  # the apps share one drift: no fleet line may take the digest's hung post

    async with running(settings) as first:
        await first.webhook(alert(apps[0]))  # the first app of the burst gets its parent
        await first.settle()
        slack.hang_next("chat.postMessage", 60)  # the digest's post hangs, and never reaches Slack
        for app in apps[1:]:
            await first.webhook(alert(app))
        await first.settle()
        await until(lambda: slack._delays.get("chat.postMessage") == type(slack._delays["chat.postMessage"])(), 10)
    slack.clear_injections()
    async with running(settings) as second:
        await until(lambda: len(slack.messages(CHANNEL)) == 2, 15)
        await second.settle()
    [digest] = [m for m in slack.messages(CHANNEL) if "went OutOfSync" in m["text"]]
    assert all(app["metadata"]["name"] in digest["text"] for app in apps[1:])


# --- Redis, Slack and Argo CD failing ------------------------------------------------------------------------------


async def test_redis_killed_under_load_loses_no_accepted_webhook_and_posts_nothing_twice(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes,
    durable_redis: RedisProcess,  # noqa: F811
) -> None:  # fmt: skip
    settings.redis.url = durable_redis.url
    apps = serve_apps(argocd, kube, 30)
    bodies = [alert(app, sync) for sync in range(2) for app in apps]
    answered: dict[int, str] = {}

    # a job cut short by the outage leaves its app's lock behind (Redis was gone): a short lease frees it soon
    async with running(settings, workers=2, claim_idle_ms=500, lock_lease_s=2) as bot:

        async def send(i: int, body: dict[str, Any]) -> None:
            while True:  # as the notifications controller does: again until it is accepted
                with contextlib.suppress(httpx.HTTPError):
                    r = await bot.webhook(body)
                    if r.status_code in (200, 202):
                        answered[i] = r.json()["status"]
                        return
                await asyncio.sleep(0.05)

        async def chaos() -> None:
            await until(lambda: len(answered) >= len(bodies) // 3, 30)
            durable_redis.kill()
            await asyncio.sleep(0.5)
            durable_redis.start()

        await asyncio.gather(chaos(), *(send(i, body) for i, body in enumerate(bodies)))
        await bot.settle(60)
    assert set(answered) == set(range(len(bodies)))
    one_parent_with_its_thread(slack, apps)
    for parent in slack.messages(CHANNEL):  # both syncs counted: no accepted (or "duplicate") alert was lost
        assert "2 syncs did not settle it" in json.dumps(parent["blocks"]), parent["text"]


async def test_slack_429_and_500_bursts_deliver_everything_once_and_count_every_429(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    apps = serve_apps(argocd, kube, 12)
    slack.fail_next("chat.postMessage", status=429, retry_after=0, count=5)
    slack.http_error_next("chat.postMessage", status=500, count=5)

    async with running(settings, workers=3, claim_idle_ms=300) as bot:
        for app in apps:
            await bot.webhook(alert(app))
        await bot.settle(60)
        metrics = (await bot.http.get("/metrics")).text
    one_parent_with_its_thread(slack, apps)
    assert re.search(r"^argo_why_slack_ratelimited_total 5.0$", metrics, re.M), re.findall(
        r"^argo_why_slack.*$", metrics, re.M
    )


async def test_argocd_down_then_back_is_one_digest_then_every_analysis(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    apps = serve_apps(argocd, kube, 6)
    settings.argocd.public_url = PUBLIC
    settings.runtime.dead_letter_retry_s = 0.3
    argocd.down()

    async with running(settings, workers=3) as bot:
        for app in apps:
            assert (await bot.webhook(alert(app))).status_code == 202
        queue = bot.services.queue

        async def dead() -> int:
            return len([d for d in await queue.dead_letters() if d["retry"]])

        await until(lambda: _at_least(dead(), 6), 30)
        await until(lambda: any("6 apps went OutOfSync" in m["text"] for m in slack.messages(CHANNEL)), 15)
        [digest] = slack.messages(CHANNEL)  # one message for the outage, not one per app
        assert json.dumps(digest["blocks"]).count("the analysis failed: Argo CD") == 6
        assert argocd.url not in json.dumps(digest) and PUBLIC in json.dumps(digest)
        argocd.up()
        await until(lambda: len(slack.messages(CHANNEL)) == 7, 30)
        await bot.settle()
        assert await dead() == 0
    assert parents(slack) - Counter({"6": 1}) == Counter({app["metadata"]["name"]: 1 for app in apps})
    assert argocd.url not in json.dumps(slack.messages(CHANNEL, include_replies=True))


async def _at_least(count: Any, n: int) -> bool:
    return bool(await count >= n)


# --- the scheduler's leader stopped while a digest is open ----------------------------------------------------------


def _holder(client: redis.Redis, lock: str) -> str | None:
    raw: bytes | None = client.get(f"argo-why:lock:{lock}")  # type: ignore[assignment]
    return raw.decode() if raw is not None else None


def _pid_of(holder: str | None) -> int | None:
    """The process id inside a replica's identity (``host-pid-random``), as the locks name their holder."""
    return int(holder.rsplit("-", 2)[-2]) if holder else None


def _digest_calls(slack: FakeSlack) -> int:
    return len(slack.calls_to("chat.postMessage")) + len(slack.calls_to("chat.update"))


def digest_apps(slack: FakeSlack) -> Counter[str]:
    """In how many digest messages each app is listed."""
    listed: Counter[str] = Counter()
    for m in slack.messages(CHANNEL):
        if "went OutOfSync" in m["text"]:
            listed.update(set(re.findall(r"\bapp-\d{3}\b", m["text"] + json.dumps(m["blocks"]))))
    return listed


async def test_sigterm_to_the_scheduler_leader_during_an_open_digest_strands_nothing(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str
) -> None:
    """Three times: a burst of apps goes to the digest, Slack is slow to answer its post or update, and the leader
    gets SIGTERM mid-flush. The stopped replica leaves no lock behind in its name, and every app of the bursts is
    listed in exactly one digest, long before a lock left behind would have expired."""
    apps = serve_apps(argocd, kube, 16)
    settings.runtime.digest_threshold = 1  # after the first app, every app of a burst goes to the digest
    settings.runtime.digest_window_s = 600  # one digest message, updated with every burst
    settings.runtime.shutdown_grace_s = 5
    bursts = [apps[1:6], apps[6:11], apps[11:16]]
    client = redis.Redis.from_url(redis_url)
    replicas = [BotProcess(settings, serve=True), BotProcess(settings, serve=True)]
    try:
        for p in replicas:
            await p.ready()
        assert (await post_webhook(replicas[0].url, settings, alert(apps[0]))).status_code == 202
        await until(lambda: len(slack.messages(CHANNEL)) == 1, 30)  # the first app: a parent of its own
        for burst in bursts:
            await until(lambda: _pid_of(_holder(client, "scheduler-leader")) in {p.proc.pid for p in replicas}, 30)
            leader = next(p for p in replicas if p.proc.pid == _pid_of(_holder(client, "scheduler-leader")))
            other = next(p for p in replicas if p is not leader)
            calls = _digest_calls(slack)
            slack.slow_next("chat.postMessage", 2)
            slack.slow_next("chat.update", 2)
            for app in burst:
                assert (await post_webhook(other.url, settings, alert(app))).status_code == 202
            # the leader's flush has reached Slack, which holds its answer back: stop the leader now
            await until(lambda n=calls: _digest_calls(slack) > n, 30)  # type: ignore[misc]
            assert await leader.terminate(), leader.stderr()
            left = {lock: _holder(client, lock) for lock in ("digest", "scheduler-leader")}
            assert all(_pid_of(h) != leader.proc.pid for h in left.values()), (left, leader.stderr())
            assert "Traceback" not in leader.stderr(), leader.stderr()
            leader.close()
            replicas.remove(leader)
            replicas.append(BotProcess(settings, serve=True))
            await replicas[-1].ready()
        waiting = [app["metadata"]["name"] for burst in bursts for app in burst]
        # a lock left behind would hold every digest back for its TTL (120 s): the limit is well below it
        await until(lambda: all(digest_apps(slack)[a] for a in waiting), 60)
        await asyncio.sleep(1)  # a second digest for the same apps would come now
        assert digest_apps(slack) == Counter(dict.fromkeys(waiting, 1))
        assert len([m for m in slack.messages(CHANNEL) if "went OutOfSync" in m["text"]]) == 1
    finally:
        for p in replicas:
            p.close()
        client.close()


async def test_a_leader_killed_mid_digest_is_replaced_and_its_digest_posted_long_before_a_lock_ttl(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str
) -> None:
    """kill -9 of the leader while Slack holds the answer to its digest: the locks it held expire within their
    short leases, so the next replica posts the digest (adopting the one Slack took) promptly, not after 120 s."""
    apps = serve_apps(argocd, kube, 4)
    settings.runtime.digest_threshold = 1
    client = redis.Redis.from_url(redis_url)
    try:
        async with bot_process(settings, serve=True) as dying:
            await until(lambda: _pid_of(_holder(client, "scheduler-leader")) == dying.proc.pid, 30)
            assert (await post_webhook(dying.url, settings, alert(apps[0]))).status_code == 202
            await until(lambda: len(slack.messages(CHANNEL)) == 1 and not client.xlen("argo-why:jobs"), 30)
            slack.slow_next("chat.postMessage", 60)  # the digest is posted; the answer never reaches the leader
            for app in apps[1:]:
                assert (await post_webhook(dying.url, settings, alert(app))).status_code == 202
            await until(lambda: len(slack.messages(CHANNEL)) == 2, 30)
            assert _pid_of(_holder(client, "digest")) == dying.proc.pid
            dying.kill()
        async with bot_process(settings, serve=True) as next_leader:
            # the limit is well below the 120 s a lock left by the dead leader used to live
            await until(lambda: not client.hlen("argo-why:digest"), 45)
            assert next_leader.proc.poll() is None
        waiting = [app["metadata"]["name"] for app in apps[1:]]
        assert digest_apps(slack) == Counter(dict.fromkeys(waiting, 1))
        assert len([m for m in slack.messages(CHANNEL) if "went OutOfSync" in m["text"]]) == 1
    finally:
        client.close()


async def test_a_stop_while_a_digest_lock_is_being_taken_leaves_no_lock_behind(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str
) -> None:
    """The leader's scheduled flush took the digest lock in Redis but has not had the answer yet when the replica
    stops: the stop waits for it, then releases the lock in its name (it may hold it), so the next replica posts
    the waiting digest at once."""
    apps = serve_apps(argocd, kube, 3)
    settings.runtime.digest_threshold = 1
    settings.runtime.shutdown_grace_s = 1
    client = redis.Redis.from_url(redis_url)
    try:
        async with RedisProxy(redis_url) as proxy:
            settings.redis.url = proxy.url
            async with running(settings) as first:
                await until(lambda: _holder(client, "scheduler-leader") is not None, 10)
                await first.webhook(alert(apps[0]))
                await first.settle()
                proxy.stall_on(b"lock:digest")  # the next flush's SET NX is done, its answer held back
                await until(lambda: _holder(client, "digest") is not None, 10)
                for app in apps[1:]:  # two apps of a burst wait for the digest
                    await first.webhook(alert(app))
                await until(lambda: client.hlen("argo-why:digest") == 2, 15)
            assert _holder(client, "digest") is None and _holder(client, "scheduler-leader") is None
            proxy.restore()
        settings.redis.url = redis_url
        async with running(settings) as second:
            await until(lambda: not client.hlen("argo-why:digest"), 15)  # well below any lock's lifetime
            await second.settle()
        assert digest_apps(slack) == Counter({"app-001": 1, "app-002": 1})
    finally:
        client.close()
