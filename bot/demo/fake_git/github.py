"""A fake api.github.com (REST v3; ``api_prefix="/api/v3"`` for GitHub Enterprise Server) over bare repositories.

Guarantees: only the endpoints argo-why uses are served (listed on ``FakeGitHub``), with GitHub's shapes; errors
are GitHub's ``{"message", "documentation_url", "status"}`` with its statuses (422 ``Reference already exists``,
409 ``PATH does not match SHA``, 422 ``Validation Failed`` for a second pull request); authentication is
``Authorization: Bearer`` or ``token``; every answer carries the primary rate limit's ``X-RateLimit-*`` headers,
and a rate limit answers 403 as GitHub does (primary or secondary); ``html_url`` links start with ``web_url``
(default ``https://github.com``); a tree larger than ``tree_limit`` entries answers ``truncated: true``.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bot.demo.fake_git.host import TOKEN_USER, ApiError, FakeGitHost, FakePR, _now, _Repo
from bot.demo.fake_git.repo import SYMLINK_MODE, ZERO_SHA, Entry, Obj
from bot.demo.serving import Request, Response

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
