"""What Argo CD reports for a casebook scenario: the Application, its ResourceDiffs, its renders and resource tree.

Guarantees: everything built here is deterministic (fixed revisions, times and uids derived from names), so the
demo's transcript and the tests' expectations do not change from one run to the next. ``build_application`` derives
``status`` (sync status per resource, health for the kinds Argo CD has a health check for, the last sync's result,
``SharedResourceWarning`` conditions) from the ResourceDiffs; ``app_from_case`` pairs every desired object with its
live counterpart as Argo CD does (namespaced objects without a namespace land in the destination namespace).
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bot.demo.fake_argocd.diffs import _csv, is_skip, resource_diff
from bot.demo.fake_argocd.objects import Key, Obj, _loads_state, load_manifests, object_key, split_api_version

#: The revision every Application built by ``app_from_case`` is synced to (a full commit SHA, as Argo CD reports it).
REVISION = "9f3c2a1d5be4c1a0e2f7b8c9d0a1b2c3d4e5f607"
PREVIOUS_REVISION = "4b1e0c7d2a9f8e3b6c5d4a1f0e9d8c7b6a5f4e3d"
IN_CLUSTER = "https://kubernetes.default.svc"
REPO_URL = "https://git.example.com/platform/deploy.git"
TRACKING_ID = "argocd.argoproj.io/tracking-id"
COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"
# Fixed times keep the Applications deterministic; reconciledAt lies after finishedAt, as after a sync that did not
# settle the app (the notifications trigger in deploy/argocd-notifications/ relies on exactly that).
CREATED_AT = "2026-01-15T08:30:00Z"
PREVIOUS_DEPLOYED_AT = "2026-11-01T16:42:10Z"
STARTED_AT = "2026-11-02T10:00:00Z"
FINISHED_AT = "2026-11-02T10:00:07Z"
RECONCILED_AT = "2026-11-02T10:00:31Z"

# Kinds Argo CD has a built-in health check for; others get no "health" in the tree and in status.resources.
_HEALTH_KINDS = frozenset(
    [
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Pod",
        "Service",
        "Ingress",
        "PersistentVolumeClaim",
        "HorizontalPodAutoscaler",
        "Job",
        "Application",
        "Rollout",
    ]
)


def _diff_key(diff: Obj) -> Key:
    return str(diff.get("group", "")), str(diff["kind"]), str(diff.get("namespace", "")), str(diff["name"])


def listed_app(app: Obj) -> Obj:
    """An Application as the list shows it: with ``resourceHealthSource: appTree`` (Argo CD 3.x) the resources'
    health lives in the resource tree, and only a single Application's answer fills it in."""
    status = app.get("status") or {}
    if status.get("resourceHealthSource") != "appTree" or not status.get("resources"):
        return app
    resources = [{k: v for k, v in r.items() if k != "health"} for r in status["resources"]]
    return {**app, "status": {**status, "resources": resources}}


