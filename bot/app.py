"""Composition root: builds every part of the bot from the settings and wires the ASGI app.

Routes: ``POST /webhooks/argocd`` (Argo CD notifications), ``POST /slack/events``
(events, interactivity and slash commands: signature, timestamp window, replays and
shape checked by :mod:`handlers.slack_http`, then Bolt), ``GET /healthz``, ``GET /readyz``
(the store answers: webhooks can be accepted durably; Slack's auth state is in the
body, not a condition, see :mod:`bot.web.health`), ``GET /metrics`` (on ``METRICS_PORT``
alone when it is set, so that the public port never serves it), and ``GET /view/<token>`` (the drift page of a
signed, unexpired "Full diff" link, :mod:`bot.web.view`) only when view links are enabled. The lifespan starts
the workers and the scheduler (one leader among replicas, through a store lock) and,
when ``SLACK_APP_TOKEN`` is set, the Socket Mode connection. :func:`serve` runs the
app on ``PORT`` and, when set, ``METRICS_PORT`` (one server, one lifespan). One plain ASGI middleware at the
edge (:class:`_Edge`) splits the ports and hands ``POST /webhooks/argocd`` to its endpoint past the routing.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import socket
from collections.abc import AsyncIterator

import uvicorn
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.config import Settings, required
from bot.metrics import CONTENT_TYPE_LATEST, Metrics
from bot.queue import MemoryQueue, RedisQueue, WorkQueue
from bot.runtime import Runtime, Services
from bot.slack.channels import Channels
from bot.slack.directory import Directory
from bot.slack.outbox import Outbox
from bot.slack.poster import SlackPoster, make_client
from bot.sources.clients import argocd_factory, clusters, git_factory
from bot.store import MemoryStore, RedisStore, Store, StoreUnavailable
from bot.web.health import OK, Readiness, SlackAuth, store_state
from bot.web.view import view_page
from bot.wording import cli as wording
from handlers.slack import register
from handlers.slack_http import slack_events as guarded_slack_events
from handlers.webhook import ArgoCDWebhook

log = logging.getLogger("argo_why")


class _SameToken(logging.Filter):
    """Drops Bolt's "`token` will be unused" warning. Bolt reads SLACK_BOT_TOKEN from the environment by itself
    (``token or os.environ.get(...)``) even when it is given a client, and warns that the token it found is unused:
    with our client built from that very variable, nothing is unused, and the line would only alarm an operator."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


_BOLT_LOG = logging.getLogger("argo_why.bolt")
_BOLT_LOG.addFilter(_SameToken())


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
                    directory=Directory(poster), channel=required(slack.channel, "SLACK_CHANNEL"),
                    channels=Channels(poster),
                    git=git_factory(settings.git))  # fmt: skip


def build_bolt(services: Services) -> AsyncApp:
    s = services.settings.slack
    bolt = AsyncApp(
        client=services.poster.client,
        signing_secret=s.signing_secret.get_secret_value() if s.signing_secret else None,
        request_verification_enabled=not s.socket_mode,
        process_before_response=True,
        logger=_BOLT_LOG,
    )
    register(bolt, services)
    return bolt


