"""Failure injection and ``reset`` for the Argo CD and Kubernetes fakes (``bot.demo.fake_argocd.LocalServer``).

A subclass lists ``FailureInjection`` before the demo's server class and implements ``failure``: the error body its
real counterpart sends for a 429, 500 or 503.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.demo.fake_argocd import LocalServer, Request, Response


@dataclass(frozen=True)
class _Failure:
    status: int
    retry_after: int | None
    message: str | None


class FailureInjection(LocalServer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._failures: list[_Failure] = []
        self._drops = 0
        super().__init__(*args, **kwargs)

    def fail_next(self, n: int, status: int = 503, retry_after: int | None = None, message: str | None = None) -> None:
        """The next ``n`` requests (any path, before authentication, like a proxy or an overloaded server) answer
        ``status`` (429, 500 or 503); ``retry_after`` adds a ``Retry-After`` header (seconds)."""
        if status not in (429, 500, 503):
            raise ValueError(f"fail_next supports 429, 500 and 503, not {status}")
        with self._lock:
            self._failures.extend([_Failure(status, retry_after, message)] * n)

    def down(self, status: int = 503) -> None:
        """Every request answers ``status`` until :meth:`up` (an outage of unknown length)."""
        with self._lock:
            self._failures = [_Failure(status, None, None)] * 1_000_000

    def up(self) -> None:
        """The end of :meth:`down` (and of any failure still queued by :meth:`fail_next`)."""
        with self._lock:
            self._failures.clear()

    def drop_next(self, n: int) -> None:
        """The next ``n`` requests get no answer: the connection is reset (TCP RST) after the request is read."""
        with self._lock:
            self._drops += n

    def reset(self) -> None:
        """Forget recorded calls and pending failures (subclasses also forget their data): lets one server per
        test session serve many tests."""
        with self._lock:
            self.calls.clear()
            self.errors.clear()
            self._failures.clear()
            self._drops = 0

    def failure(self, status: int, message: str | None) -> Response:
        raise NotImplementedError

    def _answer(self, request: Request) -> Response | None:
        with self._lock:
            drop = self._drops > 0
            if drop:
                self._drops -= 1
            injected = self._failures.pop(0) if not drop and self._failures else None
        if drop:
            return None
        if injected is None:
            return super()._answer(request)
        response = self.failure(injected.status, injected.message)
        if injected.retry_after is not None:
            response.headers["Retry-After"] = str(injected.retry_after)
        return response
