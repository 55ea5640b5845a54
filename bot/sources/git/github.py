"""GitHub REST v3 (github.com at ``https://api.github.com``, GitHub Enterprise Server at ``https://HOST/api/v3``).

Calls, and what each reads from the answer (checked against docs.github.com, REST API version 2022-11-28, and the
schemas of github/rest-api-description as generated into php-api-clients/github and octokit/go-sdk-enterprise-server):

* ``GET /repos/{o}/{r}`` → ``default_branch``.
* ``GET /repos/{o}/{r}/git/ref/heads/{branch}`` (singular ``ref``: an exact match or 404) → ``object.sha``.
* ``GET /repos/{o}/{r}/contents/{path}?ref=`` → a file (``type: file``, ``content`` base64 with line breaks,
  ``encoding``, ``sha`` = blob sha) or, for a directory, an array of ``{type, name, path, sha}``; at most 1,000
  entries per directory; files of 1-100 MB come with ``encoding: none`` and no content.
* ``GET /repos/{o}/{r}/git/trees/{tree_sha}?recursive=1`` → ``tree[]`` (``path`` relative to that tree, ``type``
  blob/tree/commit, ``mode``) and ``truncated``. A recursive listing of ``a/b`` reads the tree sha of ``b`` from
  the listing of ``a`` and then that one tree: two calls whatever the size of the repository.
* ``POST /repos/{o}/{r}/git/refs`` ``{ref: refs/heads/B, sha}`` → 201; 422 ``Reference already exists``.
* ``PUT /repos/{o}/{r}/contents/{path}`` ``{message, content (base64), sha, branch}`` → 200/201 ``commit.sha``;
  409 when ``sha`` is not the file's current blob (``PATH does not match SHA``), 422 when it is missing for an
  existing file (``"sha" wasn't supplied``); a ruleset or protection refuses with ``Repository rule violations
  found`` / ``Protected branch update failed``.
* ``GET /repos/{o}/{r}/pulls?head=OWNER:BRANCH&state=open`` → pull requests (the list has no ``merged`` flag).
* ``POST /repos/{o}/{r}/pulls`` ``{title, head, base, body}`` → 201; 422 ``Validation Failed`` with
  ``errors[].message`` ``A pull request already exists for OWNER:BRANCH.``
* ``GET /repos/{o}/{r}/pulls/{n}`` → ``state`` open/closed plus ``merged``/``merged_at``.

Errors are ``{"message", "documentation_url", "status"}``. Rate limits (docs "Rate limits for the REST API"): 403
or 429 with ``x-ratelimit-remaining: 0`` and ``x-ratelimit-reset`` (epoch seconds), or a secondary limit (403/429,
a message saying so, often ``retry-after``; without it, wait at least a minute). A 403 for a fine-grained token
names what it lacks in ``X-Accepted-GitHub-Permissions`` (classic tokens: ``X-Accepted-OAuth-Scopes``).
"""

from __future__ import annotations

import base64
from urllib.parse import quote

import httpx

from bot.sources.git.base import ErrorKind, FileContent, Provider, PRState, PullRequest, RepoRef
from bot.sources.git.failures import Op, RateLimit, wait_seconds
from bot.sources.git.http import HTTPGitHost
from bot.sources.git.urls import UnsupportedRepo
from bot.wording import cli as wording

API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
_DIR_LIMIT = 1000  # the contents API lists at most 1,000 entries of a directory
_SYMLINK = "120000"


