"""ResourceDiffs as Argo CD computes them: the live object with the desired one applied, compared with the live one.

Before anything is compared, both sides go through gitops-engine's ``remarshal`` (the round trip of a built-in kind
through its Go type: ``1024Mi`` is ``1Gi``, an empty omitempty field vanishes). That one is ``bot.analysis.remarshal``:
the stand-in's answers are held to Argo CD's own (argodiff) by tests/live/test_argocd_standin.py, so sharing it cannot
hide a bug in it. So are ``three_way_live`` (what the three-way diff leaves out of the live object before it computes
the patch: beyond the last applied configuration, all of a custom resource, a StatefulSet's volumeClaimTemplates)
and ``three_way_config`` (what the patch deletes: set by the last applied configuration, no longer by Git).

Guarantees: ``predict_live`` merges as ``kubectl apply`` would (strategic merge with the merge keys of
``bot/analysis/data/mergekeys.json`` for built-in kinds, read as plain JSON: the merge is the fake's own, not the
analysis'; a JSON merge patch for custom resources); ``resource_diff`` returns a ResourceDiff as
``managed-resources`` serves it, unmasked, its states encoded like Go's ``json.Marshal``, ``group``, ``namespace``
and ``modified`` omitted when empty or false.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from bot.analysis.argocdview import three_way_config, three_way_live
from bot.analysis.remarshal import remarshal
from bot.demo.fake_argocd.masking import _is_secret, normalize_secret
from bot.demo.fake_argocd.objects import Obj, _state, object_key, split_api_version

MERGEKEYS = Path(__file__).resolve().parents[2] / "analysis" / "data" / "mergekeys.json"


@cache
def _merge_keys() -> Obj:
    # Read as plain JSON: the fake must not share code with the analysis it is used to test.
    data: Obj = json.loads(MERGEKEYS.read_text(encoding="utf-8"))
    return data


# Built-in kinds that mergekeys.json does not list but whose merge keys Argo CD's strategic merge knows.
_WEBHOOK_LISTS: dict[str, Obj] = {"webhooks": {"listType": "map", "keys": ["name"]}}
_EXTRA_BUILTIN: dict[tuple[str, str], dict[str, Obj]] = {
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _WEBHOOK_LISTS,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _WEBHOOK_LISTS,
}


def list_semantics(api_version: str, kind: str) -> dict[str, Obj] | None:
    """Path ("spec.template.spec.containers", "[]" for list items) → list semantics for a built-in kind; None for
    kinds without a schema (custom resources), whose lists a JSON merge patch replaces whole."""
    group, _ = split_api_version(api_version)
    entry = _merge_keys()["kinds"].get(kind)
    if entry is not None and split_api_version(entry["apiVersion"])[0] == group:
        lists: dict[str, Obj] = entry["lists"]
        return lists
    return _EXTRA_BUILTIN.get((group, kind))


def _merge(live: Any, desired: Any, path: str, lists: dict[str, Obj] | None, seen: Any = None) -> Any:
    """``desired`` applied onto ``live`` as kubectl apply's strategic merge (built-in kinds) or a JSON merge patch
    (custom resources) would: maps key by key, associative lists by merge key (live order kept, new items
    appended), sets as unions, every other list replaced -- unless it equals ``seen``, the live value as the
    three-way diff sees it (then the patch leaves it alone). A null in ``desired`` deletes the key."""
    if isinstance(desired, dict) and isinstance(live, dict):
        out = dict(live)
        seen = seen if isinstance(seen, dict) else {}
        for key, value in desired.items():
            child = f"{path}.{key}" if path else key
            if value is None:
                out.pop(key, None)
            elif value == [] and lists is not None and out.get(key):
                # a strategic merge patch that empties a list removes the key (an aggregated ClusterRole's rules)
                out.pop(key, None)
            else:
                out[key] = _merge(out[key], value, child, lists, seen.get(key)) if key in out else value
        return out
    if isinstance(desired, list) and isinstance(live, list) and lists is not None:
        spec = lists.get(path) or {}
        if spec.get("listType") == "map":
            return _merge_map_list(live, desired, path, spec, lists)
        if spec.get("listType") == "set":
            return [*live, *(item for item in desired if item not in live)]
    if isinstance(desired, list) and seen == desired:
        return live
    return desired


def _merge_map_list(live: list[Any], desired: list[Any], path: str, spec: Obj, lists: dict[str, Obj]) -> list[Any]:
    keys: list[str] = spec.get("keys") or []
    defaults: Obj = spec.get("keyDefaults") or {}

    def key_of(item: Any) -> str | None:
        if not isinstance(item, dict):
            return None
        return json.dumps([item.get(k, defaults.get(k)) for k in keys], sort_keys=True)

    out = list(live)
    index = {k: i for i, item in enumerate(out) if (k := key_of(item)) is not None}
    for item in desired:
        k = key_of(item)
        if k is not None and k in index:
            out[index[k]] = _merge(out[index[k]], item, f"{path}[]", lists)
        else:
            out.append(item)
            if k is not None:
                index[k] = len(out) - 1
    return out


def predict_live(live: Obj, target: Obj) -> Obj:
    """The live object after Argo CD applied ``target`` to it (predictedLiveState, before normalization)."""
    target = copy.deepcopy(target)
    if _is_secret(target):
        normalize_secret(target)  # Argo CD compares a Secret's stringData as data
    lists = list_semantics(str(target.get("apiVersion", "")), str(target.get("kind", "")))
    seen = three_way_live(target, live)
    patch = three_way_config(target, live)  # what the last applied configuration set and Git no longer does: null
    merged: Obj = json.loads(json.dumps(_merge(live, patch, "", lists, seen)))  # one deep copy of the shared parts
    return merged


def _normalized(obj: Obj, ignore_status: bool) -> Obj:
    obj = copy.deepcopy(obj)
    # gitops-engine's diff.Normalize removes creationTimestamp from both sides and keeps managedFields (Argo CD's UI
    # hides them itself): checked against Argo CD's own diff by tests/live/test_argocd_standin.py.
    (obj.get("metadata") or {}).pop("creationTimestamp", None)
    if ignore_status:
        obj.pop("status", None)
    return obj


def resource_diff(target: Obj | None, live: Obj | None, *, ignore_status: bool = True) -> Obj:
    """A ResourceDiff as ``managed-resources`` returns it (unmasked: ``add_app`` masks Secrets).

    normalizedLiveState is live without creationTimestamp, predictedLiveState the live object with ``target``
    merged in (``predict_live``), also without it (gitops-engine's Normalize); with ``ignore_status`` (Argo CD 3.x
    default ``ignoreResourceStatusField: all``) both lose ``status``. ``modified`` = predicted differs from normalized.
    """
    ref = target if target is not None else live
    if ref is None:
        raise ValueError("a ResourceDiff needs a target or a live object")
    group, kind, namespace, name = object_key(ref)
    diff: Obj = {}
    if group:
        diff["group"] = group
    diff["kind"] = kind
    if namespace:
        diff["namespace"] = namespace
    diff["name"] = name
    diff["targetState"] = _state(target)
    diff["liveState"] = _state(live)
    normalized = _normalized(remarshal(live), ignore_status) if live is not None else None
    if target is None:
        predicted = None
    elif live is None:
        predicted = _normalized(remarshal(target), ignore_status)
    else:
        predicted = _normalized(remarshal(predict_live(remarshal(live), remarshal(target))), ignore_status)
    diff["normalizedLiveState"] = _state(normalized)
    diff["predictedLiveState"] = _state(predicted)
    if live is not None and (live.get("metadata") or {}).get("resourceVersion"):
        diff["resourceVersion"] = live["metadata"]["resourceVersion"]
    # gitops-engine's handleResourceCreateOrDeleteDiff: a live object Git no longer has is Modified: false (Argo CD
    # counts it as OutOfSync through its status' requiresPruning, not through the diff)
    if predicted != normalized and target is not None:
        diff["modified"] = True
    if is_argocd_hook(live if live is not None else ref):
        diff["hook"] = True
    return diff


def _csv(obj: Obj, key: str) -> list[str]:
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(key)
    return [v.strip() for v in str(raw).split(",") if v.strip()] if raw is not None else []


def is_skip(obj: Obj) -> bool:
    """gitops-engine's hook.Skip: the hook types are exactly [Skip] (Helm's are looked at only without Argo CD's)."""
    types = [
        t for t in _csv(obj, "argocd.argoproj.io/hook") if t in ("PreSync", "Sync", "PostSync", "SyncFail", "Skip")
    ]
    return types == ["Skip"]


def is_argocd_hook(obj: Obj) -> bool:
    """Argo CD's controller isHook (controller/hook.go): gitops-engine's hook.IsHook, or a post-delete hook. Written
    here apart from the analysis' own reading, so that the tests compare two readings of Argo CD's code."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if annotations.get("argocd.argoproj.io/hook") == "PostDelete" or annotations.get("helm.sh/hook") == "post-delete":
        return True
    if "argocd.argoproj.io/hook" in annotations:
        return not is_skip(obj)
    return "helm.sh/hook" in annotations and annotations["helm.sh/hook"] != "crd-install"
