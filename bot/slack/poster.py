"""Delivering rendered messages to Slack: the only module that calls the Slack Web API for the worker.

Thin on purpose: it takes :class:`bot.slack.render.Message` objects (rendering is
pure and lives elsewhere) and sends them with ``slack_sdk``'s ``AsyncWebClient``.
It spaces ``chat.postMessage`` calls one second apart per channel (Slack's
documented rate), retries 429 after ``Retry-After`` and 500/503 a bounded number
of times (slack_sdk retry handlers), counts calls and 429s, and turns every
failure into :class:`SlackUnavailable` so that the worker leaves the job pending.
"""

from __future__ import annotations

import asyncio
import time
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


class _CountingRateLimitHandler(AsyncRateLimitErrorRetryHandler):
    def __init__(self, metrics: Metrics, max_retry_count: int) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self._metrics = metrics

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is not None and response.status_code == 429:
            self._metrics.slack_ratelimited.inc()
        return await super()._can_retry_async(state=state, request=request, response=response, error=error)


def make_client(token: str, base_url: str | None, metrics: Metrics, *, retries: int = 2) -> AsyncWebClient:
    """An ``AsyncWebClient`` with retries for connection errors, 429 (``Retry-After``) and 500/503."""
    handlers: list[AsyncRetryHandler] = [
        AsyncConnectionErrorRetryHandler(max_retry_count=retries),
        _CountingRateLimitHandler(metrics, retries),
        AsyncServerErrorRetryHandler(max_retry_count=retries),
    ]
    kwargs: dict[str, Any] = {"token": token, "retry_handlers": handlers, "timeout": 15}
    if base_url:
        kwargs["base_url"] = base_url if base_url.endswith("/") else base_url + "/"
    return AsyncWebClient(**kwargs)


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
        """One Web API call (counted); :class:`SlackUnavailable` when Slack refuses it or cannot be reached."""
        self.metrics.slack_calls.labels(method=method).inc()
        try:
            return await self.client.api_call(method, json=kwargs)
        except SlackApiError as e:
            error = e.response.get("error") if e.response is not None else None
            raise SlackUnavailable(f"Slack refused {method}: {error or e.response.status_code}") from e
        except (TimeoutError, SlackClientError, OSError) as e:
            raise SlackUnavailable(f"Slack is unreachable for {method}: {type(e).__name__}") from e

    async def post(self, channel: str, message: Message, *, thread_ts: str | None = None) -> tuple[str, str]:
        """Post; returns the channel ID and the message ts (what a thread is keyed on)."""
        await self._spaced(channel)
        args: dict[str, Any] = {"channel": channel, **message.to_dict()}
        if thread_ts:
            args["thread_ts"] = thread_ts
        resp = await self.call("chat.postMessage", **args)
        return str(resp["channel"]), str(resp["ts"])

    async def update(self, channel: str, ts: str, message: Message) -> None:
        await self.call("chat.update", channel=channel, ts=ts, **message.to_dict())

    async def ephemeral(self, channel: str, user: str, message: Message) -> None:
        await self.call("chat.postEphemeral", channel=channel, user=user, **message.to_dict())

    async def upload(self, channel: str, thread_ts: str | None, filename: str, content: str, title: str) -> None:
        self.metrics.slack_calls.labels(method="files.upload_v2").inc()
        try:
            await self.client.files_upload_v2(channel=channel, thread_ts=thread_ts, filename=filename,
                                              content=content, title=title)  # fmt: skip
        except (TimeoutError, SlackApiError, SlackClientError, OSError) as e:
            raise SlackUnavailable(f"Slack refused the file upload: {type(e).__name__}") from e

    async def auth_ok(self) -> bool:
        try:
            await self.call("auth.test")
        except SlackUnavailable:
            return False
        return True
