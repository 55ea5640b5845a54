"""What the fake GitHub and GitLab share (``FakeGitHost``): the served repositories, their pull requests, the acts
of a person on the host, and failure injection.

Guarantees:

* ``add_repo`` serves a new bare repository under the fake's temporary folder (deleted by ``stop()`` when the fake
  made it), a dict of path → text becoming one initial commit on the default branch.
* Every request is checked against the injected failures first (``fail``: a status for matching requests, once or
  more, with headers; ``rate_limit``: the host's own rate-limit answer), then authenticated with ``.token`` (else
  the host's 401), then routed; a path the host does not serve answers the host's 404. ``read_only = True`` makes
  every write answer the host's 403 for a token without write scope, and ``protect`` refuses pushes to matching
  branches as branch protection does.
* ``advance`` commits to a branch as a person pushing would (the base moved); ``merge_pr`` and ``close_pr`` act on a
  pull request as a person would on the host.
* ``calls`` records every request (method, decoded path, query, status), so a test or a benchmark can count API
  calls per pull request. One lock serializes every request and every configuration call.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.demo.fake_git.repo import BareRepo, Obj
from bot.demo.serving import LocalServer, Request, Response

TOKEN_USER = "argo-why-bot"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class FakePR:
    """A pull request (GitLab: merge request) as the fake keeps it. ``state``: open, closed or merged."""

    id: int
    number: int
    repo: str
    title: str
    body: str
    head: str
    base: str
    head_sha: str
    state: str = "open"
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    closed_at: str | None = None
    merged_at: str | None = None
    merge_commit_sha: str | None = None


@dataclass
class _Override:
    method: str
    pattern: re.Pattern[str]
    status: int
    message: str | None
    headers: dict[str, str]
    remaining: int | None  # None: every matching request


@dataclass
class _Repo:
    id: int
    path: str
    git: BareRepo
    default_branch: str
    protected: list[str] = field(default_factory=list)
    prs: list[FakePR] = field(default_factory=list)
    created_at: str = field(default_factory=_now)


class ApiError(Exception):
    """An error answer in the host's shape: ``body`` is the JSON object (or text) to send."""

    def __init__(self, status: int, body: Obj | str, headers: dict[str, str] | None = None) -> None:
        super().__init__(str(body))
        self.status, self.body, self.headers = status, body, headers or {}


