"""The Git host layer: URL parsing (pure), the fake hosts (do they answer like GitHub and GitLab?), and the real
GitHub and GitLab clients against those fakes over HTTP, checked with plain ``git`` in the bare repositories."""

from __future__ import annotations

import base64
import functools
import hashlib
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config import ConfigError
from bot.sources.git import (
    GitHost,
    GitHostError,
    GitHubClient,
    GitLabClient,
    RepoRef,
    UnsupportedRepo,
    accepted_hosts,
    check_ref,
    check_repo_path,
    make_git_host,
    parse_repo_url,
    parse_web_url,
    web_url_candidates,
)
from bot.sources.git.gitlab import _next_page
from tests.fakes.git import BareRepo, FakeGitHost, FakeGitHub, FakeGitLab

T = TypeVar("T")

GHE_API = "https://ghe.example.com/api/v3"
GITLAB_API = "https://gitlab.example.com/api/v4"

SHOP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop  # the storefront
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://github.com/acme/platform.git
    path: apps/shop
  destination:
    server: https://kubernetes.default.svc
    namespace: shop
"""
FILES: dict[str, str | bytes] = {
    "apps/shop.yaml": SHOP,
    "apps/payments/app.yaml": "kind: Application\nmetadata:\n  name: payments\n",
    "apps/payments/values.yaml": "replicas: 2\n",
    "clusters/prod/root.yaml": "kind: Application\nmetadata:\n  name: root\n",
    "README.md": "# platform\n",
}


# ---------------------------------------------------------------------------------------------------------------
# URL parsing (pure)
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "provider", "api_url", "expected"),
    [
        ("https://github.com/acme/platform/blob/main/apps/shop.yaml", "github", None,
         ("github.com", "acme/platform", "main", "apps/shop.yaml")),
        ("https://github.com/acme/platform/blob/main/apps/shop.yaml?plain=1#L12", "github", "https://api.github.com",
         ("github.com", "acme/platform", "main", "apps/shop.yaml")),
        ("https://github.com/acme/platform/raw/release%2F1.2/apps/my%20app.yaml", "github", None,
         ("github.com", "acme/platform", "release/1.2", "apps/my app.yaml")),
        ("https://GHE.example.com/acme/platform/blob/4b1e0c7d2a9f8e3b6c5d4a1f0e9d8c7b6a5f4e3d/x.yaml", "github",
         GHE_API, ("ghe.example.com", "acme/platform", "4b1e0c7d2a9f8e3b6c5d4a1f0e9d8c7b6a5f4e3d", "x.yaml")),
        ("https://gitlab.example.com/group/sub/repo/-/blob/main/apps/shop.yaml", "gitlab", GITLAB_API,
         ("gitlab.example.com", "group/sub/repo", "main", "apps/shop.yaml")),
        ("https://gitlab.example.com:443/group/repo/-/raw/main/a/b/c.yaml", "gitlab", GITLAB_API,
         ("gitlab.example.com", "group/repo", "main", "a/b/c.yaml")),
        ("https://example.com/gitlab/group/repo/-/blob/main/app.yaml", "gitlab", "https://example.com/gitlab/api/v4",
         ("example.com", "group/repo", "main", "app.yaml")),  # relative URL root
        ("http://127.0.0.1:8929/g/r/-/blob/dev/app.yaml", "gitlab", "http://127.0.0.1:8929/api/v4",
         ("127.0.0.1:8929", "g/r", "dev", "app.yaml")),
    ],
)  # fmt: skip
def test_parse_web_url(url: str, provider: str, api_url: str | None, expected: tuple[str, str, str, str]) -> None:
    repo, branch, path = parse_web_url(url, provider, api_url)
    assert (repo.host, repo.path, branch, path) == expected
    assert repo.provider == provider


@pytest.mark.parametrize(
    "url",
    ["https://github.com/acme/platform/blob/main/x.yaml", "https://github.com/acme/platform.git",
     "git@github.com:acme/platform.git"],
)  # fmt: skip
def test_with_github_enterprise_a_github_com_repository_is_refused_in_words(url: str) -> None:
    parse = parse_web_url if "/blob/" in url else parse_repo_url
    with pytest.raises(UnsupportedRepo) as err:
        parse(url, "github", GHE_API)
    assert "on github.com, but GIT_API_URL points at GitHub Enterprise (ghe.example.com)" in str(err.value)


@pytest.mark.parametrize(
    ("tail", "readings"),
    [
        ("blob/main/shop.yaml", [("main", "shop.yaml")]),
        ("blob/main/apps/shop.yaml", [("main", "apps/shop.yaml"), ("main/apps", "shop.yaml")]),
        ("blob/release/1.2/apps/shop.yaml", [("release", "1.2/apps/shop.yaml"), ("release/1.2", "apps/shop.yaml"),
                                             ("release/1.2/apps", "shop.yaml")]),
        ("blob/release%2F1.2/apps/shop.yaml", [("release/1.2", "apps/shop.yaml"), ("release/1.2/apps", "shop.yaml")]),
        ("raw/feature/x/y.yaml", [("feature", "x/y.yaml"), ("feature/x", "y.yaml")]),
    ],
)  # fmt: skip
def test_a_link_whose_branch_may_hold_a_slash_gives_every_reading(tail: str, readings: list[tuple[str, str]]) -> None:
    repo, candidates = web_url_candidates(f"https://github.com/acme/platform/{tail}", "github", None)
    assert repo.path == "acme/platform" and candidates == readings
    assert parse_web_url(f"https://github.com/acme/platform/{tail}", "github", None)[1:] == readings[0]


@pytest.mark.parametrize(
    ("url", "provider", "api_url", "reason"),
    [
        ("https://github.com/acme/platform/blob/main/../secrets.yaml", "github", None, ". or .. segment"),
        ("https://github.com/acme/platform/blob/main/apps/%2e%2e/x.yaml", "github", None, "percent-encoding"),
        ("https://github.com/acme/platform/blob/main/apps%2F..%2Fx.yaml", "github", None, "percent-encoding"),
        ("https://github.com/acme/platform/blob/main/apps%5Cx.yaml", "github", None, "percent-encoding"),
        ("https://github.com/acme/platform/blob/main/a//b.yaml", "github", None, "empty segment"),
        ("https://github.com/acme/platform/blob/main/apps/", "github", None, "empty segment"),
        ("https://github.com/acme/platform/blob/main/a\\b.yaml", "github", None, "backslash"),
        ("https://github.com/acme/platform/blob/main/a%00.yaml", "github", None, "percent-encoding"),
        ("https://github.com/acme/platform/blob/ma..in/x.yaml", "github", None, "branch or ref name"),
        ("https://github.com/acme/platform/blob/-x/x.yaml", "github", None, "branch or ref name"),
        ("https://github.com/acme/platform/tree/main/apps", "github", None, "not a link to a file"),
        ("https://github.com/acme/platform", "github", None, "not a link to a file"),
        ("https://github.com/acme/plat%2Fform/blob/main/x.yaml", "github", None, "repository path segment"),
        ("https://evil.example.com/acme/platform/blob/main/x.yaml", "github", None, "not the configured Git host"),
        ("https://github.com.evil.example.com/acme/p/blob/main/x", "github", None, "not the configured Git host"),
        ("https://api.github.com/acme/platform/blob/main/x.yaml", "github", None, "not the configured Git host"),
        ("https://github.com/acme/platform/blob/main/x.yaml", "gitlab", GITLAB_API, "not the configured Git host"),
        ("https://gitlab.example.com:8443/g/r/-/blob/main/x", "gitlab", GITLAB_API, "not the configured Git host"),
        ("https://gitlab.example.com/g/r/blob/main/x.yaml", "gitlab", GITLAB_API, "not a link to a file"),
        ("https://gitlab.example.com/-/blob/main/x.yaml", "gitlab", GITLAB_API, "GROUP/REPO"),
        ("ftp://github.com/acme/platform/blob/main/x.yaml", "github", None, "not a link to a file"),
        ("https://[::1/acme/platform/blob/main/x", "github", None, "not a link to a file"),
        ("https://github.com:99999/a/b/blob/main/x", "github", None, "not a link to a file"),
        ("https://gitlab.example.com/g/r/-/blob/main/x.yaml", "gitlab", None, "GIT_API_URL is not set"),
        ("https://github.com/acme/platform/blob/main/x.yaml", "bitbucket", None, "supports github and gitlab"),
    ],
)  # fmt: skip
def test_parse_web_url_refuses(url: str, provider: str, api_url: str | None, reason: str) -> None:
    with pytest.raises(UnsupportedRepo) as err:
        parse_web_url(url, provider, api_url)
    assert reason in str(err.value)


@pytest.mark.parametrize(
    ("url", "provider", "api_url", "host", "path"),
    [
        ("https://github.com/acme/platform.git", "github", None, "github.com", "acme/platform"),
        ("https://github.com/acme/platform", "github", None, "github.com", "acme/platform"),
        ("https://github.com/acme/platform/", "github", None, "github.com", "acme/platform"),
        ("git@github.com:acme/platform.git", "github", None, "github.com", "acme/platform"),
        ("ssh://git@github.com/acme/platform.git", "github", None, "github.com", "acme/platform"),
        ("git://github.com/acme/platform.git", "github", None, "github.com", "acme/platform"),
        # git daemon's port is not the API's: over git:// only host names are compared (the e2e tests' repoURL)
        ("git://127.0.0.1:9418/acme/gitops.git", "github", "http://127.0.0.1:8765", "127.0.0.1:8765", "acme/gitops"),
        ("https://x-access-token:s3cret@github.com/acme/platform.git", "github", None, "github.com", "acme/platform"),
        ("git@ghe.example.com:acme/platform.git", "github", GHE_API, "ghe.example.com", "acme/platform"),
        ("https://gitlab.example.com/group/sub/repo.git", "gitlab", GITLAB_API, "gitlab.example.com", "group/sub/repo"),
        ("ssh://git@gitlab.example.com:2222/group/repo.git", "gitlab", GITLAB_API, "gitlab.example.com", "group/repo"),
        ("git@gitlab.example.com:group/sub/sub2/repo.git", "gitlab", GITLAB_API, "gitlab.example.com",
         "group/sub/sub2/repo"),
        ("https://example.com/gitlab/group/repo.git", "gitlab", "https://example.com/gitlab/api/v4", "example.com",
         "group/repo"),
    ],
)  # fmt: skip
def test_parse_repo_url(url: str, provider: str, api_url: str | None, host: str, path: str) -> None:
    assert parse_repo_url(url, provider, api_url) == RepoRef(provider, host, path)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "provider", "api_url", "reason"),
    [
        ("https://bitbucket.org/acme/platform.git", "github", None, "not the configured Git host"),
        ("https://user:hunter2@bitbucket.org/acme/platform.git", "github", None, "not the configured Git host"),
        ("https://github.com/acme/platform/extra.git", "github", None, "ORG/REPO"),
        ("https://github.com/acme.git", "github", None, "ORG/REPO"),
        ("https://github.com/acme/../platform.git", "github", None, "repository path segment"),
        ("https://github.com/acme/plat%2e%2e.git", "github", None, "repository path segment"),
        ("https://github.com/acme/platform.git?ref=main", "github", None, "no ?query"),
        ("file:///srv/git/platform.git", "github", None, "only https://"),
        ("/srv/git/platform.git", "github", None, "only https://"),
        ("https://gitlab.example.com/group.git", "gitlab", GITLAB_API, "GROUP/REPO"),
        ("https://gitlab.com/group/repo.git", "gitlab", GITLAB_API, "not the configured Git host"),
    ],
)  # fmt: skip
def test_parse_repo_url_refuses(url: str, provider: str, api_url: str | None, reason: str) -> None:
    with pytest.raises(UnsupportedRepo) as err:
        parse_repo_url(url, provider, api_url)
    assert reason in str(err.value)
    assert "hunter2" not in str(err.value)


def test_accepted_hosts() -> None:
    assert accepted_hosts("github", None) == ("github.com",)
    assert accepted_hosts("github", "https://api.github.com") == ("github.com",)
    assert accepted_hosts("github", GHE_API) == ("ghe.example.com",)  # Enterprise: its own repositories only
    assert accepted_hosts("github", "http://127.0.0.1:8080") == ("github.com", "127.0.0.1:8080")  # a proxy
    assert accepted_hosts("gitlab", "https://gitlab.example.com:8443/api/v4") == ("gitlab.example.com:8443",)
    with pytest.raises(UnsupportedRepo, match="GIT_API_URL is not set"):
        accepted_hosts("gitlab", None)


@pytest.mark.parametrize(
    ("path", "directory", "expected"),
    [
        ("apps/shop.yaml", False, "apps/shop.yaml"),
        ("apps/my app.yaml", False, "apps/my app.yaml"),
        ("", True, ""),
        (".", True, ""),
        ("./apps/", True, "apps"),
        ("apps", True, "apps"),
    ],
)
def test_check_repo_path_accepts(path: str, directory: bool, expected: str) -> None:
    assert check_repo_path(path, directory=directory) == expected


@pytest.mark.parametrize(
    "path",
    ["", ".", "../x", "a/../b", "a/./b", "/etc/passwd", "a\\b", "a//b", "a/", "%2e%2e/x", "a%2Fb", "a%5cb", "a\x00b",
     "a\nb", "..", "a/..", "./x"],
)  # fmt: skip
def test_check_repo_path_refuses(path: str) -> None:
    with pytest.raises(UnsupportedRepo):
        check_repo_path(path)


@pytest.mark.parametrize("ref", ["main", "release/1.2", "argo-why/shop/3f2a9c1b", "4b1e0c7d2a9f8e3b6c5d4a1f0e9d8c7b"])
def test_check_ref_accepts(ref: str) -> None:
    assert check_ref(ref) == ref


@pytest.mark.parametrize(
    "ref", ["", "@", "-main", "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a/", "/a", "a//b", "a.lock",
            "a/.b", "a.", "a@{1}", "a\x7f"],
)  # fmt: skip
def test_check_ref_refuses(ref: str) -> None:
    with pytest.raises(UnsupportedRepo):
        check_ref(ref)


def _assert_safe(path: str) -> None:
    segments = path.split("/")
    assert path and not path.startswith("/") and "\\" not in path
    assert all(s not in ("", ".", "..") for s in segments)
    assert not any(ord(c) < 32 or ord(c) == 127 for c in path)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=60))
def test_any_file_link_is_parsed_safely_or_refused(tail: str) -> None:
    for url, provider, api_url in (
        (f"https://github.com/acme/platform/blob/main/{tail}", "github", None),
        (f"https://gitlab.example.com/g/r/-/blob/main/{tail}", "gitlab", GITLAB_API),
        (f"https://github.com/{tail}", "github", None),
        (tail, "gitlab", GITLAB_API),
    ):
        try:
            repo, branch, path = parse_web_url(url, provider, api_url)
        except UnsupportedRepo:
            continue
        _assert_safe(path)
        assert check_ref(branch) == branch
        assert repo.host in accepted_hosts(provider, api_url)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_repo_url_is_parsed_or_refused(url: str) -> None:
    for provider, api_url in (("github", None), ("gitlab", GITLAB_API)):
        try:
            repo = parse_repo_url(url, provider, api_url)
        except UnsupportedRepo:
            continue
        assert all(s not in ("", ".", "..") for s in repo.path.split("/"))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_check_repo_path_accepts_only_exact_safe_paths(path: str) -> None:
    try:
        checked = check_repo_path(path)
    except UnsupportedRepo:
        return
    assert checked == path
    _assert_safe(checked)


_segment = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,10}", fullmatch=True).filter(lambda s: not s.endswith("."))
_file_segment = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="/\\%"), min_size=1, max_size=12
).filter(lambda s: s not in (".", ".."))
_branch = st.lists(st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,8}", fullmatch=True), min_size=1, max_size=3).map(
    "/".join
)


@settings(max_examples=200, deadline=None)
@given(
    group=st.lists(_segment, min_size=1, max_size=3),
    name=_segment,
    branch=_branch,
    path=st.lists(_file_segment, min_size=1, max_size=4),
)
def test_file_links_round_trip(group: list[str], name: str, branch: str, path: list[str]) -> None:
    encoded_path = "/".join(quote(p, safe="") for p in path)
    gl = f"https://gitlab.example.com/{'/'.join(group)}/{name}/-/blob/{quote(branch, safe='')}/{encoded_path}"
    assert parse_web_url(gl, "gitlab", GITLAB_API) == (
        RepoRef("gitlab", "gitlab.example.com", "/".join([*group, name])),
        branch,
        "/".join(path),
    )
    gh = f"https://github.com/{group[0]}/{name}/blob/{quote(branch, safe='')}/{encoded_path}"
    assert parse_web_url(gh, "github", None) == (RepoRef("github", "github.com", f"{group[0]}/{name}"), branch,
                                                 "/".join(path))  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# Fixtures: one fake of each host per module, a fresh repository per test
# ---------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fakes() -> Iterator[dict[str, FakeGitHost]]:
    with FakeGitHub() as github, FakeGitLab() as gitlab:
        yield {"github": github, "gitlab": gitlab}


@dataclass
class Env:
    """A repository on a fake host and a way to talk to it with the real client."""

    fake: FakeGitHost
    provider: str
    path: str
    repo: RepoRef
    bare: BareRepo

    def client(self, **kwargs: Any) -> GitHost:
        kwargs.setdefault("backoff", 0.0)
        return make_git_host(self.provider, self.fake.api_url, self.fake.token, **kwargs)

    async def run(self, fn: Callable[[GitHost], Awaitable[T]], **kwargs: Any) -> T:
        async with self.client(**kwargs) as host:
            return await fn(host)

    async def error(self, fn: Callable[[GitHost], Awaitable[Any]], **kwargs: Any) -> GitHostError:
        with pytest.raises(GitHostError) as err:
            await self.run(fn, **kwargs)
        return err.value


def _env(fakes: dict[str, FakeGitHost], provider: str, files: dict[str, str | bytes] = FILES) -> Env:
    fake = fakes[provider]
    fake.reset()
    path = "acme/platform" if provider == "github" else "acme/infra/platform"
    bare = fake.add_repo(path, files)
    repo = parse_repo_url(f"{fake.web_url}/{path}.git", provider, fake.api_url)
    fake.calls.clear()
    return Env(fake, provider, path, repo, bare)


@pytest.fixture(params=["github", "gitlab"])
def env(request: pytest.FixtureRequest, fakes: dict[str, FakeGitHost]) -> Env:
    return _env(fakes, request.param)


def git(bare: BareRepo, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={bare.path}", *args], check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


# ---------------------------------------------------------------------------------------------------------------
# The fakes answer like GitHub and GitLab (the test of the fakes)
# ---------------------------------------------------------------------------------------------------------------

# Required keys per answer, from github/rest-api-description (as generated in php-api-clients/github: GitRef,
# ContentFile, ContentDirectory, GitTree, FileCommit, PullRequest) and GitLab's API entities (Project, Branch,
# TreeObject, MergeRequestBasic, lib/api/files.rb#blob_data). They include every field the clients read.
GITHUB_REF = {"ref", "node_id", "url", "object"}
GITHUB_FILE = {"_links", "git_url", "html_url", "download_url", "name", "path", "sha", "size", "type", "url",
               "content", "encoding"}  # fmt: skip
GITHUB_DIR_ITEM = GITHUB_FILE - {"content", "encoding"}
GITHUB_TREE = {"sha", "url", "tree", "truncated"}
GITHUB_TREE_ITEM = {"path", "mode", "type", "sha", "url"}
GITHUB_COMMIT = {"sha", "node_id", "url", "html_url", "author", "committer", "message", "tree", "parents",
                 "verification"}  # fmt: skip
GITHUB_PULL = {
    "_links", "assignee", "labels", "base", "body", "closed_at", "comments_url", "commits_url", "created_at",
    "diff_url", "head", "html_url", "id", "node_id", "issue_url", "merge_commit_sha", "merged_at", "milestone",
    "number", "patch_url", "review_comment_url", "review_comments_url", "statuses_url", "state", "locked", "title",
    "updated_at", "url", "user", "author_association", "auto_merge", "additions", "changed_files", "comments",
    "commits", "deletions", "mergeable", "mergeable_state", "merged", "maintainer_can_modify", "merged_by",
    "review_comments",
}  # fmt: skip
GITHUB_PULL_ONLY_FULL = {"merged", "mergeable", "mergeable_state", "merged_by", "comments", "review_comments",
                         "maintainer_can_modify", "commits", "additions", "deletions", "changed_files"}  # fmt: skip
GITLAB_PROJECT = {"id", "name", "path", "path_with_namespace", "default_branch", "web_url", "namespace",
                  "http_url_to_repo", "ssh_url_to_repo", "visibility"}  # fmt: skip
GITLAB_BRANCH = {"name", "commit", "merged", "protected", "developers_can_push", "developers_can_merge", "can_push",
                 "default", "web_url"}  # fmt: skip
GITLAB_FILE = {"file_name", "file_path", "size", "encoding", "content_sha256", "ref", "blob_id", "commit_id",
               "last_commit_id", "execute_filemode", "content"}  # fmt: skip
GITLAB_TREE_ITEM = {"id", "name", "type", "path", "mode"}
GITLAB_MR = {"id", "iid", "project_id", "title", "description", "state", "created_at", "updated_at", "merged_by",
             "merged_at", "closed_by", "closed_at", "target_branch", "source_branch", "author",
             "source_project_id", "target_project_id", "draft", "merge_status", "sha", "merge_commit_sha",
             "references", "web_url"}  # fmt: skip


def _keys(body: Any, required: set[str]) -> None:
    assert isinstance(body, dict), body
    assert required <= body.keys(), sorted(required - body.keys())


def test_fake_github_answers_like_github(fakes: dict[str, FakeGitHost]) -> None:
    env = _env(fakes, "github")
    gh = httpx.Client(base_url=env.fake.api_url, headers={"Authorization": f"Bearer {env.fake.token}"})
    base = "/repos/acme/platform"
    main = env.bare.branch("main")
    assert main is not None

    repo = gh.get(base).json()
    assert repo["default_branch"] == "main" and repo["full_name"] == "acme/platform"
    assert repo["html_url"] == "https://github.com/acme/platform"

    ref = gh.get(f"{base}/git/ref/heads/main").json()
    _keys(ref, GITHUB_REF)
    assert ref["object"] == {"sha": main, "type": "commit", "url": f"{env.fake.api_url}{base}/git/commits/{main}"}

    resp = gh.get(f"{base}/contents/apps/shop.yaml", params={"ref": "main"})
    assert resp.status_code == 200 and resp.headers["x-ratelimit-limit"] == "5000"
    file = resp.json()
    _keys(file, GITHUB_FILE)
    assert file["type"] == "file" and file["encoding"] == "base64"
    assert all(len(line) <= 60 for line in file["content"].splitlines())  # wrapped like GitHub's
    assert base64.b64decode(file["content"]).decode() == SHOP
    blob_sha = hashlib.sha1(b"blob %d\0" % len(SHOP.encode()) + SHOP.encode()).hexdigest()
    assert file["sha"] == blob_sha  # the real git blob id
    assert file["html_url"] == "https://github.com/acme/platform/blob/main/apps/shop.yaml"

    listing = gh.get(f"{base}/contents/apps", params={"ref": "main"}).json()
    assert isinstance(listing, list)
    for item in listing:
        _keys(item, GITHUB_DIR_ITEM)
    assert {(i["name"], i["type"]) for i in listing} == {("payments", "dir"), ("shop.yaml", "file")}

    tree = gh.get(f"{base}/git/trees/main", params={"recursive": "1"}).json()
    _keys(tree, GITHUB_TREE)
    for item in tree["tree"]:
        _keys(item, GITHUB_TREE_ITEM)
    assert tree["truncated"] is False
    assert {i["path"] for i in tree["tree"] if i["type"] == "blob"} == set(FILES)

    created = gh.post(f"{base}/git/refs", json={"ref": "refs/heads/argo-why/x", "sha": main})
    assert created.status_code == 201
    _keys(created.json(), GITHUB_REF)
    again = gh.post(f"{base}/git/refs", json={"ref": "refs/heads/argo-why/x", "sha": main})
    assert again.status_code == 422 and again.json()["message"] == "Reference already exists"
    assert again.json()["documentation_url"].startswith("https://docs.github.com/rest")

    content = base64.b64encode(b"changed\n").decode()
    stale = gh.put(f"{base}/contents/README.md", json={"message": "m", "content": content, "branch": "argo-why/x",
                                                        "sha": "0" * 40})  # fmt: skip
    assert stale.status_code == 409 and "does not match" in stale.json()["message"]
    no_sha = {"message": "m", "content": content, "branch": "argo-why/x"}
    missing_sha = gh.put(f"{base}/contents/README.md", json=no_sha)
    assert missing_sha.status_code == 422 and '"sha" wasn\'t supplied' in missing_sha.json()["message"]
    readme_sha = gh.get(f"{base}/contents/README.md").json()["sha"]
    put = gh.put(f"{base}/contents/README.md", json={"message": "m", "content": content, "branch": "argo-why/x",
                                                     "sha": readme_sha})  # fmt: skip
    assert put.status_code == 200
    _keys(put.json(), {"content", "commit"})
    _keys(put.json()["commit"], GITHUB_COMMIT)
    assert put.json()["commit"]["parents"][0]["sha"] == main
    assert env.bare.read("argo-why/x", "README.md") == b"changed\n"

    pr = gh.post(f"{base}/pulls", json={"title": "t", "head": "argo-why/x", "base": "main", "body": "b"})
    assert pr.status_code == 201
    _keys(pr.json(), GITHUB_PULL)
    assert pr.json()["html_url"] == "https://github.com/acme/platform/pull/1"
    listed = gh.get(f"{base}/pulls", params={"head": "acme:argo-why/x", "state": "open"}).json()
    assert [p["number"] for p in listed] == [1]
    assert not GITHUB_PULL_ONLY_FULL & listed[0].keys()  # the list answer has no merged flag, as on GitHub
    dup = gh.post(f"{base}/pulls", json={"title": "t", "head": "argo-why/x", "base": "main"})
    assert dup.status_code == 422 and dup.json()["message"] == "Validation Failed"
    assert dup.json()["errors"][0]["message"] == "A pull request already exists for acme:argo-why/x."

    assert gh.get(base, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert gh.get(base, headers={"Authorization": ""}).json()["message"] == "Requires authentication"
    assert gh.get("/repos/acme/nope").json()["message"] == "Not Found"
    assert env.fake.errors == []


def test_fake_gitlab_answers_like_gitlab(fakes: dict[str, FakeGitHost]) -> None:
    env = _env(fakes, "gitlab")
    gl = httpx.Client(base_url=env.fake.api_url, headers={"PRIVATE-TOKEN": env.fake.token})
    project = "/projects/acme%2Finfra%2Fplatform"
    main = env.bare.branch("main")

    body = gl.get(project).json()
    _keys(body, GITLAB_PROJECT)
    assert body["path_with_namespace"] == "acme/infra/platform" and body["default_branch"] == "main"
    assert gl.get("/projects/acme/infra/platform").status_code == 404  # the id must be URL-encoded
    assert gl.get(f"/projects/{body['id']}").json()["path_with_namespace"] == "acme/infra/platform"

    branch = gl.get(f"{project}/repository/branches/main").json()
    _keys(branch, GITLAB_BRANCH)
    assert branch["commit"]["id"] == main

    file = gl.get(f"{project}/repository/files/apps%2Fshop.yaml", params={"ref": "main"}).json()
    _keys(file, GITLAB_FILE)
    assert base64.b64decode(file["content"]).decode() == SHOP
    assert file["last_commit_id"] == git(env.bare, "log", "-1", "--format=%H", "main", "--", "apps/shop.yaml").strip()
    assert gl.get(f"{project}/repository/files/apps/shop.yaml", params={"ref": "main"}).status_code == 404
    assert gl.get(f"{project}/repository/files/apps%2Fshop.yaml").json() == {"error": "ref is missing"}

    page1 = gl.get(f"{project}/repository/tree", params={"recursive": "true", "per_page": "2", "ref": "main"})
    for item in page1.json():
        _keys(item, GITLAB_TREE_ITEM)
    assert page1.headers["x-next-page"] == "2" and 'rel="next"' in page1.headers["link"]
    assert gl.get(f"{project}/repository/tree", params={"path": "nope"}).status_code == 404

    created = gl.post(f"{project}/repository/branches", json={"branch": "argo-why/x", "ref": main})
    assert created.status_code == 201
    _keys(created.json(), GITLAB_BRANCH)
    again = gl.post(f"{project}/repository/branches", json={"branch": "argo-why/x", "ref": main})
    assert (again.status_code, again.json()) == (400, {"message": "Branch already exists"})

    readme = gl.get(f"{project}/repository/files/README.md", params={"ref": "argo-why/x"}).json()
    put = gl.put(f"{project}/repository/files/README.md", json={"branch": "argo-why/x", "content": "changed\n",
                 "commit_message": "m", "last_commit_id": readme["last_commit_id"]})  # fmt: skip
    assert (put.status_code, put.json()) == (200, {"file_path": "README.md", "branch": "argo-why/x"})
    stale = gl.put(f"{project}/repository/files/README.md", json={"branch": "argo-why/x", "content": "again\n",
                   "commit_message": "m", "last_commit_id": readme["last_commit_id"]})  # fmt: skip
    assert stale.status_code == 400 and "has changed since you started editing it" in stale.json()["message"]

    mr = gl.post(f"{project}/merge_requests", json={"source_branch": "argo-why/x", "target_branch": "main",
                                                    "title": "t", "description": "d"})  # fmt: skip
    assert mr.status_code == 201
    _keys(mr.json(), GITLAB_MR)
    assert mr.json()["state"] == "opened"
    assert mr.json()["web_url"] == f"{env.fake.web_url}/acme/infra/platform/-/merge_requests/1"
    dup = gl.post(f"{project}/merge_requests", json={"source_branch": "argo-why/x", "target_branch": "main",
                                                     "title": "t"})  # fmt: skip
    assert dup.status_code == 409
    assert dup.json()["message"] == ["Another open merge request already exists for this source branch: !1"]
    listed = gl.get(f"{project}/merge_requests", params={"source_branch": "argo-why/x", "state": "opened"}).json()
    assert [m["iid"] for m in listed] == [1]

    assert gl.get(project, headers={"PRIVATE-TOKEN": "nope"}).json() == {"message": "401 Unauthorized"}
    bearer = {"PRIVATE-TOKEN": "", "Authorization": f"Bearer {env.fake.token}"}
    assert gl.get(project, headers=bearer).status_code == 200
    assert gl.get("/projects/acme%2Fnope").json() == {"message": "404 Project Not Found"}
    assert env.fake.errors == []


async def test_fakes_write_real_commits(env: Env) -> None:
    """A commit through the API is a real commit on a real branch, with the right parent and only that change."""
    main = env.bare.branch("main")
    assert main is not None

    async def go(host: GitHost) -> str:
        await host.create_branch(env.repo, "argo-why/real", main)
        file = await host.get_file(env.repo, "README.md", main)
        return await host.commit_file(env.repo, "argo-why/real", "README.md", "# platform\nmore\n", "Add more",
                                      file.version)  # fmt: skip

    sha = await env.run(go)
    assert git(env.bare, "rev-parse", "argo-why/real").strip() == sha
    assert git(env.bare, "rev-parse", f"{sha}^").strip() == main
    assert git(env.bare, "log", "-1", "--format=%s", sha).strip() == "Add more"
    assert git(env.bare, "diff", "--name-only", f"main..{sha}").split() == ["README.md"]
    git(env.bare, "fsck", "--strict")


# ---------------------------------------------------------------------------------------------------------------
# The clients: reads
# ---------------------------------------------------------------------------------------------------------------


async def test_reads(env: Env) -> None:
    main = env.bare.branch("main")

    async def go(host: GitHost) -> dict[str, Any]:
        head = await host.branch_head(env.repo, "main")
        return {
            "default": await host.default_branch(env.repo),
            "head": head,
            "file": await host.get_file(env.repo, "apps/shop.yaml", head),
            "by_branch": await host.get_file(env.repo, "apps/shop.yaml", "main"),
            "apps": await host.list_files(env.repo, "apps", head),
            "apps_all": await host.list_files(env.repo, "apps/", head, recursive=True),
            "sub": await host.list_files(env.repo, "apps/payments", head, recursive=True),
            "root": await host.list_files(env.repo, ".", head),
            "root_all": await host.list_files(env.repo, "", "main", recursive=True),
        }

    got = await env.run(go)
    assert got["default"] == "main" and got["head"] == main
    file = got["file"]
    assert file.text == SHOP and file.path == "apps/shop.yaml" and file.ref == main
    assert file.sha == git(env.bare, "rev-parse", "main:apps/shop.yaml").strip()
    if env.provider == "github":
        assert file.version == file.sha
    else:
        assert file.version == git(env.bare, "log", "-1", "--format=%H", "main", "--", "apps/shop.yaml").strip()
    assert got["by_branch"].text == SHOP
    assert got["apps"] == ["apps/shop.yaml"]
    assert got["apps_all"] == ["apps/payments/app.yaml", "apps/payments/values.yaml", "apps/shop.yaml"]
    assert got["sub"] == ["apps/payments/app.yaml", "apps/payments/values.yaml"]
    assert got["root"] == ["README.md"]
    assert got["root_all"] == sorted(FILES)


ODD_TEXT = "# café ☕\r\nkey: «value»\r\nlast line without newline"


@pytest.mark.parametrize("provider", ["github", "gitlab"])
async def test_text_round_trips_byte_for_byte(fakes: dict[str, FakeGitHost], provider: str) -> None:
    """UTF-8, CRLF line ends and a missing final newline survive a read and a write unchanged."""
    env = _env(fakes, provider, {"values.yaml": ODD_TEXT.encode()})
    main = env.bare.branch("main")
    assert main is not None

    async def go(host: GitHost) -> str:
        file = await host.get_file(env.repo, "values.yaml", main)
        assert file.text == ODD_TEXT
        await host.create_branch(env.repo, "argo-why/utf8", main)
        return await host.commit_file(env.repo, "argo-why/utf8", "values.yaml", ODD_TEXT + "\r\nadded: 1", "m",
                                      file.version)  # fmt: skip

    sha = await env.run(go)
    assert env.bare.read(sha, "values.yaml") == (ODD_TEXT + "\r\nadded: 1").encode()


async def test_large_and_odd_files(fakes: dict[str, FakeGitHost]) -> None:
    env = _env(fakes, "github", {"big.yaml": b"a" * (1024 * 1024 + 1), "bin.dat": b"\xff\xfe\x00", "d/x": "x"})
    assert (await env.error(lambda h: h.get_file(env.repo, "big.yaml", "main"))).kind == "unreadable"
    err = await env.error(lambda h: h.get_file(env.repo, "bin.dat", "main"))
    assert err.kind == "unreadable" and "not UTF-8" in str(err)
    err = await env.error(lambda h: h.get_file(env.repo, "d", "main"))
    assert err.kind == "not-found" and "is a directory, not a file" in str(err)
    err = await env.error(lambda h: h.list_files(env.repo, "d/x", "main", recursive=True))
    assert err.kind == "not-found" and "is a file, not a directory" in str(err)


async def test_github_truncated_tree_and_enterprise_prefix(fakes: dict[str, FakeGitHost]) -> None:
    env = _env(fakes, "github")
    github = env.fake
    assert isinstance(github, FakeGitHub)
    github.tree_limit = 2
    try:
        err = await env.error(lambda h: h.list_files(env.repo, "apps", "main", recursive=True))
    finally:
        github.tree_limit = 100_000
    assert err.kind == "unreadable" and "smaller directory" in str(err)

    with FakeGitHub(web_url="https://ghe.example.com", api_prefix="/api/v3") as ghe:
        ghe.add_repo("acme/platform", FILES)
        assert ghe.api_url.endswith("/api/v3")
        repo, branch, path = parse_web_url(ghe.file_url("acme/platform", "main", "apps/shop.yaml"), "github",
                                           "https://ghe.example.com/api/v3")  # fmt: skip

        async def go() -> str:
            async with GitHubClient(ghe.api_url, ghe.token) as host:
                return (await host.get_file(repo, path, branch)).text

        assert await go() == SHOP
        assert ghe.calls[0].path == "/api/v3/repos/acme/platform/contents/apps/shop.yaml"


async def test_gitlab_pages_through_large_directories(fakes: dict[str, FakeGitHost]) -> None:
    files: dict[str, str | bytes] = {f"apps/app-{i:03}.yaml": f"n: {i}\n" for i in range(230)}
    env = _env(fakes, "gitlab", files)
    listed = await env.run(lambda h: h.list_files(env.repo, "apps", "main"))
    assert listed == sorted(files)
    assert [c.query.get("page") for c in env.fake.calls] == ["1", "2", "3"]


def test_gitlab_next_page_from_link_header() -> None:
    link = '<https://gl/api/v4/projects/1/repository/tree?page=3&per_page=100>; rel="next", <https://gl/x?page=1>; '
    link += 'rel="first"'
    assert _next_page(httpx.Response(200, headers={"Link": link})) == "3"
    assert _next_page(httpx.Response(200, headers={"X-Next-Page": ""})) is None
    assert _next_page(httpx.Response(200)) is None


# ---------------------------------------------------------------------------------------------------------------
# The clients: the fix, end to end
# ---------------------------------------------------------------------------------------------------------------

NEW_SHOP = SHOP + (
    "  ignoreDifferences:\n    - group: apps\n      kind: Deployment\n      jsonPointers: [/spec/replicas]\n"
)
BRANCH = "argo-why/shop/3f2a9c1b"


async def propose(host: GitHost, repo: RepoRef, *, branch: str = BRANCH, text: str = NEW_SHOP) -> Any:
    """The fix flow exactly as base.py documents it; (head the branch started from, branch head, pull request)."""
    pr = await host.find_open_pr(repo, branch)
    if pr is not None:
        return None, await host.branch_head(repo, branch), pr
    base = await host.default_branch(repo)
    head = await host.branch_head(repo, base)
    file = await host.get_file(repo, "apps/shop.yaml", head)
    try:
        await host.create_branch(repo, branch, head)
    except GitHostError as err:
        if err.kind != "branch-exists":
            raise
        file = await host.get_file(repo, "apps/shop.yaml", branch)
    if file.text != text:
        sha = await host.commit_file(repo, branch, "apps/shop.yaml", text, "argo-why: ignore /spec/replicas",
                                     file.version)  # fmt: skip
    else:
        sha = await host.branch_head(repo, branch)
    pr = await host.open_pr(repo, branch, base, "argo-why: ignore /spec/replicas of Deployment/web", "body")
    return head, sha, pr


async def test_propose_a_fix_end_to_end(env: Env) -> None:
    head, sha, pr = await env.run(lambda h: propose(h, env.repo))

    diff = git(env.bare, "diff", f"main..{BRANCH}")
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert added == NEW_SHOP[len(SHOP) :].splitlines() and removed == []
    assert git(env.bare, "rev-parse", BRANCH).strip() == sha
    assert git(env.bare, "rev-parse", f"{sha}^").strip() == head
    assert git(env.bare, "rev-parse", "main").strip() == head  # the base branch is never written

    assert pr.number == 1 and pr.state == "open" and pr.head == BRANCH and pr.base == "main"
    expected_url = (f"https://github.com/{env.path}/pull/1" if env.provider == "github"
                    else f"{env.fake.web_url}/{env.path}/-/merge_requests/1")  # fmt: skip
    assert pr.url == expected_url
    assert await env.run(lambda h: h.find_open_pr(env.repo, BRANCH)) == pr
    assert await env.run(lambda h: h.find_open_pr(env.repo, "argo-why/other")) is None
    assert len(env.fake.pulls(env.path)) == 1


async def test_git_calls_per_fix_do_not_depend_on_repository_size(fakes: dict[str, FakeGitHost]) -> None:
    # find the open PR, default branch, head, file, branch, commit, PR; GitLab reads the branch once more for the
    # commit id its file update does not return.
    for provider, expected in (("github", 7), ("gitlab", 8)):
        counts = []
        for extra in (0, 200):
            files: dict[str, str | bytes] = {**FILES, **{f"other/{i}/f.yaml": f"{i}\n" for i in range(extra)}}
            env = _env(fakes, provider, files)
            client_calls = await env.run(functools.partial(_count, env=env))
            assert len(env.fake.calls) == client_calls
            counts.append(client_calls)
        assert counts == [expected, expected], provider


async def _count(host: GitHost, env: Env) -> int:
    await propose(host, env.repo)
    return host.calls


async def test_base_branch_moved_before_the_branch_is_cut(env: Env) -> None:
    """Someone pushes to main between two alerts: the branch starts from main's current head."""

    async def go(host: GitHost) -> tuple[str, str]:
        first = await host.branch_head(env.repo, "main")
        env.fake.advance(env.path, {"README.md": "# platform\nnews\n"}, message="Unrelated change")
        head, _, _ = await propose(host, env.repo)
        return first, head

    first, head = await env.run(go)
    assert head != first and git(env.bare, "rev-parse", f"{BRANCH}^").strip() == head
    assert git(env.bare, "diff", "--name-only", f"main..{BRANCH}").split() == ["apps/shop.yaml"]