def default_project_meta() -> Obj:
    """The metadata of the ``default`` AppProject argocd-server creates at start-up (its manager: ``argocd``)."""
    fields: Obj = {"f:spec": {".": {}, "f:clusterResourceWhitelist": {}, "f:destinations": {}, "f:sourceRepos": {}},
              "f:status": {}}  # fmt: skip
    entry = {"manager": "argocd", "operation": "Update", "apiVersion": "argoproj.io/v1alpha1",
             "time": "2026-10-20T12:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields}  # fmt: skip
    return {"name": "default", "namespace": "argocd", "uid": "3662ec18-ed7d-42d9-98ef-44a5b2fbd480",
            "resourceVersion": "1", "generation": 1, "creationTimestamp": "2026-10-20T12:00:00Z",
            "managedFields": [entry]}  # fmt: skip


def deployment_health(live: Obj) -> Obj:
    """gitops-engine's health of a Deployment (pkg/health/health_deployment.go), without the paused and
    progress-deadline cases: Progressing, with Argo CD's message, until the controller has rolled out every replica."""
    meta, spec, status = live.get("metadata") or {}, live.get("spec") or {}, live.get("status") or {}
    if int(meta.get("generation") or 0) > int(status.get("observedGeneration") or 0):
        message = "Waiting for rollout to finish: observed deployment generation less than desired generation"
        return {"status": "Progressing", "message": message}
    updated, replicas = int(status.get("updatedReplicas") or 0), spec.get("replicas")
    if replicas is not None and updated < int(replicas):
        message = f"Waiting for rollout to finish: {updated} out of {replicas} new replicas have been updated..."
        return {"status": "Progressing", "message": message}
    old, available = int(status.get("replicas") or 0) - updated, int(status.get("availableReplicas") or 0)
    if old > 0:
        return {"status": "Progressing", "message": f"Waiting for rollout to finish: {old} old replicas are pending "
                                                    "termination..."}  # fmt: skip
    if available < updated:
        return {"status": "Progressing", "message": f"Waiting for rollout to finish: {available} of {updated} updated "
                                                    "replicas are available..."}  # fmt: skip
    return {"status": "Healthy"}


def build_tree(resources: list[Obj], lives: dict[Key, Obj]) -> Obj:
    """The resource tree Argo CD shows for these resources: one node per live object (no children)."""
    nodes: list[Obj] = []
    for diff in resources:
        live = lives.get(_diff_key(diff))
        if live is None:
            continue
        group, version = split_api_version(str(live.get("apiVersion", "")))
        meta = live.get("metadata") or {}
        node: Obj = {}
        if group:
            node["group"] = group
        node.update(version=version, kind=live.get("kind"))
        if meta.get("namespace"):
            node["namespace"] = meta["namespace"]
        node["name"] = meta.get("name")
        node["uid"] = meta.get("uid") or str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(_diff_key(diff))))
        if meta.get("resourceVersion"):
            node["resourceVersion"] = meta["resourceVersion"]
        if live.get("kind") == "Deployment":
            node["health"] = deployment_health(live)
        elif live.get("kind") in _HEALTH_KINDS:
            node["health"] = {"status": "Healthy"}
        if meta.get("creationTimestamp"):
            node["createdAt"] = meta["creationTimestamp"]
        nodes.append(node)
    return {"nodes": nodes}


def _destination_namespace(desired: list[Obj]) -> str:
    counts = Counter(ns for obj in desired if (ns := (obj.get("metadata") or {}).get("namespace")))
    if counts:
        return str(counts.most_common(1)[0][0])
    # Only cluster-scoped objects: their tracking id carries the destination namespace.
    for obj in desired:
        tracking = ((obj.get("metadata") or {}).get("annotations") or {}).get(TRACKING_ID, "")
        if (m := re.fullmatch(r"[^:]+:[^:]*:([^/]*)/.+", str(tracking))) and m[1]:
            return m[1]
    return "default"


def _tracking_app(live: Obj) -> str | None:
    meta = live.get("metadata") or {}
    tracking = (meta.get("annotations") or {}).get(TRACKING_ID)
    if isinstance(tracking, str) and ":" in tracking:
        return tracking.split(":", 1)[0].replace("_", "/")
    label = (meta.get("labels") or {}).get("app.kubernetes.io/instance")
    return label if isinstance(label, str) else None


def _uses_server_side_apply(lives: list[Obj]) -> bool:
    return any(
        entry.get("manager") in ("argocd-controller", "argocd-application-controller")
        and entry.get("operation") == "Apply"
        for live in lives
        for entry in (live.get("metadata") or {}).get("managedFields") or []
    )


