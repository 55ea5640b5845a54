"""Delivering rendered messages to Slack: the only module that calls the Slack Web API for the worker.

Thin on purpose: it takes :class:`bot.slack.render.Message` objects (rendering is
pure and lives elsewhere) and sends them with ``slack_sdk``'s ``AsyncWebClient``.
It spaces ``chat.postMessage`` calls one second apart per channel (Slack's
documented rate), retries 429 after ``Retry-After`` and 500/503 a bounded number
of times (slack_sdk retry handlers), and turns every failure into
:class:`SlackUnavailable` so that the worker leaves the job pending.

Metrics: every HTTP request the client makes is counted, retries and the three steps of a file upload included,
and so is every 429 (also the last one, after which the client gives up): a handler placed first among the
client's retry handlers sees every response and never asks for a retry itself.

A post can carry a marker in its message metadata; :meth:`SlackPoster.find_marked` finds it again in the
channel or thread, which is how :mod:`bot.slack.outbox` learns whether a post interrupted by a crash reached
Slack (it needs the ``channels:history`` and ``groups:history`` scopes).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import UpstreamError
from bot.metrics import Metrics
from bot.slack.render import Message


class SlackUnavailable(UpstreamError):
    """Slack did not accept the call (down, rate-limited past our retries, or refused it)."""


class SlackRefused(SlackUnavailable):
    """Slack answered the call with ``ok: false`` (a missing scope, an unknown channel...): retrying will not help."""

    def __init__(self, message: str, error: str) -> None:
        super().__init__(message)
        self.error = error


METADATA_EVENT = "argo_why_post"
_LOOKUP_PAGES = 5  # of 200 messages: how far back a marker is looked for


class _Counter(AsyncRetryHandler):
    """Counts every HTTP request of the client (its response or its connection error); never retries."""

    def __init__(self, metrics: Metrics, base_url: str) -> None:
        super().__init__(max_retry_count=0)
        self._metrics = metrics
        self._base_url = base_url

    async def can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        url = request.url.split("?", 1)[0]
        # the bytes of an upload go to files.slack.com, not to the Web API
        method = url[len(self._base_url) :] if url.startswith(self._base_url) else "files.upload"
        self._metrics.slack_calls.labels(method=method).inc()
        if response is not None and response.status_code == 429:
            self._metrics.slack_ratelimited.inc()
        return False


def make_client(token: str, base_url: str | None, metrics: Metrics, *, retries: int = 2) -> AsyncWebClient:
    """An ``AsyncWebClient`` with retries for connection errors, 429 (``Retry-After``) and 500/503."""
    base = (base_url if base_url.endswith("/") else base_url + "/") if base_url else AsyncWebClient.BASE_URL
    handlers: list[AsyncRetryHandler] = [
        _Counter(metrics, base),
        AsyncConnectionErrorRetryHandler(max_retry_count=retries),
        AsyncRateLimitErrorRetryHandler(max_retry_count=retries),
        AsyncServerErrorRetryHandler(max_retry_count=retries),
    ]
    return AsyncWebClient(token=token, base_url=base, retry_handlers=handlers, timeout=15)


class SlackPoster:
    def __init__(self, client: AsyncWebClient, metrics: Metrics, *, per_channel_interval: float = 1.0) -> None:
        self.client = client
        self.metrics = metrics
        self.interval = per_channel_interval
        self._last: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def _spaced(self, channel: str) -> None:
        lock = self._locks.setdefault(channel, asyncio.Lock())
        async with lock:
            wait = self._last.get(channel, 0.0) + self.interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last[channel] = time.monotonic()

    async def call(self, method: str, **kwargs: Any) -> Any:
        """One Web API call; :class:`SlackUnavailable` when Slack refuses it or cannot be reached."""
        return await _guarded(method, self.client.api_call(method, json=kwargs))

    async def post(self, channel: str, message: Message, *, thread_ts: str | None = None,
                   marker: str | None = None) -> tuple[str, str]:  # fmt: skip
        """Post; returns the channel ID and the message ts (what a thread is keyed on). ``marker`` goes into the
        message's metadata, for :meth:`find_marked`."""
        await self._spaced(channel)
        args: dict[str, Any] = {"channel": channel, **message.to_dict()}
        if thread_ts:
            args["thread_ts"] = thread_ts
        if marker:
            args["metadata"] = {"event_type": METADATA_EVENT, "event_payload": {"id": marker}}
        resp = await self.call("chat.postMessage", **args)
        return str(resp["channel"]), str(resp["ts"])

    async def find_marked(self, channel: str, marker: str, *, since: float, thread_ts: str | None = None
                          ) -> str | None:  # fmt: skip
        """The ts of the message posted with ``marker`` since ``since`` (in the thread ``thread_ts``, else at the
        top of the channel), or ``None``. Read methods take form fields, not JSON: the SDK's own calls."""
        cursor: str | None = None
        for _ in range(_LOOKUP_PAGES):
            args: dict[str, Any] = {"channel": channel, "oldest": f"{since:.6f}", "include_all_metadata": True,
                                    "limit": 200}  # fmt: skip
            if cursor:
                args["cursor"] = cursor
            if thread_ts:
                page = await _guarded("conversations.replies", self.client.conversations_replies(ts=thread_ts, **args))
            else:
                page = await _guarded("conversations.history", self.client.conversations_history(**args))
            for m in page.get("messages") or []:
                meta = m.get("metadata") if isinstance(m, dict) else None
                if isinstance(meta, dict) and (meta.get("event_payload") or {}).get("id") == marker:
                    return str(m.get("ts"))
            cursor = ((page.get("response_metadata") or {}).get("next_cursor")) or None
            if not cursor:
                return None
        return None

    async def channels_page(self, cursor: str | None, limit: int) -> Any:
        """One page of ``conversations.list`` (public and private channels the bot can see, archived left out); a
        read method, so form fields like :meth:`find_marked`."""
        args: dict[str, Any] = {"types": "public_channel,private_channel", "exclude_archived": True, "limit": limit}
        if cursor:
            args["cursor"] = cursor
        return await _guarded("conversations.list", self.client.conversations_list(**args))

    async def update(self, channel: str, ts: str, message: Message) -> None:
        await self.call("chat.update", channel=channel, ts=ts, **message.to_dict())

    async def ephemeral(self, channel: str, user: str, message: Message) -> None:
        await self.call("chat.postEphemeral", channel=channel, user=user, **message.to_dict())

    async def upload(self, channel: str, thread_ts: str | None, filename: str, content: str | bytes,
                     title: str) -> None:  # fmt: skip
        try:
            await self.client.files_upload_v2(channel=channel, thread_ts=thread_ts, filename=filename,
                                              content=content, title=title)  # fmt: skip
        except (TimeoutError, SlackApiError, SlackClientError, OSError) as e:
            raise SlackUnavailable(f"Slack refused the file upload: {type(e).__name__}") from e

    async def token_problem(self) -> str | None:
        """``None`` when Slack accepts the bot token (``auth.test``), else the Web API's error for it (``invalid_auth``,
        ``token_revoked``, ``account_inactive``...). Slack unreachable or failing raises :class:`SlackUnavailable`:
        the token was then neither accepted nor refused, and must not be said to be wrong."""
        try:
            await self.call("auth.test")
        except SlackRefused as e:
            return e.error
        return None


async def _guarded(method: str, call: Awaitable[Any]) -> Any:
    try:
        return await call
    except SlackApiError as e:
        error = e.response.get("error") if e.response is not None else None
        if e.response is not None and e.response.status_code == 200 and error:
            raise SlackRefused(f"Slack refused {method}: {error}", str(error)) from e
        raise SlackUnavailable(f"Slack refused {method}: {error or e.response.status_code}") from e
    except (TimeoutError, SlackClientError, OSError) as e:
        raise SlackUnavailable(f"Slack is unreachable for {method}: {type(e).__name__}") from e
