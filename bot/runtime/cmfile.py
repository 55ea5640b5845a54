"""Where argocd-cm lives in Git, for the system-level rule's PR (:mod:`bot.runtime.systemfix`).

:func:`locate`: ``ARGOCD_CM_DEFINITION`` (the browser URL of the file), else the sources of the Applications whose
destination is the Argo CD namespace (their plain YAML directories, or their Helm values; up to :data:`MAX_APPS` of
them, one named after Argo CD first: an app of apps has that destination too); the file is a ConfigMap manifest or
argo-helm values (``configs.cm``). Read-only: it lists, reads and never writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import yaml

from bot.sources.argocd import ArgoCDClient
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
from bot.wording import slack as wording

if TYPE_CHECKING:  # the editors (ruamel.yaml) load with the first system PR, not at start
    from bot.fixes.cmedit import Form

MAX_FILES = 200
MAX_APPS = 10
"""Up to this many Applications whose destination is the Argo CD namespace are looked in."""


@dataclass(frozen=True)
class CMFile:
    repo: RepoRef
    base: str
    head: str
    file: FileContent
    form: Form


def _form(text: str) -> Form | None:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return None
    for d in docs:
        if (
            isinstance(d, dict)
            and d.get("kind") == "ConfigMap"
            and (d.get("metadata") or {}).get("name") == "argocd-cm"
        ):
            return "configmap"
    if len(docs) == 1 and isinstance(docs[0], dict) and "kind" not in docs[0]:
        return "helm"
    return None


async def locate(definition: str | None, provider: str | None, api_url: str | None, argocd: ArgoCDClient,
                 git: GitHost) -> CMFile | str:  # fmt: skip
    """The file holding argocd-cm, or why it was not found (a sentence)."""
    provider = provider or "github"
    if definition:
        try:
            repo, candidates = web_url_candidates(definition, provider, api_url)
        except UnsupportedRepo as e:
            return str(e)
        for branch, path in candidates:
            try:
                head = await git.branch_head(repo, branch)
            except GitHostError as e:
                if e.kind == "not-found":
                    continue
                raise
            file = await git.get_file(repo, path, head)
            form = _form(file.text)
            if form is None:
                return wording.SLACK_CM_NOT_IN_FILE.format(path=path, repo=repo)
            return CMFile(repo, branch, head, file, form)
        return wording.SLACK_CM_NO_BRANCH.format(url=definition)
    return await _self_managed(api_url, argocd, git, provider)


async def _self_managed(api_url: str | None, argocd: ArgoCDClient, git: GitHost, provider: str) -> CMFile | str:
    apps = await argocd.applications()
    namespaces = {str((a.get("metadata") or {}).get("namespace") or "argocd") for a in apps} or {"argocd"}
    managing = [a for a in apps if ((a.get("spec") or {}).get("destination") or {}).get("namespace") in namespaces]
    if not managing:
        return wording.SLACK_CM_NO_APP.format(namespace=", ".join(sorted(namespaces)))
    # an app of apps has the Argo CD namespace as its destination too (it applies Applications there): each such app
    # is looked in, one named after Argo CD first
    managing.sort(key=lambda a: "argo" not in _name(a).lower())
    unread: list[str] = []  # sources whose repository argo-why cannot use: said, never skipped in silence
    for app in managing[:MAX_APPS]:
        try:
            found = await _in_source(app, api_url, git, provider, unread)
        except GitHostError as e:
            if e.kind != "not-found":
                raise
            continue  # its repository, revision or path is not there (any more): the next one
        if found is not None:
            return found
    refusal = wording.SLACK_CM_NOT_FOUND.format(apps=", ".join(_name(a) for a in managing[:MAX_APPS]))
    return refusal + (wording.SLACK_CM_UNREAD.format(sources="; ".join(unread)) if unread else "")


def _name(app: dict[str, Any]) -> str:
    return str((app.get("metadata") or {}).get("name") or "")


async def _in_source(app: dict[str, Any], api_url: str | None, git: GitHost, provider: str,
                     unread: list[str]) -> CMFile | None:  # fmt: skip
    """The file holding argocd-cm in ``app``'s source(s), if any; a source whose repository argo-why cannot use is
    added to ``unread`` (the app and why)."""
    spec = app.get("spec") or {}
    sources = spec.get("sources") or [spec.get("source") or {}]
    for source in sources:
        try:
            repo = parse_repo_url(str(source.get("repoURL") or ""), provider, api_url)
            raw = str(source.get("path") or "").strip().strip("/")
            base_path = "" if raw in ("", ".") else check_repo_path(raw, directory=True)
        except UnsupportedRepo as e:
            unread.append(wording.SLACK_CM_UNREAD_ONE.format(app=_name(app), reason=str(e).rstrip(".")))
            continue
        revision = str(source.get("targetRevision") or "HEAD")
        base = await git.default_branch(repo) if revision == "HEAD" else revision
        head = await git.branch_head(repo, base)
        helm = source.get("helm") if isinstance(source.get("helm"), dict) else None
        files = await git.list_files(repo, base_path, head, recursive=True)
        kind: Literal["helm", "dir"] = "helm" if helm is not None or any(
            f.rsplit("/", 1)[-1] == "Chart.yaml" for f in files) else "dir"  # fmt: skip
        if kind == "helm":
            wanted = [str(v) for v in (helm or {}).get("valueFiles") or []] or ["values.yaml"]
            candidates = [f"{base_path}/{v}".lstrip("/") for v in wanted if not v.startswith(("$", "/"))]
        else:
            candidates = sorted(f for f in files if f.endswith((".yaml", ".yml")))[:MAX_FILES]
        for path in candidates:
            if path not in files:
                continue
            file = await git.get_file(repo, path, head)
            form = _form(file.text)
            if form == "configmap" or (form == "helm" and kind == "helm"):
                return CMFile(repo, base, head, file, form)
    return None
