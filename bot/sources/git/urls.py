"""Where an Application is defined, from the URLs people and Argo CD write: pure functions, no I/O.

* :func:`parse_web_url` reads the ``argo-why.io/definition`` annotation, the link to the file as a person copies it
  from the browser: ``https://github.com/ORG/REPO/blob/BRANCH/PATH`` or
  ``https://gitlab.example.com/GROUP/SUB/REPO/-/blob/BRANCH/PATH`` (``raw`` instead of ``blob`` too).
* :func:`parse_repo_url` reads an Application's ``spec.source.repoURL``: ``https://host/org/repo(.git)``,
  ``git@host:org/repo.git``, ``ssh://git@host[:port]/org/repo.git``.
* :func:`check_repo_path` and :func:`check_ref` guard every path and branch before it reaches a URL or the ``git``
  command line.

Guarantees: a host is accepted only if its repositories are served by the configured API, so a repository is
never asked of another host's API. GitHub: ``github.com`` (with ``GIT_API_URL`` unset, ``https://api.github.com``
or a proxy of it, which may name its own host too); GitHub Enterprise (``GIT_API_URL`` ``https://HOST/api/v3``):
that host alone, and a ``github.com`` repository is refused in words (its token and API are the Enterprise ones);
GitLab: ``GIT_API_URL``'s host, under its relative URL root if it has one. A branch holding ``/`` in a file link
is resolved by :func:`web_url_candidates` (every split, for the host to settle). A returned path never leaves the
repository: no ``..`` or ``.`` segment, not absolute, no backslash, no empty segment, nothing hidden behind
percent-encoding. Everything refused raises
:class:`UnsupportedRepo` (a ``ValueError``) whose message says why, without any user:password part of the URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from bot.sources.git.base import Provider, RepoRef
from bot.wording import cli as wording

GITHUB_WEB_HOST = "github.com"
GITHUB_API_HOST = "api.github.com"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SEGMENT = re.compile(r"[A-Za-z0-9_.-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Percent-encodings that could smuggle a separator, a dot segment, a second decoding or a control character.
_ENCODED = re.compile(r"%(2e|2f|5c|25|[01][0-9a-f]|7f)", re.IGNORECASE)
# git check-ref-format: no control characters, space, ~ ^ : ? * [ \ anywhere, no "..", no "@{".
_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{")
_FILE_VIEWS = ("blob", "raw")
# GitHub Enterprise Server's REST root (https://HOST/api/v3); api.github.com and its proxies serve from the root.
_ENTERPRISE_API = re.compile(r"/api/v3/?$")


class UnsupportedRepo(ValueError):
    """A repository URL, file link, path or branch argo-why refuses; ``str()`` is the reason, for a person."""


def display_url(url: str) -> str:
    """``url`` as it may appear in a message: without a ``user:password@`` part, at most 200 characters."""
    text = url.strip()
    if "://" in text:
        scheme, _, rest = text.partition("://")
        authority, slash, tail = rest.partition("/")
        text = f"{scheme}://{authority.rpartition('@')[2]}{slash}{tail}"
    text = _CONTROL.sub("?", text)
    return text if len(text) <= 200 else text[:199] + "…"


def _refuse(what: str, value: str, reason: str) -> UnsupportedRepo:
    shown = _CONTROL.sub("?", value)[:200]
    text = wording.GIT_PATH_REFUSED.format(what=what, value=shown, reason=wording.GIT_PATH_REASONS[reason])
    return UnsupportedRepo(text)


def check_repo_path(path: str, *, what: str = "path", directory: bool = False) -> str:
    """``path`` when it is a safe repository path, else :class:`UnsupportedRepo`.

    With ``directory``, ``""``, ``"."`` and ``"./"`` mean the root (returned as ``""``) and one leading ``./`` and
    trailing ``/`` are dropped, as Argo CD's ``spec.source.path`` allows; a file path must be exact.
    """
    value = path
    if directory:
        if path in ("", ".", "./"):
            return ""
        value = value.removeprefix("./")
        value = value[:-1] if value.endswith("/") and not value.endswith("//") else value
    if not value:
        raise _refuse(what, path, "empty")
    if _CONTROL.search(value):
        raise _refuse(what, path, "control")
    if value.startswith("/"):
        raise _refuse(what, path, "absolute")
    if "\\" in value:
        raise _refuse(what, path, "backslash")
    if _ENCODED.search(value):
        raise _refuse(what, path, "encoded")
    segments = value.split("/")
    if "" in segments:
        raise _refuse(what, path, "double-slash")
    if any(s in (".", "..") for s in segments):
        raise _refuse(what, path, "dot")
    return value


def check_ref(ref: str, *, what: str = "branch") -> str:
    """``ref`` when git would accept it as a branch name or ref (``git check-ref-format``), else
    :class:`UnsupportedRepo`. A leading ``-`` is refused too: it would read as an option."""
    ok = (
        bool(ref)
        and ref != "@"
        and not _REF_FORBIDDEN.search(ref)
        and not ref.startswith(("-", "/"))
        and not ref.endswith(("/", ".", ".lock"))
        and "//" not in ref
        and not any(part.startswith(".") or part.endswith(".lock") for part in ref.split("/"))
    )
    if not ok:
        raise _refuse(what, ref, "ref")
    return ref


# ---------------------------------------------------------------------------------------------------------------
# Hosts
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _URL:
    scheme: str
    hostname: str
    port: int | None
    path: str
    extra: bool  # a ?query or #fragment is present


def _split(url: str) -> _URL | None:
    """The parts of an absolute URL, None when it has no host or does not parse (a bad port, a broken [IPv6])."""
    try:
        split = urlsplit(url.strip())
        port = split.port
    except ValueError:
        return None
    if not split.hostname:
        return None
    return _URL(split.scheme.lower(), split.hostname, port, split.path, bool(split.query or split.fragment))


def _authority(scheme: str, hostname: str, port: int | None) -> str:
    """``host`` or ``host:port`` (the port only when it is not the scheme's default), lower-cased."""
    host = hostname.lower()
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        return f"{host}:{port}"
    return host


def _api_parts(provider: str, api_url: str | None) -> tuple[list[str], list[str]]:
    """(accepted web hosts, relative URL root segments of the API's own host)."""
    if provider not in ("github", "gitlab"):
        raise UnsupportedRepo(wording.GIT_UNKNOWN_PROVIDER.format(provider=provider))
    hosts: list[str] = [GITHUB_WEB_HOST] if provider == "github" else []
    prefix: list[str] = []
    if api_url:
        split = _split(api_url)
        if split is None or split.scheme not in _DEFAULT_PORTS:
            raise UnsupportedRepo(wording.GIT_URL_SCHEME.format(url=display_url(api_url)))
        host = _authority(split.scheme, split.hostname, split.port)
        if provider == "github" and _ENTERPRISE_API.search(split.path):
            hosts = []  # GitHub Enterprise Server: its API knows its own repositories, never github.com's
        if host != GITHUB_API_HOST and host not in hosts:
            hosts.append(host)
        # GitLab under a relative URL root (https://example.com/gitlab/api/v4): web paths start with /gitlab.
        root = re.sub(r"/api/v[34]/?$", "", split.path.rstrip("/"))
        prefix = [s for s in root.split("/") if s]
    elif provider == "gitlab":
        raise UnsupportedRepo(wording.GIT_NO_API_URL)
    return hosts, prefix


def accepted_hosts(provider: str, api_url: str | None) -> tuple[str, ...]:
    """The web hosts whose repositories argo-why may use with this configuration."""
    return tuple(_api_parts(provider, api_url)[0])


def _match_host(url: str, host: str, accepted: list[str], *, ssh: bool, provider: str) -> str:
    """The accepted host ``host`` stands for; over SSH the port is the SSH daemon's, so only names are compared."""
    for candidate in accepted:
        if candidate == host or (ssh and candidate.split(":")[0] == host.split(":")[0]):
            return candidate
    if provider == "github" and host.split(":")[0] == GITHUB_WEB_HOST:  # accepted is GitHub Enterprise alone
        raise UnsupportedRepo(wording.GIT_URL_NOT_ENTERPRISE.format(url=display_url(url), host=accepted[0]))
    raise UnsupportedRepo(wording.GIT_URL_HOST.format(url=display_url(url), host=host, accepted=", ".join(accepted)))


def _strip_prefix(segments: list[str], prefix: list[str]) -> list[str]:
    return segments[len(prefix) :] if prefix and segments[: len(prefix)] == prefix else segments


def _repo_path(url: str, provider: Provider, segments: list[str]) -> str:
    for segment in segments:
        if not _SEGMENT.fullmatch(segment) or segment in (".", ".."):
            raise _refuse("repository path segment", segment, "segment")
    wanted = "ORG/REPO" if provider == "github" else "GROUP/REPO or GROUP/SUBGROUP/REPO"
    if len(segments) < 2 or (provider == "github" and len(segments) != 2):
        reason = f"the repository path must be {wanted}"
        raise UnsupportedRepo(wording.GIT_URL_NOT_REPO.format(url=display_url(url), reason=reason))
    return "/".join(segments)


# ---------------------------------------------------------------------------------------------------------------
# spec.source.repoURL
# ---------------------------------------------------------------------------------------------------------------

_SCP = re.compile(r"(?:[A-Za-z0-9._~-]+@)?(?P<host>[A-Za-z0-9.-]+):(?P<path>[^/].*)")


def parse_repo_url(repo_url: str, provider: str, api_url: str | None) -> RepoRef:
    """The repository an Application's ``spec.source.repoURL`` names, if it is on the configured host."""
    accepted, prefix = _api_parts(provider, api_url)
    text = repo_url.strip()
    if "://" in text:
        split = _split(text)
        if split is None or split.scheme not in ("https", "http", "ssh", "git"):
            raise UnsupportedRepo(wording.GIT_URL_SCHEME.format(url=display_url(repo_url)))
        if split.extra:
            reason = "a repository URL has no ?query or #fragment"
            raise UnsupportedRepo(wording.GIT_URL_NOT_REPO.format(url=display_url(repo_url), reason=reason))
        ssh = split.scheme not in _DEFAULT_PORTS
        authority = _authority(split.scheme, split.hostname, split.port)
        host = _match_host(repo_url, authority, accepted, ssh=ssh, provider=provider)
        raw = split.path
    elif m := _SCP.fullmatch(text):
        ssh = True
        host = _match_host(repo_url, m["host"].lower(), accepted, ssh=True, provider=provider)
        raw = m["path"]
    else:
        raise UnsupportedRepo(wording.GIT_URL_SCHEME.format(url=display_url(repo_url)))
    raw = raw.strip("/").removesuffix(".git")
    segments = raw.split("/") if raw else []
    if not ssh and host == accepted[-1]:
        segments = _strip_prefix(segments, prefix)
    kind: Provider = "github" if provider == "github" else "gitlab"
    return RepoRef(kind, host, _repo_path(repo_url, kind, segments))


# ---------------------------------------------------------------------------------------------------------------
# argo-why.io/definition
# ---------------------------------------------------------------------------------------------------------------


def _file_path(url: str, raw_segments: list[str]) -> str:
    """The repository path from still percent-encoded URL segments: each segment is decoded on its own, and a
    decoded segment that holds a separator or is a dot segment is refused (``a%2F..%2Fb``, ``%2e%2e``)."""
    decoded: list[str] = []
    for raw in raw_segments:
        try:
            value = unquote(raw, errors="strict") if "%" in raw else raw
        except UnicodeDecodeError:
            raise _refuse("path", "/".join(raw_segments), "encoded") from None
        if value != raw and ("/" in value or "\\" in value or value in (".", "..") or _CONTROL.search(value)):
            raise _refuse("path", "/".join(raw_segments), "encoded")
        decoded.append(value)
    if not decoded:
        raise UnsupportedRepo(wording.GIT_URL_NOT_FILE.format(url=display_url(url)))
    return check_repo_path("/".join(decoded))


def parse_web_url(url: str, provider: str, api_url: str | None) -> tuple[RepoRef, str, str]:
    """(repository, branch, path) from the link to a file as the browser shows it, reading the first segment after
    ``blob/`` as the branch (``%2F`` in it stands for ``/``). :func:`web_url_candidates` gives every reading."""
    repo, [(branch, path), *_] = web_url_candidates(url, provider, api_url)
    return repo, branch, path


def web_url_candidates(url: str, provider: str, api_url: str | None) -> tuple[RepoRef, list[tuple[str, str]]]:
    """The repository, and every (branch, path) the link to a file can mean, the shortest branch first.

    A browser shows ``blob/release/1.2/apps/shop.yaml`` for the branch ``release/1.2``: the link alone cannot say
    where the branch ends, so each split is a candidate and the Git host settles it (git refuses ``release`` and
    ``release/1.2`` as two branches of one repository, so at most one split names a branch). A branch written with
    ``%2F`` is one candidate. Query and fragment (``?plain=1``, ``#L12``) are ignored.
    """
    accepted, prefix = _api_parts(provider, api_url)
    split = _split(url)
    if split is None or split.scheme not in _DEFAULT_PORTS:
        raise UnsupportedRepo(wording.GIT_URL_NOT_FILE.format(url=display_url(url)))
    authority = _authority(split.scheme, split.hostname, split.port)
    host = _match_host(url, authority, accepted, ssh=False, provider=provider)
    segments = split.path.split("/")[1:]
    if host == accepted[-1]:
        segments = _strip_prefix(segments, prefix)
    kind: Provider = "github" if provider == "github" else "gitlab"
    if kind == "github":
        project, rest = segments[:2], segments[2:]
    elif "-" in segments:
        cut = segments.index("-")
        project, rest = segments[:cut], segments[cut + 1 :]
    else:  # GROUP/REPO/blob/... without /-/ is ambiguous with a subgroup called "blob"
        raise UnsupportedRepo(wording.GIT_URL_NOT_FILE.format(url=display_url(url)))
    if len(rest) < 3 or rest[0] not in _FILE_VIEWS or not rest[1]:
        raise UnsupportedRepo(wording.GIT_URL_NOT_FILE.format(url=display_url(url)))
    repo = RepoRef(kind, host, _repo_path(url, kind, project))
    candidates: list[tuple[str, str]] = []
    for cut in range(2, len(rest)):
        try:
            branch = "/".join(unquote(part, errors="strict") for part in rest[1:cut])
        except UnicodeDecodeError:
            raise _refuse("branch", rest[1], "ref") from None
        if cut == 2:  # the first reading decides what is refused; longer ones are only tried when well-formed
            candidates.append((check_ref(branch), _file_path(url, rest[2:])))
            continue
        try:
            candidates.append((check_ref(branch), _file_path(url, rest[cut:])))
        except UnsupportedRepo:
            continue
    return repo, candidates
