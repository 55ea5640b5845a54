"""Fake GitHub and GitLab API servers backed by real bare git repositories on disk.

They exist so that argo-why's Git host clients run their real httpx code, URL encoding and error handling end to
end against answers shaped like GitHub's REST v3 and GitLab's REST v4 (see the docstrings of
``bot/sources/git/github.py`` and ``gitlab.py`` for where those shapes were checked), and so that a test can look
at the result with plain ``git``: branches and commits are real, ``git diff main..BRANCH`` shows the change.

What they guarantee:

* Each served repository is a bare repository under the fake's temporary folder (``add_repo``: a dict of path →
  text becomes one initial commit on the default branch). Every read and write goes through ``git`` plumbing
  (``cat-file``, ``ls-tree``, ``hash-object -w``, ``update-index`` on a temporary index, ``write-tree``,
  ``commit-tree``, ``update-ref`` with the expected old value), so two writers cannot both win.
* Only the endpoints argo-why uses are served (listed on ``FakeGitHub`` and ``FakeGitLab``); anything else answers
  the host's 404. Status codes and error bodies are the host's: GitHub ``{"message", "documentation_url",
  "status"}`` (422 ``Reference already exists``, 409 ``PATH does not match SHA``, 422 ``Validation Failed`` for a
  second pull request), GitLab ``{"message"}`` or ``{"error"}`` (400 ``Branch already exists``, 400 ``You are
  attempting to update a file that has changed since you started editing it.``, 409 for a second merge request).
* Authentication: the token (``.token``) is required on every route (GitHub ``Authorization: Bearer``/``token``,
  GitLab ``PRIVATE-TOKEN`` or ``Authorization: Bearer``), else 401. ``read_only = True`` makes every write answer
  the host's 403 for a token without write scope.
* Web URLs in answers (``html_url``, ``web_url``) start with ``web_url`` (GitHub default ``https://github.com``,
  GitLab default the fake's own address, so that ``GIT_API_URL`` and the links share a host).
* ``calls`` records every request (method, decoded path, query, status), so a test or a benchmark can count API
  calls per pull request.
* Failure injection: ``fail`` (a status for matching requests, once or more, with headers), ``rate_limit`` (the
  host's own rate-limit answer), ``protect`` (pushes to matching branches are refused as branch protection does),
  ``fail_next``/``drop_next`` (any request, before authentication). ``advance`` commits to a branch as a person
  would (the base moved), ``merge_pr`` and ``close_pr`` act on a pull request as a person would on the host.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlencode

from bot.demo.serving import LocalServer, Request, Response

Obj = dict[str, Any]

ZERO_SHA = "0" * 40
SYMLINK_MODE = "120000"
# A fixed identity: commits must not depend on (or fail for lack of) the machine's git configuration.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "argo-why",
    "GIT_AUTHOR_EMAIL": "argo-why@users.noreply.example.com",
    "GIT_COMMITTER_NAME": "argo-why",
    "GIT_COMMITTER_EMAIL": "argo-why@users.noreply.example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}
TOKEN_USER = "argo-why-bot"


class GitError(RuntimeError):
    """A ``git`` command failed: a bug in the fake or in the test that drives it."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------------------------