async def test_stale_file_is_refused_and_nothing_is_written(env: Env) -> None:
    """The file itself changed on the branch after it was read: the host refuses, the message says what to do."""
    main = env.bare.branch("main")
    assert main is not None

    async def go(host: GitHost) -> Any:
        file = await host.get_file(env.repo, "apps/shop.yaml", main)
        await host.create_branch(env.repo, BRANCH, main)
        env.fake.advance(env.path, {"apps/shop.yaml": SHOP + "# edited by a person\n"}, branch=BRANCH)
        return await host.commit_file(env.repo, BRANCH, "apps/shop.yaml", NEW_SHOP, "m", file.version)

    before = None
    with pytest.raises(GitHostError) as err:
        await env.run(go)
    before = env.bare.branch(BRANCH)
    assert err.value.kind == "conflict"
    assert "apps/shop.yaml changed on branch" in str(err.value) and "run the fix again" in str(err.value)
    assert env.bare.read(BRANCH, "apps/shop.yaml") == (SHOP + "# edited by a person\n").encode()
    assert env.bare.branch(BRANCH) == before


async def test_writes_are_idempotent(env: Env) -> None:
    """A retry, a double click or the other replica: one branch, one commit, one pull request."""
    main = env.bare.branch("main")
    assert main is not None

    async def twice(host: GitHost) -> list[Any]:
        file = await host.get_file(env.repo, "apps/shop.yaml", main)
        out: list[Any] = []
        for _ in range(2):
            await host.create_branch(env.repo, BRANCH, main)
        for _ in range(2):
            out.append(await host.commit_file(env.repo, BRANCH, "apps/shop.yaml", NEW_SHOP, "m", file.version))
        for _ in range(2):
            out.append(await host.open_pr(env.repo, BRANCH, "main", "t", "b"))
        return out

    first_sha, second_sha, first_pr, second_pr = await env.run(twice)
    assert first_sha == second_sha and first_pr == second_pr
    assert git(env.bare, "rev-list", "--count", f"main..{BRANCH}").strip() == "1"
    assert len(env.fake.pulls(env.path)) == 1

    _, sha, pr = await env.run(lambda h: propose(h, env.repo))  # the whole flow again links the open pull request
    assert (sha, pr) == (first_sha, first_pr)


