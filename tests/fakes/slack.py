"""The fake Slack Web API for tests.

The server itself lives in ``bot.demo.fake_slack`` because the offline demo needs it at runtime; this module extends
it with what only tests need: failure injection (``fail_next``, ``error_next``, ``http_error_next``, ``down``),
channel, user and user-group set-up, ``calls_to``/``wait_for``, the request builders the demo does not send (slash
commands, Events API deliveries), clearing Bolt's ``SLACK_*`` env fallbacks, and building the real slack_sdk / Bolt
objects wired to a ``FakeSlack`` (``AsyncApp(client=AsyncWebClient(base_url=...))``, as the bot builds them).

Run ``python -m tests.fakes.slack`` from the checkout to serve one by hand; it prints its URL and token.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import pytest
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler, AsyncServerErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.demo import fake_slack
from bot.demo.fake_slack import (  # noqa: F401  (the demo's names, re-exported)
    APP_ID,
    BOT_ID,
    BOT_NAME,
    BOT_USER_ID,
    JSON,
    MAX_BLOCKS,
    RESPONSE_URL,
    RESPONSE_URL_LIMIT,
    TEAM,
    TEAM_ID,
    TEAM_URL,
    UPLOAD,
    SlackCall,
    Upload,
    _Answer,
    _error,
    _response_url,
    _trigger_id,
    block_action_body,
    signed_headers,
)

__all__ = [
    *fake_slack.__all__,
    "bolt_app",
    "clear_slack_env",
    "event_body",
    "signed_request",
    "slash_command_body",
    "url_verification_body",
    "web_client",
]


@dataclass(frozen=True)
class _Failure:
    status: int
    error: str
    retry_after: int | None = None


class FakeSlack(fake_slack.FakeSlack):
    """``bot.demo.fake_slack.FakeSlack`` with test controls. All configuration and failure injection methods are
    thread-safe and take effect on the next request."""

    def __init__(self, **kwargs: Any) -> None:
        self._down = False
        self._failures: dict[str, deque[_Failure]] = {}
        self._delays: dict[str, deque[tuple[float, bool]]] = {}
        self._released = threading.Event()  # set: every delayed answer goes out now
        super().__init__(**kwargs)

    # -- configuration ----------------------------------------------------------------------------------------------

    def add_user(
        self, user_id: str, name: str, *, real_name: str | None = None, display_name: str | None = None
    ) -> None:
        """What ``users.info`` answers for ``user_id`` (unknown users get a made-up but well-formed profile)."""
        with self._lock:
            self._users[user_id] = self._user_object(user_id, name, real_name or name, display_name or name)

    def set_usergroup(self, group_id: str, user_ids: list[str]) -> None:
        """The members ``usergroups.users.list`` reports for ``group_id``; unknown groups answer ``no_such_subteam``."""
        with self._lock:
            self._usergroups[group_id] = list(user_ids)

    # -- failure injection ------------------------------------------------------------------------------------------

    def fail_next(self, method: str, *, status: int = 429, retry_after: int | None = 1, count: int = 1) -> None:
        """The next ``count`` calls to ``method`` get HTTP ``status`` (429: rate limited, body ``ratelimited``) with a
        ``Retry-After: <retry_after>`` header (none if None), as Slack rate-limits (Slack docs "Rate limits")."""
        error = "ratelimited" if status == 429 else "internal_error"
        self._queue(method, _Failure(status, error, retry_after), count)

    def error_next(self, method: str, error: str, count: int = 1) -> None:
        """The next ``count`` calls to ``method`` get HTTP 200 ``{"ok": false, "error": error}`` (e.g.
        ``channel_not_found``, ``invalid_auth``)."""
        self._queue(method, _Failure(200, error), count)

    def http_error_next(self, method: str, status: int = 500, count: int = 1) -> None:
        """The next ``count`` calls to ``method`` get HTTP ``status`` (500/503) with ``{"ok": false, "error":
        "internal_error"}``, which ``AsyncServerErrorRetryHandler`` retries."""
        self._queue(method, _Failure(status, "internal_error"), count)

    def slow_next(self, method: str, seconds: float, count: int = 1) -> None:
        """The next ``count`` calls to ``method`` are handled at once (a message is posted) but answered only after
        ``seconds``: a client that dies meanwhile never learns that Slack accepted its call."""
        with self._lock:
            self._delays.setdefault(method, deque()).extend([(seconds, True)] * count)

    def hang_next(self, method: str, seconds: float, count: int = 1) -> None:
        """The next ``count`` calls to ``method`` hang for ``seconds``, then fail with 503 without being handled (a
        call that never reached Slack)."""
        with self._lock:
            self._delays.setdefault(method, deque()).extend([(seconds, False)] * count)

    def _handle(self, verb: str, raw_path: str, headers: dict[str, str], body: bytes) -> _Answer:
        method = raw_path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        with self._lock:
            delays = self._delays.get(method)
            delay, handled = delays.popleft() if delays else (0.0, True)
            released = self._released
        if delay and not handled:
            released.wait(delay)  # in this request's own server thread: the others are answered meanwhile
            answer = _Answer.data(_error("service_unavailable"), status=503)
            with self._lock:
                self.calls.append(SlackCall(method, {}, headers, time.time(), raw_path, body, 503, answer.parsed))
            return answer
        answer = super()._handle(verb, raw_path, headers, body)
        if delay:
            released.wait(delay)
        return answer

    def down(self) -> None:
        """Slack is unavailable: every request (uploads and response URLs too) gets HTTP 503 until ``up()``."""
        with self._lock:
            self._down = True

    def up(self) -> None:
        with self._lock:
            self._down = False

    def clear_injections(self) -> None:
        """Forget every failure and delay still queued, end ``down`` and answer the calls held back now: a
        module-wide fake, and each test's own plan."""
        with self._lock:
            self._down = False
            self._failures.clear()
            self._delays.clear()
            self._released.set()
            self._released = threading.Event()

    def _queue(self, method: str, failure: _Failure, count: int) -> None:
        with self._lock:
            self._failures.setdefault(method, deque()).extend([failure] * count)

    # -- inspection -------------------------------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[SlackCall]:
        with self._lock:
            return [call for call in self.calls if call.method == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 5.0) -> list[SlackCall]:
        """Block until ``count`` calls to ``method`` (failed ones included) arrived; return all of them.

        Raises TimeoutError. From inside an event loop use ``wait_for_async``: this one would block the loop and
        with it the client that should make the calls."""
        deadline = time.monotonic() + timeout
        while True:
            calls = self.calls_to(method)
            if len(calls) >= count or time.monotonic() >= deadline:
                return self._enough(method, count, timeout, calls)
            time.sleep(0.01)

    async def wait_for_async(self, method: str, count: int = 1, timeout: float = 5.0) -> list[SlackCall]:
        """``wait_for`` for code running in an event loop."""
        deadline = time.monotonic() + timeout
        while True:
            calls = self.calls_to(method)
            if len(calls) >= count or time.monotonic() >= deadline:
                return self._enough(method, count, timeout, calls)
            await asyncio.sleep(0.01)

    def _enough(self, method: str, count: int, timeout: float, calls: list[SlackCall]) -> list[SlackCall]:
        if len(calls) >= count:
            return calls
        with self._lock:
            seen = [call.method for call in self.calls]
        raise TimeoutError(f"{len(calls)} of {count} {method} calls after {timeout}s; all calls: {seen}")

    def _injected(self, method: str) -> _Answer | None:
        if self._down:
            return _Answer.data(_error("service_unavailable"), status=503)
        failures = self._failures.get(method)
        if failures:
            failure = failures.popleft()
            extra = {} if failure.retry_after is None else {"Retry-After": str(failure.retry_after)}
            return _Answer.data(_error(failure.error), status=failure.status, headers=extra)
        return None