# A bare repository driven through git plumbing
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One ``git ls-tree -l`` line: ``type`` is blob, tree or commit (a submodule); ``size`` is None for trees."""

    mode: str
    type: str
    sha: str
    size: int | None
    path: str

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]


class BareRepo:
    """A bare git repository; every method runs ``git`` on it. Refs, paths and shas given to it come from HTTP
    requests, so every command puts them after ``--`` or in positions where ``git`` cannot read them as options."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(
        cls, path: Path, files: dict[str, str | bytes], *, branch: str = "main", message: str = "Initial commit"
    ) -> BareRepo:
        """A new bare repository at ``path`` with one commit on ``branch`` holding ``files``."""
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "init", "--quiet", "--bare", f"--initial-branch={branch}", str(path)],
            check=True, capture_output=True, env={**os.environ, **GIT_ENV},
        )  # fmt: skip
        repo = cls(path)
        repo.commit(branch, files, message, parent=None)
        return repo

    def git(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["git", f"--git-dir={self.path}", *args],
            input=input, capture_output=True, env={**os.environ, **GIT_ENV, **(env or {})},
        )  # fmt: skip
        if done.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode("utf-8", errors="surrogateescape")

    def _try(self, *args: str) -> str | None:
        try:
            return self.git(*args).strip() or None
        except GitError:
            return None

    # -- refs --------------------------------------------------------------------------------------------------

    def branch(self, name: str) -> str | None:
        """The commit ``refs/heads/name`` points at."""
        return None if name.startswith("-") else self._try("rev-parse", "--verify", "--quiet", f"refs/heads/{name}")

    def branches(self) -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/heads")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def resolve(self, ref: str) -> str | None:
        """The commit a branch, tag or (abbreviated) sha names, like the hosts resolve ``?ref=``."""
        if not ref or ref.startswith("-") or ".." in ref:
            return None
        for candidate in (f"refs/heads/{ref}", f"refs/tags/{ref}", ref):
            sha = self._try("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}")
            if sha:
                return sha
        return None

    def object_type(self, sha: str) -> str | None:
        if not re.fullmatch(r"[0-9a-f]{4,64}", sha):
            return None
        return self._try("cat-file", "-t", sha)

    def is_ancestor(self, older: str, newer: str) -> bool:
        try:
            self.git("merge-base", "--is-ancestor", older, newer)
            return True
        except GitError:
            return False

    def update_ref(self, branch: str, new: str, old: str) -> None:
        """Move ``branch`` from ``old`` (``ZERO_SHA``: it must not exist) to ``new``, atomically."""
        self.git("update-ref", f"refs/heads/{branch}", new, old)

    # -- trees and blobs ---------------------------------------------------------------------------------------

    def entry(self, commit: str, path: str) -> Entry | None:
        """The tree entry at ``path`` in ``commit`` ("" is the root tree)."""
        if not path:
            tree = self.git("rev-parse", f"{commit}^{{tree}}").strip()
            return Entry("040000", "tree", tree, None, "")
        found = self.ls(commit, path=path, itself=True)
        return found[0] if found else None

    def ls(self, tree_ish: str, *, path: str = "", recursive: bool = False, itself: bool = False) -> list[Entry]:
        """``git ls-tree -l``: the entries of the directory ``path`` (recursive: every blob and tree below it), or
        with ``itself`` the entry of ``path``. Paths are relative to the repository root."""
        args = ["ls-tree", "-l", "-z", "--full-tree"]
        if recursive:
            args += ["-r", "-t"]
        args.append(tree_ish)
        if path:
            args += ["--", path if itself else f"{path}/"]
        entries = []
        for record in self.git(*args).split("\0"):
            if not record:
                continue
            meta, _, name = record.partition("\t")
            mode, kind, sha, size = meta.split()
            entries.append(Entry(mode, kind, sha, None if size == "-" else int(size), name))
        if itself:
            return [e for e in entries if e.path == path]
        return entries

    def blob(self, sha: str) -> bytes:
        return subprocess.run(
            ["git", f"--git-dir={self.path}", "cat-file", "blob", sha],
            check=True, capture_output=True, env={**os.environ, **GIT_ENV},
        ).stdout  # fmt: skip

    def read(self, ref: str, path: str) -> bytes | None:
        """The bytes of the file ``path`` at ``ref``, None when it is not a file there."""
        commit = self.resolve(ref)
        entry = self.entry(commit, path) if commit else None
        return self.blob(entry.sha) if entry is not None and entry.type == "blob" else None

    def last_commit_for(self, ref: str, path: str) -> str | None:
        """The last commit reachable from ``ref`` that touched ``path`` (GitLab's ``last_commit_id``)."""
        return self._try("log", "-1", "--format=%H", ref, "--", path)

    def commit_info(self, sha: str) -> Obj:
        fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"
        fields = self.git("show", "-s", f"--format={fmt}", sha).split("\0")
        keys = ("sha", "tree", "parents", "author_name", "author_email", "authored", "committer_name",
                "committer_email", "committed", "message")  # fmt: skip
        info: Obj = dict(zip(keys, fields, strict=True))
        info["parents"] = info["parents"].split()
        info["message"] = info["message"].rstrip("\n")
        return info

    # -- writes ------------------------------------------------------------------------------------------------

    def commit(
        self, branch: str, changes: Mapping[str, str | bytes | None], message: str, *, parent: str | None
    ) -> str:
        """One commit on ``branch`` whose parent is ``parent`` (None: a root commit), with ``changes`` applied to
        the parent's tree (None deletes a path). The branch moves only if it still points at ``parent``: a
        concurrent writer makes this raise ``GitError`` instead of losing a commit. Four ``git`` runs whatever
        the number of files (blobs are hashed in one batch)."""
        with tempfile.TemporaryDirectory(prefix="index-", dir=self.path) as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", *([parent] if parent else ["--empty"]), env=env)
            written = {path: content for path, content in changes.items() if content is not None}
            blob_files = []
            for i, content in enumerate(written.values()):
                blob = Path(tmp) / f"blob-{i}"
                blob.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
                blob_files.append(str(blob))
            listing = "".join(f"{name}\n" for name in blob_files).encode()
            shas = self.git("hash-object", "-w", "--no-filters", "--stdin-paths", input=listing).split()
            # --index-info: "mode sha<TAB>path", NUL-terminated with -z; mode 0 removes the path.
            records = [f"100644 {sha}\t{path}\0" for path, sha in zip(written, shas, strict=True)]
            records += [f"0 {ZERO_SHA}\t{path}\0" for path, content in changes.items() if content is None]
            self.git("update-index", "-z", "--index-info", input="".join(records).encode(), env=env)
            tree = self.git("write-tree", env=env).strip()
        args = ["commit-tree", tree] + (["-p", parent] if parent else []) + ["-F", "-"]
        sha = self.git(*args, input=message.encode("utf-8")).strip()
        self.update_ref(branch, sha, parent or ZERO_SHA)
        return sha

    def merge(self, base: str, head: str, message: str) -> str:
        """Merge branch ``head`` into branch ``base`` as a host's merge button does: a fast-forward when ``base``
        has not moved, else a merge commit (``git merge-tree --write-tree``; a conflict raises ``GitError``)."""
        base_sha, head_sha = self.branch(base), self.branch(head)
        if base_sha is None or head_sha is None:
            raise GitError(f"cannot merge {head} into {base}: a branch is missing")
        if self.is_ancestor(base_sha, head_sha):
            self.update_ref(base, head_sha, base_sha)
            return head_sha
        tree = self.git("merge-tree", "--write-tree", base_sha, head_sha).split("\n", 1)[0].strip()
        sha = self.git("commit-tree", tree, "-p", base_sha, "-p", head_sha, "-F", "-", input=message.encode()).strip()
        self.update_ref(base, sha, base_sha)
        return sha

    def diff(self, old: str, new: str) -> str:
        return self.git("diff", old, new)


# ---------------------------------------------------------------------------------------------------------------
# What both fakes share
# ---------------------------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------------------------
# GitHub
# ---------------------------------------------------------------------------------------------------------------

_GITHUB_DOCS = "https://docs.github.com/rest"
_GITHUB_REPO = re.compile(r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)(?P<rest>/.*)?")