async def test_a_closed_pull_request_can_be_proposed_again(env: Env) -> None:
    """Closed unmerged, the button comes back: the same branch name is reused and a new pull request opens."""
    _, sha, pr = await env.run(lambda h: propose(h, env.repo))
    env.fake.close_pr(env.path, pr.number)
    _, sha_again, pr_again = await env.run(lambda h: propose(h, env.repo))
    assert sha_again == sha and (pr_again.number, pr_again.state) == (2, "open")
    assert git(env.bare, "rev-list", "--count", f"main..{BRANCH}").strip() == "1"


async def test_new_files_and_empty_pull_requests(env: Env) -> None:
    main = env.bare.branch("main")
    assert main is not None

    async def go(host: GitHost) -> tuple[str, str]:
        await host.create_branch(env.repo, BRANCH, main)
        first = await host.commit_file(env.repo, BRANCH, "apps/new.yaml", "new: 1\n", "Add", None)
        again = await host.commit_file(env.repo, BRANCH, "apps/new.yaml", "new: 1\n", "Add", None)
        return first, again

    first, again = await env.run(go)
    assert first == again and env.bare.read(BRANCH, "apps/new.yaml") == b"new: 1\n"
    err = await _error(env, lambda h: h.commit_file(env.repo, BRANCH, "apps/new.yaml", "other\n", "Add", None))
    assert err.kind == "conflict"

    if env.provider == "github":  # GitLab opens a merge request without changes; GitHub refuses one
        env.bare.update_ref("argo-why/empty", main, "0" * 40)
        err = await _error(env, lambda h: h.open_pr(env.repo, "argo-why/empty", "main", "t", "b"))
        assert err.kind == "rejected" and "No commits between main and argo-why/empty" in str(err)


