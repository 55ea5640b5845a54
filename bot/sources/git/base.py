"""What every Git host client offers: the ``GitHost`` protocol, its plain values and its one error type.

argo-why's only write anywhere is a branch plus a pull request (GitLab: merge request) on a Git host. This module
is the contract between that flow and the two providers (``github.py``, ``gitlab.py``):

* the values are frozen dataclasses with no I/O and no provider-specific fields beyond what both hosts give;
* every operation is async and answers in terms of these values, or raises :class:`GitHostError` whose ``kind``
  says what happened and whose message is a sentence a person can act on (``bot/wording/cli.py``, "Git hosts");
* no operation ever lists or reads more than it is asked for: the number of API calls per pull request does not
  depend on the size of the repository.

The order the fix flow is meant to use, so that the same fix twice is one pull request, a base branch that moved
is harmless and a stale file is caught::

    pr = await host.find_open_pr(repo, branch)          # the same fix again: link the open one
    if pr is None:
        base = await host.default_branch(repo)          # or the branch the definition names
        head = await host.branch_head(repo, base)
        file = await host.get_file(repo, path, head)    # read at the commit the branch will start from
        try:
            await host.create_branch(repo, branch, head)
        except GitHostError as err:                     # left by an earlier attempt, or by a closed pull request
            if err.kind != "branch-exists":
                raise
            file = await host.get_file(repo, path, branch)
        if file.text != new_text:
            await host.commit_file(repo, branch, path, new_text, message, file.version)
        pr = await host.open_pr(repo, branch, base, title, body)

Each write is idempotent on its own, so that a retry, a double click or the other replica ends in one branch, one
commit and one pull request: creating a branch that already points at ``from_sha`` succeeds, committing text the
branch already holds succeeds (with the branch's head), and opening a pull request that is already open returns
the open one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, Self

from bot.errors import UpstreamError

Provider = Literal["github", "gitlab"]
PRState = Literal["open", "merged", "closed"]
ErrorKind = Literal[
    "auth",  # 401: the token is invalid or expired
    "permission",  # 403: the token may not do this
    "not-found",  # 404, or the path is a directory where a file was asked for (and the other way round)
    "conflict",  # the file changed since it was read (GitHub 409, GitLab 400)
    "branch-exists",  # the branch exists and points at another commit
    "pr-exists",  # the host says a pull request is open but it cannot be found
    "protected",  # a branch protection rule or ruleset refused the push
    "rate-limited",  # 429, or GitHub's 403 with no remaining quota; ``retry_after`` says for how long
    "unavailable",  # connection errors, timeouts and 5xx, after the retries
    "rejected",  # any other refusal (validation errors, ...)
    "unreadable",  # an answer argo-why cannot use: not JSON, not UTF-8, too large
]


@dataclass(frozen=True)
class RepoRef:
    """A repository on a Git host: ``provider``, the web ``host`` (``github.com``, ``gitlab.example.com``, with a
    port only when it is not the default) and the ``path`` (``acme/platform``, ``group/sub/repo``)."""

    provider: Provider
    host: str
    path: str

    def __str__(self) -> str:
        return f"{self.host}/{self.path}"


@dataclass(frozen=True)
class FileContent:
    """A file read at ``ref``. ``sha`` is the blob id; ``version`` is what ``commit_file`` needs as
    ``previous_sha`` to detect a stale file: the blob sha on GitHub, the last commit that touched the file on
    GitLab (its ``last_commit_id``)."""

    path: str
    text: str
    sha: str
    ref: str
    version: str


@dataclass(frozen=True)
class PullRequest:
    """A pull request (GitLab: merge request). ``number`` is GitHub's number or GitLab's ``iid``; ``url`` is the page
    a person opens; ``head`` and ``base`` are branch names."""

    number: int
    url: str
    state: PRState
    head: str
    base: str
    title: str = ""


class GitHostError(UpstreamError):
    """The Git host refused or failed a request. ``str(err)`` is a sentence for a person; ``kind`` is for code;
    ``status`` is the HTTP status (None when no answer came); ``retry_after`` is how many seconds until a rate
    limit resets, when the host said so."""

    def __init__(
        self, message: str, *, kind: ErrorKind, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status = status
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"GitHostError(kind={self.kind!r}, status={self.status!r}, message={str(self)!r})"


class GitHost(Protocol):
    """A Git host as the fix flow sees it. ``async with`` closes the connection pool."""

    provider: Provider
    calls: int  # HTTP requests sent so far, retries included

    async def default_branch(self, repo: RepoRef) -> str: ...

    async def branch_head(self, repo: RepoRef, branch: str) -> str:
        """The commit sha ``branch`` points at."""
        ...

    async def get_file(self, repo: RepoRef, path: str, ref: str) -> FileContent:
        """The file at ``path`` as of ``ref`` (a branch, tag or commit sha), decoded as UTF-8."""
        ...

    async def list_files(self, repo: RepoRef, path: str, ref: str, recursive: bool = False) -> list[str]:
        """The files (not directories) in the directory ``path`` ("" for the root), and below it when
        ``recursive``: repository paths, sorted. Only that directory is listed, never the whole tree."""
        ...

    async def find_open_pr(self, repo: RepoRef, head_branch: str) -> PullRequest | None: ...

    async def create_branch(self, repo: RepoRef, branch: str, from_sha: str) -> None: ...

    async def commit_file(
        self, repo: RepoRef, branch: str, path: str, text: str, message: str, previous_sha: str | None
    ) -> str:
        """Write ``text`` to ``path`` on ``branch`` as one commit; the new commit's sha. ``previous_sha`` is the
        ``FileContent.version`` the edit started from (None creates a new file): a file that changed since makes
        the host refuse, and the error's kind is ``conflict``."""
        ...

    async def open_pr(self, repo: RepoRef, head: str, base: str, title: str, body: str) -> PullRequest: ...

    async def get_pr(self, repo: RepoRef, number: int) -> PullRequest: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...