def build_application(
    name: str,
    destination_namespace: str,
    resources: list[Obj],
    *,
    self_heal: bool = False,
    server_side_apply: bool = False,
    project: str = "default",
    git_at: str | None = None,
) -> Obj:
    """A synced Application as argocd-server returns it, with ``status`` derived from ``resources``. ``git_at``: Git
    has moved on to this revision since the last sync (which applied ``REVISION``): the comparison's revision."""
    source = {"repoURL": REPO_URL, "path": f"apps/{name}", "targetRevision": "main"}
    destination = {"server": IN_CLUSTER, "namespace": destination_namespace}
    sync_policy: Obj = {}
    if self_heal:
        sync_policy["automated"] = {"prune": True, "selfHeal": True}
    sync_policy["syncOptions"] = ["CreateNamespace=true"] + (["ServerSideApply=true"] * server_side_apply)
    initiated_by: Obj = {"automated": True} if self_heal else {"username": "admin"}
    sync_operation: Obj = {"revision": REVISION, "syncStrategy": {"hook": {}}}
    if self_heal:
        sync_operation["autoHealAttemptsCount"] = 3  # omitempty in Go: absent for manual syncs

    statuses, results, conditions = [], [], []
    out_of_sync = False
    for diff in resources:
        live = _loads_state(diff.get("liveState"))
        target = _loads_state(diff.get("targetState"))
        ref = target or live or {}
        _, version = split_api_version(str(ref.get("apiVersion", "")))
        group, kind = str(diff.get("group", "")), str(diff["kind"])
        modified = bool(diff.get("modified"))
        # controller/state.go CompareAppState: hooks and `hook: Skip` get no sync status; a live object Git no longer
        # has requires pruning and is OutOfSync, but leaves the app Synced when it says IgnoreExtraneous
        uncounted = bool(diff.get("hook")) or (target is not None and is_skip(target))
        extraneous = target is None and live is not None
        differs = modified or target is None or live is None
        if not uncounted and differs:
            out_of_sync |= not (extraneous and "IgnoreExtraneous" in _csv(live or {}, COMPARE_OPTIONS))
        status: Obj = {}
        if group:
            status["group"] = group
        status.update(version=version, kind=kind)
        if diff.get("namespace"):
            status["namespace"] = diff["namespace"]
        status["name"] = diff["name"]
        if not uncounted:
            status["status"] = "OutOfSync" if differs else "Synced"
        if kind in _HEALTH_KINDS:
            status["health"] = {"status": "Healthy" if live is not None else "Missing"}
        if diff.get("hook"):
            status["hook"] = True
        if extraneous:
            status["requiresPruning"] = True
        statuses.append(status)
        if uncounted or live is None:
            continue  # hooks have results of their own; a resource missing now was not applied by this sync
        qualified = f"{kind.lower()}.{group}" if group else kind.lower()
        message = (
            "serverside-applied"
            if server_side_apply
            else f"{qualified}/{diff['name']} " + ("configured" if modified else "unchanged")
        )
        # ResourceResult has no omitempty on group/namespace: core and cluster-scoped show "".
        results.append(
            {
                "group": group,
                "version": version,
                "kind": kind,
                "namespace": diff.get("namespace", ""),
                "name": diff["name"],
                "status": "PruneSkipped" if extraneous else "Synced",
                "message": "ignored (requires pruning)" if extraneous else message,
                "hookPhase": "Running",
                "syncPhase": "Sync",
            }
        )
        other = _tracking_app(live) if live is not None else None
        if other is not None and other != name and other != f"argocd/{name}":
            conditions.append(
                {
                    "type": "SharedResourceWarning",
                    "message": f"{kind}/{diff['name']} is part of applications argocd/{name} and {other}",
                    "lastTransitionTime": RECONCILED_AT,
                }
            )

    status_block: Obj = {
        "resources": statuses,
        "sync": {
            "status": "OutOfSync" if out_of_sync else "Synced",
            "comparedTo": {"source": source, "destination": destination},
            "revision": git_at or REVISION,
        },
        "health": {"status": "Healthy", "lastTransitionTime": FINISHED_AT},
        "history": [
            {
                "revision": PREVIOUS_REVISION,
                "deployedAt": PREVIOUS_DEPLOYED_AT,
                "id": 6,
                "source": source,
                "deployStartedAt": PREVIOUS_DEPLOYED_AT,
                "initiatedBy": {"username": "admin"},
            },
            {
                "revision": REVISION,
                "deployedAt": FINISHED_AT,
                "id": 7,
                "source": source,
                "deployStartedAt": STARTED_AT,
                "initiatedBy": initiated_by,
            },
        ],
        "reconciledAt": RECONCILED_AT,
        "operationState": {
            "operation": {"sync": sync_operation, "initiatedBy": initiated_by, "retry": {}},
            "phase": "Succeeded",
            "message": "successfully synced (all tasks run)",
            "syncResult": {"resources": results, "revision": REVISION, "source": source},
            "startedAt": STARTED_AT,
            "finishedAt": FINISHED_AT,
        },
        "sourceType": "Helm",
        "summary": {},
        "controllerNamespace": "argocd",
    }
    if conditions:
        status_block["conditions"] = conditions
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": name,
            "namespace": "argocd",
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"argocd/applications/{name}")),
            "resourceVersion": "71234",
            "generation": 42,
            "creationTimestamp": CREATED_AT,
            "labels": {"app.kubernetes.io/part-of": name},
            "finalizers": ["resources-finalizer.argocd.argoproj.io"],
        },
        "spec": {"project": project, "source": source, "destination": destination, "syncPolicy": sync_policy},
        "status": status_block,
    }