async def test_existing_branch_elsewhere_is_an_error(env: Env) -> None:
    main = env.bare.branch("main")
    assert main is not None
    env.fake.advance(env.path, {"x": "y"})
    env.bare.update_ref(BRANCH, main, "0" * 40)  # an old branch of the same name
    new_main = env.bare.branch("main")
    assert new_main is not None
    err = await env.error(lambda h: h.create_branch(env.repo, BRANCH, new_main))
    assert err.kind == "branch-exists" and BRANCH in str(err)


async def test_pull_request_states(env: Env) -> None:
    _, _, pr = await env.run(lambda h: propose(h, env.repo))
    assert (await env.run(lambda h: h.get_pr(env.repo, pr.number))).state == "open"
    env.fake.merge_pr(env.path, pr.number)
    assert (await env.run(lambda h: h.get_pr(env.repo, pr.number))).state == "merged"
    assert env.bare.read("main", "apps/shop.yaml") == NEW_SHOP.encode()
    assert await env.run(lambda h: h.find_open_pr(env.repo, BRANCH)) is None

    _, _, other = await env.run(lambda h: propose(h, env.repo, branch="argo-why/shop/other", text=NEW_SHOP + "# 2\n"))
    env.fake.close_pr(env.path, other.number)
    closed = await env.run(lambda h: h.get_pr(env.repo, other.number))
    assert (closed.number, closed.state) == (2, "closed")
    assert await env.run(lambda h: h.find_open_pr(env.repo, "argo-why/shop/other")) is None
    err = await env.error(lambda h: h.get_pr(env.repo, 99))
    assert err.kind == "not-found" and "pull request 99" in str(err)


