"""Readiness of one replica, and Slack's auth state beside it.

Ready means able to accept Argo CD's webhooks durably: the store (Redis) answers a ping within
:data:`STORE_TIMEOUT_S`. Nothing else is required. In particular Slack is not: a Slack outage or a revoked token
must not pull the pods out of the Service, because webhooks are queued in Redis and delivered once Slack is back.

Slack's ``auth.test`` is still watched (:class:`SlackAuth`) so that an operator sees a broken token: its last
answer is in the ``/readyz`` body (``info.slack_auth``) and in the ``argo_why_slack_auth_ok`` gauge of
``/metrics``. It is refreshed in the background when older than :data:`SLACK_TTL_S`; a probe never waits for Slack,
so a slow Slack cannot make a probe time out either.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from bot.metrics import Metrics
from bot.store import Store, StoreUnavailable

STORE_TIMEOUT_S = 2.0
"""The chart's readiness probe waits longer than this (timeoutSeconds), so a slow Redis reads as "not ready" in the
body rather than as a probe timeout."""
SLACK_TIMEOUT_S = 10.0
SLACK_TTL_S = 30.0

UNKNOWN, OK, FAILED = "unknown", "ok", "failed"


async def store_state(store: Store, timeout_s: float = STORE_TIMEOUT_S) -> str:
    """``"ok"``, or why the store cannot take a webhook now."""
    try:
        await asyncio.wait_for(store.ping(), timeout_s)
    except StoreUnavailable as e:
        return str(e)
    except TimeoutError:
        return f"no answer within {timeout_s:g} s"
    return OK


class SlackAuth:
    """The last known answer of Slack's ``auth.test``: ``unknown`` (not asked yet), ``ok`` or ``failed``.

    :meth:`current` returns at once and, when the answer is older than ``ttl_s``, starts one background check
    (never two at a time); the task is kept here and cancelled by :meth:`close`.
    """

    def __init__(self, check: Callable[[], Awaitable[bool]], metrics: Metrics, *, ttl_s: float = SLACK_TTL_S,
                 timeout_s: float = SLACK_TIMEOUT_S) -> None:  # fmt: skip
        self._check = check
        self._metrics = metrics
        self._ttl_s = ttl_s
        self._timeout_s = timeout_s
        self.state = UNKNOWN
        self._at: float | None = None
        self._task: asyncio.Task[None] | None = None

    def current(self) -> str:
        stale = self._at is None or time.monotonic() - self._at > self._ttl_s
        if stale and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._refresh(), name="slack-auth-check")
        return self.state

    async def _refresh(self) -> None:
        try:
            ok = await asyncio.wait_for(self._check(), self._timeout_s)
        except TimeoutError:
            ok = False
        self.state = OK if ok else FAILED
        self._at = time.monotonic()
        self._metrics.slack_auth_ok.set(1 if ok else 0)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
