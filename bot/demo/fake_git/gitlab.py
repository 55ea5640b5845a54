"""A fake GitLab (REST v4 under ``/api/v4``) over bare repositories.

Guarantees: only the endpoints argo-why uses are served (listed on ``FakeGitLab``), with GitLab's shapes; a project
is addressed by its URL-encoded full path or its numeric id, and file paths and branches by single %2F-encoded
segments, as on GitLab; parameters come from the query string and a JSON body alike (Grape); errors are GitLab's
``{"message"}`` or ``{"error"}`` with its statuses (400 ``Branch already exists``, 400 ``You are attempting to
update a file that has changed since you started editing it.``, 409 for a second merge request); authentication is
``PRIVATE-TOKEN`` or ``Authorization: Bearer``; a rate limit answers 429 ``Retry later`` with ``RateLimit-*``
headers; the tree is paginated with GitLab's ``X-*`` and ``Link`` headers; ``web_url`` links default to the fake's
own address, so that ``GIT_API_URL`` and the links share a host.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import quote, unquote, urlencode

from bot.demo.fake_git.host import TOKEN_USER, ApiError, FakeGitHost, FakePR, _now, _Repo
from bot.demo.fake_git.repo import ZERO_SHA, Obj
from bot.demo.serving import Request, Response

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