async def test_merge_after_base_moved_makes_a_merge_commit(env: Env) -> None:
    _, _, pr = await env.run(lambda h: propose(h, env.repo))
    env.fake.advance(env.path, {"README.md": "moved\n"})
    merged = env.fake.merge_pr(env.path, pr.number)
    assert len(git(env.bare, "rev-parse", f"{merged}^@").split()) == 2
    assert env.bare.read("main", "README.md") == b"moved\n"
    assert env.bare.read("main", "apps/shop.yaml") == NEW_SHOP.encode()


# ---------------------------------------------------------------------------------------------------------------
# Errors: every kind, in words a person can act on, never with the token
# ---------------------------------------------------------------------------------------------------------------

MESSAGES: list[str] = []  # every error text seen below, for the final token check


async def _error(env: Env, fn: Callable[[GitHost], Awaitable[Any]], **kwargs: Any) -> GitHostError:
    err = await env.error(fn, **kwargs)
    MESSAGES.extend([str(err), repr(err)])
    assert env.fake.token not in str(err) and env.fake.token not in repr(err)
    return err


async def test_bad_token(env: Env) -> None:
    async def go() -> None:
        async with make_git_host(env.provider, env.fake.api_url, "not-the-token", backoff=0.0) as host:
            await host.default_branch(env.repo)

    with pytest.raises(GitHostError) as err:
        await go()
    assert err.value.kind == "auth" and err.value.status == 401
    assert "invalid, expired or revoked" in str(err.value) and "GIT_TOKEN" in str(err.value)
    assert "not-the-token" not in str(err.value)


