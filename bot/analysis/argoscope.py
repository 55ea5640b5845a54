"""Which resources Argo CD leaves out of an Application's sync status, and which ones it would prune.

Argo CD's controller (``controller/state.go`` ``CompareAppState`` in argoproj/argo-cd 3.x, with gitops-engine's
``pkg/sync/hook`` and ``pkg/sync/ignore``) gives no sync status to, and so never counts as OutOfSync:

* a **hook**: an object with the ``argocd.argoproj.io/hook`` annotation (any value, unless it is ``Skip`` alone),
  or, without it, with ``helm.sh/hook`` (any value but ``crd-install``: Helm 2 used it for CRDs, which are no hooks),
  or a post-delete hook (``argocd.argoproj.io/hook: PostDelete``, ``helm.sh/hook: post-delete``). The live object is
  looked at when there is one, else Git's. ``managed-resources`` never lists hooks either;
* a resource Git marks ``argocd.argoproj.io/hook: Skip`` (Argo CD never applies it);
* a live object that only the cluster has and that says ``argocd.argoproj.io/compare-options: IgnoreExtraneous``
  (it shows as "requires pruning" but leaves the app Synced);
* a kind ``argocd-cm`` excludes (``resource.exclusions``, or not in ``resource.inclusions`` when those name the
  cluster): Argo CD drops it from the target state with an ``ExcludedResourceWarning``.

A live object only the cluster has "requires pruning" when the app tracks it: with annotation tracking, its
tracking id names this app and this very object (Argo CD's ``isSelfReferencedObj``: a copied annotation does not
count); with label tracking, its ``app.kubernetes.io/instance`` label names the app and no ownerReference makes it
another object's child (what a controller creates from a template that carries the label).

Guarantees: pure; CSV annotation values are split and trimmed as gitops-engine's ``GetAnnotationCSVs`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from fnmatch import fnmatchcase
from typing import Any, Literal

from bot.analysis.context import COMPARE_OPTIONS, annotations_of, meta, same_app, tracked_app
from bot.analysis.schema import group_of

HOOK = "argocd.argoproj.io/hook"
HELM_HOOK = "helm.sh/hook"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
_HOOK_TYPES = frozenset({"PreSync", "Sync", "PostSync", "SyncFail", "Skip"})
_HELM_HOOK_TYPES = frozenset({"pre-install", "pre-upgrade", "post-upgrade", "post-install"})

SkipReason = Literal["hook", "sync-skip", "ignore-extraneous", "excluded"]


def csv(obj: dict[str, Any], key: str) -> set[str]:
    """The comma-separated values of annotation ``key``, trimmed, empty ones dropped."""
    raw = annotations_of(obj).get(key)
    return {v.strip() for v in str(raw).split(",") if v.strip()} if raw is not None else set()


def _types(obj: dict[str, Any]) -> list[str]:
    types = [t for t in csv(obj, HOOK) if t in _HOOK_TYPES]
    return types or [t for t in csv(obj, HELM_HOOK) if t in _HELM_HOOK_TYPES]


def is_sync_skip(obj: dict[str, Any]) -> bool:
    """``argocd.argoproj.io/hook: Skip`` and no other hook type: Argo CD never applies the object."""
    return _types(obj) == ["Skip"]


def is_hook(obj: dict[str, Any]) -> bool:
    """Argo CD's ``isHook``: gitops-engine's hook test, or a post-delete hook."""
    ann = annotations_of(obj)
    if ann.get(HOOK) in ("PostDelete",) or ann.get(HELM_HOOK) in ("post-delete",):
        return True
    if HOOK in ann:
        return not is_sync_skip(obj)
    return HELM_HOOK in ann and ann.get(HELM_HOOK) != "crd-install"


def ignores_extraneous(obj: dict[str, Any]) -> bool:
    return "IgnoreExtraneous" in csv(obj, COMPARE_OPTIONS)


def _may_be_skipped(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` has an annotation :func:`skip_reason` reads."""
    ann = annotations_of(obj)
    return bool(ann) and (HOOK in ann or HELM_HOOK in ann or COMPARE_OPTIONS in ann)


