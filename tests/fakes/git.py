"""The fake GitHub and GitLab servers (``bot.demo.fake_git``, which the offline demo runs), with what only tests need:
dropping connections without an answer, and ``reset`` so that one server serves many tests. Failure injection by
route (``fail``), rate limits, protected branches and a person's merge or close are part of the demo's servers."""

from __future__ import annotations

import shutil

from bot.demo import fake_git
from bot.demo.fake_argocd import Request, Response
from bot.demo.fake_git import BareRepo  # noqa: F401


class _TestControls(fake_git.FakeGitHost):
    _drops = 0

    def drop_next(self, n: int) -> None:
        """The next ``n`` requests get no answer: the connection is reset after the request is read."""
        with self._lock:
            self._drops += n

    def reset(self) -> None:
        """Forget calls, failures, repositories and pull requests (and delete the repositories)."""
        with self._lock:
            self.calls.clear()
            self.errors.clear()
            self._overrides.clear()
            self._drops = 0
            self.read_only = False
            for entry in self._repos.values():
                shutil.rmtree(entry.git.path, ignore_errors=True)
            self._repos.clear()

    def _answer(self, request: Request) -> Response | None:
        with self._lock:
            drop = self._drops > 0
            if drop:
                self._drops -= 1
        return None if drop else super()._answer(request)


class FakeGitHub(_TestControls, fake_git.FakeGitHub):
    pass


class FakeGitLab(_TestControls, fake_git.FakeGitLab):
    pass


FakeGitHost = FakeGitHub | FakeGitLab
