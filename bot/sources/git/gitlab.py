"""GitLab REST v4 (``https://HOST/api/v4``, gitlab.com or self-managed, nested groups included).

Calls, and what each reads from the answer (checked against GitLab's own ``lib/api/files.rb``,
``lib/api/repositories.rb``, ``app/services/files/*``, ``app/services/branches/*``, ``Commits::CreateService`` and
the merge request API helpers, and the API docs):

* The project id is the URL-encoded full path (``group%2Fsub%2Frepo``); file paths and branch names in the URL
  path are URL-encoded the same way (``apps%2Fshop.yaml``).
* ``GET /projects/:id`` → ``default_branch``.
* ``GET /projects/:id/repository/branches/:branch`` → ``commit.id``; 404 ``404 Branch Not Found``.
* ``GET /projects/:id/repository/files/:file_path?ref=`` → ``content`` (base64), ``encoding``, ``blob_id``,
  ``last_commit_id`` (the last commit that touched the file: what ``last_commit_id`` of an update compares with);
  404 ``404 File Not Found`` / ``404 Commit Not Found``.
* ``GET /projects/:id/repository/tree?path=&ref=&recursive=&per_page=100&page=`` → ``[{id, name, type
  (blob/tree/commit), path (from the root), mode}]``; pages follow ``X-Next-Page`` (or ``Link: rel="next"``). A
  path that does not exist answers 404 since GitLab 16.5 (an empty list before).
* ``POST /projects/:id/repository/branches`` ``{branch, ref}`` → 201; 400 ``Branch already exists``.
* ``PUT /projects/:id/repository/files/:file_path`` ``{branch, content, commit_message, last_commit_id}`` → 200
  ``{file_path, branch}`` (no commit id: the branch is read once more for it); 400 ``You are attempting to update a
  file that has changed since you started editing it.``; 400 ``You are not allowed to push into this branch``
  (protected); 403 without push rights. ``POST`` creates a file.
* ``GET /projects/:id/merge_requests?source_branch=&state=opened`` → merge requests.
* ``POST /projects/:id/merge_requests`` ``{source_branch, target_branch, title, description}`` → 201; 409
  ``["Another open merge request already exists for this source branch: !N"]``.
* ``GET /projects/:id/merge_requests/:iid`` → ``state`` opened/closed/locked/merged, ``web_url``.

Errors are ``{"message": ...}`` where the message is a string, a list, or a map of field to messages; parameter
errors are ``{"error": ...}``; OAuth scope errors ``{"error": "insufficient_scope", "error_description", "scope"}``.
Rate limits answer 429 with ``Retry-After`` and ``RateLimit-Reset`` (epoch seconds).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import parse_qs, quote, urlsplit

import httpx

from bot.sources.git.base import ErrorKind, FileContent, Provider, PRState, PullRequest, RepoRef
from bot.sources.git.failures import Op, RateLimit, wait_seconds
from bot.sources.git.http import HTTPGitHost
from bot.wording import cli as wording

_PER_PAGE = 100
_MAX_PAGES = 50  # 5,000 entries: a directory of Application manifests is far smaller
_SYMLINK = "120000"
_STATES: dict[str, PRState] = {"opened": "open", "locked": "open", "merged": "merged", "closed": "closed"}
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


class GitLabClient(HTTPGitHost):
    """``async with GitLabClient("https://gitlab.example.com/api/v4", token) as gl: ...``. ``auth`` chooses the
    header: ``PRIVATE-TOKEN`` (personal, project and group access tokens) or ``Authorization: Bearer`` (OAuth)."""

    provider: Provider = "gitlab"
    PERMISSION = wording.GIT_PERMISSION_GITLAB

    def __init__(
        self, api_url: str, token: str, *, auth: Literal["private-token", "bearer"] = "private-token", **kwargs: Any
    ) -> None:
        self._auth = auth
        super().__init__(api_url, token, **kwargs)

    def _auth_headers(self, token: str) -> dict[str, str]:
        if self._auth == "bearer":
            return {"Authorization": f"Bearer {token}"}
        return {"PRIVATE-TOKEN": token}

    # -- reads -----------------------------------------------------------------------------------------------------

    async def _do_default_branch(self, repo: RepoRef) -> str:
        op = Op("repo", repo)
        data = await self._fetch_object("GET", _project(repo), op, "default_branch")
        if not data["default_branch"]:  # an empty project has no branch at all
            self._fail("not-found", wording.GIT_NOT_FOUND, op, 200, detail="the project has no default branch")
        return str(data["default_branch"])

    async def _do_branch_head(self, repo: RepoRef, branch: str) -> str:
        op = Op("branch", repo, branch=branch)
        url = f"{_project(repo)}/repository/branches/{quote(branch, safe='')}"
        data = await self._fetch_object("GET", url, op, "commit")
        return str(self._object(data["commit"], op, "id")["id"])

    async def _do_get_file(self, repo: RepoRef, path: str, ref: str) -> FileContent:
        op = Op("file", repo, path=path, ref=ref)
        keys = ("content", "encoding", "blob_id", "last_commit_id")
        data = await self._fetch_object("GET", _file(repo, path), op, *keys, params={"ref": ref})
        if data["encoding"] != "base64":
            self._fail("unreadable", wording.GIT_BAD_RESPONSE, op, 200, detail=f"encoding {data['encoding']!r}")
        return FileContent(path=path, text=self._text(data["content"], op), sha=str(data["blob_id"]), ref=ref,
                           version=str(data["last_commit_id"]))  # fmt: skip

    async def _do_list_files(self, repo: RepoRef, path: str, ref: str, recursive: bool) -> list[str]:
        op = Op("list", repo, path=path, ref=ref)
        params = {"ref": ref, "recursive": "true" if recursive else "false", "per_page": str(_PER_PAGE)}
        if path:
            params["path"] = path
        files: list[str] = []
        page: str | None = "1"
        for _ in range(_MAX_PAGES):
            resp = await self._call(
                "GET", f"{_project(repo)}/repository/tree", op, params={**params, "page": page or "1"}
            )
            for entry in self._list(self._json(resp, op), op):
                entry = self._object(entry, op, "type", "path")
                if entry["type"] == "blob" and entry.get("mode") != _SYMLINK:
                    files.append(str(entry["path"]))
            page = _next_page(resp)
            if page is None:
                return files
        self._fail("unreadable", wording.GIT_TREE_TOO_LARGE, op, 200, limit=f"{_MAX_PAGES * _PER_PAGE:,} entries")

    async def _do_open_prs(self, repo: RepoRef, head_branch: str) -> list[PullRequest]:
        op = Op("find-pr", repo, branch=head_branch)
        params = {"source_branch": head_branch, "state": "opened", "per_page": "10"}
        items = self._list(await self._fetch("GET", f"{_project(repo)}/merge_requests", op, params=params), op)
        return [self._merge_request(item, op) for item in items]

    async def _do_get_pr(self, repo: RepoRef, number: int) -> PullRequest:
        op = Op("get-pr", repo, number=number)
        return self._merge_request(await self._fetch("GET", f"{_project(repo)}/merge_requests/{number}", op), op)

    # -- writes ----------------------------------------------------------------------------------------------------

    async def _do_create_branch(self, repo: RepoRef, branch: str, from_sha: str) -> None:
        op = Op("create-branch", repo, branch=branch, ref=from_sha)
        await self._call("POST", f"{_project(repo)}/repository/branches", op, body={"branch": branch, "ref": from_sha})

    async def _do_commit_file(
        self, repo: RepoRef, branch: str, path: str, text: str, message: str, previous_sha: str | None
    ) -> str:
        op = Op("commit", repo, path=path, branch=branch, ref=branch)
        body: dict[str, Any] = {"branch": branch, "content": text, "commit_message": message, "encoding": "text"}
        if previous_sha:
            body["last_commit_id"] = previous_sha
        await self._call("PUT" if previous_sha else "POST", _file(repo, path), op, body=body)
        return await self._do_branch_head(repo, branch)  # the answer is only {file_path, branch}

    async def _do_open_pr(self, repo: RepoRef, head: str, base: str, title: str, body: str) -> PullRequest:
        op = Op("open-pr", repo, branch=head, ref=base)
        payload = {"source_branch": head, "target_branch": base, "title": title, "description": body}
        return self._merge_request(await self._fetch("POST", f"{_project(repo)}/merge_requests", op, body=payload), op)

    # -- answers ---------------------------------------------------------------------------------------------------

    def _merge_request(self, item: object, op: Op) -> PullRequest:
        data = self._object(item, op, "iid", "web_url", "state", "source_branch", "target_branch")
        state = _STATES.get(str(data["state"]))
        if state is None:
            self._fail("unreadable", wording.GIT_BAD_RESPONSE, op, 200, detail=f"merge request state {data['state']!r}")
        return PullRequest(
            number=int(data["iid"]),
            url=str(data["web_url"]),
            state=state,
            head=str(data["source_branch"]),
            base=str(data["target_branch"]),
            title=str(data.get("title") or ""),
        )

    def _rate_limit(self, resp: httpx.Response, detail: str) -> RateLimit | None:
        if resp.status_code != 429:
            return None
        return RateLimit(wait_seconds(resp, "ratelimit-reset"))

    def _classify(self, status: int, detail: str, op: Op) -> ErrorKind | None:
        if "not allowed to push" in detail or "protected branch" in detail:
            return "protected"
        if status == 400 and op.name == "create-branch" and "already exists" in detail:
            return "branch-exists"
        if op.name == "commit" and (status == 409 or "has changed since" in detail or "already exists" in detail):
            return "conflict"  # stale, or a file created meanwhile where a new one was to be created
        if status == 409 and op.name == "open-pr":
            return "pr-exists"
        return None


def _project(repo: RepoRef) -> str:
    return f"/projects/{quote(repo.path, safe='')}"


def _file(repo: RepoRef, path: str) -> str:
    return f"{_project(repo)}/repository/files/{quote(path, safe='')}"


def _next_page(resp: httpx.Response) -> str | None:
    """The next page number: ``X-Next-Page`` (empty on the last page), else the ``page`` of ``Link: rel="next"``
    (GitLab leaves out ``X-Total`` and friends for large collections, never the links)."""
    if "x-next-page" in resp.headers:
        return resp.headers["x-next-page"].strip() or None
    if m := _NEXT_LINK.search(resp.headers.get("link", "")):
        pages = parse_qs(urlsplit(m[1]).query).get("page")
        return pages[0] if pages else None
    return None
