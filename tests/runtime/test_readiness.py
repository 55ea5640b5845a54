"""Readiness means "webhooks can be accepted durably": Slack's state is shown, never required; /metrics can have a
port of its own.

The real app on real sockets (uvicorn), real Redis, the fake Slack Web API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from bot.app import build_app, build_services, server_for
from bot.config import ConfigError, Settings, load_settings
from bot.runtime import Runtime
from bot.web.health import SlackAuth
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.redis_server import free_port
from tests.harness.service_kit import BotProcess, running, service_settings, until


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


WEBHOOK = {"app": {"name": "shop", "namespace": "argocd"}, "sync": {"status": "OutOfSync", "revision": "abc"}}


async def _slack_auth(http: httpx.AsyncClient, want: str) -> None:
    async def seen() -> bool:
        return bool((await http.get("/readyz")).json()["info"]["slack_auth"] == want)

    await until(seen, 10)


async def test_a_revoked_slack_token_is_shown_but_the_replica_stays_ready(settings: Settings) -> None:
    settings.slack.bot_token = SecretStr("xoxb-revoked")

    async with running(settings, workers=0) as bot:
        await _slack_auth(bot.http, "failed")
        ready = await bot.http.get("/readyz")
        assert ready.status_code == 200 and ready.json()["ready"] is True
        assert "argo_why_slack_auth_ok 0.0" in (await bot.http.get("/metrics")).text
        assert (await bot.webhook(WEBHOOK)).status_code == 202


async def test_a_slack_outage_keeps_the_replica_ready_and_webhooks_queued(settings: Settings, slack: FakeSlack) -> None:
    slack.down()
    try:
        async with running(settings, workers=0) as bot:
            await _slack_auth(bot.http, "failed")
            assert (await bot.http.get("/readyz")).status_code == 200
            assert (await bot.webhook(WEBHOOK)).status_code == 202
            assert await bot.services.queue.depth() == 1
    finally:
        slack.up()


async def test_slack_auth_is_reported_ok_when_slack_accepts_the_token(settings: Settings) -> None:
    async with running(settings, workers=0) as bot:
        await _slack_auth(bot.http, "ok")
        assert "argo_why_slack_auth_ok 1.0" in (await bot.http.get("/metrics")).text


@contextlib.asynccontextmanager
async def _on_two_ports(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    services = build_services(settings)
    app = build_app(services, runtime=Runtime(services, workers=0, tick_s=0.2))
    server, sockets = server_for(app, settings, host="127.0.0.1")
    task = asyncio.create_task(server.serve(sockets=sockets))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        async with (
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{settings.runtime.port}") as main,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{settings.runtime.metrics_port}") as metrics,
        ):
            yield main, metrics
    finally:
        server.should_exit = True
        await task


async def test_metrics_port_serves_metrics_alone_and_the_main_port_no_longer_does(settings: Settings) -> None:
    settings.runtime.port, settings.runtime.metrics_port = free_port(), free_port()

    async with _on_two_ports(settings) as (main, metrics):
        scraped = await metrics.get("/metrics")
        assert scraped.status_code == 200 and "argo_why_webhooks_total" in scraped.text
        assert (await main.get("/metrics")).status_code == 404
        assert (await metrics.post("/webhooks/argocd", json=WEBHOOK)).status_code == 404
        assert (await metrics.post("/slack/events", content=b"{}")).status_code == 404
        assert (await main.get("/readyz")).status_code == 200


def test_metrics_port_must_differ_from_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "8080")
    monkeypatch.setenv("METRICS_PORT", "8080")
    with pytest.raises(ConfigError, match="METRICS_PORT must differ from PORT"):
        load_settings()
    monkeypatch.setenv("METRICS_PORT", "9090")
    assert load_settings().runtime.metrics_port == 9090


async def test_serve_says_where_it_listens_with_what_and_why_slack_refuses_the_token_once(
    settings: Settings,
) -> None:
    settings.slack.bot_token = SecretStr("xoxb-revoked")
    secrets = [s.get_secret_value() for s in (settings.slack.signing_secret, settings.argocd.token,
                                              settings.runtime.webhook_token) if s is not None]  # fmt: skip
    process = BotProcess(settings, serve=True)  # the real `argo-why serve`, configured from the environment
    try:
        await process.ready()
        async with httpx.AsyncClient(base_url=process.url) as http:
            await until(lambda: "auth.test: invalid_auth" in process.stderr(), 15)
            for _ in range(3):
                info = (await http.get("/readyz")).json()["info"]
                assert info == {"slack_auth": "failed", "slack_token_problem": "invalid_auth"}
        log = process.stderr()
    finally:
        process.close()
    assert log.count("Slack does not accept SLACK_BOT_TOKEN (auth.test: invalid_auth)") == 1, log
    assert "will be unused" not in log  # Bolt, given our client, no longer warns about the token it read itself
    assert f"listening on http://0.0.0.0:{process.port}" in log
    [line] = [line for line in log.splitlines() if "settings: " in line]
    assert f"SLACK_CHANNEL={settings.slack.channel}" in line and "SLACK_BOT_TOKEN=(set)" in line
    assert f"ARGOCD_URL={settings.argocd.url}" in line and "WEBHOOK_TOKEN=(set)" in line
    assert not [s for s in [*secrets, "xoxb-revoked"] if s in log]


async def test_slack_auth_is_logged_when_it_flips_not_on_every_check(
    settings: Settings, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    services = build_services(settings)
    auth = SlackAuth(services.poster.token_problem, services.metrics, ttl_s=0)

    async def checked(want: str) -> None:  # one check, to its end
        auth.current()
        assert auth._task is not None
        await auth._task
        assert auth.state == want

    caplog.set_level(logging.INFO, logger="argo_why.health")
    try:
        await checked("ok")
        await checked("ok")
        settings.slack.bot_token = SecretStr("xoxb-revoked")
        services.poster.client.token = "xoxb-revoked"  # the token revoked while the bot runs
        await checked("failed")
        await checked("failed")
        assert auth.error == "invalid_auth"
        services.poster.client.token = slack.token
        await checked("ok")
    finally:
        await auth.close()
        await services.store.close()
        await services.queue.close()
    said = [r.getMessage() for r in caplog.records if r.name == "argo_why.health"]
    assert said == [
        "Slack accepts SLACK_BOT_TOKEN (auth.test ok)",
        said[1],
        "Slack accepts SLACK_BOT_TOKEN again (auth.test ok)",
    ]
    assert said[1].startswith("Slack does not accept SLACK_BOT_TOKEN (auth.test: invalid_auth)")


async def test_an_idle_keep_alive_connection_outlasts_the_clients_pools(settings: Settings) -> None:
    """issue 22, item 21: a connection idle longer than uvicorn's default 5 s (httpx's own pool expiry) must still
    take the client's next request; closed by the bot instead, a client that reuses it at that moment reads a reset
    (the storm benchmark's httpx.ReadError)."""
    settings.runtime.port, settings.runtime.metrics_port = free_port(), free_port()
    request = b"GET /healthz HTTP/1.1\r\nHost: argo-why\r\n\r\n"

    async def answer(reader: asyncio.StreamReader) -> bytes:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)  # a closed connection raises here
        length = int(re.search(rb"(?i)content-length: (\d+)", head)[1])  # type: ignore[index]
        await reader.readexactly(length)
        return head

    async with _on_two_ports(settings):
        reader, writer = await asyncio.open_connection("127.0.0.1", settings.runtime.port)
        try:
            writer.write(request)
            assert (await answer(reader)).startswith(b"HTTP/1.1 200")
            await asyncio.sleep(6)  # longer than uvicorn's default keep-alive, shorter than any client's pool
            writer.write(request)
            await writer.drain()
            assert (await answer(reader)).startswith(b"HTTP/1.1 200")  # the same connection, still open
        finally:
            writer.close()


def test_the_server_loads_no_websocket_protocol(settings: Settings) -> None:
    """The bot serves no websocket: uvicorn's default would import a websocket library into every replica."""
    settings.runtime.port = free_port()
    services = build_services(settings)
    server, sockets = server_for(build_app(services, runtime=Runtime(services, workers=0)), settings, "127.0.0.1")
    try:
        server.config.load()
        assert server.config.ws_protocol_class is None
    finally:
        for s in sockets:
            s.close()