async def test_missing_permission_names_the_scope(env: Env) -> None:
    env.fake.read_only = True
    main = env.bare.branch("main")
    assert main is not None
    err = await _error(env, lambda h: h.create_branch(env.repo, BRANCH, main))
    assert err.kind == "permission" and err.status == 403
    if env.provider == "github":
        assert "contents:write" in str(err) and "pull_requests:write" in str(err) and "repo scope" in str(err)
        assert "this call needs contents=write" in str(err)  # X-Accepted-GitHub-Permissions
    else:
        assert "api scope" in str(err) and "Developer role" in str(err)
    assert env.bare.branch(BRANCH) is None


async def test_not_found(env: Env) -> None:
    missing = RepoRef(env.repo.provider, env.repo.host, env.repo.path + "-gone")
    err = await _error(env, lambda h: h.default_branch(missing))
    assert err.kind == "not-found" and err.status == 404
    assert f"no repository {missing.path}" in str(err) and "private repository" in str(err)

    err = await _error(env, lambda h: h.get_file(env.repo, "apps/nope.yaml", "main"))
    assert err.kind == "not-found" and "apps/nope.yaml at main" in str(err) and "private repository" in str(err)
    err = await _error(env, lambda h: h.branch_head(env.repo, "nope"))
    assert err.kind == "not-found" and "branch nope" in str(err)
    err = await _error(env, lambda h: h.list_files(env.repo, "nope", "main", recursive=True))
    assert err.kind == "not-found" and "list nope at main" in str(err)


