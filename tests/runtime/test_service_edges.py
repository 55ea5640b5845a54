"""The HTTP edges and the counts, end to end (real uvicorn, Redis, Bolt; the fakes): what issue 10 found broken.

* ``/slack/events`` answers 401/400 to unsigned or malformed requests (bad ``payload`` JSON, invalid UTF-8, a
  non-numeric timestamp) without a traceback, 400 to signed payloads of the wrong shape, runs a replayed signed
  slash command once, and applies ``/argo mute`` without a ``response_url``;
* an oversized webhook sent with ``Connection: close`` gets its 413, not a reset;
* the metrics count every HTTP request to Slack (retries and upload steps included) and every 429;
* the links in Slack come from ``ARGOCD_PUBLIC_URL``/``ARGOCD_URL``, never from the webhook's ``argocdUrl``, and a
  failure never shows the internal ``ARGOCD_URL`` when a public one is configured.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings, required
from bot.demo.runner import webhook_body
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.cases import serve_case
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, block_action_body, slash_command_body
from tests.harness.redis_server import RedisProxy
from tests.harness.service_kit import CHANNEL, Bot, running, service_settings

PUBLIC = "https://argocd.example.com"


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


def signed(bot: Bot, body: bytes, timestamp: str | None = None) -> dict[str, str]:
    """Slack's signature over raw bytes (the SDK's helper only signs text)."""
    secret = required(bot.settings.slack.signing_secret, "SLACK_SIGNING_SECRET").get_secret_value()
    ts = timestamp or str(int(time.time()))
    digest = hmac.new(secret.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"x-slack-request-timestamp": ts, "x-slack-signature": f"v0={digest}",
            "content-type": "application/x-www-form-urlencoded"}  # fmt: skip


def form(payload: Any) -> bytes:
    from urllib.parse import quote

    return b"payload=" + quote(json.dumps(payload)).encode()


# --- /slack/events -----------------------------------------------------------------------------------------------


async def test_slack_events_answers_garbage_with_401_or_400_and_no_traceback(
    settings: Settings, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    form_type = {"content-type": "application/x-www-form-urlencoded"}
    async with running(settings, workers=0) as bot:
        unsigned = [
            (b"payload=%7Bnot", form_type),
            (b"payload=\xff\xfe", form_type),
            (b"command=/argo&text=help", {**form_type, "x-slack-request-timestamp": "abc", "x-slack-signature": "v0"}),
            (b"command=/argo&text=help", {**form_type, "x-slack-request-timestamp": "", "x-slack-signature": ""}),
        ]
        for body, headers in unsigned:
            r = await bot.http.post("/slack/events", content=body, headers=headers)
            assert r.status_code == 401, (body, r.text)
        wrong_shapes: list[bytes] = [
            b"payload=%7Bnot",
            b"payload=\xff\xfe",
            b"payload=%5B1%2C2%5D",  # JSON, but a list
            form({"type": "block_actions", "user": "U1", "actions": "show_diff", "container": 5}),
            form({"type": "block_actions", "user": {"id": "U1"}, "actions": ["show_diff"]}),
            form({"type": "block_actions", "user": {"id": "U1"}, "actions": [{"action_id": 7, "value": "x"}]}),
            form({"type": "block_actions", "user": {"id": "U1"}, "channel": "C1", "actions": []}),
        ]
        for body in wrong_shapes:
            r = await bot.http.post("/slack/events", content=body, headers=signed(bot, body))
            assert r.status_code == 400, (body, r.text)
        assert await bot.services.queue.depth() == 0
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_mute_without_response_url_is_applied_and_answered(settings: Settings, slack: FakeSlack) -> None:
    settings.slack.channel = "C0TEAM"  # an app Argo CD does not show is routed to SLACK_CHANNEL: visible there
    async with running(settings) as bot:
        body = b"command=%2Fargo&text=mute+argocd%2Fshop+2h&user_id=U0ALICE&channel_id=C0TEAM"
        r = await bot.http.post("/slack/events", content=body, headers=signed(bot, body))
        assert r.status_code == 200
        await bot.settle()
        assert await bot.services.store.mute_until("argocd/shop", time.time())
    assert "muted alerts for `argocd/shop` for 2h" in slack.messages("C0TEAM")[-1]["text"]


async def test_a_replayed_signed_slash_command_runs_once(settings: Settings, slack: FakeSlack) -> None:
    async with running(settings, workers=0) as bot:
        body = slash_command_body("/argo", "why shop", user_id="U0ALICE", channel_id="C0TEAM", response_url=slack)
        headers = signed(bot, body)
        first = await bot.http.post("/slack/events", content=body, headers=headers)
        assert first.status_code == 200 and "Looking into" in first.text
        replay = await bot.http.post("/slack/events", content=body, headers=headers)  # the same bytes, 1 s later
        assert replay.status_code == 200 and replay.text == ""
        assert await bot.services.queue.depth() == 1
        # a signed click whose fields are odd but not wrong still gets its 200
        click = block_action_body("show_diff", "report:" + "A" * 16, user_id="U0ALICE", channel_id=CHANNEL,
                                  message_ts="1764500000.000100", response_url=slack)  # fmt: skip
        assert (await bot.http.post("/slack/events", content=click, headers=signed(bot, click))).status_code == 200


# --- /webhooks/argocd -------------------------------------------------------------------------------------------


def _post_raw(port: int, head: bytes, body: bytes) -> bytes:
    """One HTTP request on a socket of its own, the whole body sent before the answer is read."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head + body)
        s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