def clear_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every ``SLACK_*`` variable for the test: Bolt falls back to ``SLACK_BOT_TOKEN``,
    ``SLACK_SIGNING_SECRET`` and switches on OAuth with ``SLACK_CLIENT_ID``/``SLACK_CLIENT_SECRET``
    (``slack_bolt/app/async_app.py``)."""
    for name in list(os.environ):
        if name.startswith("SLACK_"):
            monkeypatch.delenv(name)


def web_client(fake: FakeSlack, *, rate_limit_retries: int = 0, server_error_retries: int = 0) -> AsyncWebClient:
    """The real ``AsyncWebClient`` pointed at ``fake``, with the retry handlers argo-why adds (``http_retry``)."""
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


# -- requests from Slack to the bot that the demo does not send -----------------------------------------------------


def slash_command_body(
    command: str,
    text: str,
    *,
    user_id: str = "U1",
    channel_id: str = "C1",
    response_url: str | FakeSlack | None = None,
    team_id: str = TEAM_ID,
    user_name: str = "demo-user",
    channel_name: str = "deploys",
) -> bytes:
    """A slash command as Slack POSTs it: plain form fields (Slack docs "Slash commands"). ``response_url`` may be a
    FakeSlack, which then issues a fresh response URL on itself, so that ``respond()`` reaches the fake."""
    fields = {
        "token": "verification_token",
        "team_id": team_id,
        "team_domain": "argo-why-demo",
        "channel_id": channel_id,
        "channel_name": channel_name,
        "user_id": user_id,
        "user_name": user_name,
        "command": command,
        "text": text,
        "api_app_id": APP_ID,
        "is_enterprise_install": "false",
        "response_url": _response_url(response_url),
        "trigger_id": _trigger_id(),
    }
    return urlencode(fields).encode()


def event_body(event: JSON, event_id: str, *, team_id: str = TEAM_ID) -> bytes:
    """An Events API delivery: the JSON ``event_callback`` envelope around ``event``; Slack retries reuse
    ``event_id`` (Slack docs "Events API")."""
    envelope: JSON = {
        "token": "verification_token",
        "team_id": team_id,
        "api_app_id": APP_ID,
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": BOT_USER_ID,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
    }
    return json.dumps(envelope).encode()


def url_verification_body(challenge: str) -> bytes:
    """The handshake Slack sends when the Events request URL is saved; Bolt answers the challenge itself."""
    return json.dumps({"token": "verification_token", "challenge": challenge, "type": "url_verification"}).encode()


def main(argv: list[str] | None = None) -> None:
    """Serve a FakeSlack until interrupted, for trying the bot by hand."""
    parser = argparse.ArgumentParser(prog="python -m tests.fakes.slack", description=main.__doc__)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--token", default=None, help="the bot token to accept (default: a random xoxb- token)")
    args = parser.parse_args(argv)
    with FakeSlack(port=args.port, token=args.token) as fake:
        print(f"SLACK_API_URL={fake.url}\nSLACK_BOT_TOKEN={fake.token}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
