"""Where an Application is defined in Git, in the order the README promises ("Fixes from chat: Open PR", step 2).

1. The Application's ``argo-why.io/definition`` annotation: the web URL of the file. A branch holding ``/``
   (``blob/release/1.2/apps/shop.yaml``) is found by asking the host for each reading, the shortest first (one
   call per ``/`` at most).
2. App of apps: the parent Application that tracks it (tracking-id annotation ``PARENT:argoproj.io/Application:
   NS/NAME``, or the ``app.kubernetes.io/instance`` label under label tracking); the parent's ``source`` (or the
   ``sources[]`` entry that holds it) gives repository, path and targetRevision (``HEAD``: the default branch);
   the files under that path (recursively when ``directory.recurse``; ``include``/``exclude`` honoured) are
   searched for the YAML document of kind Application with that name and namespace.
3. An Application owned by an ApplicationSet: the ApplicationSet, found the same two ways.
4. Otherwise :class:`NoDefinition` with the reason, for the thread (which shows the YAML to paste).

Reads only: Argo CD ``GET``s (the Application objects) and Git host reads. The number of Git calls is bounded by
the parent's own path (one listing of it, then its files until the document is found, at most
:data:`MAX_FILES`), never by the size of the repository. :meth:`Locator.manifest` finds, the same way, the plain
YAML manifest of one object in an Application's own source, for a fix in the source.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import yaml

from bot.sources.git import (
    FileContent,
    GitHost,
    GitHostError,
    RepoRef,
    UnsupportedRepo,
    check_repo_path,
    parse_repo_url,
    web_url_candidates,
)
from bot.wording import pr as wording

DEFINITION_ANNOTATION = "argo-why.io/definition"
TRACKING_ID = "argocd.argoproj.io/tracking-id"
INSTANCE_LABEL = "app.kubernetes.io/instance"
MAX_FILES = 200
_MANIFEST = (".yaml", ".yml", ".json")
_TRACKED_APP = re.compile(r"^(?P<parent>[^:]+):argoproj\.io/(?P<kind>Application|ApplicationSet):(?P<ns>[^/]*)/")

DocKind = Literal["Application", "ApplicationSet"] | str


class ArgoCDReader(Protocol):
    async def application(self, name: str, app_namespace: str | None = None) -> dict[str, Any]: ...

    async def applicationset(self, name: str, appset_namespace: str | None = None) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Definition:
    """The file to edit, read at the head of the branch the pull request will target."""

    repo: RepoRef
    base: str
    head: str
    """The commit the fix branch starts from (the base branch's current head)."""
    file: FileContent
    kind: DocKind
    name: str
    namespace: str | None
    found_by: str
    """How it was found, for the thread and the PR (``the argo-why.io/definition annotation``, ...)."""
    applicationset: str | None = None
    """Set when the edit goes into an ApplicationSet's template: every generated Application gets the rule."""


@dataclass(frozen=True)
class NoDefinition:
    reason: str


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def parent_of(obj: dict[str, Any]) -> tuple[str, str | None] | None:
    """The Application that tracks ``obj`` (its name, and namespace when the tracking id says), or ``None``."""
    meta = _meta(obj)
    tracking = (meta.get("annotations") or {}).get(TRACKING_ID)
    if isinstance(tracking, str) and (m := _TRACKED_APP.match(tracking)):
        return _split_instance(m["parent"])
    instance = (meta.get("labels") or {}).get(INSTANCE_LABEL)
    if isinstance(instance, str) and instance and instance != meta.get("name"):
        return _split_instance(instance)
    return None


def _split_instance(value: str) -> tuple[str, str | None]:
    # apps in any namespace are tracked as "<namespace>_<name>"
    ns, sep, name = value.partition("_")
    return (name, ns) if sep and name else (value, None)


def _owner_appset(app: dict[str, Any]) -> str | None:
    for ref in _meta(app).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == "ApplicationSet" and ref.get("name"):
            return str(ref["name"])
    return None


def _sources(app: dict[str, Any]) -> list[dict[str, Any]]:
    spec = app.get("spec") or {}
    sources = spec.get("sources") or ([spec["source"]] if spec.get("source") else [])
    return [s for s in sources if isinstance(s, dict)]


def _globs(value: Any) -> list[str]:
    """Argo CD's ``include``/``exclude``: a glob, or ``{a,b}`` alternatives."""
    if not isinstance(value, str) or not value.strip():
        return []
    text = value.strip()
    if text.startswith("{") and text.endswith("}"):
        return [p.strip() for p in text[1:-1].split(",") if p.strip()]
    return [text]


def _selected(files: Iterable[str], base: str, directory: dict[str, Any]) -> list[str]:
    include, exclude = _globs(directory.get("include")), _globs(directory.get("exclude"))
    out = []
    for path in files:
        rel = path[len(base) :].lstrip("/") if base and path.startswith(base) else path
        if not rel.endswith(_MANIFEST):
            continue
        if include and not any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel.rsplit("/", 1)[-1], g) for g in include):
            continue
        if any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel.rsplit("/", 1)[-1], g) for g in exclude):
            continue
        out.append(path)
    return out


