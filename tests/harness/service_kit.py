"""The bot as the service tests run it: real HTTP (uvicorn), real Redis, Bolt, the worker, against the fakes.

``service_settings`` resets the shared fakes and builds the settings of one test; ``running`` serves the real app on
a free port and yields a :class:`Bot` that sends webhooks and signed Slack requests and waits for the queue;
:class:`BotProcess` runs the same bot in a process of its own (``argo-why serve``, or ``tests.harness.bot_process`` with
short timings), for the tests that kill or stop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from pydantic import SecretStr

from bot.app import KEEP_ALIVE_S, build_app, build_services
from bot.config import ArgoCDSettings, RedisSettings, RuntimeSettings, Settings, SlackSettings, required
from bot.queue import WorkQueue
from bot.runtime import Runtime, Services
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, signed_headers
from tests.harness.redis_server import free_port

CHANNEL = "C0ALERTS"
ROOT = Path(__file__).resolve().parents[2]


def service_settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    for var in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        monkeypatch.delenv(var, raising=False)  # Bolt's environment fallbacks must not leak in
    for var in ("GIT_PROVIDER", "GIT_TOKEN", "GIT_API_URL", "APPROVERS", "APPROVALS_REQUIRED"):
        monkeypatch.delenv(var, raising=False)
    argocd.reset()
    kube.reset()
    slack.clear_injections()
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


@contextlib.asynccontextmanager
async def running(settings: Settings, *, workers: int = 1, claim_idle_ms: int = 300, lock_lease_s: int = 30
                  ) -> AsyncIterator[Bot]:  # fmt: skip
    services = build_services(settings)
    runtime = Runtime(services, workers=workers, claim_idle_ms=claim_idle_ms, tick_s=0.2, lock_lease_s=lock_lease_s)
    app = build_app(services, runtime=runtime)
    port = free_port()
    # as `serve` does: an analysis holding the event loop must not let a 5 s keep-alive close a connection in use
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           timeout_keep_alive=KEEP_ALIVE_S))  # fmt: skip
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            yield Bot(f"http://127.0.0.1:{port}", http, services, settings)
    finally:
        server.should_exit = True
        await task


def settings_env(settings: Settings, port: int) -> dict[str, str]:
    """The environment ``argo-why serve`` reads ``settings`` from (what a Deployment would set)."""
    s, a, r = settings.slack, settings.argocd, settings.runtime
    values: dict[str, object] = {
        "SLACK_BOT_TOKEN": required(s.bot_token, "SLACK_BOT_TOKEN").get_secret_value(),
        "SLACK_SIGNING_SECRET": required(s.signing_secret, "SLACK_SIGNING_SECRET").get_secret_value(),
        "SLACK_CHANNEL": s.channel, "SLACK_API_URL": s.api_url, "SLACK_CHANNEL_INTERVAL": s.channel_interval_s,
        "ARGOCD_URL": a.url, "ARGOCD_PUBLIC_URL": a.public_url, "ARGOCD_TOKEN": required(a.token, "ARGOCD_TOKEN")
        .get_secret_value(), "ARGOCD_RETRIES": a.retries, "KUBECONFIG": a.kubeconfig,
        "ARGOCD_CLUSTER_CONTEXTS": ",".join(f"{k}={v}" for k, v in a.cluster_contexts.items()),
        "REDIS_URL": settings.redis.url, "PORT": port,
        "WEBHOOK_TOKEN": required(r.webhook_token, "WEBHOOK_TOKEN").get_secret_value(), "WORKERS": r.workers,
        "ANALYSIS_ATTEMPTS": r.analysis_attempts, "DIGEST_THRESHOLD": r.digest_threshold,
        "DIGEST_WINDOW_SECONDS": r.digest_window_s, "SHUTDOWN_GRACE_SECONDS": r.shutdown_grace_s,
        "SWEEP_SECONDS": r.sweep_s, "DEAD_LETTER_RETRY_SECONDS": r.dead_letter_retry_s,
        "REMIND_AFTER_HOURS": r.remind_after_h, "DAILY_SUMMARY_AT": r.daily_summary_at or "off",
        "FLEET_MIN_APPS": r.fleet_min_apps,
        "VIEW_LINK_KEY": settings.view.link_key.get_secret_value() if settings.view.link_key else None,
        "VIEW_LINK_TTL": settings.view.link_ttl_s, "VIEW_BASE_URL": settings.view.base_url,
        "WEEKLY_REPORT_AT": r.weekly_report_at or "off",
    }  # fmt: skip
    g = settings.git
    if g.provider:  # pull requests: what the chart's git.* values set
        values |= {"GIT_PROVIDER": g.provider, "GIT_TOKEN": required(g.token, "GIT_TOKEN").get_secret_value(),
                   "GIT_API_URL": g.api_url, "APPROVERS": ",".join(g.approvers),
                   "APPROVALS_REQUIRED": g.approvals_required, "PR_POLL_SECONDS": g.pr_poll_s,
                   "APPROVER_ROUTES": json.dumps(g.approver_routes) if g.approver_routes else None,
                   "ARGOCD_CM_DEFINITION": g.argocd_cm_definition}  # fmt: skip
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "ARGOCD_", "GIT_", "VIEW_"))}
    return {**keep, **{k: str(v) for k, v in values.items() if v is not None}}


class BotProcess:
    """The bot in a child process: ``serve`` is the real ``argo-why serve``; otherwise ``tests.harness.bot_process``
    (the same, with short lock leases and claim times, for a test that kills it)."""

    def __init__(self, settings: Settings, *, serve: bool = False, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = (
            [sys.executable, "-m", "bot", "serve"] if serve else [sys.executable, "-m", "tests.harness.bot_process"]
        )
        self.log = tempfile.TemporaryFile()  # noqa: SIM115  (closed by close(); a pipe could fill up and block)
        self.proc = subprocess.Popen(command, env=settings_env(settings, self.port), cwd=str(ROOT),
                                     stdout=subprocess.DEVNULL, stderr=self.log)  # fmt: skip

    async def ready(self, timeout: float = 30.0) -> None:
        async with httpx.AsyncClient(base_url=self.url, timeout=1) as http:

            async def up() -> bool:
                if self.proc.poll() is not None:
                    raise AssertionError(f"the bot exited: {self.stderr()}")
                with contextlib.suppress(httpx.HTTPError):
                    return (await http.get("/healthz")).status_code == 200
                return False

            await until(up, timeout)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    async def terminate(self, timeout: float = 30.0) -> bool:
        """SIGTERM, as Kubernetes stops a pod; whether the process shut down cleanly (exit status 0, or uvicorn's
        way: the lifespan completed, then the signal raised again so that the parent sees it)."""
        self.proc.send_signal(signal.SIGTERM)
        await until(lambda: self.proc.poll() is not None, timeout)
        clean = self.proc.returncode == 0 or (
            self.proc.returncode == -signal.SIGTERM and "Application shutdown complete" in self.stderr()
        )
        return bool(clean)

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-3000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        self.log.close()
