"""The scheduler's jobs, end to end on one replica (real Redis, the fakes): the sweep of apps that drift without a
webhook (and turn green without one), the end of a mute, reminders, the daily summary; each says what it says once.
Stopping halts the scheduler first: the running job finishes, one past the deadline is cut short (and cleans up),
nothing starts after, the lease is given up.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings
from bot.demo.runner import webhook_body
from bot.runtime.reminders import Reminders
from bot.runtime.scheduler import Scheduled, Scheduler
from bot.runtime.sweep import Sweep
from bot.store import RedisStore
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.cases import serve_case
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings, until


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    s = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    s.runtime.sweep_s = 0  # each test turns on what it looks at
    s.runtime.remind_after_h = 0
    s.runtime.daily_summary_at = None
    return s


def set_sync(argocd: FakeArgoCD, app: dict[str, Any], status: str) -> None:
    """The app's sync status as Argo CD would report it after its next comparison."""
    with argocd._lock:
        entry = argocd._apps[(app["metadata"]["namespace"], app["metadata"]["name"])]
        entry.app["status"]["sync"]["status"] = status


def in_thread(slack: FakeSlack, text: str) -> list[dict[str, Any]]:
    [parent] = slack.messages(CHANNEL)
    return [m for m in slack.thread(CHANNEL, parent["ts"]) if text in m["text"]]