class FakeGitHost(LocalServer):
    """Base of ``FakeGitHub`` and ``FakeGitLab``: the repositories, pull requests and failure injection."""

    API_PREFIX = ""

    def __init__(self, name: str, *, web_url: str | None, root: Path | None = None) -> None:
        self._own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix=f"{name}-")) if root is None else root
        self._repos: dict[str, _Repo] = {}
        self._overrides: list[_Override] = []
        self._ids = 1000
        self.read_only = False
        super().__init__(name)
        self.web_url = (web_url or self.url).rstrip("/")

    @property
    def api_url(self) -> str:
        """What to give a client (and ``GIT_API_URL``)."""
        return self.url + self.API_PREFIX

    # -- configuration -----------------------------------------------------------------------------------------

    def add_repo(self, path: str, files: dict[str, str | bytes], *, default_branch: str = "main") -> BareRepo:
        """Serve a new repository ``path`` ("acme/platform", "group/sub/repo") holding ``files`` in one commit on
        ``default_branch``."""
        with self._lock:
            if path in self._repos:
                raise ValueError(f"{path} is already served")
            self._ids += 1
            bare = BareRepo.create(self.root / f"{self._ids}.git", files, branch=default_branch)
            self._repos[path] = _Repo(self._ids, path, bare, default_branch)
            return bare

    def repo(self, path: str) -> BareRepo:
        return self._repos[path].git

    def protect(self, repo: str, pattern: str) -> None:
        """Branches of ``repo`` matching ``pattern`` (fnmatch: "main", "release/*") refuse every push, creation
        included, as a protection rule or ruleset does for a token that may not bypass it."""
        with self._lock:
            self._repos[repo].protected.append(pattern)

    def fail(
        self,
        method: str,
        path: str,
        status: int,
        *,
        times: int | None = 1,
        message: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next ``times`` requests (None: all) whose method is ``method`` ("*" for any) and whose decoded path
        matches the regular expression ``path`` (searched, not anchored) answer ``status`` with the host's error
        body (``message`` or the host's usual one for that status) and ``headers``. Checked before
        authentication, so a 401 can be injected too."""
        with self._lock:
            self._overrides.append(_Override(method.upper(), re.compile(path), status, message, dict(headers or {}),
                                              times))  # fmt: skip

    def rate_limit(
        self,
        method: str = "*",
        path: str = "",
        *,
        times: int | None = 1,
        retry_after: int | None = None,
        reset_in: int | None = None,
        secondary: bool = False,
    ) -> None:
        """The host's rate-limit answer for matching requests: ``retry_after`` adds ``Retry-After``, ``reset_in``
        seconds set the reset time headers; ``secondary`` (GitHub) is the secondary limit's wording."""
        status, message, headers = self._rate_limit_answer(retry_after, reset_in, secondary)
        self.fail(method, path, status, times=times, message=message, headers=headers)

    def advance(
        self, repo: str, files: Mapping[str, str | bytes | None], *, branch: str | None = None, message: str = "Update"
    ) -> str:
        """Commit ``files`` to ``branch`` (default: the default branch) as a person pushing would; the new sha."""
        with self._lock:
            entry = self._repos[repo]
            target = branch or entry.default_branch
            return entry.git.commit(target, files, message, parent=entry.git.branch(target))

    def pulls(self, repo: str) -> list[FakePR]:
        with self._lock:
            return list(self._repos[repo].prs)

    def merge_pr(self, repo: str, number: int) -> str:
        """Merge pull request ``number`` as a person clicking Merge would; the sha the base branch is now at."""
        with self._lock:
            entry = self._repos[repo]
            pr = self._pr(entry, number)
            sha = entry.git.merge(pr.base, pr.head, f"Merge branch '{pr.head}' into {pr.base}\n\n{pr.title}")
            pr.state, pr.merged_at, pr.closed_at, pr.updated_at = "merged", _now(), _now(), _now()
            pr.merge_commit_sha = sha
            return sha

    def close_pr(self, repo: str, number: int) -> None:
        """Close pull request ``number`` without merging it."""
        with self._lock:
            pr = self._pr(self._repos[repo], number)
            pr.state, pr.closed_at, pr.updated_at = "closed", _now(), _now()

    def stop(self) -> None:
        super().stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- HTTP --------------------------------------------------------------------------------------------------

    def handle(self, request: Request) -> Response:
        with self._lock:
            override = self._take_override(request)
            if override is not None:
                body = self._error_body(override.status, override.message)
                return self._error_response(ApiError(override.status, body, override.headers))
            try:
                self._authenticate(request)
                path = request.path
                if self.API_PREFIX:
                    if not path.startswith(self.API_PREFIX + "/"):
                        raise self._not_found_route()
                    path = path[len(self.API_PREFIX) :]
                return self._route(request, path)
            except ApiError as err:
                return self._error_response(err)

    def failure(self, status: int, message: str | None) -> Response:
        with self._lock:  # fail_next answers outside handle(); GitHub's answer updates the rate-limit counter
            return self._error_response(ApiError(status, self._error_body(status, message)))

    def _take_override(self, request: Request) -> _Override | None:
        for override in self._overrides:
            if override.method in ("*", request.method) and override.pattern.search(request.path):
                if override.remaining is not None:
                    override.remaining -= 1
                    if override.remaining <= 0:
                        self._overrides.remove(override)
                return override
        return None

    def _error_response(self, err: ApiError) -> Response:
        if isinstance(err.body, str):
            return Response(err.status, err.body.encode(), {"Content-Type": "text/plain", **err.headers})
        return self._json(err.body, err.status, err.headers)

    def _json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        return Response(status, json.dumps(body).encode(), {"Content-Type": "application/json; charset=utf-8",
                                                            **(headers or {})})  # fmt: skip

    def _lookup(self, path: str) -> _Repo:
        entry = self._repos.get(path)
        if entry is None:
            raise self._not_found_repo()
        return entry

    def _pr(self, entry: _Repo, number: int) -> FakePR:
        for pr in entry.prs:
            if pr.number == number:
                return pr
        raise KeyError(f"{entry.path} has no pull request {number}")

    def _new_pr(self, entry: _Repo, title: str, body: str, head: str, base: str, head_sha: str) -> FakePR:
        self._ids += 1
        pr = FakePR(self._ids, len(entry.prs) + 1, entry.path, title, body, head, base, head_sha)
        entry.prs.append(pr)
        return pr

    @staticmethod
    def _protected(entry: _Repo, branch: str) -> bool:
        return any(fnmatch.fnmatchcase(branch, pattern) for pattern in entry.protected)

    @staticmethod
    def _body(request: Request) -> Obj:
        if not request.body:
            return {}
        try:
            body = json.loads(request.body)
        except ValueError:
            raise ApiError(400, {"message": "Problems parsing JSON"}) from None
        return body if isinstance(body, dict) else {}

    # -- what each host supplies -------------------------------------------------------------------------------

    def _authenticate(self, request: Request) -> None:
        raise NotImplementedError

    def _route(self, request: Request, path: str) -> Response:
        raise NotImplementedError

    def _error_body(self, status: int, message: str | None) -> Obj | str:
        raise NotImplementedError

    def _not_found_route(self) -> ApiError:
        raise NotImplementedError

    def _not_found_repo(self) -> ApiError:
        raise NotImplementedError

    def _rate_limit_answer(
        self, retry_after: int | None, reset_in: int | None, secondary: bool
    ) -> tuple[int, str | None, dict[str, str]]:
        raise NotImplementedError