DiffSource = Callable[[list[tuple[Obj, Obj | None]]], list[Obj]]
"""Computes the ResourceDiffs of ``managed-resources`` for (target, live) pairs, one per pair, in order. The demo's
is :func:`python_diffs` (this package's reading of Argo CD); the tests plug in Argo CD's own diff."""


def python_diffs(*, ignore_status: bool = True) -> DiffSource:
    """The demo's diff source: :func:`resource_diff` on each pair."""

    def source(pairs: list[tuple[Obj, Obj | None]]) -> list[Obj]:
        return [resource_diff(target, live, ignore_status=ignore_status) for target, live in pairs]

    return source


def case_pairs(case_dir: Path) -> tuple[str, list[tuple[Obj, Obj | None]]]:
    """A casebook scenario's (destination namespace, [(target, live), ...]): every desired object with its live
    counterpart (same group, kind, namespace, name; None when missing); live objects without a desired
    counterpart are not the app's resources."""
    desired = load_manifests(case_dir / "desired.yaml")
    lives = load_manifests(case_dir / "live.yaml")
    destination = _destination_namespace(desired)
    by_key = {object_key(live): live for live in lives}
    pairs: list[tuple[Obj, Obj | None]] = []
    for target in desired:
        key = object_key(target)
        live = by_key.get(key)
        if live is None and not key[2] and (key[0], key[1], destination, key[3]) in by_key:
            # Argo CD puts namespaced objects without a namespace into the destination namespace.
            target = copy.deepcopy(target)
            target["metadata"]["namespace"] = destination
            live = by_key[(key[0], key[1], destination, key[3])]
        pairs.append((target, live))
    return destination, pairs


def app_from_case(
    case_dir: Path, *, self_heal: bool = False, ignore_status: bool = True, diffs: DiffSource | None = None
) -> tuple[Obj, list[Obj], list[list[Obj]]]:
    """What Argo CD reports for a casebook scenario: (Application, ResourceDiffs, renders).

    The ResourceDiffs are those of ``diffs`` (default :func:`python_diffs`) on :func:`case_pairs`. Renders are
    [desired, desired-again] when the case has a second render, else [desired].
    """
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    desired = load_manifests(case_dir / "desired.yaml")
    again = case_dir / "desired-again.yaml"
    renders = [desired, load_manifests(again)] if again.exists() else [desired]
    destination, pairs = case_pairs(case_dir)
    source = diffs if diffs is not None else python_diffs(ignore_status=ignore_status)
    resources = source(pairs)
    matched = [_loads_state(d["liveState"]) for d in resources]
    app = build_application(
        str(case["app"]),
        destination,
        resources,
        self_heal=self_heal,
        server_side_apply=_uses_server_side_apply([m for m in matched if m is not None]),
    )
    return app, resources, renders