class FakeGitHub(FakeGitHost):
    """A fake api.github.com (``api_prefix="/api/v3"`` for GitHub Enterprise Server). Routes:
    ``GET /repos/{o}/{r}``, ``GET .../git/ref/heads/{branch}``, ``POST .../git/refs``,
    ``GET .../git/trees/{sha}[?recursive=1]``, ``GET|PUT .../contents/{path}``, ``GET|POST .../pulls``,
    ``GET .../pulls/{n}``. ``tree_limit`` is the entry count above which a tree answers ``truncated: true``."""

    def __init__(self, *, web_url: str = "https://github.com", api_prefix: str = "", root: Path | None = None):
        self.API_PREFIX = api_prefix.rstrip("/")
        self.tree_limit = 100_000
        self._remaining = 5000
        super().__init__("fake-github", web_url=web_url, root=root)

    def file_url(self, repo: str, branch: str, path: str) -> str:
        """The link to a file as a person copies it from the browser (the ``argo-why.io/definition`` form)."""
        return f"{self.web_url}/{repo}/blob/{branch}/{path}"

    # -- plumbing ----------------------------------------------------------------------------------------------

    def _error_body(self, status: int, message: str | None) -> Obj:
        default = {401: "Bad credentials", 403: "Forbidden", 404: "Not Found", 409: "Conflict",
                   422: "Validation Failed", 429: "API rate limit exceeded", 500: "Server Error",
                   502: "Server Error", 503: "Service Unavailable"}.get(status, "Error")  # fmt: skip
        return {"message": message or default, "documentation_url": _GITHUB_DOCS, "status": str(status)}

    def _error(self, status: int, message: str, docs: str = _GITHUB_DOCS, **extra: Any) -> ApiError:
        return ApiError(status, {"message": message, **extra, "documentation_url": docs, "status": str(status)})

    def _not_found_route(self) -> ApiError:
        return self._error(404, "Not Found")

    def _not_found_repo(self) -> ApiError:
        return self._error(404, "Not Found", f"{_GITHUB_DOCS}/repos/repos#get-a-repository")

    def _rate_limit_answer(
        self, retry_after: int | None, reset_in: int | None, secondary: bool
    ) -> tuple[int, str | None, dict[str, str]]:
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        if reset_in is not None or not secondary:
            reset = int(time.time()) + (reset_in if reset_in is not None else 3600)
            headers.update({"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                            "X-RateLimit-Reset": str(reset), "X-RateLimit-Resource": "core"})  # fmt: skip
        if secondary:
            message = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
                       "If you reach out to GitHub Support for help, please include the request ID.")  # fmt: skip
            return 403, message, headers
        return (
            403,
            f"API rate limit exceeded for user ID 4242. Please wait until {headers['X-RateLimit-Reset']}.",
            headers,
        )

    def _authenticate(self, request: Request) -> None:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() not in ("bearer", "token") or not value.strip():
            raise self._error(401, "Requires authentication")
        if not secrets.compare_digest(value.strip(), self.token):
            raise self._error(401, "Bad credentials")

    def _error_response(self, err: ApiError) -> Response:
        response = super()._error_response(err)
        self._rate_headers(response)
        return response

    def _ok(self, body: Any, status: int = 200) -> Response:
        response = self._json(body, status)
        self._rate_headers(response)
        return response

    def _rate_headers(self, response: Response) -> None:
        # Every GitHub answer carries the primary rate limit's state.
        self._remaining = max(self._remaining - 1, 1)
        for name, value in (("X-RateLimit-Limit", "5000"), ("X-RateLimit-Remaining", str(self._remaining)),
                            ("X-RateLimit-Used", str(5000 - self._remaining)), ("X-RateLimit-Resource", "core"),
                            ("X-RateLimit-Reset", str(int(time.time()) + 3600))):  # fmt: skip
            response.headers.setdefault(name, value)
        response.headers.setdefault("X-GitHub-Api-Version-Selected", "2022-11-28")

    def _write_allowed(self, permission: str) -> None:
        if self.read_only:
            err = self._error(403, "Resource not accessible by personal access token")
            err.headers["X-Accepted-GitHub-Permissions"] = permission
            raise err

    # -- routes ------------------------------------------------------------------------------------------------

    def _route(self, request: Request, path: str) -> Response:
        m = _GITHUB_REPO.fullmatch(path)
        if m is None:
            raise self._not_found_route()
        full = f"{m['owner']}/{m['name']}"
        entry = self._lookup(full)
        rest, method = m["rest"] or "", request.method
        if rest == "" and method == "GET":
            return self._ok(self._repository(entry))
        if rest.startswith("/git/ref/heads/") and method == "GET":
            return self._get_ref(entry, rest[len("/git/ref/heads/") :])
        if rest == "/git/refs" and method == "POST":
            return self._create_ref(entry, self._body(request))
        if rest.startswith("/git/trees/") and method == "GET":
            return self._tree(entry, rest[len("/git/trees/") :], request.arg("recursive") not in ("", "0", "false"))
        if rest == "/contents" or rest.startswith("/contents/"):
            file_path = rest[len("/contents/") :]
            if method == "GET":
                return self._get_contents(entry, file_path, request.arg("ref") or entry.default_branch)
            if method == "PUT":
                return self._put_contents(entry, file_path, self._body(request))
        if rest == "/pulls" and method == "GET":
            return self._list_pulls(entry, request)
        if rest == "/pulls" and method == "POST":
            return self._create_pull(entry, self._body(request))
        if (pm := re.fullmatch(r"/pulls/(\d+)", rest)) and method == "GET":
            return self._get_pull(entry, int(pm[1]))
        raise self._not_found_route()

    def _api(self, entry: _Repo) -> str:
        return f"{self.api_url}/repos/{entry.path}"

    def _user(self) -> Obj:
        return {"login": TOKEN_USER, "id": 4242, "node_id": "U_kgDOAAAQkg",
                "avatar_url": f"{self.web_url}/avatar.png", "gravatar_id": "",
                "url": f"{self.api_url}/users/{TOKEN_USER}", "html_url": f"{self.web_url}/{TOKEN_USER}",
                "type": "User", "site_admin": False}  # fmt: skip

    def _repository(self, entry: _Repo) -> Obj:
        owner, name = entry.path.split("/")
        return {
            "id": entry.id, "node_id": f"R_{entry.id}", "name": name, "full_name": entry.path, "private": True,
            "owner": {**self._user(), "login": owner, "url": f"{self.api_url}/users/{owner}",
                      "html_url": f"{self.web_url}/{owner}", "type": "Organization"},
            "html_url": f"{self.web_url}/{entry.path}", "description": None, "fork": False, "url": self._api(entry),
            "git_url": f"git://{self.web_url.split('://')[-1]}/{entry.path}.git",
            "ssh_url": f"git@{self.web_url.split('://')[-1]}:{entry.path}.git",
            "clone_url": f"{self.web_url}/{entry.path}.git", "default_branch": entry.default_branch,
            "visibility": "private", "archived": False, "disabled": False, "created_at": entry.created_at,
            "updated_at": _now(), "pushed_at": _now(),
            "permissions": {"admin": False, "maintain": False, "push": not self.read_only, "triage": True,
                            "pull": True},
        }  # fmt: skip

    def _ref(self, entry: _Repo, branch: str, sha: str) -> Obj:
        return {"ref": f"refs/heads/{branch}", "node_id": f"REF_{hashlib.sha1(branch.encode()).hexdigest()[:12]}",
                "url": f"{self._api(entry)}/git/refs/heads/{quote(branch)}",
                "object": {"sha": sha, "type": "commit", "url": f"{self._api(entry)}/git/commits/{sha}"}}  # fmt: skip

    def _get_ref(self, entry: _Repo, branch: str) -> Response:
        sha = entry.git.branch(branch)
        if sha is None:
            raise self._error(404, "Not Found", f"{_GITHUB_DOCS}/git/refs#get-a-reference")
        return self._ok(self._ref(entry, branch, sha))

    def _create_ref(self, entry: _Repo, body: Obj) -> Response:
        docs = f"{_GITHUB_DOCS}/git/refs#create-a-reference"
        ref, sha = body.get("ref"), body.get("sha")
        if not isinstance(ref, str) or not isinstance(sha, str):
            raise self._error(422, 'Invalid request.\n\n"ref", "sha" weren\'t supplied.', docs)
        self._write_allowed("contents=write")
        if not ref.startswith("refs/heads/") or ref.count("/") < 2:
            raise self._error(422, "Reference name is invalid", docs)
        branch = ref[len("refs/heads/") :]
        if entry.git.object_type(sha) != "commit":
            raise self._error(422, "Object does not exist", docs)
        if entry.git.branch(branch) is not None:
            raise self._error(422, "Reference already exists", docs)
        if self._protected(entry, branch):
            raise self._error(422, "Repository rule violations found\n\nCannot create ref due to creations being "
                                   "restricted.\n\n", docs)  # fmt: skip
        try:
            entry.git.update_ref(branch, sha, ZERO_SHA)
        except Exception:
            raise self._error(422, f"{ref} is not a valid ref name.", docs) from None
        return self._ok(self._ref(entry, branch, sha), 201)

    def _tree(self, entry: _Repo, tree_ish: str, recursive: bool) -> Response:
        docs = f"{_GITHUB_DOCS}/git/trees#get-a-tree"
        kind = entry.git.object_type(tree_ish) if re.fullmatch(r"[0-9a-f]{40}", tree_ish) else None
        sha = tree_ish if kind == "tree" else entry.git.resolve(tree_ish)
        if sha is None:
            raise self._error(404, "Not Found", docs)
        tree_sha = entry.git.git("rev-parse", f"{sha}^{{tree}}").strip()
        items = [
            {"path": e.path, "mode": e.mode, "type": e.type, "sha": e.sha,
             **({"size": e.size} if e.size is not None else {}),
             "url": f"{self._api(entry)}/git/{'trees' if e.type == 'tree' else 'blobs'}/{e.sha}"}
            for e in entry.git.ls(tree_sha, recursive=recursive)
        ]  # fmt: skip
        truncated = len(items) > self.tree_limit
        return self._ok({"sha": tree_sha, "url": f"{self._api(entry)}/git/trees/{tree_sha}",
                         "tree": items[: self.tree_limit], "truncated": truncated})  # fmt: skip

    def _content_item(self, entry: _Repo, item: Entry, ref: str) -> Obj:
        kind = {"tree": "dir", "commit": "submodule"}.get(item.type, "symlink" if item.mode == SYMLINK_MODE else "file")
        api = f"{self._api(entry)}/contents/{quote(item.path)}?ref={quote(ref, safe='')}"
        git = f"{self._api(entry)}/git/{'trees' if item.type == 'tree' else 'blobs'}/{item.sha}"
        html = f"{self.web_url}/{entry.path}/{'tree' if item.type == 'tree' else 'blob'}/{ref}/{item.path}"
        download = f"{self.web_url}/{entry.path}/raw/{ref}/{item.path}" if kind == "file" else None
        return {"name": item.name, "path": item.path, "sha": item.sha, "size": item.size or 0, "url": api,
                "html_url": html, "git_url": git, "download_url": download, "type": kind,
                "_links": {"self": api, "git": git, "html": html}}  # fmt: skip

    def _get_contents(self, entry: _Repo, path: str, ref: str) -> Response:
        docs = f"{_GITHUB_DOCS}/repos/contents#get-repository-content"
        commit = entry.git.resolve(ref)
        if commit is None:
            raise self._error(404, f"No commit found for the ref {ref}", docs)
        path = path.strip("/")
        item = entry.git.entry(commit, path)
        if item is None:
            raise self._error(404, "Not Found", docs)
        if item.type == "tree":
            return self._ok([self._content_item(entry, e, ref) for e in entry.git.ls(commit, path=path)])
        body = self._content_item(entry, item, ref)
        if body["type"] == "file":
            data = entry.git.blob(item.sha)
            if len(data) > 1024 * 1024:  # 1-100 MB: the object comes without content
                body.update(encoding="none", content="")
            else:
                encoded = base64.b64encode(data).decode()
                # GitHub wraps the base64 at 60 characters and ends it with a newline.
                body.update(encoding="base64", content="".join(encoded[i : i + 60] + "\n"
                                                               for i in range(0, len(encoded), 60)))  # fmt: skip
        elif body["type"] == "symlink":
            body["target"] = entry.git.blob(item.sha).decode(errors="replace")
        return self._ok(body)

    def _put_contents(self, entry: _Repo, path: str, body: Obj) -> Response:
        docs = f"{_GITHUB_DOCS}/repos/contents#create-or-update-file-contents"
        for required in ("message", "content"):
            if not isinstance(body.get(required), str):
                raise self._error(422, f'Invalid request.\n\n"{required}" wasn\'t supplied.', docs)
        self._write_allowed("contents=write")
        branch = body.get("branch") or entry.default_branch
        parent = entry.git.branch(branch)
        if parent is None:
            raise self._error(404, f"Branch {branch} not found", docs)
        if self._protected(entry, branch):
            raise self._error(409, "Repository rule violations found\n\nChanges must be made through a pull "
                                   "request.\n\n", docs)  # fmt: skip
        try:
            data = base64.b64decode(body["content"], validate=True)
        except ValueError:
            raise self._error(422, "content is not valid Base64", docs) from None
        current = entry.git.entry(parent, path)
        if current is not None and current.type != "blob":
            raise self._error(422, f"{path} is a directory", docs)
        sha = body.get("sha")
        if current is not None and not sha:
            raise self._error(422, 'Invalid request.\n\n"sha" wasn\'t supplied.', docs)
        if sha and (current is None or current.sha != sha):
            raise self._error(409, f"{path} does not match {sha}", docs)
        try:
            commit = entry.git.commit(branch, {path: data}, str(body["message"]), parent=parent)
        except Exception:  # the branch moved between the check and the update
            raise self._error(409, f"{path} does not match {sha}", docs) from None
        item = entry.git.entry(commit, path)
        assert item is not None
        content = self._content_item(entry, item, branch)
        return self._ok({"content": content, "commit": self._commit(entry, commit)}, 200 if current else 201)

    def _commit(self, entry: _Repo, sha: str) -> Obj:
        info = entry.git.commit_info(sha)
        return {
            "sha": sha, "node_id": f"C_{sha[:12]}", "url": f"{self._api(entry)}/git/commits/{sha}",
            "html_url": f"{self.web_url}/{entry.path}/commit/{sha}",
            "author": {"name": info["author_name"], "email": info["author_email"], "date": info["authored"]},
            "committer": {"name": info["committer_name"], "email": info["committer_email"], "date": info["committed"]},
            "message": info["message"],
            "tree": {"sha": info["tree"], "url": f"{self._api(entry)}/git/trees/{info['tree']}"},
            "parents": [{"sha": p, "url": f"{self._api(entry)}/git/commits/{p}",
                         "html_url": f"{self.web_url}/{entry.path}/commit/{p}"} for p in info["parents"]],
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                             "verified_at": None},
        }  # fmt: skip

    def _pull_json(self, entry: _Repo, pr: FakePR, *, full: bool) -> Obj:
        api, html = f"{self._api(entry)}/pulls/{pr.number}", f"{self.web_url}/{entry.path}/pull/{pr.number}"
        owner = entry.path.split("/")[0]
        head_sha = entry.git.branch(pr.head) or pr.head_sha
        repo = self._repository(entry)

        def side(branch: str, sha: str) -> Obj:
            return {"label": f"{owner}:{branch}", "ref": branch, "sha": sha, "user": repo["owner"], "repo": repo}

        body: Obj = {
            "url": api, "id": pr.id, "node_id": f"PR_{pr.id}", "html_url": html, "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch", "issue_url": f"{self._api(entry)}/issues/{pr.number}",
            "commits_url": f"{api}/commits", "review_comments_url": f"{api}/comments",
            "review_comment_url": f"{self._api(entry)}/pulls/comments{{/number}}",
            "comments_url": f"{self._api(entry)}/issues/{pr.number}/comments",
            "statuses_url": f"{self._api(entry)}/statuses/{head_sha}", "number": pr.number,
            "state": "open" if pr.state == "open" else "closed", "locked": False, "title": pr.title,
            "user": self._user(), "body": pr.body, "labels": [], "milestone": None, "active_lock_reason": None,
            "created_at": pr.created_at, "updated_at": pr.updated_at, "closed_at": pr.closed_at,
            "merged_at": pr.merged_at, "merge_commit_sha": pr.merge_commit_sha, "assignee": None, "assignees": [],
            "requested_reviewers": [], "requested_teams": [], "head": side(pr.head, head_sha),
            "base": side(pr.base, entry.git.branch(pr.base) or ""),
            "_links": {"self": {"href": api}, "html": {"href": html}}, "author_association": "CONTRIBUTOR",
            "auto_merge": None, "draft": False,
        }  # fmt: skip
        if full:  # only the single-pull-request endpoint adds these
            body.update({
                "merged": pr.state == "merged", "mergeable": pr.state == "open" or None, "rebaseable": None,
                "mergeable_state": "clean" if pr.state == "open" else "unknown", "merged_by": None, "comments": 0,
                "review_comments": 0, "maintainer_can_modify": False, "commits": 1, "additions": 1, "deletions": 0,
                "changed_files": 1,
            })  # fmt: skip
        return body

    def _list_pulls(self, entry: _Repo, request: Request) -> Response:
        state = request.arg("state", "open")
        head, base = request.arg("head"), request.arg("base")
        owner = entry.path.split("/")[0]
        found = [
            pr for pr in reversed(entry.prs)  # newest first, GitHub's default sort
            if (state == "all" or (pr.state == "open") == (state == "open"))
            and (not head or head in (f"{owner}:{pr.head}", pr.head))
            and (not base or base == pr.base)
        ]  # fmt: skip
        per_page = int(request.arg("per_page", "30") or 30)
        return self._ok([self._pull_json(entry, pr, full=False) for pr in found[:per_page]])

    def _create_pull(self, entry: _Repo, body: Obj) -> Response:
        docs = f"{_GITHUB_DOCS}/pulls/pulls#create-a-pull-request"
        owner = entry.path.split("/")[0]
        head, base = str(body.get("head") or ""), str(body.get("base") or "")
        if not body.get("title") or not head or not base:
            missing = {
                "resource": "PullRequest",
                "code": "missing_field",
                "field": "title" if head and base else "head",
            }
            raise self._error(422, "Validation Failed", docs, errors=[missing])
        self._write_allowed("pull_requests=write")
        head = head.split(":", 1)[1] if head.startswith(f"{owner}:") else head
        head_sha, base_sha = entry.git.branch(head), entry.git.branch(base)
        for name, sha in (("base", base_sha), ("head", head_sha)):
            if sha is None:
                raise self._error(422, "Validation Failed", docs,
                                  errors=[{"resource": "PullRequest", "field": name, "code": "invalid"}])  # fmt: skip
        assert head_sha is not None and base_sha is not None
        if any(pr.state == "open" and pr.head == head and pr.base == base for pr in entry.prs):
            exists = f"A pull request already exists for {owner}:{head}."
            raise self._error(422, "Validation Failed", docs,
                              errors=[{"resource": "PullRequest", "code": "custom", "message": exists}])  # fmt: skip
        if entry.git.is_ancestor(head_sha, base_sha):
            raise self._error(422, "Validation Failed", docs, errors=[
                {"resource": "PullRequest", "code": "custom", "message": f"No commits between {base} and {head}"}
            ])  # fmt: skip
        pr = self._new_pr(entry, str(body["title"]), str(body.get("body") or ""), head, base, head_sha)
        return self._ok(self._pull_json(entry, pr, full=True), 201)

    def _get_pull(self, entry: _Repo, number: int) -> Response:
        try:
            pr = self._pr(entry, number)
        except KeyError:
            raise self._error(404, "Not Found", f"{_GITHUB_DOCS}/pulls/pulls#get-a-pull-request") from None
        return self._ok(self._pull_json(entry, pr, full=True))