async def test_protected_branches(env: Env) -> None:
    main = env.bare.branch("main")
    assert main is not None
    env.fake.protect(env.path, "argo-why/*")
    err = await _error(env, lambda h: h.create_branch(env.repo, BRANCH, main))
    assert err.kind == "protected" and "protected" in str(err) and "argo-why/..." in str(err)

    env.fake.protect(env.path, "main")
    file = await env.run(lambda h: h.get_file(env.repo, "README.md", "main"))
    err = await _error(env, lambda h: h.commit_file(env.repo, "main", "README.md", "x\n", "m", file.version))
    assert err.kind == "protected" and "branch main is protected" in str(err)
    assert env.bare.branch("main") == main


@pytest.mark.parametrize(
    ("method", "route", "status", "kind", "words"),
    [
        ("GET", "", 401, "auth", "GIT_TOKEN"),
        ("GET", "", 403, "permission", "the token"),
        ("GET", "", 404, "not-found", "private repository"),
        ("GET", "", 422, "rejected", "refused to read the repository"),
        ("GET", "", 502, "unavailable", "unreachable, down or overloaded"),
    ],
)
async def test_injected_statuses(env: Env, method: str, route: str, status: int, kind: str, words: str) -> None:
    env.fake.fail(method, route, status, times=None)
    err = await _error(env, lambda h: h.default_branch(env.repo), retries=1)
    assert (err.kind, err.status) == (kind, status)
    assert words in str(err)