def documents(text: str) -> list[dict[str, Any]] | None:
    """The YAML documents of a file, or ``None`` when it does not parse as plain YAML (a template, ...)."""
    try:
        return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError:
        return None


def matches(doc: dict[str, Any], kind: str, name: str, namespace: str | None) -> bool:
    """``doc`` is the object: same kind and name; same namespace, or none written (the destination's)."""
    meta = _meta(doc)
    if doc.get("kind") != kind or meta.get("name") != name:
        return False
    written = meta.get("namespace")
    return written is None or namespace is None or written == namespace


class Locator:
    """Finds definitions with an Argo CD client and a Git host; ``provider``/``api_url`` decide accepted hosts."""

    def __init__(self, argocd: ArgoCDReader, git: GitHost, *, provider: str, api_url: str | None) -> None:
        self.argocd = argocd
        self.git = git
        self.provider = provider
        self.api_url = api_url

    async def application(self, app: dict[str, Any]) -> Definition | NoDefinition:
        meta = _meta(app)
        name, ns = str(meta.get("name") or ""), meta.get("namespace")
        found = await self._find(app, "Application", name, ns)
        if isinstance(found, Definition):
            return found
        appset = _owner_appset(app)
        if appset is None:
            return found
        owner = await self.argocd.applicationset(appset, ns)
        in_template = await self._find(owner, "ApplicationSet", appset, _meta(owner).get("namespace") or ns)
        if isinstance(in_template, NoDefinition):
            return NoDefinition(wording.LOCATE_APPSET.format(appset=appset, reason=in_template.reason))
        return _with_appset(in_template, appset)

    async def manifest(self, app: dict[str, Any], kind: str, name: str, namespace: str | None
                       ) -> Definition | NoDefinition:  # fmt: skip
        """The plain YAML file in ``app``'s own source that holds ``kind``/``name`` (a fix in the source)."""
        kinds = [str(t) for t in ((app.get("status") or {}).get("sourceTypes") or [])]
        kinds = kinds or [str((app.get("status") or {}).get("sourceType") or "Directory")]
        reasons: list[str] = []
        for i, source in enumerate(_sources(app)):
            source_type = kinds[i] if i < len(kinds) else kinds[-1]
            if source_type != "Directory" or source.get("chart") or source.get("helm") or source.get("kustomize"):
                reasons.append(wording.LOCATE_NOT_PLAIN.format(type=source_type))
                continue
            found = await self._search(source, kind, name, namespace, "")
            if isinstance(found, Definition):
                return found
            reasons.append(found.reason)
        return NoDefinition(" ".join(reasons) or wording.LOCATE_NO_SOURCE)

    async def _find(self, obj: dict[str, Any], kind: str, name: str, namespace: str | None
                    ) -> Definition | NoDefinition:  # fmt: skip
        url = (_meta(obj).get("annotations") or {}).get(DEFINITION_ANNOTATION)
        if isinstance(url, str) and url.strip():
            return await self._from_url(url.strip(), kind, name, namespace)
        parent = parent_of(obj)
        if parent is None:
            return NoDefinition(wording.LOCATE_NOTHING.format(kind=kind, name=name, annotation=DEFINITION_ANNOTATION))
        parent_app = await self.argocd.application(parent[0], parent[1])
        reasons: list[str] = []
        for source in _sources(parent_app):
            found = await self._search(source, kind, name, namespace, wording.LOCATE_BY_PARENT.format(parent=parent[0]))
            if isinstance(found, Definition):
                return found
            reasons.append(found.reason)
        return NoDefinition(" ".join(reasons) or wording.LOCATE_PARENT_NO_SOURCE.format(parent=parent[0]))

    async def _from_url(self, url: str, kind: str, name: str, namespace: str | None) -> Definition | NoDefinition:
        try:
            repo, candidates = web_url_candidates(url, self.provider, self.api_url)
        except UnsupportedRepo as e:
            return NoDefinition(str(e))
        resolved: tuple[str, str, str] | None = None
        for candidate, candidate_path in candidates:  # the usual link has one reading: one call
            answer = await self._head(repo, candidate)
            if isinstance(answer, str):
                resolved = (candidate, candidate_path, answer)
                break
        if resolved is None:
            return NoDefinition(wording.LOCATE_NOT_A_BRANCH.format(branch=candidates[0][0], repo=repo))
        branch, path, head = resolved
        file = await self.git.get_file(repo, path, head)
        docs = documents(file.text)
        if docs is not None and not any(matches(d, kind, name, namespace) for d in docs):
            return NoDefinition(wording.LOCATE_NOT_IN_FILE.format(kind=kind, name=name, path=path, repo=repo))
        return Definition(repo, branch, head, file, kind, name, namespace, wording.LOCATE_BY_ANNOTATION)

    async def _head(self, repo: RepoRef, branch: str) -> str | NoDefinition:
        try:
            return await self.git.branch_head(repo, branch)
        except GitHostError as e:
            if e.kind == "not-found":
                return NoDefinition(wording.LOCATE_NOT_A_BRANCH.format(branch=branch, repo=repo))
            raise

    async def _search(self, source: dict[str, Any], kind: str, name: str, namespace: str | None,
                      found_by: str) -> Definition | NoDefinition:  # fmt: skip
        if source.get("chart") or source.get("helm"):
            return NoDefinition(wording.LOCATE_HELM.format(kind=kind, name=name))
        try:
            repo = parse_repo_url(str(source.get("repoURL") or ""), self.provider, self.api_url)
            raw = str(source.get("path") or "").strip().strip("/")
            path = "" if raw in ("", ".") else check_repo_path(raw, directory=True)  # "." is the repository's root
        except UnsupportedRepo as e:
            return NoDefinition(str(e))
        revision = str(source.get("targetRevision") or "HEAD")
        base = await self.git.default_branch(repo) if revision == "HEAD" else revision
        head = await self._head(repo, base)
        if isinstance(head, NoDefinition):
            return head
        directory = source.get("directory") if isinstance(source.get("directory"), dict) else {}
        listed = await self.git.list_files(repo, path, head, recursive=bool((directory or {}).get("recurse")))
        files = _selected(listed, path, directory or {})
        # files named after the object first: the usual layout, and the fewest reads
        files.sort(key=lambda p: (name not in p.rsplit("/", 1)[-1], p))
        unparsed: FileContent | None = None
        for file_path in files[:MAX_FILES]:
            file = await self.git.get_file(repo, file_path, head)
            if name not in file.text:
                continue
            docs = documents(file.text)
            if docs is None:
                unparsed = unparsed or file  # a template that names it: the editor will say why it cannot edit
                continue
            if any(matches(d, kind, name, namespace) for d in docs):
                return Definition(repo, base, head, file, kind, name, namespace, found_by or wording.LOCATE_BY_SOURCE)
        if unparsed is not None:
            return Definition(repo, base, head, unparsed, kind, name, namespace, found_by or wording.LOCATE_BY_SOURCE)
        where = f"{path or '/'}" + (" (recursively)" if (directory or {}).get("recurse") else "")
        return NoDefinition(wording.LOCATE_NOT_FOUND.format(kind=kind, name=name, path=where, repo=repo,
                                                            revision=base))  # fmt: skip


def _with_appset(d: Definition, appset: str) -> Definition:
    return Definition(d.repo, d.base, d.head, d.file, d.kind, d.name, d.namespace,
                      wording.LOCATE_BY_APPSET.format(appset=appset, how=d.found_by), appset)  # fmt: skip