# ---------------------------------------------------------------------------------------------------------------
# GitLab
# ---------------------------------------------------------------------------------------------------------------

_MR_STATE = {"open": "opened", "closed": "closed", "merged": "merged"}


class FakeGitLab(FakeGitHost):
    """A fake GitLab REST v4 under ``/api/v4``. Routes (``:id`` is the URL-encoded full path or the numeric id;
    ``:file_path`` and ``:branch`` URL-encoded): ``GET /projects/:id``, ``GET|POST
    /projects/:id/repository/branches[/:branch]``, ``GET|PUT|POST /projects/:id/repository/files/:file_path``,
    ``GET /projects/:id/repository/tree``, ``GET|POST /projects/:id/merge_requests``,
    ``GET /projects/:id/merge_requests/:iid``."""

    API_PREFIX = "/api/v4"

    def __init__(self, *, web_url: str | None = None, root: Path | None = None) -> None:
        super().__init__("fake-gitlab", web_url=web_url, root=root)

    def file_url(self, repo: str, branch: str, path: str) -> str:
        """The link to a file as a person copies it from the browser (the ``argo-why.io/definition`` form)."""
        return f"{self.web_url}/{repo}/-/blob/{branch}/{path}"

    # -- plumbing ----------------------------------------------------------------------------------------------

    def _error_body(self, status: int, message: str | None) -> Obj | str:
        if status == 429 and message is None:
            return "Retry later\n"  # Rack::Attack's throttled answer is plain text
        default = {400: "400 Bad request", 401: "401 Unauthorized", 403: "403 Forbidden", 404: "404 Not Found",
                   409: "409 Conflict", 422: "422 Unprocessable Entity", 500: "500 Internal Server Error",
                   502: "502 Bad Gateway", 503: "503 Service Unavailable"}.get(status, f"{status} Error")  # fmt: skip
        return {"message": message or default}

    def _not_found_route(self) -> ApiError:
        return ApiError(404, {"error": "404 Not Found"})

    def _not_found_repo(self) -> ApiError:
        return ApiError(404, {"message": "404 Project Not Found"})

    def _rate_limit_answer(
        self, retry_after: int | None, reset_in: int | None, secondary: bool
    ) -> tuple[int, str | None, dict[str, str]]:
        wait = reset_in if reset_in is not None else (retry_after if retry_after is not None else 60)
        reset = int(time.time()) + wait
        headers = {"RateLimit-Name": "throttle_authenticated_api", "RateLimit-Limit": "2000",
                   "RateLimit-Observed": "2001", "RateLimit-Remaining": "0", "RateLimit-Reset": str(reset),
                   "RateLimit-ResetTime": format_datetime(datetime.fromtimestamp(reset, UTC), usegmt=True)}  # fmt: skip
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return 429, None, headers  # the plain-text "Retry later" of _error_body

    def _authenticate(self, request: Request) -> None:
        token = request.headers.get("private-token") or self.bearer(request)
        if not token or not secrets.compare_digest(token, self.token):
            raise ApiError(401, {"message": "401 Unauthorized"})

    def _write_allowed(self) -> None:
        if self.read_only:
            raise ApiError(403, {"error": "insufficient_scope", "error_description": "The request requires higher "
                                 "privileges than provided by the access token.", "scope": "api"})  # fmt: skip

    @staticmethod
    def _params(request: Request) -> Obj:
        """Grape takes parameters from the query string and from a JSON body alike."""
        params: Obj = {k: v[0] for k, v in request.query.items() if v}
        params.update(FakeGitHost._body(request))
        return params

    # -- routes ------------------------------------------------------------------------------------------------

    def _route(self, request: Request, path: str) -> Response:
        # Route on the raw path: ids, file paths and branch names are single %2F-encoded segments.
        raw = request.raw_path[len(self.API_PREFIX) :] if request.raw_path else quote(path)
        segments = raw.split("/")[1:]
        if len(segments) < 2 or segments[0] != "projects":
            raise self._not_found_route()
        entry = self._project(unquote(segments[1]))
        rest, method = segments[2:], request.method
        params = self._params(request)
        if not rest and method == "GET":
            return self._json(self._project_json(entry))
        if rest[:2] == ["repository", "branches"]:
            if len(rest) == 2 and method == "POST":
                return self._create_branch(entry, params)
            if len(rest) > 2 and method == "GET":  # GitLab accepts the branch encoded or not (requirements /.*/)
                return self._get_branch(entry, unquote("/".join(rest[2:])))
        if rest[:2] == ["repository", "files"] and len(rest) == 3:
            file_path = unquote(rest[2])
            if method == "GET":
                return self._get_file(entry, file_path, params)
            if method in ("PUT", "POST"):
                return self._write_file(entry, file_path, params, create=method == "POST")
        if rest == ["repository", "tree"] and method == "GET":
            return self._tree(entry, params)
        if rest == ["merge_requests"]:
            if method == "GET":
                return self._list_mrs(entry, params)
            if method == "POST":
                return self._create_mr(entry, params)
        if len(rest) == 2 and rest[0] == "merge_requests" and rest[1].isdigit() and method == "GET":
            return self._get_mr(entry, int(rest[1]))
        raise self._not_found_route()

    def _project(self, ident: str) -> _Repo:
        for entry in self._repos.values():
            if ident in (entry.path, str(entry.id)):
                return entry
        raise self._not_found_repo()

    def _namespace(self, entry: _Repo) -> Obj:
        group, _, _ = entry.path.rpartition("/")
        return {"id": 100 + len(group), "name": group.rpartition("/")[2], "path": group.rpartition("/")[2],
                "kind": "group", "full_path": group, "parent_id": None, "avatar_url": None,
                "web_url": f"{self.web_url}/groups/{group}"}  # fmt: skip

    def _project_json(self, entry: _Repo) -> Obj:
        name = entry.path.rpartition("/")[2]
        host = self.web_url.split("://")[-1]
        return {
            "id": entry.id, "description": None, "name": name,
            "name_with_namespace": " / ".join(entry.path.split("/")), "path": name,
            "path_with_namespace": entry.path, "created_at": entry.created_at, "default_branch": entry.default_branch,
            "tag_list": [], "topics": [], "ssh_url_to_repo": f"git@{host}:{entry.path}.git",
            "http_url_to_repo": f"{self.web_url}/{entry.path}.git", "web_url": f"{self.web_url}/{entry.path}",
            "readme_url": None, "forks_count": 0, "avatar_url": None, "star_count": 0, "last_activity_at": _now(),
            "namespace": self._namespace(entry), "visibility": "private", "archived": False, "empty_repo": False,
        }  # fmt: skip

    def _commit_json(self, entry: _Repo, sha: str) -> Obj:
        info = entry.git.commit_info(sha)
        return {
            "id": sha, "short_id": sha[:8], "created_at": info["committed"], "parent_ids": info["parents"],
            "title": info["message"].split("\n", 1)[0], "message": info["message"], "author_name": info["author_name"],
            "author_email": info["author_email"], "authored_date": info["authored"],
            "committer_name": info["committer_name"], "committer_email": info["committer_email"],
            "committed_date": info["committed"], "trailers": {}, "extended_trailers": {},
            "web_url": f"{self.web_url}/{entry.path}/-/commit/{sha}",
        }  # fmt: skip

    def _branch_json(self, entry: _Repo, name: str, sha: str) -> Obj:
        protected = self._protected(entry, name)
        return {"name": name, "commit": self._commit_json(entry, sha), "merged": False, "protected": protected,
                "developers_can_push": not protected, "developers_can_merge": not protected,
                "can_push": not protected and not self.read_only, "default": name == entry.default_branch,
                "web_url": f"{self.web_url}/{entry.path}/-/tree/{name}"}  # fmt: skip

    def _get_branch(self, entry: _Repo, name: str) -> Response:
        sha = entry.git.branch(name)
        if sha is None:
            raise ApiError(404, {"message": "404 Branch Not Found"})
        return self._json(self._branch_json(entry, name, sha))

    def _create_branch(self, entry: _Repo, params: Obj) -> Response:
        for required in ("branch", "ref"):
            if not params.get(required):
                raise ApiError(400, {"error": f"{required} is missing"})
        self._write_allowed()
        name, ref = str(params["branch"]), str(params["ref"])
        if self._protected(entry, name):
            raise ApiError(403, {"message": "403 Forbidden - You are not allowed to create protected branches on "
                                            "this project."})  # fmt: skip
        if entry.git.branch(name) is not None:
            raise ApiError(400, {"message": "Branch already exists"})
        sha = entry.git.resolve(ref)
        if sha is None:
            raise ApiError(400, {"message": f"Failed to create branch '{name}': invalid reference name '{ref}'"})
        try:
            entry.git.update_ref(name, sha, ZERO_SHA)
        except Exception:
            raise ApiError(400, {"message": "Branch name is invalid"}) from None
        return self._json(self._branch_json(entry, name, sha), 201)

    def _get_file(self, entry: _Repo, path: str, params: Obj) -> Response:
        ref = str(params.get("ref") or "")
        if not ref:
            raise ApiError(400, {"error": "ref is missing"})
        commit = entry.git.resolve(ref)
        if commit is None:
            raise ApiError(404, {"message": "404 Commit Not Found"})
        item = entry.git.entry(commit, path) if path else None
        if item is None or item.type != "blob":
            raise ApiError(404, {"message": "404 File Not Found"})
        data = entry.git.blob(item.sha)
        body = {
            "file_name": item.name, "file_path": path, "size": len(data), "encoding": "base64",
            "content_sha256": hashlib.sha256(data).hexdigest(), "ref": ref, "blob_id": item.sha, "commit_id": commit,
            "last_commit_id": entry.git.last_commit_for(commit, path), "execute_filemode": item.mode == "100755",
            "content": base64.b64encode(data).decode(),
        }  # fmt: skip
        headers = {"X-Gitlab-Blob-Id": item.sha, "X-Gitlab-Commit-Id": commit, "X-Gitlab-File-Path": path,
                   "X-Gitlab-Last-Commit-Id": str(body["last_commit_id"]), "X-Gitlab-Ref": ref}  # fmt: skip
        return self._json(body, 200, headers)

    def _write_file(self, entry: _Repo, path: str, params: Obj, *, create: bool) -> Response:
        for required in ("branch", "content", "commit_message"):
            if params.get(required) in (None, ""):
                raise ApiError(400, {"error": f"{required} is missing"})
        self._write_allowed()
        branch = str(params["branch"])
        parent = entry.git.branch(branch)
        if parent is None:
            raise ApiError(400, {"message": "You can only create or edit files when you are on a branch"})
        if self._protected(entry, branch):
            raise ApiError(400, {"message": "You are not allowed to push into this branch"})
        current = entry.git.entry(parent, path)
        if create and current is not None:
            raise ApiError(400, {"message": "A file with this name already exists"})
        if not create and (current is None or current.type != "blob"):
            raise ApiError(400, {"message": "A file with this name doesn't exist"})
        last = params.get("last_commit_id")
        if last and not create:
            # Files::BaseService#file_has_changed?: compare the last commits touching the path on the branch and
            # as of the given commit (an unknown commit counts as "not changed", as GitLab does).
            on_branch = entry.git.last_commit_for(parent, path)
            as_of = entry.git.last_commit_for(str(last), path) if entry.git.object_type(str(last)) == "commit" else None
            if on_branch and as_of and on_branch != as_of:
                raise ApiError(400, {"message": "You are attempting to update a file that has changed since you "
                                                "started editing it."})  # fmt: skip
        content = str(params["content"])
        data = base64.b64decode(content) if params.get("encoding") == "base64" else content.encode("utf-8")
        try:
            entry.git.commit(branch, {path: data}, str(params["commit_message"]), parent=parent)
        except Exception:
            raise ApiError(400, {"message": "Could not update refs/heads/" + branch}) from None
        return self._json({"file_path": path, "branch": branch}, 201 if create else 200)

    def _tree(self, entry: _Repo, params: Obj) -> Response:
        ref = str(params.get("ref") or entry.default_branch)
        commit = entry.git.resolve(ref)
        if commit is None:
            raise ApiError(404, {"message": "404 Tree Not Found"})
        path = str(params.get("path") or "").strip("/")
        recursive = str(params.get("recursive", "false")).lower() in ("true", "1")
        item = entry.git.entry(commit, path)
        if item is None:
            raise ApiError(404, {"message": "404 invalid revision or path Not Found"})
        items = [] if item.type != "tree" else entry.git.ls(commit, path=path, recursive=recursive)
        per_page = min(max(int(params.get("per_page") or 20), 1), 100)
        page = max(int(params.get("page") or 1), 1)
        pages = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        body = [{"id": e.sha, "name": e.name, "type": e.type, "path": e.path, "mode": e.mode} for e in chunk]
        query = {k: str(v) for k, v in params.items() if k != "page"}
        base = f"{self.api_url}/projects/{entry.id}/repository/tree"

        def link(n: int) -> str:
            return f"{base}?{urlencode({**query, 'page': n})}"

        links = [f'<{link(page - 1)}>; rel="prev"'] if page > 1 else []
        links += [f'<{link(page + 1)}>; rel="next"'] if page < pages else []
        links += [f'<{link(1)}>; rel="first"', f'<{link(pages)}>; rel="last"']
        headers = {"X-Page": str(page), "X-Per-Page": str(per_page),
                   "X-Next-Page": str(page + 1) if page < pages else "",
                   "X-Prev-Page": str(page - 1) if page > 1 else "", "X-Total": str(len(items)),
                   "X-Total-Pages": str(pages), "Link": ", ".join(links)}  # fmt: skip
        return self._json(body, 200, headers)

    def _mr_json(self, entry: _Repo, pr: FakePR) -> Obj:
        author = {"id": 4242, "username": TOKEN_USER, "name": "argo-why", "state": "active", "locked": False,
                  "avatar_url": None, "web_url": f"{self.web_url}/{TOKEN_USER}"}  # fmt: skip
        return {
            "id": pr.id, "iid": pr.number, "project_id": entry.id, "title": pr.title, "description": pr.body,
            "state": _MR_STATE[pr.state], "created_at": pr.created_at, "updated_at": pr.updated_at,
            "merged_by": author if pr.state == "merged" else None,
            "merge_user": author if pr.state == "merged" else None,
            "merged_at": pr.merged_at, "closed_by": author if pr.state == "closed" else None,
            "closed_at": pr.closed_at if pr.state == "closed" else None, "target_branch": pr.base,
            "source_branch": pr.head, "user_notes_count": 0, "upvotes": 0, "downvotes": 0, "author": author,
            "assignees": [], "assignee": None, "reviewers": [], "source_project_id": entry.id,
            "target_project_id": entry.id, "labels": [], "draft": False, "work_in_progress": False, "milestone": None,
            "merge_when_pipeline_succeeds": False, "merge_status": "can_be_merged",
            "detailed_merge_status": "mergeable" if pr.state == "open" else "not_open",
            "sha": entry.git.branch(pr.head) or pr.head_sha, "merge_commit_sha": pr.merge_commit_sha,
            "squash_commit_sha": None, "discussion_locked": None, "should_remove_source_branch": None,
            "force_remove_source_branch": False, "reference": f"!{pr.number}",
            "references": {"short": f"!{pr.number}", "relative": f"!{pr.number}", "full": f"{entry.path}!{pr.number}"},
            "web_url": f"{self.web_url}/{entry.path}/-/merge_requests/{pr.number}",
            "time_stats": {"time_estimate": 0, "total_time_spent": 0, "human_time_estimate": None,
                           "human_total_time_spent": None},
            "squash": False, "task_completion_status": {"count": 0, "completed_count": 0}, "has_conflicts": False,
            "blocking_discussions_resolved": True,
        }  # fmt: skip

    def _list_mrs(self, entry: _Repo, params: Obj) -> Response:
        state = str(params.get("state") or "all")
        found = [
            pr for pr in reversed(entry.prs)
            if (state == "all" or _MR_STATE[pr.state] == state)
            and params.get("source_branch") in (None, pr.head)
            and params.get("target_branch") in (None, pr.base)
        ]  # fmt: skip
        per_page = min(int(params.get("per_page") or 20), 100)
        return self._json([self._mr_json(entry, pr) for pr in found[:per_page]])

    def _create_mr(self, entry: _Repo, params: Obj) -> Response:
        for required in ("source_branch", "target_branch", "title"):
            if not params.get(required):
                raise ApiError(400, {"error": f"{required} is missing"})
        self._write_allowed()
        head, base = str(params["source_branch"]), str(params["target_branch"])
        head_sha = entry.git.branch(head)
        if head_sha is None:
            raise ApiError(422, {"message": [f'Source branch "{head}" does not exist']})
        if entry.git.branch(base) is None:
            raise ApiError(422, {"message": [f'Target branch "{base}" does not exist']})
        if head == base:
            raise ApiError(409, {"message": ["You can't use same project/branch for source and target"]})
        for pr in entry.prs:
            if pr.state == "open" and pr.head == head:
                raise ApiError(409, {"message": [f"Another open merge request already exists for this source "
                                                 f"branch: !{pr.number}"]})  # fmt: skip
        pr = self._new_pr(entry, str(params["title"]), str(params.get("description") or ""), head, base, head_sha)
        return self._json(self._mr_json(entry, pr), 201)

    def _get_mr(self, entry: _Repo, iid: int) -> Response:
        try:
            return self._json(self._mr_json(entry, self._pr(entry, iid)))
        except KeyError:
            raise ApiError(404, {"message": "404 Not found"}) from None