async def test_server_errors_and_dropped_connections_are_retried(env: Env) -> None:
    env.fake.fail("GET", "", 500, times=1)
    assert await env.run(lambda h: h.default_branch(env.repo)) == "main"
    assert [c.status for c in env.fake.calls] == [500, 200]

    env.fake.calls.clear()
    env.fake.drop_next(2)
    assert await env.run(lambda h: h.default_branch(env.repo)) == "main"
    assert len(env.fake.calls) == 3

    env.fake.fail("GET", "", 503, times=None)
    err = await _error(env, lambda h: h.default_branch(env.repo), retries=2)
    assert err.kind == "unavailable" and "attempts: 3" in str(err)


async def test_unreachable_host(env: Env) -> None:
    async def go() -> None:
        async with make_git_host(env.provider, "http://127.0.0.1:9" + ("/api/v4" if env.provider == "gitlab" else ""),
                                 env.fake.token, retries=1, backoff=0.0, timeout=2.0) as host:  # fmt: skip
            await host.default_branch(env.repo)

    with pytest.raises(GitHostError) as err:
        await go()
    assert err.value.kind == "unavailable" and err.value.status is None and "ConnectError" in str(err.value)


async def test_short_rate_limit_is_waited_out(env: Env) -> None:
    env.fake.rate_limit("GET", "", retry_after=0, reset_in=0)
    assert await env.run(lambda h: h.default_branch(env.repo)) == "main"
    assert len(env.fake.calls) == 2


async def test_long_rate_limit_says_when_it_resets(env: Env) -> None:
    env.fake.rate_limit("GET", "", reset_in=3600, times=None)
    started = time.monotonic()
    err = await _error(env, lambda h: h.default_branch(env.repo))
    assert time.monotonic() - started < 5  # not waited for
    assert err.kind == "rate-limited" and err.retry_after is not None and 3590 < err.retry_after <= 3600
    assert "resets at" in str(err) and "UTC" in str(err)
    assert len(env.fake.calls) == 1


async def test_github_secondary_rate_limit(fakes: dict[str, FakeGitHost]) -> None:
    env = _env(fakes, "github")
    env.fake.rate_limit("GET", "", retry_after=30, secondary=True)
    err = await _error(env, lambda h: h.default_branch(env.repo))
    assert err.kind == "rate-limited" and err.retry_after == 30.0 and "secondary rate limit" in str(err)
    env.fake.rate_limit("GET", "", secondary=True)  # no header at all: wait at least a minute
    assert (await _error(env, lambda h: h.default_branch(env.repo))).retry_after == 60.0


async def test_a_plain_403_is_not_a_rate_limit(fakes: dict[str, FakeGitHost]) -> None:
    env = _env(fakes, "github")
    env.fake.fail("GET", "", 403, message="Must have admin rights to Repository.")
    err = await _error(env, lambda h: h.default_branch(env.repo))
    assert err.kind == "permission" and "Must have admin rights" in str(err)


async def test_token_is_never_in_errors_or_reprs(env: Env) -> None:
    token = env.fake.token
    env.fake.fail("GET", "", 400, message=f"token {token} is weird")  # a host echoing the token back
    err = await _error(env, lambda h: h.default_branch(env.repo))
    assert "***" in str(err)
    client = env.client()
    assert token not in repr(client) and token not in str(vars(client).get("api_url"))
    await client.close()
    assert not any(token in m for m in MESSAGES)


async def test_bad_inputs_are_refused_before_any_request(env: Env) -> None:
    for call in (
        lambda h: h.get_file(env.repo, "../etc/passwd", "main"),
        lambda h: h.get_file(env.repo, "apps/shop.yaml", "main..evil"),
        lambda h: h.list_files(env.repo, "/abs", "main"),
        lambda h: h.create_branch(env.repo, "-evil", "0" * 40),
        lambda h: h.create_branch(env.repo, "ok", "main"),
        lambda h: h.commit_file(env.repo, "ok", "a/../../b", "x", "m", None),
        lambda h: h.open_pr(env.repo, "a b", "main", "t", "b"),
        lambda h: h.get_pr(env.repo, 0),
        lambda h: h.default_branch(RepoRef("bitbucket", "x", "a/b")),  # type: ignore[arg-type]
    ):
        with pytest.raises(ValueError):
            await env.run(call)
    assert env.fake.calls == []


# ---------------------------------------------------------------------------------------------------------------
# The factory
# ---------------------------------------------------------------------------------------------------------------


async def test_make_git_host() -> None:
    github = make_git_host("github", None, "t0ken")
    gitlab = make_git_host("gitlab", GITLAB_API, "t0ken", auth="bearer")
    try:
        assert isinstance(github, GitHubClient) and github.api_url == "https://api.github.com"
        assert isinstance(gitlab, GitLabClient) and gitlab.api_url == GITLAB_API
        assert gitlab._http.headers["authorization"] == "Bearer t0ken"
        assert github._http.headers["x-github-api-version"] == "2022-11-28"
        assert "t0ken" not in repr(github) + repr(gitlab)
    finally:
        await github.close()
        await gitlab.close()
    with pytest.raises(ConfigError, match="GIT_API_URL is not set"):
        make_git_host("gitlab", None, "t0ken")
    with pytest.raises(ConfigError, match="GIT_TOKEN is not set"):
        make_git_host("github", None, "")
    with pytest.raises(ConfigError, match="supports github and gitlab"):
        make_git_host("gitea", "https://gitea.example.com/api/v1", "t0ken")
