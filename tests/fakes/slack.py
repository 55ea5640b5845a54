"""The fake Slack Web API for tests.

The server itself lives in ``bot.demo.fake_slack`` because the offline demo needs it at runtime; this module
re-exports it and adds helpers that only tests need: clearing Bolt's ``SLACK_*`` env fallbacks, and building the
real slack_sdk / Bolt objects wired to a ``FakeSlack`` (../shared/notes/slack.md §1, §9, §11).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, AsyncServerErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.demo import fake_slack
from bot.demo.fake_slack import *  # noqa: F403
from bot.demo.fake_slack import FakeSlack, signed_headers

__all__ = [*fake_slack.__all__, "bolt_app", "clear_slack_env", "signed_request", "web_client"]


def clear_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every ``SLACK_*`` variable for the test: Bolt falls back to ``SLACK_BOT_TOKEN``,
    ``SLACK_SIGNING_SECRET`` and switches on OAuth with ``SLACK_CLIENT_ID``/``SLACK_CLIENT_SECRET`` (notes §1)."""
    for name in list(os.environ):
        if name.startswith("SLACK_"):
            monkeypatch.delenv(name)


def web_client(fake: FakeSlack, *, rate_limit_retries: int = 0, server_error_retries: int = 0) -> AsyncWebClient:
    """The real ``AsyncWebClient`` pointed at ``fake``, with the retry handlers argo-why adds (notes §9)."""
    client = AsyncWebClient(token=fake.token, base_url=fake.url)
    if rate_limit_retries:
        client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=rate_limit_retries))
    if server_error_retries:
        client.retry_handlers.append(AsyncServerErrorRetryHandler(max_retry_count=server_error_retries))
    return client


def bolt_app(fake: FakeSlack, signing_secret: str) -> AsyncApp:
    """An ``AsyncApp`` built as argo-why builds it: explicit client and secret, no env fallbacks. Call it inside the
    event loop that will dispatch to it."""
    return AsyncApp(client=web_client(fake), signing_secret=signing_secret)


def signed_request(secret: str, body: bytes, *, timestamp: int | None = None) -> AsyncBoltRequest:
    """``body`` as Bolt receives it from Slack, signed with ``secret``; for ``app.async_dispatch``."""
    headers: dict[str, str | Sequence[str]] = {**signed_headers(secret, body, timestamp=timestamp)}
    return AsyncBoltRequest(body=body.decode(), headers=headers)