def build_app(services: Services, *, runtime: Runtime | None = None) -> Starlette:
    bolt = build_bolt(services)
    slack_handler = AsyncSlackRequestHandler(bolt)
    runtime = runtime if runtime is not None else Runtime(services)
    slack_auth = SlackAuth(services.poster.token_problem, services.metrics)
    readiness = Readiness()
    metrics_port = services.settings.runtime.metrics_port
    webhook = ArgoCDWebhook(services)

    async def slack_events(request: Request) -> Response:
        return await guarded_slack_events(request, services, slack_handler)

    async def view(request: Request) -> Response:
        return await view_page(request, services.store, services.settings.view)

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_: Request) -> Response:
        checks = {"store": await store_state(services.store)}
        ok = all(v == OK for v in checks.values())
        readiness.seen(ok, checks)
        info = {"slack_auth": slack_auth.current(), "slack_token_problem": slack_auth.error}
        body = {"ready": ok, "checks": checks, "info": info}
        return JSONResponse(body, status_code=200 if ok else 503)

    async def metrics(_: Request) -> Response:
        slack_auth.current()  # a scrape keeps argo_why_slack_auth_ok fresh
        with contextlib.suppress(StoreUnavailable):
            services.metrics.set_queue(await services.queue.depth(), await services.queue.pending())
        return Response(services.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        socket_handler = None
        await runtime.start()
        slack_auth.current()
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
            await slack_auth.close()
            await services.queue.close()
            await services.store.close()

    metrics_route = Route("/metrics", metrics, methods=["GET"])
    app = Starlette(
        routes=[
            Route(WEBHOOK_PATH, webhook, methods=["POST"]),
            Route("/slack/events", slack_events, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            *([metrics_route] if metrics_port is None else []),
            *([Route("/view/{token}", view, methods=["GET"])] if services.settings.view.enabled else []),
        ],
        lifespan=lifespan,
    )
    on_port = Starlette(routes=[metrics_route]) if metrics_port is not None else None
    app.add_middleware(_Edge, webhook=webhook, port=metrics_port, app_on_port=on_port)
    return app


WEBHOOK_PATH = "/webhooks/argocd"


class _Edge:
    """The first stop of a request inside Starlette's error handler (a plain ASGI middleware, no per-request objects).

    * a request that arrived on ``port`` (``METRICS_PORT``) goes to ``app_on_port``: one uvicorn server listens on
      both ports (:func:`serve`), so both share the lifespan and the signal handling; the port a request arrived on
      is the server address of its ASGI scope;
    * ``POST /webhooks/argocd`` goes straight to ``webhook``: every alert of a storm comes this way, and the router
      would only find the same endpoint after the exception middleware's and the routing's cost per request (README,
      "Benchmarks"). The route stays in the router, which answers its other methods (405);
    * every other request (and the lifespan) goes to ``app``.
    """

    def __init__(self, app: ASGIApp, *, webhook: ASGIApp, port: int | None, app_on_port: ASGIApp | None) -> None:
        self.app = app
        self.webhook = webhook
        self.port = port
        self.app_on_port = app_on_port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            if self.app_on_port is not None and (scope.get("server") or (None, None))[1] == self.port:
                await self.app_on_port(scope, receive, send)
                return
            if scope["path"] == WEBHOOK_PATH and scope["method"] == "POST" and not scope.get("root_path"):
                await self.webhook(scope, receive, send)
                return
        await self.app(scope, receive, send)


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket for uvicorn (``SO_REUSEADDR``, inheritable, as uvicorn binds its own)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


# How long an idle keep-alive connection stays open. uvicorn's default (5 s) equals httpx's pool expiry and is far
# below Go's (90 s: Argo CD's notifications controller) and ingress-nginx's (60 s): a client then sends its next
# request on a connection the bot is closing at that moment, and reads a reset (httpx.ReadError under a storm of
# webhooks). The side that keeps connections longer never closes one under a client's request.
KEEP_ALIVE_S = 120


def server_for(app: Starlette, settings: Settings, host: str = "0.0.0.0") -> tuple[uvicorn.Server, list[socket.socket]]:
    """One uvicorn server for ``app`` and the sockets it serves: ``PORT`` and, when set, ``METRICS_PORT``."""
    runtime = settings.runtime
    ports = [runtime.port] + ([runtime.metrics_port] if runtime.metrics_port is not None else [])
    # ws="none": the bot serves no websocket (Socket Mode is a client), and uvicorn's default imports a websocket
    # library into every replica at start (0.6 MB, issue 29)
    config = uvicorn.Config(
        app, host=host, log_level="info", access_log=False, timeout_keep_alive=KEEP_ALIVE_S, ws="none"
    )
    server = uvicorn.Server(config)
    return server, [listening_socket(host, p) for p in ports]


def serve(app: Starlette, settings: Settings, host: str = "0.0.0.0") -> None:
    """Run the bot until SIGTERM/SIGINT (``argo-why serve``), having said where it listens and with what."""
    server, sockets = server_for(app, settings, host)
    metrics_port = settings.runtime.metrics_port
    metrics = wording.SERVE_METRICS_PORT.format(port=metrics_port) if metrics_port is not None else ""
    log.info(wording.SERVE_LISTENING.format(host=host, port=settings.runtime.port, metrics=metrics))
    log.info(wording.SERVE_SETTINGS.format(settings=settings.summary()))
    # What is alive now (modules, classes, the app) lives as long as the process: out of the collector's sight, a
    # full collection does not walk the ~100,000 objects of the imports again and again under a storm of webhooks
    # (a tenth of the CPU per webhook: README, "Development", the benchmarks). Collected first: no garbage is frozen.
    gc.collect()
    gc.freeze()
    server.run(sockets=sockets)
