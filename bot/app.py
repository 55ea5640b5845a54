"""Composition root: builds every part of the bot from the settings and wires the ASGI app.

Routes: ``POST /webhooks/argocd`` (Argo CD notifications), ``POST /slack/events``
(events, interactivity and slash commands: signature, timestamp window, replays and
shape checked by :mod:`handlers.slack_http`, then Bolt), ``GET /healthz``, ``GET /readyz``
(store and Slack auth reachable), ``GET /metrics``. The lifespan starts the
workers and the scheduler (one leader among replicas, through a store lock) and,
when ``SLACK_APP_TOKEN`` is set, the Socket Mode connection.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.config import Settings, required
from bot.metrics import CONTENT_TYPE_LATEST, Metrics
from bot.queue import MemoryQueue, RedisQueue, WorkQueue
from bot.runtime import Runtime
from bot.services import Services, argocd_factory, clusters, git_factory
from bot.slack.directory import Directory
from bot.slack.outbox import Outbox
from bot.slack.poster import SlackPoster, make_client
from bot.store import MemoryStore, RedisStore, Store, StoreUnavailable
from handlers.slack import register
from handlers.slack_http import slack_events as guarded_slack_events
from handlers.webhook import argocd_webhook

log = logging.getLogger("argo_why")


def build_services(settings: Settings, metrics: Metrics | None = None) -> Services:
    """The production parts: Redis (or the in-memory store), Slack, Argo CD, the cluster."""
    metrics = metrics or Metrics()
    store: Store
    queue: WorkQueue
    if settings.redis.url:
        store, queue = RedisStore.from_url(settings.redis.url), RedisQueue.from_url(settings.redis.url)
    else:
        log.warning("REDIS_URL is not set: in-memory state, one replica only, alerts are not durable across restarts")
        store, queue = MemoryStore(), MemoryQueue()
    slack = settings.slack
    client = make_client(required(slack.bot_token, "SLACK_BOT_TOKEN").get_secret_value(), slack.api_url, metrics)
    poster = SlackPoster(client, metrics, per_channel_interval=slack.channel_interval_s)
    return Services(settings=settings, store=store, queue=queue, metrics=metrics, poster=poster,
                    outbox=Outbox(poster, store),
                    argocd=argocd_factory(settings.argocd), cluster=clusters(settings.argocd),
                    directory=Directory(poster), git=git_factory(settings.git))  # fmt: skip


def build_bolt(services: Services) -> AsyncApp:
    s = services.settings.slack
    bolt = AsyncApp(
        client=services.poster.client,
        signing_secret=s.signing_secret.get_secret_value() if s.signing_secret else None,
        request_verification_enabled=not s.socket_mode,
        process_before_response=True,
    )
    register(bolt, services)
    return bolt


def build_app(services: Services, *, runtime: Runtime | None = None) -> Starlette:
    bolt = build_bolt(services)
    slack_handler = AsyncSlackRequestHandler(bolt)
    runtime = runtime if runtime is not None else Runtime(services)
    auth_cache: dict[str, Any] = {"ok": False, "at": 0.0}

    async def webhook(request: Request) -> Response:
        return await argocd_webhook(request, services)

    async def slack_events(request: Request) -> Response:
        return await guarded_slack_events(request, services, slack_handler)

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_: Request) -> Response:
        checks: dict[str, str] = {}
        try:
            await services.store.ping()
            checks["store"] = "ok"
        except StoreUnavailable as e:
            checks["store"] = str(e)
        if time.monotonic() - auth_cache["at"] > 30 or not auth_cache["ok"]:
            auth_cache.update(ok=await services.poster.auth_ok(), at=time.monotonic())
        checks["slack"] = "ok" if auth_cache["ok"] else "auth.test failed"
        ok = all(v == "ok" for v in checks.values())
        return JSONResponse({"ready": ok, "checks": checks}, status_code=200 if ok else 503)

    async def metrics(_: Request) -> Response:
        with contextlib.suppress(StoreUnavailable):
            services.metrics.set_queue(await services.queue.depth(), await services.queue.pending())
        return Response(services.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        socket_handler = None
        await runtime.start()
        if services.settings.slack.app_token is not None:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            log.info("Socket Mode: one replica only (Slack sends each event to one random connection)")
            socket_handler = AsyncSocketModeHandler(bolt, services.settings.slack.app_token.get_secret_value())
            await socket_handler.connect_async()  # type: ignore[no-untyped-call]
        try:
            yield
        finally:
            if socket_handler is not None:
                await socket_handler.close_async()  # type: ignore[no-untyped-call]
            await runtime.close()
            await services.queue.close()
            await services.store.close()

    return Starlette(
        routes=[
            Route("/webhooks/argocd", webhook, methods=["POST"]),
            Route("/slack/events", slack_events, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