def skip_reason(desired: dict[str, Any] | None, live: dict[str, Any] | None) -> SkipReason | None:
    """Why Argo CD gives this pair no sync status (``None``: it compares it)."""
    if not any(_may_be_skipped(obj) for obj in (desired, live) if obj is not None):
        return None  # no hook annotation, no compare option (nearly every object)
    if is_hook(live if live is not None else desired or {}):
        return "hook"
    if desired is not None and is_sync_skip(desired):
        return "sync-skip"
    if desired is None and live is not None and ignores_extraneous(live):
        return "ignore-extraneous"
    return None


def _filters(argocd_cm: dict[str, Any] | None, key: str) -> tuple[dict[str, Any], ...]:
    text = ((argocd_cm or {}).get("data") or {}).get(key)
    return _parsed_filters(text) if isinstance(text, str) else ()


@functools.lru_cache(maxsize=16)
def _parsed_filters(text: str) -> tuple[dict[str, Any], ...]:
    """The rules of one ``resource.exclusions`` or ``resource.inclusions`` text, parsed once: :func:`excluded` asks
    for every object of the app (read only, never changed)."""
    import yaml  # only when argocd-cm is in the context and says this: explain of JSON input never pays its import

    try:
        body = yaml.safe_load(text)
    except yaml.YAMLError:
        return ()
    return tuple(r for r in body if isinstance(r, dict)) if isinstance(body, list) else ()


def _matches(values: Any, text: str, *, glob: bool = True) -> bool:
    items = [str(v) for v in values or [] if v is not None]
    if not items:
        return True
    return any(v == "*" or v == text or (glob and fnmatchcase(text, v)) for v in items)


def _match(rule: dict[str, Any], group: str, kind: str, cluster: str | None) -> bool:
    clusters = rule.get("clusters")
    cluster_ok = (
        _matches(clusters, cluster) if cluster is not None else not clusters or "*" in [str(c) for c in clusters]
    )
    return _matches(rule.get("apiGroups"), group) and _matches(rule.get("kinds"), kind, glob=False) and cluster_ok


def excluded(obj: dict[str, Any], argocd_cm: dict[str, Any] | None, cluster: str | None = None) -> bool:
    """argocd-cm's ``resource.exclusions``/``resource.inclusions`` leave this kind out (util/settings
    ``IsExcludedResource``); ``cluster`` is the destination's server URL when known."""
    if not argocd_cm:
        return False  # no argocd-cm read: nothing excluded (asked for every object of the app)
    group, kind = group_of(str(obj.get("apiVersion") or "")), str(obj.get("kind") or "")
    if any(_match(r, group, kind, cluster) for r in _filters(argocd_cm, "resource.exclusions")):
        return True
    inclusions = _filters(argocd_cm, "resource.inclusions")
    if any(_match(r, group, kind, cluster) for r in inclusions):
        return False
    return any(_match({"clusters": r.get("clusters")}, "", "", cluster) for r in inclusions)


def _tracking_id(obj: dict[str, Any], app: str) -> str:
    m = meta(obj)
    group = group_of(str(obj.get("apiVersion") or ""))
    return f"{app}:{group}/{obj.get('kind')}:{m.get('namespace') or ''}/{m.get('name')}"


def tracks(live: dict[str, Any], app: str | None) -> bool:
    """The app tracks this live object as its own (see the module docstring)."""
    if not app:
        return False
    name, how = tracked_app(live)
    if name is None or not same_app(name, app):
        return False
    if how == "label":
        return not meta(live).get("ownerReferences")
    tid = str(annotations_of(live).get("argocd.argoproj.io/tracking-id") or "")
    own = _tracking_id(live, name)
    if tid == own:
        return True
    # a cluster-scoped object's tracking id carries the destination namespace: it names the object all the same
    head, _, rest = tid.rpartition("/")
    return (
        not meta(live).get("namespace")
        and head.rsplit(":", 1)[0] == own.rsplit(":", 1)[0]
        and rest == str(meta(live).get("name"))
    )


def prune_option(live: dict[str, Any]) -> str | None:
    """The object's own ``Prune=false`` or ``Prune=confirm`` sync option, if any."""
    options = csv(live, SYNC_OPTIONS)
    return next((o for o in ("Prune=false", "Prune=confirm") if o in options), None)


def destination_server(applications: Iterable[dict[str, Any]], app: str | None) -> str | None:
    for a in applications:
        if app and meta(a).get("name") == app:
            server = ((a.get("spec") or {}).get("destination") or {}).get("server")
            return str(server) if server else None
    return None
