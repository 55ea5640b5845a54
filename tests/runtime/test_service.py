"""The bot end to end: real HTTP (uvicorn), real Redis, Bolt, the worker; fake Slack, Argo CD and cluster servers.

Covers the flow README documents ("The Slack bot: `argo-why serve`") and issue 4's list: webhook in -> one parent and
thread replies; duplicates dropped; the same app re-uses its thread (across a restart too) and turns green when Synced;
forged or expired Slack signatures, wrong webhook tokens, malformed and oversized bodies rejected with nothing enqueued;
Slack 429 retried, Slack down -> pending then delivered, a worker that died mid-job -> delivered once by another; every
slash command and button; the digest; health, readiness and metrics.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings
from bot.demo.runner import webhook_body
from bot.queue import RedisQueue
from tests.fakes.argocd import FakeArgoCD, app_from_case, resource_diff
from tests.fakes.cases import serve_case
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.fakes.slack import FakeSlack, block_action_body, slash_command_body
from tests.harness.service_kit import CHANNEL, Bot, running, service_settings, until
from tests.paths import CASEBOOK


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


def after_sync(body: dict[str, Any], finished_at: str) -> dict[str, Any]:
    """The alert Argo CD sends when a later sync (finished at ``finished_at``) did not settle the app either."""
    return {**body, "operationState": {**body["operationState"], "finishedAt": finished_at}}


def top(slack: FakeSlack) -> list[dict[str, Any]]:
    return slack.messages(CHANNEL)


# --- webhook -> thread ---------------------------------------------------------------------------------


async def test_webhook_posts_one_parent_and_thread_replies_and_drops_duplicates(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-csa")
    body = webhook_body(app)

    async with running(settings) as bot:
        r = await bot.webhook(body)
        assert r.status_code == 202 and r.json()["status"] == "queued"
        assert (await bot.webhook(body)).json() == {"status": "duplicate"}  # Argo CD's retry
        await bot.settle()
        metrics = (await bot.http.get("/metrics")).text
        assert 'argo_why_webhooks_total{outcome="duplicate"} 1.0' in metrics
        assert "argo_why_queue_depth 0.0" in metrics
    [parent] = top(slack)
    assert "`spec.replicas`" in json.dumps(parent["blocks"]) and "HorizontalPodAutoscaler" in json.dumps(
        parent["blocks"]
    )
    actions = [e["action_id"] for b in parent["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert actions == ["show_diff", "mute", "recheck"]
    replies = slack.thread(CHANNEL, parent["ts"])
    assert replies and "autoscaler" in json.dumps(replies[0]["blocks"]) and "jsonPointers" in json.dumps(replies)
    assert all(c.method != "chat.postMessage" or c.params.get("text") for c in slack.calls)  # a text fallback


async def test_same_app_reuses_its_thread_turns_green_and_survives_a_restart(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "manual-kubectl-edit-image")
    first = webhook_body(app)
    again = after_sync(first, "2026-11-30T08:00:00Z")  # the next sync did not settle it either
    synced = {**first, "sync": {**first["sync"], "status": "Synced"}}
    later = after_sync(first, "2026-11-30T09:00:00Z")

    async with running(settings) as bot:
        await bot.webhook(first)
        await bot.settle()
    async with running(settings) as bot:  # a restart: the thread map is in Redis
        await bot.webhook(again)
        await bot.settle()
        assert "2 syncs did not settle it" in json.dumps(top(slack)[0]["blocks"])
        await bot.webhook(synced)
        await bot.settle()
        assert "large_green_circle" in json.dumps(top(slack)[0]["blocks"])
        await bot.webhook(later)  # a new episode re-uses the thread
        await bot.settle()
    [parent] = top(slack)
    assert parent["updated"] == 3
    assert "large_green_circle" not in json.dumps(parent["blocks"])
    whys = [m for m in slack.thread(CHANNEL, parent["ts"]) if "manual-edit" in json.dumps(m["blocks"])]
    assert len(whys) == 2  # the first episode's explanation, and the new episode's


async def test_a_redelivered_alert_is_not_counted_twice(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-ssa")
    first = webhook_body(app)
    second = after_sync(first, "2026-11-30T08:00:00Z")

    async with running(settings) as bot:
        await bot.webhook(first)
        await bot.settle()
        await bot.webhook(second)
        await bot.settle()
        job = {"type": "webhook", "body": second, "received": time.time(), "key": _key(second)}
        await bot.services.queue.enqueue(job)  # the same job again, as after a crash before its ack
        await bot.settle()
    [parent] = top(slack)
    assert "2 syncs did not settle it" in json.dumps(parent["blocks"])


def _key(body: dict[str, Any]) -> str:
    from bot.intake.jobs import WebhookBody

    return WebhookBody.model_validate(body).idempotency_key()


# --- rejected input --------------------------------------------------------------------------------------


async def test_bad_webhooks_are_rejected_and_nothing_is_enqueued(settings: Settings, slack: FakeSlack) -> None:
    async with running(settings, workers=0) as bot:
        good = {"app": {"name": "shop"}, "sync": {"status": "OutOfSync"}}
        assert (await bot.webhook(good, token="wrong")).status_code == 401
        r = await bot.http.post("/webhooks/argocd", json=good)  # no Authorization at all
        assert r.status_code == 401
        r = await bot.webhook(None, raw=b"{not json")
        assert r.status_code == 400 and r.json()["error"] == "body is not valid JSON"
        r = await bot.webhook({"app": {"name": "Bad_Name"}, "sync": {"status": "OutOfSync"}})
        assert r.status_code == 400 and r.json()["error"].startswith("app.name")
        r = await bot.webhook({"app": {"name": "shop"}})
        assert r.status_code == 400 and "sync" in r.json()["error"]
        r = await bot.webhook(None, raw=b'{"pad": "' + b"x" * (1024 * 1024) + b'"}')
        assert r.status_code == 413
        extra = {**good, "unknown": {"nested": True}, "operationState": None}
        assert (await bot.webhook(extra)).status_code == 202  # extra fields tolerated, null state allowed
        assert await bot.services.queue.depth() == 1


async def test_forged_and_expired_slack_signatures_are_401(settings: Settings, slack: FakeSlack) -> None:
    async with running(settings, workers=0) as bot:
        body = slash_command_body("/argo", "help", response_url=slack)
        assert (await bot.slack_post(body, secret="forged")).status_code == 401
        assert (await bot.slack_post(body, timestamp=int(time.time()) - 600)).status_code == 401
        ok = await bot.slack_post(body)
        assert ok.status_code == 200 and "/argo why" in ok.text


async def test_store_outage_answers_503_so_argocd_retries(settings: Settings) -> None:
    settings.redis.url = "redis://127.0.0.1:9/0"

    async with running(settings, workers=0) as bot:
        r = await bot.webhook({"app": {"name": "shop"}, "sync": {"status": "OutOfSync"}})
        assert r.status_code == 503
        ready = await bot.http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["store"] != "ok"


# --- Slack failures ---------------------------------------------------------------------------------------


async def test_slack_429_is_retried_and_delivered(settings: Settings, slack: FakeSlack, argocd: FakeArgoCD,
                                                  kube: FakeKubernetes) -> None:  # fmt: skip
    app = serve_case(argocd, kube, "hpa-replicas-ssa")
    slack.fail_next("chat.postMessage", status=429, retry_after=1)

    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
        assert "argo_why_slack_ratelimited_total 1.0" in (await bot.http.get("/metrics")).text
    assert len(top(slack)) == 1


async def test_slack_down_leaves_the_job_pending_until_slack_is_back(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-ssa")

    async with running(settings) as bot:
        slack.down()
        await bot.webhook(webhook_body(app))
        await until(lambda: _pending(bot), 15)
        assert top(slack) == []
        slack.up()
        await bot.settle(20)
    assert len(top(slack)) == 1


async def _pending(bot: Bot) -> bool:
    return bool(await bot.services.queue.pending() == 1)


async def test_a_job_taken_by_a_worker_that_died_is_delivered_once_by_another(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-csa")

    async with running(settings, workers=0) as bot:
        await bot.webhook(webhook_body(app))
        taken = await bot.services.queue.read("replica-that-dies", count=1, block_ms=100)
        assert len(taken) == 1  # read, never acknowledged: the replica died mid-job
    async with running(settings, workers=2, claim_idle_ms=200) as bot:
        await bot.settle(20)
    assert len(top(slack)) == 1


async def test_analysis_failure_is_said_in_the_thread_and_dead_lettered(settings: Settings, slack: FakeSlack) -> None:
    async with running(settings) as bot:
        body = {"app": {"name": "does-not-exist"}, "sync": {"status": "OutOfSync"}}
        await bot.webhook(body)
        await bot.settle()
        assert "argo_why_dead_letters_total 1.0" in (await bot.http.get("/metrics")).text
    [msg] = top(slack)
    assert "does-not-exist" in msg["text"] and "no application" in json.dumps(msg)


async def test_jobs_of_another_version_or_shape_are_dead_lettered_with_a_reason(
    settings: Settings, slack: FakeSlack
) -> None:
    async with running(settings) as bot:
        await bot.services.queue.enqueue({"type": "note", "version": 2, "channel": CHANNEL, "text": "from v2"})
        await bot.services.queue.enqueue({"type": "launch_rockets"})
        await bot.services.queue.enqueue({"type": "note", "channel": CHANNEL, "thread_ts": None, "text": "v1"})
        await bot.settle()
        assert isinstance(bot.services.queue, RedisQueue)
        dead = await bot.services.queue.dead_letters()
    reasons = [d["reason"] for d in dead]
    assert reasons[0] == "job version 2 (this replica reads version 1)"
    assert reasons[1].startswith("unreadable 'launch_rockets' job: job: Input tag 'launch_rockets'")
    assert len(reasons) == 2
    assert [m["text"] for m in top(slack)] == ["v1"]  # the worker went on with the next job


# --- slash commands and buttons -----------------------------------------------------------------------------


async def test_slash_commands(settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-csa")
    name = app["metadata"]["name"]
    settings.slack.channel_routes = {"*": "C0TEAM"}  # the commands answer only where the app's alerts go

    async with running(settings) as bot:
        r = await bot.slack_post(slash_command_body("/argo", "help", response_url=slack))
        assert r.status_code == 200 and "/argo mute" in r.text
        r = await bot.slack_post(slash_command_body("/argo", "why Not_An_App", response_url=slack))
        assert "needs an Application name" in r.text and await bot.services.queue.depth() == 0
        r = await bot.slack_post(slash_command_body("/argo", "frobnicate x", response_url=slack))
        assert "not a command" in r.text
        r = await bot.slack_post(slash_command_body("/argo", f"why {name}", channel_id="C0TEAM",
                                                    response_url=slack))  # fmt: skip
        assert r.status_code == 200 and "Looking into" in r.text
        await bot.settle()
        r = await bot.slack_post(slash_command_body("/argo", f"diff {name}", channel_id="C0TEAM",
                                                    response_url=slack))  # fmt: skip
        await bot.settle()
        r = await bot.slack_post(slash_command_body("/argo", "why no-such-app", channel_id="C0TEAM",
                                                    user_id="U0BOB", response_url=slack))  # fmt: skip
        await bot.settle()
        r = await bot.slack_post(slash_command_body("/argo", f"mute {name} forever", response_url=slack))
        assert "duration" in r.text
        r = await bot.slack_post(slash_command_body("/argo", f"mute {name} 2h", user_id="U0ALICE", channel_id="C0TEAM",
                                                    response_url=slack))  # fmt: skip
        assert r.status_code == 200
        await bot.settle()
        await bot.webhook(webhook_body(app))  # muted: no alert
        await bot.settle()
    team = slack.messages("C0TEAM")
    assert len(team) == 3 and "`spec.replicas`" in json.dumps(team[0]["blocks"]) and "Diff of" in team[1]["text"]
    assert "muted alerts" in team[2]["text"]  # said in the channel, by the worker
    assert slack.thread("C0TEAM", team[0]["ts"])  # the explanation in the thread
    [eph] = [c for c in slack.calls if c.method == "chat.postEphemeral"]
    assert eph.params["user"] == "U0BOB" and "no-such-app" in json.dumps(eph.params)
    assert top(slack) == []


async def test_buttons_show_diff_recheck_and_mute(settings: Settings, slack: FakeSlack, argocd: FakeArgoCD,
                                                 kube: FakeKubernetes) -> None:  # fmt: skip
    app = serve_case(argocd, kube, "multi-resource-three-causes")

    def click(action: str, parent: dict[str, Any], user: str = "U0ALICE", action_ts: str | None = None) -> bytes:
        value = next(e["value"] for b in parent["blocks"] if b["type"] == "actions" for e in b["elements"]
                     if e["action_id"] == action)  # fmt: skip
        return block_action_body(action, value, user_id=user, channel_id=CHANNEL, message_ts=parent["ts"],
                                 action_ts=action_ts, response_url=slack)  # fmt: skip

    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
        parent = top(slack)[0]
        replies = len(slack.thread(CHANNEL, parent["ts"]))
        body = click("show_diff", parent, action_ts="1764500000.1")
        assert (await bot.slack_post(body)).status_code == 200
        assert (await bot.slack_post(body)).status_code == 200  # a double click is handled once
        await bot.settle()
        assert len(slack.thread(CHANNEL, parent["ts"])) == replies + 1
        assert (await bot.slack_post(click("recheck", parent))).status_code == 200
        await bot.settle()
        assert top(slack)[0]["updated"] >= 1
        assert (await bot.slack_post(click("mute", parent))).status_code == 200
        await bot.settle()
        note = slack.thread(CHANNEL, parent["ts"])[-1]
        assert "muted alerts" in note["text"] and "24h" in note["text"]
        key = f"{app['metadata']['namespace']}/{app['metadata']['name']}"
        assert await bot.services.store.mute_until(key, time.time())


async def test_a_burst_of_drifting_apps_becomes_one_digest(settings: Settings, slack: FakeSlack, argocd: FakeArgoCD,
                                                           kube: FakeKubernetes) -> None:  # fmt: skip
    settings.runtime.digest_threshold = 2
    cases = ["hpa-replicas-csa", "hpa-replicas-ssa", "manual-kubectl-edit-image", "kubectl-rollout-restart",
             "flux-kustomize-image"]  # fmt: skip
    apps = [serve_case(argocd, kube, c) for c in cases]
    names = [a["metadata"]["name"] for a in apps[2:]]

    async with running(settings) as bot:
        for app in apps:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        await until(lambda: len(top(slack)) == 3 and all(n in json.dumps(top(slack)[2]) for n in names), 10)
    individual, digest = top(slack)[:2], top(slack)[2]
    assert all("actions" in json.dumps(m["blocks"]) for m in individual)
    assert "3 apps went OutOfSync" in digest["text"]
    assert len(top(slack)) == 3  # one digest message, updated as the burst went on


async def test_health_readiness_and_metrics(settings: Settings, slack: FakeSlack) -> None:
    async with running(settings, workers=0) as bot:
        assert (await bot.http.get("/healthz")).json() == {"status": "ok"}
        ready = await bot.http.get("/readyz")
        assert ready.status_code == 200 and ready.json()["checks"] == {"store": "ok"}
        metrics = await bot.http.get("/metrics")
        assert metrics.status_code == 200 and "argo_why_queue_pending" in metrics.text


async def test_an_object_missing_live_is_not_synced_and_the_parent_says_so(settings: Settings, slack: FakeSlack,
                                                                           argocd: FakeArgoCD, kube: FakeKubernetes
                                                                           ) -> None:  # fmt: skip
    folder = CASEBOOK / "cases" / "clean-no-findings"
    app, resources, renders = app_from_case(folder)
    missing = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "feature-flags",
               "namespace": resources[0].get("namespace") or "default"}, "data": {"beta": "on"}}  # fmt: skip
    resources.append(resource_diff(missing, None))
    app["status"]["sync"]["status"] = "OutOfSync"
    argocd.add_app(app, resources, [[*renders[0], missing]])
    kube.add(*context_from_case(folder))
    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
    [parent] = top(slack)
    assert "OutOfSync" in parent["text"] and "Synced again" not in parent["text"]
    assert "feature-flags" in str(slack.thread(CHANNEL, parent["ts"])) + str(parent["blocks"])


async def test_a_bug_in_one_job_parks_it_and_the_worker_goes_on(settings: Settings, slack: FakeSlack) -> None:
    async with running(settings) as bot:
        # button state that passes the store's checks but that no version of the bot could have written
        odd = {"app_key": "shop", "app": "shop", "kind": "ignore", "slot": "all", "alert": {"app": "shop"},
               "findings": [{"not": "a finding"}]}  # fmt: skip
        state = await bot.services.store.put_state("fix", json.dumps(odd), 60)
        click = {"type": "open_pr", "state": state, "channel": CHANNEL, "message_ts": "1.1", "user": "U0ALICE"}
        await bot.services.queue.enqueue(click)
        await bot.services.queue.enqueue({"type": "note", "channel": CHANNEL, "thread_ts": None, "text": "after"})
        await bot.settle()
        assert isinstance(bot.services.queue, RedisQueue)
        dead = await bot.services.queue.dead_letters()
    assert [m["text"] for m in top(slack)] == ["after"]
    assert len(dead) == 1 and dead[0]["reason"].startswith("internal error (KeyError")
