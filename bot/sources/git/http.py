"""The HTTP machinery both Git host clients share (async httpx): retries, rate limits, errors for people.

Each provider module (``github.py``, ``gitlab.py``) only says how to ask and how to read the answer; this base
class does the rest, the same way for both:

* Inputs are checked before any request: paths with :func:`check_repo_path`, branches and refs with
  :func:`check_ref` (a refused one raises ``UnsupportedRepo``, a ``ValueError``).
* Connection errors, timeouts and 500/502/503/504 are retried ``retries`` times with exponential backoff. A rate
  limit (429, or GitHub's 403 with no quota left) is waited out when the host says it resets within ``max_wait``
  seconds (``Retry-After``, ``X-RateLimit-Reset``, ``RateLimit-Reset``), else raised at once with the reset time.
* Every other failure becomes a :class:`GitHostError` whose ``kind`` is for code and whose message, from
  ``bot/wording/cli.py``, names the host, the repository, what was being done and what to do about it.
* Writes are idempotent, so that retrying one, or two replicas doing the same one, ends in the same state:
  ``create_branch`` accepts a branch that already points at the wanted commit, ``commit_file`` accepts a branch
  whose file already holds the wanted text, ``open_pr`` returns the pull request that is already open.
* The token is only ever in the request headers: never in a URL, an exception message, a repr or a log line
  (messages are scrubbed once more before they are raised, in case a host echoes it).

What a failed answer says (the host's words, its rate-limit headers, the kind a status means) is read by
``failures.py``; this class decides what to do about it.
"""

from __future__ import annotations

import asyncio
import base64
import re
from typing import Any, ClassVar, NoReturn, Self
from urllib.parse import urlsplit

import httpx

from bot.sources.git.base import ErrorKind, FileContent, GitHostError, Provider, PullRequest, RepoRef
from bot.sources.git.failures import (
    Op,
    RateLimit,
    default_kind,
    error_detail,
    json_shape,
    reset_when,
    transport_reason,
)
from bot.sources.git.urls import check_ref, check_repo_path
from bot.wording import cli as wording

_RETRY_STATUSES = frozenset({500, 502, 503, 504})
_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


