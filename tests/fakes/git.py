"""The fake GitHub and GitLab servers (``bot.demo.fake_git``, which the offline demo runs), with what only tests need:
dropping connections without an answer. Failure injection by route (``fail``), rate limits, protected branches and
a person's merge or close are part of the demo's servers."""

from __future__ import annotations

import shutil
from typing import Any

from bot.demo import fake_git
from bot.demo.fake_argocd import Request, Response
from bot.demo.fake_git import BareRepo, FakeGitHost  # noqa: F401


class _Drops:
    """``drop_next(n)``: the next ``n`` requests get no answer (the connection is reset after the request);
    ``reset()`` lets one server serve many tests."""

    _drops = 0

    def reset(self: Any) -> None:
        """Forget calls, failures, repositories and pull requests (and delete the repositories)."""
        with self._lock:
            self.calls.clear()
            self.errors.clear()
            self._overrides.clear()
            self.read_only = False
            for entry in self._repos.values():
                shutil.rmtree(entry.git.path, ignore_errors=True)
            self._repos.clear()

    def drop_next(self, n: int) -> None:
        with self._lock:  # type: ignore[attr-defined]  # LocalServer's, through the host class
            self._drops += n

    def _answer(self, request: Request) -> Response | None:
        with self._lock:  # type: ignore[attr-defined]
            drop = self._drops > 0
            if drop:
                self._drops -= 1
        return None if drop else super()._answer(request)  # type: ignore[misc]


class FakeGitHub(_Drops, fake_git.FakeGitHub):
    pass


class FakeGitLab(_Drops, fake_git.FakeGitLab):
    pass
