"""Fake GitHub and GitLab API servers backed by real bare git repositories on disk.

They exist so that argo-why's Git host clients run their real httpx code, URL encoding and error handling end to
end against answers shaped like GitHub's REST v3 and GitLab's REST v4 (see the docstrings of
``bot/sources/git/github.py`` and ``gitlab.py`` for where those shapes were checked), and so that a test can look
at the result with plain ``git``: branches and commits are real, ``git diff main..BRANCH`` shows the change.

One module a job, each saying what it guarantees: ``repo`` drives a bare repository through git plumbing
(``BareRepo``), ``host`` is what both fakes share (repositories, pull requests, authentication order, failure
injection, a person's merge or close: ``FakeGitHost``), ``github`` and ``gitlab`` are the two hosts' routes, shapes
and errors (``FakeGitHub``, ``FakeGitLab``).

Every name this package had as a single module is still importable from ``bot.demo.fake_git``; what only tests need
(dropped connections, ``reset``) is added by the subclasses in ``tests/fakes/git.py``.
"""

from bot.demo.fake_git.github import FakeGitHub
from bot.demo.fake_git.gitlab import FakeGitLab
from bot.demo.fake_git.host import TOKEN_USER, ApiError, FakeGitHost, FakePR
from bot.demo.fake_git.repo import GIT_ENV, SYMLINK_MODE, ZERO_SHA, BareRepo, Entry, GitError, Obj

__all__ = [
    "GIT_ENV",
    "SYMLINK_MODE",
    "TOKEN_USER",
    "ZERO_SHA",
    "ApiError",
    "BareRepo",
    "Entry",
    "FakeGitHost",
    "FakeGitHub",
    "FakeGitLab",
    "FakePR",
    "GitError",
    "Obj",
]