async def test_the_sweep_alerts_drift_that_sent_no_webhook_once_and_turns_it_green(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    quiet = serve_case(argocd, kube, "hpa-replicas-csa")  # OutOfSync after a successful sync; no webhook comes
    loud = serve_case(argocd, kube, "manual-kubectl-edit-image")  # its webhook comes
    settings.runtime.sweep_s = 0.3

    async with running(settings) as bot:
        await bot.webhook(webhook_body(loud))
        await until(lambda: len(slack.messages(CHANNEL)) == 2, 15)
        sweep = Sweep(bot.services)
        assert await sweep.run() == 0  # both are known now: the next sweeps queue nothing
        await bot.settle()
        set_sync(argocd, quiet, "Synced")
        await until(lambda: any("large_green_circle" in json.dumps(m["blocks"]) for m in slack.messages(CHANNEL)), 15)
        await bot.settle()
    messages = slack.messages(CHANNEL)
    assert len(messages) == 2  # one parent each, nothing twice
    names = {quiet["metadata"]["name"]: "green", loud["metadata"]["name"]: "drift"}
    for m in messages:
        name = next(n for n in names if n in m["text"])
        assert ("large_green_circle" in json.dumps(m["blocks"])) == (names[name] == "green")
    assert len([c for c in slack.calls_to("chat.postMessage") if c.params.get("thread_ts") is None]) == 2


async def test_a_mute_that_ends_while_the_app_drifts_is_said_once_and_the_app_looked_at_again(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-ssa")
    key = f"{app['metadata']['namespace']}/{app['metadata']['name']}"

    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
        calls = len(argocd.calls)
        until_s = time.time() + 0.5
        await bot.services.store.set_mute(key, until_s, "U0ALICE")
        await until(lambda: len(in_thread(slack, "has ended")) == 1, 15)
        await bot.settle()
        # the same mute handled again (a replica that died before it could forget it): nothing said twice
        await bot.services.store.set_mute(key, until_s, "U0ALICE")
        await Reminders(bot.services).mutes_ended()
        await bot.settle()
        assert len(argocd.calls) > calls  # analysed again
    [note] = in_thread(slack, "has ended")
    assert "<@U0ALICE>" in json.dumps(note["blocks"]) and "still OutOfSync" in note["text"]
    assert len(slack.messages(CHANNEL)) == 1


async def test_drift_unresolved_past_remind_after_gets_a_reminder_in_its_thread(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "manual-kubectl-edit-image")
    settings.runtime.remind_after_h = 1 / 3600  # a second

    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await until(lambda: bool(slack.messages(CHANNEL)) and bool(in_thread(slack, "has been OutOfSync for")), 15)
        reminders = Reminders(bot.services)
        before = len(in_thread(slack, "has been OutOfSync for"))
        await reminders.remind()  # the same period again (or the next one): never a repeat of a period
    reminded = in_thread(slack, "has been OutOfSync for")
    assert len(reminded) <= before + 1
    assert len({m["text"] for m in reminded}) == len(reminded) or len(reminded) == 1
    assert "1 sync did not settle it" in reminded[0]["text"]


async def test_the_daily_summary_lists_the_apps_drifting_longest_once_a_day(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    apps = [serve_case(argocd, kube, c) for c in ("hpa-replicas-csa", "manual-kubectl-edit-image")]

    async with running(settings) as bot:
        reminders = Reminders(bot.services)
        assert await reminders.summary() == 0  # nothing drifts: nothing said
        for app in apps:
            await bot.webhook(webhook_body(app))
            await bot.settle()
        assert await reminders.summary() == 2
        assert await reminders.summary() == 2  # a second run the same day (another replica, a retry)
    summaries = [m for m in slack.messages(CHANNEL) if "drifting longest" in m["text"]]
    assert len(summaries) == 1
    first, second = (a["metadata"]["name"] for a in apps)
    text = summaries[0]["text"]
    assert text.index(first) < text.index(second)  # longest first


# --- stopping: the scheduled jobs first --------------------------------------------------------------------------


async def test_halt_waits_for_the_running_job_cuts_short_one_past_the_deadline_and_starts_no_other(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore.from_url(redis_url)
    started: list[str] = []
    cleaned: list[str] = []

    def job(name: str, seconds: float) -> Scheduled:
        async def run() -> None:
            started.append(name)
            try:
                await asyncio.sleep(seconds)
            finally:
                cleaned.append(name)  # what a job holds is released on its way out, cancelled or not

        return Scheduled(name, 0.05, run)

    scheduler = Scheduler(store, "replica-a", [job("short", 0.3), job("endless", 3600)], tick_s=0.05)
    try:
        await scheduler.start()
        await until(lambda: {"short", "endless"} <= set(started), 10)
        await scheduler.halt(time.monotonic() + 2)
        assert sorted(cleaned) == ["endless", "short"]  # the short one finished, the endless one was cut short
        runs = len(started)
        await asyncio.sleep(0.3)  # several intervals: nothing starts after halt
        assert len(started) == runs and scheduler.leader
        await scheduler.stop()
        assert await store.client.get("argo-why:lock:scheduler-leader") is None  # the lease is given up at once
    finally:
        await store.close()
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert any("cut short" in r.getMessage() for r in caplog.records)


async def test_stop_cuts_short_a_lease_renewal_stuck_on_the_store_quietly_and_still_gives_the_lease_up(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore.from_url(redis_url)
    admin = RedisStore.from_url(redis_url)
    scheduler = Scheduler(store, "replica-a", [], tick_s=0.05)
    try:
        await scheduler.start()
        await until(lambda: scheduler.leader, 10)
        await admin.client.execute_command("CLIENT", "PAUSE", 1500, "WRITE")  # the next renewal waits on the server
        await asyncio.sleep(0.2)
        began = time.monotonic()
        await scheduler.stop()  # the renewal is cut short after a second; the release waits out the pause
        assert time.monotonic() - began < 5 and not scheduler.leader
        assert await admin.client.get("argo-why:lock:scheduler-leader") is None
    finally:
        await admin.client.execute_command("CLIENT", "UNPAUSE")
        await store.close()
        await admin.close()
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_apps_only_listed_in_a_digest_get_reminders_the_summary_and_the_sweep_like_any_other(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    settings.runtime.digest_threshold = 1
    apps = [serve_case(argocd, kube, c) for c in ("hpa-replicas-csa", "hpa-replicas-ssa", "manual-kubectl-edit-image")]
    first, *listed = (a["metadata"]["name"] for a in apps)

    def digest() -> dict[str, Any] | None:
        return next((m for m in slack.messages(CHANNEL) if "went OutOfSync" in m["text"]), None)

    async with running(settings) as bot:
        for app in apps:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        await until(lambda: (d := digest()) is not None and all(n in d["text"] for n in listed), 15)
        listed_in = digest()
        assert listed_in is not None and first not in listed_in["text"]
        keys = [f"{a['metadata']['namespace']}/{a['metadata']['name']}" for a in apps[1:]]

        async def recorded() -> bool:  # the records are saved once Slack took the digest
            refs = [await bot.services.store.get_thread(k) for k in keys]
            return all(r is not None and r.in_digest for r in refs)

        await until(recorded, 15)
        settings.runtime.remind_after_h = 1 / 3600  # a second
        time.sleep(1.1)
        reminders = Reminders(bot.services)
        assert await reminders.remind() == 3  # the digest's apps too
        assert await reminders.summary() == 3
        # the sweep sees a listed app Synced again: its record says so, and the digest's message stays as it was
        set_sync(argocd, apps[1], "Synced")
        assert await Sweep(bot.services).run() == 1
        await bot.settle()
        ref = await bot.services.store.get_thread(keys[0])
        assert ref is not None and ref.status == "synced" and ref.in_digest
        after = digest()
    in_digest = [m["text"] for m in slack.thread(CHANNEL, listed_in["ts"]) if "has been OutOfSync for" in m["text"]]
    assert sorted(n for n in listed if any(n in t for t in in_digest)) == sorted(listed)
    [summary] = [m for m in slack.messages(CHANNEL) if "drifting longest" in m["text"]]
    assert all(n in summary["text"] for n in [first, *listed])
    assert after is not None and after["text"] == listed_in["text"] and after["blocks"] == listed_in["blocks"]
