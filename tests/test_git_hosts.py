"""The Git host layer: URL parsing and path guards (pure)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.sources.git import (
    RepoRef,
    UnsupportedRepo,
    accepted_hosts,
    check_ref,
    check_repo_path,
    parse_repo_url,
    parse_web_url,
)

GHE_API = "https://ghe.example.com/api/v3"
GITLAB_API = "https://gitlab.example.com/api/v4"

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
        ("https://github.com/acme/platform/blob/main/x.yaml", "github", GHE_API,  # github.com stays accepted
         ("github.com", "acme/platform", "main", "x.yaml")),
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
    assert accepted_hosts("github", GHE_API) == ("github.com", "ghe.example.com")
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