class GitHubClient(HTTPGitHost):
    """``async with GitHubClient("https://api.github.com", token) as gh: await gh.default_branch(repo)``."""

    provider: Provider = "github"
    PERMISSION = wording.GIT_PERMISSION_GITHUB

    def _auth_headers(self, token: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
        }

    # -- reads -----------------------------------------------------------------------------------------------------

    async def _do_default_branch(self, repo: RepoRef) -> str:
        op = Op("repo", repo)
        data = await self._fetch_object("GET", _base(repo), op, "default_branch")
        return str(data["default_branch"])

    async def _do_branch_head(self, repo: RepoRef, branch: str) -> str:
        op = Op("branch", repo, branch=branch)
        data = await self._fetch_object("GET", f"{_base(repo)}/git/ref/heads/{quote(branch)}", op, "object")
        return str(self._object(data["object"], op, "sha")["sha"])

    async def _do_get_file(self, repo: RepoRef, path: str, ref: str) -> FileContent:
        op = Op("file", repo, path=path, ref=ref)
        data = await self._fetch("GET", _contents(repo, path), op, params={"ref": ref})
        if isinstance(data, list):
            self._fail("not-found", wording.GIT_NOT_A_FILE, op, 200, what="directory")
        data = self._object(data, op, "type", "sha")
        if data["type"] != "file":  # a symlink to a directory, a submodule
            self._fail("not-found", wording.GIT_NOT_A_FILE, op, 200, what=str(data["type"]))
        data = self._object(data, op, "content", "encoding")
        if data["encoding"] != "base64":  # "none": 1-100 MB, the content is not sent
            self._fail("unreadable", wording.GIT_FILE_TOO_LARGE, op, 200)
        sha = str(data["sha"])
        return FileContent(path=path, text=self._text(data["content"], op), sha=sha, ref=ref, version=sha)

    async def _do_list_files(self, repo: RepoRef, path: str, ref: str, recursive: bool) -> list[str]:
        op = Op("list", repo, path=path, ref=ref)
        if not recursive:
            return [str(e["path"]) for e in await self._directory(repo, path, ref, op) if e["type"] == "file"]
        if path:
            parent, _, name = path.rpartition("/")
            entry = next((e for e in await self._directory(repo, parent, ref, op) if e["name"] == name), None)
            if entry is None:
                self._fail("not-found", wording.GIT_NOT_FOUND, op, 404, detail="no such directory")
            if entry["type"] != "dir":
                self._fail("not-found", wording.GIT_NOT_A_DIRECTORY, op, 200)
            tree = str(entry["sha"])
        else:
            # The trees endpoint takes a sha or a branch name; a name with "/" would read as more path.
            tree = ref if "/" not in ref else await self._do_branch_head(repo, ref)
        url = f"{_base(repo)}/git/trees/{quote(tree, safe='')}"
        data = await self._fetch_object("GET", url, op, "tree", "truncated", params={"recursive": "1"})
        if data["truncated"]:
            self._fail("unreadable", wording.GIT_TREE_TOO_LARGE, op, 200, limit="GitHub lists 100,000 at most")
        prefix = f"{path}/" if path else ""
        return [
            prefix + str(e["path"])
            for e in (self._object(e, op, "path", "type") for e in self._list(data["tree"], op))
            if e["type"] == "blob" and e.get("mode") != _SYMLINK
        ]

    async def _directory(self, repo: RepoRef, path: str, ref: str, op: Op) -> list[dict[str, object]]:
        data = await self._fetch("GET", _contents(repo, path), op, params={"ref": ref})
        if isinstance(data, dict):
            self._fail("not-found", wording.GIT_NOT_A_DIRECTORY, op, 200)
        entries = [self._object(e, op, "type", "name", "path", "sha") for e in self._list(data, op)]
        if len(entries) >= _DIR_LIMIT:
            self._fail("unreadable", wording.GIT_TREE_TOO_LARGE, op, 200, limit=f"{_DIR_LIMIT:,} per directory")
        return entries

    async def _do_open_prs(self, repo: RepoRef, head_branch: str) -> list[PullRequest]:
        op = Op("find-pr", repo, branch=head_branch)
        owner = repo.path.split("/")[0]
        params = {"head": f"{owner}:{head_branch}", "state": "open", "per_page": "10"}
        items = self._list(await self._fetch("GET", f"{_base(repo)}/pulls", op, params=params), op)
        return [self._pull(item, op) for item in items]

    async def _do_get_pr(self, repo: RepoRef, number: int) -> PullRequest:
        op = Op("get-pr", repo, number=number)
        return self._pull(await self._fetch("GET", f"{_base(repo)}/pulls/{number}", op), op)

    # -- writes ----------------------------------------------------------------------------------------------------

    async def _do_create_branch(self, repo: RepoRef, branch: str, from_sha: str) -> None:
        op = Op("create-branch", repo, branch=branch, ref=from_sha)
        await self._call("POST", f"{_base(repo)}/git/refs", op, body={"ref": f"refs/heads/{branch}", "sha": from_sha})

    async def _do_commit_file(
        self, repo: RepoRef, branch: str, path: str, text: str, message: str, previous_sha: str | None
    ) -> str:
        op = Op("commit", repo, path=path, branch=branch, ref=branch)
        body: dict[str, object] = {
            "message": message,
            "content": base64.b64encode(text.encode("utf-8")).decode("ascii"),
            "branch": branch,
        }
        if previous_sha:
            body["sha"] = previous_sha
        data = await self._fetch_object("PUT", _contents(repo, path), op, "commit", body=body)
        return str(self._object(data["commit"], op, "sha")["sha"])

    async def _do_open_pr(self, repo: RepoRef, head: str, base: str, title: str, body: str) -> PullRequest:
        op = Op("open-pr", repo, branch=head, ref=base)
        payload = {"title": title, "head": head, "base": base, "body": body}
        return self._pull(await self._fetch("POST", f"{_base(repo)}/pulls", op, body=payload), op)

    # -- answers ---------------------------------------------------------------------------------------------------

    def _pull(self, item: object, op: Op) -> PullRequest:
        data = self._object(item, op, "number", "html_url", "state", "head", "base")
        head = self._object(data["head"], op, "ref")
        base = self._object(data["base"], op, "ref")
        state: PRState
        if data.get("merged") or data.get("merged_at"):
            state = "merged"
        else:
            state = "open" if data["state"] == "open" else "closed"
        return PullRequest(
            number=int(data["number"]),
            url=str(data["html_url"]),
            state=state,
            head=str(head["ref"]),
            base=str(base["ref"]),
            title=str(data.get("title") or ""),
        )

    def _rate_limit(self, resp: httpx.Response, detail: str) -> RateLimit | None:
        if resp.status_code not in (403, 429):
            return None
        if "retry-after" in resp.headers or resp.headers.get("x-ratelimit-remaining") == "0":
            return RateLimit(wait_seconds(resp, "x-ratelimit-reset"))
        if resp.status_code == 429 or "rate limit" in detail.lower():
            return RateLimit(60.0)  # a secondary limit without a header: "wait for at least one minute"
        return None

    def _classify(self, status: int, detail: str, op: Op) -> ErrorKind | None:
        if "rule violation" in detail or "protected branch" in detail:
            return "protected"
        if status == 409 and op.name == "commit":
            return "conflict"
        if status == 422:
            if "reference already exists" in detail:
                return "branch-exists"
            if "pull request already exists" in detail:
                return "pr-exists"
            if op.name == "commit" and "sha" in detail:
                return "conflict"
        return None

    def _needed(self, resp: httpx.Response) -> str:
        if permissions := resp.headers.get("x-accepted-github-permissions"):
            return wording.GIT_PERMISSION_NEEDED.format(permissions=permissions)
        if scopes := resp.headers.get("x-accepted-oauth-scopes"):
            return wording.GIT_PERMISSION_NEEDED.format(permissions=f"scopes {scopes}")
        return ""


def _base(repo: RepoRef) -> str:
    owner, _, name = repo.path.partition("/")
    if not owner or not name or "/" in name:
        raise UnsupportedRepo(f"{repo}: a GitHub repository path is OWNER/REPO")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def _contents(repo: RepoRef, path: str) -> str:
    return f"{_base(repo)}/contents/{quote(path)}" if path else f"{_base(repo)}/contents"
