"""The bot as the service tests run it: real HTTP (uvicorn), real Redis, Bolt, the worker, against the fakes.

``service_settings`` resets the shared fakes and builds the settings of one test; ``running`` serves the real app on
a free port and yields a :class:`Bot` that sends webhooks and signed Slack requests and waits for the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from pydantic import SecretStr

from bot.app import Runtime, build_app, build_services
from bot.config import ArgoCDSettings, RedisSettings, RuntimeSettings, Settings, SlackSettings, required
from bot.queue import WorkQueue
from bot.services import Services
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, signed_headers

CHANNEL = "C0ALERTS"


def service_settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    for var in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        monkeypatch.delenv(var, raising=False)  # Bolt's environment fallbacks must not leak in
    for var in ("GIT_PROVIDER", "GIT_TOKEN", "GIT_API_URL", "APPROVERS", "APPROVALS_REQUIRED"):
        monkeypatch.delenv(var, raising=False)
    argocd.reset()
    kube.reset()
    slack.up()
    slack.calls.clear()
    with contextlib.suppress(AttributeError):
        slack._messages.clear()  # the fake is shared by the module; each test starts with an empty workspace
    return Settings(
        slack=SlackSettings(bot_token=SecretStr(slack.token), signing_secret=SecretStr(secrets.token_hex(16)),
                            channel=CHANNEL, api_url=slack.url, channel_interval_s=0.02),
        argocd=ArgoCDSettings(url=argocd.url, token=SecretStr(argocd.token), retries=1,
                              kubeconfig=str(kube.write_kubeconfig(tmp_path / "kubeconfig", context="fake")),
                              cluster_contexts={"https://kubernetes.default.svc": "fake"}),
        redis=RedisSettings(url=redis_url),
        runtime=RuntimeSettings(webhook_token=SecretStr(secrets.token_urlsafe(16)), workers=1, analysis_attempts=2),
    )  # fmt: skip


@dataclass
class Bot:
    url: str
    http: httpx.AsyncClient
    services: Services
    settings: Settings

    async def webhook(self, body: Any, *, token: str | None = None, raw: bytes | None = None) -> httpx.Response:
        if token is None:
            token = required(self.settings.runtime.webhook_token, "WEBHOOK_TOKEN").get_secret_value()
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        return await self.http.post("/webhooks/argocd", content=raw if raw is not None else json.dumps(body),
                                    headers=headers)  # fmt: skip

    async def slack_post(self, body: bytes, *, timestamp: int | None = None, secret: str | None = None
                         ) -> httpx.Response:  # fmt: skip
        key = secret or required(self.settings.slack.signing_secret, "SLACK_SIGNING_SECRET").get_secret_value()
        return await self.http.post(
            "/slack/events", content=body, headers=signed_headers(key, body, timestamp=timestamp)
        )

    async def settle(self, timeout: float = 15.0) -> None:
        q = self.services.queue
        await until(lambda: _idle(q), timeout)


async def _idle(q: WorkQueue) -> bool:
    return bool(await q.depth() == 0 and await q.pending() == 0)


async def until(check: Callable[[], Awaitable[bool] | bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if await result if isinstance(result, Awaitable) else result:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def running(settings: Settings, *, workers: int = 1, claim_idle_ms: int = 300) -> AsyncIterator[Bot]:
    services = build_services(settings)
    app = build_app(services, runtime=Runtime(services, workers=workers, claim_idle_ms=claim_idle_ms, tick_s=0.2))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            yield Bot(f"http://127.0.0.1:{port}", http, services, settings)
    finally:
        server.should_exit = True
        await task