async def test_an_oversized_webhook_with_connection_close_gets_its_413(settings: Settings) -> None:
    async with running(settings, workers=0) as bot:
        port = int(bot.url.rsplit(":", 1)[1])
        token = required(settings.runtime.webhook_token, "WEBHOOK_TOKEN").get_secret_value()
        body = b'{"pad": "' + b"x" * (3 * 1024 * 1024) + b'"}'
        head = (
            f"POST /webhooks/argocd HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        answer = await asyncio.to_thread(_post_raw, port, head.encode(), body)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert b"connection: close" in answer.lower()
        chunked = (f"POST /webhooks/argocd HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                   "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()  # fmt: skip
        parts = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in [b"x" * 65536] * 40) + b"0\r\n\r\n"
        answer = await asyncio.to_thread(_post_raw, port, chunked, parts)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


# --- metrics ------------------------------------------------------------------------------------------------------


def _metric(text: str, name: str, **labels: str) -> float:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    m = re.search(rf"^{re.escape(name)}{re.escape('{' + inner + '}') if inner else ''} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


async def test_metrics_count_every_slack_request_and_every_429(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-csa")
    slack.fail_next("chat.postMessage", status=429, retry_after=0, count=3)  # one more than the client retries
    slack.http_error_next("chat.postMessage", status=500, count=1)

    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle(20)
        parent = slack.messages(CHANNEL)[0]
        value = next(e["value"] for b in parent["blocks"] if b["type"] == "actions" for e in b["elements"]
                     if e["action_id"] == "show_diff")  # fmt: skip
        click = block_action_body("show_diff", value, user_id="U0ALICE", channel_id=CHANNEL,
                                  message_ts=parent["ts"], response_url=slack)  # fmt: skip
        await bot.slack_post(click)
        await bot.settle()
        metrics = (await bot.http.get("/metrics")).text
    assert _metric(metrics, "argo_why_slack_ratelimited_total") == 3
    for method in ("chat.postMessage", "chat.update", "auth.test"):
        assert _metric(metrics, "argo_why_slack_calls_total", method=method) == len(slack.calls_to(method)), method
    assert len(slack.calls_to("chat.postMessage")) >= 5  # 3 x 429 and a 500 before the parent went through
    assert len(slack.messages(CHANNEL)) == 1


# --- links and failures: the configured Argo CD, never the webhook's ------------------------------------------------


async def test_links_come_from_the_configuration_never_from_the_webhook(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-csa")
    settings.argocd.public_url = PUBLIC
    body = {**webhook_body(app), "argocdUrl": "https://evil.example.net"}

    async with running(settings) as bot:
        await bot.webhook(body)
        await bot.settle()
    posted = json.dumps([slack.messages(CHANNEL, include_replies=True)])
    assert "evil.example.net" not in posted
    assert f"{PUBLIC}/applications/{app['metadata']['namespace']}/{app['metadata']['name']}" in posted
    assert argocd.url not in posted


async def test_a_failure_names_the_public_argocd_url_not_the_internal_one(settings: Settings, slack: FakeSlack,
                                                                          argocd: FakeArgoCD) -> None:  # fmt: skip
    settings.argocd.public_url = PUBLIC
    async with running(settings) as bot:
        await bot.webhook({"app": {"name": "does-not-exist"}, "sync": {"status": "OutOfSync"}})
        await bot.settle()
    [message] = slack.messages(CHANNEL)
    assert "no application does-not-exist" in json.dumps(message)
    assert PUBLIC in json.dumps(message) and argocd.url not in json.dumps(message)


# --- a failed enqueue leaves no dedupe mark -----------------------------------------------------------------------


async def test_a_webhook_answered_503_is_queued_when_argo_cd_sends_it_again(settings: Settings, redis_url: str) -> None:
    """Redis gone after the dedupe mark and before the enqueue: the retry was answered "duplicate" and lost."""
    body = {"app": {"name": "shop", "namespace": "argocd"}, "sync": {"status": "OutOfSync"}}
    async with RedisProxy(redis_url) as proxy:
        settings.redis.url = proxy.url
        async with running(settings, workers=0) as bot:
            proxy.cut_on(b"argo-why:jobs")  # Redis goes away as the entry is being written
            assert (await bot.webhook(body)).status_code == 503
            proxy.restore()
            again = await bot.webhook(body)  # the notifications controller retries
            assert again.status_code == 202, again.text
            assert (await bot.webhook(body)).json() == {"status": "duplicate"}
            assert await bot.services.queue.depth() == 1
