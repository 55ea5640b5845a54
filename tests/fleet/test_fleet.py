"""The fleet: findings kept as small records in Redis, grouped across apps, and the fleet-wide line in the threads.

The index runs on a real redis-server and on the in-memory store alike; the end-to-end test drives the real bot
(uvicorn, Bolt, the worker, real Redis) with a fleet of stand-in apps served by the fake Argo CD: three apps share
the HPA's replicas drift, one has a kubectl edit of its own, and only the three threads say "the same in 2 other
apps".
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis.asyncio

from bot.analysis.fleet import FleetFinding, group_findings, records_of
from bot.config import RuntimeSettings, Settings
from bot.demo.runner import webhook_body
from bot.model import Finding, Fix, Report, ResourceRef, Writer
from bot.runtime.reminders import Reminders
from bot.runtime.sweep import Sweep
from bot.runtime.weekly import WeeklyReport, iso_week
from bot.store import MemoryStore, RedisStore
from bot.store.fleet import FLEET_STALE_S, FleetEntry
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, event_body, slash_command_body
from tests.harness.fleet_kit import HPA_MANAGER, edited_objects, hpa_objects, serve
from tests.harness.service_kit import CHANNEL, running, service_settings


def rec(path: str = "/spec/replicas", writer: str = HPA_MANAGER, obj: str = "shop/web") -> FleetFinding:
    return FleetFinding("apps", "Deployment", path, writer, "autoscaler", obj)


def test_grouping_puts_the_same_field_and_writer_together_and_fleet_wide_first() -> None:
    by_app = {"a": [rec(), rec("/spec/template/spec/containers/*/image", "kubectl-edit")], "b": [rec()],
              "c": [rec(obj="c/web"), rec(obj="c/api")], "d": [rec(writer="keda-operator")]}  # fmt: skip
    groups = group_findings(by_app, 3)
    assert [(g.writer, g.apps, g.fleet_wide) for g in groups] == [
        (HPA_MANAGER, ("a", "b", "c"), True),
        ("keda-operator", ("d",), False),
        ("kubectl-edit", ("a",), False),
    ]
    assert groups[0].objects == (("a", "shop/web"), ("b", "shop/web"), ("c", "c/api"), ("c", "c/web"))
    assert not any(g.fleet_wide for g in group_findings(by_app, 4))


def test_a_finding_is_normalised_by_its_rule_selector_never_by_a_live_index() -> None:
    def finding(pointer: str, rule: dict[str, list[str]] | None) -> Finding:
        return Finding(ResourceRef("apps", "Deployment", "a", "web"), pointer, 1, 2, "mutating-webhook", "likely",
                       Writer(manager="istio-sidecar-injector"), "", Fix("ignore", rule))  # fmt: skip

    expr = '.spec.template.spec.containers[] | select(.name == "istio-proxy")'
    one = records_of(Report("a", [finding("/spec/template/spec/containers/1", {"jqPathExpressions": [expr]})]))
    two = records_of(Report("b", [finding("/spec/template/spec/containers/2", {"jqPathExpressions": [expr]})]))
    assert one[0].signature == two[0].signature and one[0].path == expr
    bare = records_of(Report("c", [finding("/spec/template/spec/containers/3/env/0", None)]))
    assert bare[0].path == "/spec/template/spec/containers/*/env/*"


async def test_the_index_replaces_drops_and_keeps_its_reverse_sets_in_step(store: RedisStore | MemoryStore) -> None:
    now = 1_800_000_000.0
    sig = rec().sig_id
    for app in ("a", "b", "c"):
        await store.fleet.put(app, FleetEntry((rec(),), at=now, since=now - 60, channel=CHANNEL, thread_ts="1.1"))
    assert await store.fleet.apps_with(sig) == {"a", "b", "c"}
    await store.fleet.put("b", FleetEntry((rec(writer="keda-operator"),), at=now, since=now, channel=CHANNEL))
    assert await store.fleet.apps_with(sig) == {"a", "c"}
    await store.fleet.put("c", FleetEntry((), at=now, since=now, channel=CHANNEL))  # no findings: dropped
    await store.fleet.drop("a")
    assert await store.fleet.apps_with(sig) == set() and await store.fleet.app_keys() == {"b"}
    [(key, entry)] = (await store.fleet.entries(now)).items()
    assert key == "b" and entry.findings == (rec(writer="keda-operator"),) and entry.channel == CHANNEL
    assert await store.fleet.entries(now + FLEET_STALE_S) == {}  # stale entries are not read
    assert (await store.fleet.get(["b", "zz"], now)).keys() == {"b"}


async def test_every_fleet_key_has_a_ttl(redis_url: str) -> None:
    s = RedisStore.from_url(redis_url, prefix="ttl-check:")
    try:
        await s.fleet.put("a", FleetEntry((rec(),), at=1.0, since=1.0, channel=CHANNEL))
        r = redis.asyncio.Redis.from_url(redis_url)
        keys = [k async for k in r.scan_iter("ttl-check:fleet:*")]
        ttls = [await r.ttl(k) for k in keys]
        assert len(keys) == 2 and all(0 < t <= 7 * 24 * 3600 for t in ttls)
        await r.aclose()
    finally:
        await s.close()


def test_fleet_min_apps_is_validated() -> None:
    assert RuntimeSettings(FLEET_MIN_APPS="5").fleet_min_apps == 5
    assert RuntimeSettings().fleet_min_apps == 3
    with pytest.raises(ValueError, match="FLEET_MIN_APPS"):
        RuntimeSettings(FLEET_MIN_APPS="1")


# --- end to end -----------------------------------------------------------------------------------------------------


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


async def test_a_fleet_wide_drift_is_said_in_its_threads_only(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD
) -> None:
    shared = ["team-a", "team-b", "team-c"]
    apps = [serve(argocd, name, *hpa_objects(name)) for name in shared]
    apps.append(serve(argocd, "team-d", *edited_objects("team-d")))
    async with running(settings) as bot:
        for app in apps:
            assert (await bot.webhook(webhook_body(app))).status_code == 202
            await bot.settle()
        entries = await bot.services.store.fleet.entries(time.time())
    assert set(entries) == {f"argocd/{n}" for n in [*shared, "team-d"]}
    assert {f.writer for f in entries["argocd/team-a"].findings} == {HPA_MANAGER}
    by_app = {}
    for m in slack.messages(CHANNEL):
        name = next(n for n in [*shared, "team-d"] if n in m["text"])
        by_app[name] = [r["text"] for r in slack.thread(CHANNEL, m["ts"])]
    assert set(by_app) == {*shared, "team-d"}
    for name in shared:
        others = [o for o in shared if o != name]
        [line] = [t for t in by_app[name] if "The same in" in t]  # once, though later apps came
        assert line.startswith("The same in 2 other apps: ") and all(f"argocd/{o}" in line for o in others), line
        assert "/spec/replicas" in line and HPA_MANAGER in line
    assert not [t for t in by_app["team-d"] if "The same in" in t]


async def test_the_drift_overview_app_home_and_daily_summary_show_the_fleet_to_its_channel_only(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD
) -> None:
    shared = ["team-a", "team-b", "team-c"]
    apps = [serve(argocd, name, *hpa_objects(name)) for name in shared]
    apps.append(serve(argocd, "team-d", *edited_objects("team-d")))
    async with running(settings) as bot:
        for app in apps:
            await bot.webhook(webhook_body(app))
            await bot.settle()
        await bot.services.store.set_mute("argocd/team-b", time.time() + 3600, "U0ALICE")
        for channel in (CHANNEL, "C0ELSEWHERE"):
            body = slash_command_body("/argo", "drift", user_id="U0ALICE", channel_id=channel)
            assert (await bot.slack_post(body)).status_code == 200
        bad = await bot.slack_post(slash_command_body("/argo", "drift x", channel_id=CHANNEL))
        assert bad.status_code == 200 and "page number" in bad.text
        await bot.settle()
        opened = {"type": "app_home_opened", "user": "U0BOB", "channel": "D0BOB", "tab": "home"}
        assert (await bot.slack_post(event_body(opened, "Ev0HOME1"))).status_code == 200
        await bot.settle()
        assert await Reminders(bot.services).summary() == 4
    here, elsewhere = (next(e for e in slack.ephemerals if e["channel"] == c and "Drift overview" in e["text"])
                       for c in (CHANNEL, "C0ELSEWHERE"))  # fmt: skip
    assert here["text"] == "Drift overview: 4 apps OutOfSync, 2 causes"
    sections = [b["text"]["text"] for b in here["blocks"] if b["type"] == "section"]
    assert "Fleet-wide" in sections[0] and HPA_MANAGER in sections[0] and "/spec/replicas" in sections[0]
    assert all(f"argocd/{n}" in sections[0] for n in shared) and "argocd/team-d" not in sections[0]
    assert "argocd/team-b`: drifting for" in sections[0] and "(muted)" in sections[0].split("team-b")[1].split("\n")[0]
    assert "argocd/team-d" in sections[1] and "Fleet-wide" not in sections[1]
    assert elsewhere["text"] == "Drift overview: 0 apps OutOfSync, 0 causes"  # not routed there: nothing shown
    home = slack.homes["U0BOB"]
    assert home["type"] == "home" and "Fleet-wide" in str(home["blocks"]) and "argocd/team-d" in str(home["blocks"])
    [summary] = [m for m in slack.messages(CHANNEL) if m["text"].startswith("The 4 apps drifting longest")]
    fleet_line = "Fleet-wide: /spec/replicas of apps/Deployment written by kube-controller-manager in 3 apps"
    assert fleet_line in summary["text"] and summary["text"].count("Fleet-wide") == 1  # team-d's drift is its own


async def test_the_weekly_report_posts_its_chart_with_slacks_files_api(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD
) -> None:
    apps = [serve(argocd, name, *hpa_objects(name)) for name in ("team-a", "team-b")]
    apps.append(serve(argocd, "team-d", *edited_objects("team-d")))
    async with running(settings) as bot:
        for app in apps:
            await bot.webhook(webhook_body(app))
            await bot.settle()
        weekly = WeeklyReport(bot.services)
        now = time.time()
        await weekly.record_hours(now - 60, cap_s=7200)  # the first sweep counts its cap: 2 hours each
        await weekly.record_hours(now, cap_s=7200)  # the next one a minute
        await weekly.record_merged({"title": "argo-why: system-level rule", "url": "https://github.com/a/b/pull/7"}, 2)
        assert await weekly.run() == 3
        assert await weekly.run() == 3  # run twice (a retry, another replica): posted once
        hours = await bot.services.store.fleet.hours(iso_week(now))
    week = iso_week(now)
    [report] = [m for m in slack.messages(CHANNEL) if m["text"] == f"Weekly drift report, {week}"]
    text = str(report["blocks"])
    assert "Drifting longest" in text and "argocd/team-d" in text
    assert "<https://github.com/a/b/pull/7|argo-why: system-level rule>: ended the drift of 2 apps" in text
    [chart] = [u for u in slack.uploads if u.filename.endswith(".png")]
    assert chart.content.startswith(b"\x89PNG\r\n\x1a\n") and chart.thread_ts == report["ts"]
    assert [c.method for c in slack.calls if c.method.startswith("files.")] == [
        "files.getUploadURLExternal", "files.completeUploadExternal"]  # fmt: skip
    assert hours["autoscaler"] == pytest.approx(2 * (7200 + 60), rel=0.01)
    assert hours["manual-edit"] == pytest.approx(7200 + 60, rel=0.01)


async def test_the_sweep_drops_apps_synced_or_gone_from_the_index(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD
) -> None:
    apps = [serve(argocd, name, *hpa_objects(name)) for name in ("team-a", "team-b", "team-c")]
    async with running(settings) as bot:
        for app in apps:
            await bot.webhook(webhook_body(app))
            await bot.settle()
        assert await bot.services.store.fleet.app_keys() == {"argocd/team-a", "argocd/team-b", "argocd/team-c"}
        synced = {**apps[0], "status": {**apps[0]["status"], "sync": {**apps[0]["status"]["sync"], "status": "Synced"}}}
        argocd.add_app(synced, [], [[]])
        with argocd._lock:  # team-c is deleted from Argo CD
            del argocd._apps[("argocd", "team-c")]
        await Sweep(bot.services).run()
        assert await bot.services.store.fleet.app_keys() == {"argocd/team-b"}
        assert await bot.services.store.fleet.apps_with(rec().sig_id) == {"argocd/team-b"}
