"""Readiness of one replica, and Slack's auth state beside it.

Ready means able to accept Argo CD's webhooks durably: the store (Redis) answers a ping within
:data:`STORE_TIMEOUT_S`. Nothing else is required. In particular Slack is not: a Slack outage or a revoked token
must not pull the pods out of the Service, because webhooks are queued in Redis and delivered once Slack is back.

Slack's ``auth.test`` is still watched (:class:`SlackAuth`) so that an operator sees a broken token: its last
answer is in the ``/readyz`` body (``info.slack_auth``) and in the ``argo_why_slack_auth_ok`` gauge of
``/metrics``. It is refreshed in the background when older than :data:`SLACK_TTL_S`; a probe never waits for Slack,
so a slow Slack cannot make a probe time out either.

The reason Slack gives (the Web API's error, such as ``invalid_auth``) is logged once when it is first known at
start-up and again only when the state flips (``ok`` to ``failed`` or back), never on every check; it is also in
the ``/readyz`` body (``info.slack_auth_error``). The same holds for readiness itself (:class:`Readiness`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from bot.errors import UpstreamError
from bot.metrics import Metrics
from bot.store import Store, StoreUnavailable
from bot.wording import cli as wording

log = logging.getLogger("argo_why.health")

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

    def __init__(self, check: Callable[[], Awaitable[str | None]], metrics: Metrics, *, ttl_s: float = SLACK_TTL_S,
                 timeout_s: float = SLACK_TIMEOUT_S) -> None:  # fmt: skip
        """``check`` answers ``None`` when Slack accepts the token, else the reason Slack gives for refusing it; it
        raises :class:`~bot.errors.UpstreamError` when Slack cannot be reached or fails (the token is then unknown,
        not refused: the log says so, without token remedies)."""
        self._check = check
        self._metrics = metrics
        self._ttl_s = ttl_s
        self._timeout_s = timeout_s
        self.state = UNKNOWN
        self.error: str | None = None
        self._unreachable = False
        self._at: float | None = None
        self._task: asyncio.Task[None] | None = None

    def current(self) -> str:
        stale = self._at is None or time.monotonic() - self._at > self._ttl_s
        if stale and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._refresh(), name="slack-auth-check")
        return self.state

    async def _refresh(self) -> None:
        unreachable = False
        try:
            error = await asyncio.wait_for(self._check(), self._timeout_s)
        except TimeoutError:
            error, unreachable = wording.SLACK_AUTH_TIMEOUT.format(seconds=self._timeout_s), True
        except UpstreamError as e:
            error, unreachable = str(e), True
        state = OK if error is None else FAILED
        # the first answer, and every flip (refused and unreachable are two different things to fix): once each
        if state != self.state or unreachable != self._unreachable:
            if error is not None:
                said = wording.SLACK_UNREACHABLE if unreachable else wording.SLACK_AUTH_FAILED
                log.warning(said.format(error=error))
            else:
                log.info(wording.SLACK_AUTH_OK if self.state == UNKNOWN else wording.SLACK_AUTH_BACK)
        self.state, self.error, self._unreachable = state, error, unreachable
        self._at = time.monotonic()
        self._metrics.slack_auth_ok.set(1 if error is None else 0)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class Readiness:
    """Whether the replica was ready at the last probe: a change (and the first "not ready") is logged once, with
    the reason, rather than on every probe."""

    def __init__(self) -> None:
        self.ready: bool | None = None

    def seen(self, ready: bool, checks: dict[str, str]) -> None:
        if ready == self.ready:
            return
        if not ready:
            reasons = "; ".join(f"{name}: {state}" for name, state in checks.items() if state != OK)
            log.warning(wording.NOT_READY.format(reasons=reasons))
        elif self.ready is not None:
            log.info(wording.READY_AGAIN)
        self.ready = ready