class HTTPGitHost:
    """Base of ``GitHubClient`` and ``GitLabClient``; implements the ``GitHost`` protocol on top of their
    ``_do_*`` primitives. ``calls`` counts HTTP requests, retries included."""

    provider: Provider
    PERMISSION: ClassVar[str]  # the sentence for a 403: which scope or role the token lacks

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        timeout: float = 15.0,
        retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
        backoff: float = 0.25,
        max_wait: float = 10.0,
    ) -> None:
        if not token:
            raise ValueError(wording.GIT_NO_TOKEN)
        self.api_url = api_url.rstrip("/")
        self.host = urlsplit(self.api_url).netloc or self.api_url
        self.retries = retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.calls = 0
        self.__token = token
        self._http = httpx.AsyncClient(
            base_url=self.api_url,
            headers={**self._auth_headers(token), "User-Agent": "argo-why"},
            timeout=httpx.Timeout(timeout),
            transport=transport,
            follow_redirects=True,  # GitHub answers 301/307 for renamed or transferred repositories
        )

    # -- what a provider supplies ------------------------------------------------------------------------------

    def _auth_headers(self, token: str) -> dict[str, str]:
        raise NotImplementedError

    def _rate_limit(self, resp: httpx.Response, detail: str) -> RateLimit | None:
        """The rate limit this answer reports, None when it is not a rate-limit answer."""
        raise NotImplementedError

    def _classify(self, status: int, detail: str, op: Op) -> ErrorKind | None:
        """The kind of a refusal the status alone does not tell (conflicts, protected branches, ...)."""
        raise NotImplementedError

    def _needed(self, resp: httpx.Response) -> str:
        """The permission the host says the call needs, for the ``{needed}`` of ``PERMISSION``; "" if unknown."""
        return ""

    async def _do_default_branch(self, repo: RepoRef) -> str:
        raise NotImplementedError

    async def _do_branch_head(self, repo: RepoRef, branch: str) -> str:
        raise NotImplementedError

    async def _do_get_file(self, repo: RepoRef, path: str, ref: str) -> FileContent:
        raise NotImplementedError

    async def _do_list_files(self, repo: RepoRef, path: str, ref: str, recursive: bool) -> list[str]:
        raise NotImplementedError

    async def _do_open_prs(self, repo: RepoRef, head_branch: str) -> list[PullRequest]:
        """The open pull requests from ``head_branch`` (the host's filter; ``find_open_pr`` checks it again)."""
        raise NotImplementedError

    async def _do_create_branch(self, repo: RepoRef, branch: str, from_sha: str) -> None:
        raise NotImplementedError

    async def _do_commit_file(
        self, repo: RepoRef, branch: str, path: str, text: str, message: str, previous_sha: str | None
    ) -> str:
        raise NotImplementedError

    async def _do_open_pr(self, repo: RepoRef, head: str, base: str, title: str, body: str) -> PullRequest:
        raise NotImplementedError

    async def _do_get_pr(self, repo: RepoRef, number: int) -> PullRequest:
        raise NotImplementedError

    # -- the GitHost protocol ----------------------------------------------------------------------------------

    async def default_branch(self, repo: RepoRef) -> str:
        self._check_repo(repo)
        return await self._do_default_branch(repo)

    async def branch_head(self, repo: RepoRef, branch: str) -> str:
        self._check_repo(repo)
        return await self._do_branch_head(repo, check_ref(branch))

    async def get_file(self, repo: RepoRef, path: str, ref: str) -> FileContent:
        self._check_repo(repo)
        return await self._do_get_file(repo, check_repo_path(path), check_ref(ref, what="ref"))

    async def list_files(self, repo: RepoRef, path: str, ref: str, recursive: bool = False) -> list[str]:
        self._check_repo(repo)
        directory = check_repo_path(path, what="directory", directory=True)
        return sorted(await self._do_list_files(repo, directory, check_ref(ref, what="ref"), recursive))

    async def find_open_pr(self, repo: RepoRef, head_branch: str) -> PullRequest | None:
        self._check_repo(repo)
        return await self._find_open_pr(repo, check_ref(head_branch))

    async def create_branch(self, repo: RepoRef, branch: str, from_sha: str) -> None:
        self._check_repo(repo)
        check_ref(branch)
        if not _SHA.fullmatch(from_sha):
            raise ValueError(f"create_branch needs a full commit sha, not {from_sha[:80]!r}")
        try:
            await self._do_create_branch(repo, branch, from_sha)
        except GitHostError as err:
            # An earlier attempt (a retry, a double click, the other replica) may have created it already.
            if err.kind != "branch-exists" or await self._do_branch_head(repo, branch) != from_sha:
                raise

    async def commit_file(
        self, repo: RepoRef, branch: str, path: str, text: str, message: str, previous_sha: str | None
    ) -> str:
        self._check_repo(repo)
        check_ref(branch)
        path = check_repo_path(path)
        try:
            return await self._do_commit_file(repo, branch, path, text, message, previous_sha)
        except GitHostError as err:
            if err.kind != "conflict":
                raise
            # Stale, unless the branch already holds exactly this text (an earlier attempt went through).
            try:
                current = await self._do_get_file(repo, path, branch)
            except GitHostError:
                raise err from None
            if current.text != text:
                raise
            return await self._do_branch_head(repo, branch)

    async def open_pr(self, repo: RepoRef, head: str, base: str, title: str, body: str) -> PullRequest:
        self._check_repo(repo)
        try:
            return await self._do_open_pr(repo, check_ref(head), check_ref(base), title, body)
        except GitHostError as err:
            if err.kind != "pr-exists":
                raise
            existing = await self._find_open_pr(repo, head)
            if existing is None:
                raise
            return existing

    async def get_pr(self, repo: RepoRef, number: int) -> PullRequest:
        self._check_repo(repo)
        if number < 1:
            raise ValueError(f"a pull request number is positive, not {number}")
        return await self._do_get_pr(repo, number)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(api_url={self.api_url!r})"

    async def _find_open_pr(self, repo: RepoRef, head_branch: str) -> PullRequest | None:
        found = [
            pr for pr in await self._do_open_prs(repo, head_branch) if pr.head == head_branch and pr.state == "open"
        ]
        return found[0] if found else None

    def _check_repo(self, repo: RepoRef) -> None:
        if repo.provider != self.provider:
            raise ValueError(f"{repo} is a {repo.provider} repository; this client speaks to {self.provider}")

    # -- transport -----------------------------------------------------------------------------------------------

    async def _call(
        self,
        method: str,
        url: str,
        op: Op,
        *,
        params: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> httpx.Response:
        """Send one request, retrying what is worth retrying; the 2xx answer, or a GitHostError."""
        delay = self.backoff
        attempt = 0
        while True:
            attempt += 1
            self.calls += 1
            try:
                resp = await self._http.request(method, url, params=params, json=body)
            except httpx.TransportError as err:  # connection refused or reset, timeouts, protocol errors
                if attempt <= self.retries:
                    await asyncio.sleep(delay)
                    delay *= 2
                    continue
                self._fail(
                    "unavailable", wording.GIT_UNAVAILABLE, op, None, detail=transport_reason(err), attempts=attempt
                )
            if resp.status_code < 400:
                return resp
            detail = self._detail(resp)
            limit = self._rate_limit(resp, detail)
            if limit is not None:
                if attempt <= self.retries and limit.wait is not None and limit.wait <= self.max_wait:
                    await asyncio.sleep(limit.wait)
                    continue
                self._fail_rate_limited(resp, op, detail, limit)
            if resp.status_code in _RETRY_STATUSES and attempt <= self.retries:
                await asyncio.sleep(delay)
                delay *= 2
                continue
            self._fail_status(resp, op, detail, attempt)

    async def _fetch(
        self, method: str, url: str, op: Op, *, params: dict[str, str] | None = None, body: dict[str, Any] | None = None
    ) -> Any:
        """The JSON answer of one request."""
        return self._json(await self._call(method, url, op, params=params, body=body), op)

    async def _fetch_object(
        self, method: str, url: str, op: Op, *keys: str, params: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """The JSON object a request answers, holding ``keys`` (see ``_object``)."""
        return self._object(await self._fetch(method, url, op, params=params, body=body), op, *keys)

    def _text(self, content: Any, op: Op) -> str:
        """A file's base64 ``content`` as text; a file that is not UTF-8 is ``unreadable``."""
        try:
            return base64.b64decode(str(content)).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            self._fail("unreadable", wording.GIT_NOT_TEXT, op, 200)

    def _json(self, resp: httpx.Response, op: Op) -> Any:
        try:
            return resp.json()
        except ValueError:
            self._fail("unreadable", wording.GIT_BAD_RESPONSE, op, resp.status_code, detail="not JSON")

    def _object(self, value: Any, op: Op, *keys: str) -> dict[str, Any]:
        """``value`` when it is a JSON object holding ``keys``, else an ``unreadable`` error naming the first
        missing one: a host (or a fake) that changed shape fails loudly, not with a KeyError."""
        if not isinstance(value, dict):
            self._fail(
                "unreadable", wording.GIT_BAD_RESPONSE, op, None, detail=f"expected an object, got {json_shape(value)}"
            )
        missing = [k for k in keys if k not in value]
        if missing:
            self._fail("unreadable", wording.GIT_BAD_RESPONSE, op, None, detail=f"no {missing[0]!r} in the answer")
        return value

    def _list(self, value: Any, op: Op) -> list[Any]:
        if not isinstance(value, list):
            self._fail(
                "unreadable", wording.GIT_BAD_RESPONSE, op, None, detail=f"expected a list, got {json_shape(value)}"
            )
        return value

    # -- errors --------------------------------------------------------------------------------------------------

    def _fail(
        self,
        kind: ErrorKind,
        template: str,
        op: Op,
        status: int | None,
        *,
        detail: str = "",
        retry_after: float | None = None,
        **extra: Any,
    ) -> NoReturn:
        fields: dict[str, Any] = {
            "host": self.host,
            "repo": op.repo.path,
            "action": op.action(),
            "path": op.path or "/",
            "ref": op.ref,
            "branch": op.branch,
            "number": op.number,
            "status": status,
            "detail": detail or "no details",
            **extra,
        }
        text = template.format(**fields)
        raise GitHostError(self._scrub(text), kind=kind, status=status, retry_after=retry_after)

    def _fail_status(self, resp: httpx.Response, op: Op, detail: str, attempts: int) -> NoReturn:
        status = resp.status_code
        kind = self._classify(status, detail.lower(), op) or default_kind(status)
        if kind == "permission":
            self._fail(kind, self.PERMISSION, op, status, detail=detail, needed=self._needed(resp))
        template = {
            "auth": wording.GIT_AUTH,
            "not-found": wording.GIT_REPO_NOT_FOUND if op.name == "repo" else wording.GIT_NOT_FOUND,
            "conflict": wording.GIT_STALE_FILE,
            "branch-exists": wording.GIT_BRANCH_EXISTS,
            "pr-exists": wording.GIT_PR_EXISTS,
            "protected": wording.GIT_PROTECTED,
            "unavailable": wording.GIT_UNAVAILABLE,
        }.get(kind, wording.GIT_REJECTED)
        self._fail(kind, template, op, status, detail=f"{status}: {detail}" if kind == "unavailable" else detail,
                   attempts=attempts)  # fmt: skip

    def _fail_rate_limited(self, resp: httpx.Response, op: Op, detail: str, limit: RateLimit) -> NoReturn:
        self._fail("rate-limited", wording.GIT_RATE_LIMITED, op, resp.status_code, detail=detail,
                   retry_after=limit.wait, when=reset_when(limit.wait))  # fmt: skip

    def _detail(self, resp: httpx.Response) -> str:
        """The host's own words about a failure, on one line and cut short."""
        return self._scrub(error_detail(resp))

    def _scrub(self, text: str) -> str:
        return text.replace(self.__token, "***")
