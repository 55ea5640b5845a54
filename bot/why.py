"""``argo-why why APP``: gather the analysis' inputs from a live Argo CD (and cluster), then explain.

The differing fields are the ones Argo CD itself reports: for every resource
``managed-resources`` marks ``modified``, ``normalizedLiveState`` versus
``predictedLiveState``. Ownership comes from ``liveState``'s managedFields (or a
fresh ``resource`` call when they are missing); the cause from the analysis with
the cluster context (HPAs, ScaledObjects, webhooks, namespaces, Applications);
nondeterminism from two uncached renders of the synced revision, asked for only when
a difference needs them (only Argo CD, or nobody, owns it and no earlier rule
explained it: the renders cost Argo CD's repo server a full render each). Facts about the
Application (self-heal, recent syncs, existing ignoreDifferences, shared-resource
warnings) are added to the report and change the advice.

The number of HTTP calls does not grow with the number of in-sync resources:
one application (then, only when it exists, one managed-resources), two renders only
when a difference needs them, and one ``resource`` call only per drifted object whose
managedFields are missing.
Nothing is ever written to Argo CD or the cluster.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.analysis import ObjKey, deep_equal, diff_objects, explain, object_key, resource_ref
from bot.analysis.context import app_diff_mode, plural
from bot.analysis.schema import is_known
from bot.model import Finding, Report
from bot.sources.argocd import ArgoCDClient, ArgoCDError, ResourceDiff
from bot.sources.cluster import Clusters, ClusterSource
from bot.wording import report as wording

_LOOP_CAUSES = frozenset({"autoscaler", "operator", "mutating-webhook", "other-gitops", "shared-resource"})


@dataclass
class Reads:
    """What one investigation read from Argo CD, for its caller to reuse instead of asking again: the Application
    (routing) and the (desired, live) pair of each of its resources (the fleet index's objects)."""

    app_read: bool = False
    """The Application was asked for (``app`` is ``None`` when Argo CD did not show it)."""
    app: dict[str, Any] | None = None
    pairs: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] | None = None


def _with_owners(diff: ResourceDiff, live: dict[str, Any] | None) -> dict[str, Any] | None:
    """The normalized live object (what Argo CD compares) carrying the live object's managedFields."""
    base = diff.normalized_live or live
    if base is None:
        return None
    if live is None:
        return base
    meta = dict(base.get("metadata") or {})
    fields = (live.get("metadata") or {}).get("managedFields")
    if fields:
        meta["managedFields"] = fields
    return {**base, "metadata": meta}


def _reported_pointers(diff: ResourceDiff) -> set[str] | None:
    """The fields Argo CD itself shows as different (its ground truth), or ``None`` when it cannot say.

    Both states are whole objects, so a key only the live one has is a difference too: the predicted state drops it
    when a sync would remove it (an aggregated ClusterRole's ``rules``, which Git renders as ``rules: []``).
    """
    if diff.predicted_live is None or diff.normalized_live is None:
        return None
    both = (*diff_objects(diff.predicted_live, diff.normalized_live),
            *diff_objects(diff.normalized_live, diff.predicted_live))  # fmt: skip
    return {d.pointer for d in both}


def application_facts(app: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """What the Application says about the loop it may be in (a compatible extension of the report)."""
    now = now or datetime.now(UTC)
    spec, status = app.get("spec") or {}, app.get("status") or {}
    policy = spec.get("syncPolicy") or {}
    automated = policy.get("automated")
    options = [str(o) for o in policy.get("syncOptions") or []]
    revision = (status.get("sync") or {}).get("revision")
    op = status.get("operationState") or {}
    recent = 0
    for h in status.get("history") or []:
        when = _time(h.get("deployedAt"))
        if revision and h.get("revision") == revision and when and now - when <= timedelta(hours=1):
            recent += 1
    annotations = (app.get("metadata") or {}).get("annotations") or {}
    return {
        "name": (app.get("metadata") or {}).get("name"),
        "namespace": (app.get("metadata") or {}).get("namespace"),
        "project": spec.get("project"),
        "revision": revision,
        "sync_status": (status.get("sync") or {}).get("status"),
        "health": (status.get("health") or {}).get("status"),
        "automated": automated is not None,
        "self_heal": bool((automated or {}).get("selfHeal")),
        "prune": bool((automated or {}).get("prune")),
        "auto_heal_attempts": ((op.get("operation") or {}).get("sync") or {}).get("autoHealAttemptsCount"),
        "syncs_same_revision_last_hour": recent,
        "last_operation": {"phase": op.get("phase"), "finished_at": op.get("finishedAt")} if op else None,
        "respect_ignore_differences": "RespectIgnoreDifferences=true" in options,
        "server_side_apply": "ServerSideApply=true" in options,
        "compare_options": annotations.get("argocd.argoproj.io/compare-options"),
        "diff_mode": app_diff_mode(app),
        "ignore_differences": list(spec.get("ignoreDifferences") or []),
        "source_types": [str(t) for t in status.get("sourceTypes") or [status.get("sourceType")] if t],
        "shared_resource_warnings": [
            str(c.get("message")) for c in status.get("conditions") or [] if c.get("type") == "SharedResourceWarning"
        ],
    }


def loop_warnings(facts: dict[str, Any], findings: Sequence[Finding]) -> list[str]:
    """selfHeal while another writer owns a field is a write loop: say so first."""
    fighting = [f for f in findings if f.cause in _LOOP_CAUSES]
    if not facts.get("self_heal") or not fighting:
        return []
    writers = sorted({f.writer.label for f in fighting})
    return [wording.WRITE_LOOP.format(
        writers=", ".join(writers), fields=wording.plural(wording.FIELDS, len(fighting)),
        attempts=wording.plural(wording.SELF_HEAL_ATTEMPTS, int(facts.get("auto_heal_attempts") or 0)),
        syncs=wording.plural(wording.SYNCS, int(facts.get("syncs_same_revision_last_hour") or 0)),
    )]  # fmt: skip


async def investigate(
    name: str,
    *,
    app_namespace: str | None = None,
    argocd: ArgoCDClient,
    cluster: Clusters | ClusterSource | None,
    now: datetime | None = None,
    reads: Reads | None = None,
) -> Report:
    """The Report for one Application.

    ``cluster``: the clusters of Application destinations (the usual case), one given cluster, or ``None`` to
    skip the cluster (the evidence it would give is then noted as missing). ``reads``, when given, receives what
    was read from Argo CD (the caller reuses it instead of reading it again).
    """
    # the application first: its error is the one that tells a missing app from a missing permission, and an app
    # Argo CD does not have costs one request, not two
    try:
        app = await argocd.application(name, app_namespace)
    finally:  # answered, or refused: either way the caller knows what Argo CD says of the app now
        if reads is not None:
            reads.app_read = True
    if reads is not None:
        reads.app = app
    diffs = await argocd.managed_resources(name, app_namespace)
    if reads is not None:
        reads.pairs = [(d.target, d.live) for d in diffs]
    facts = application_facts(app, now)
    app_ns = str((app.get("metadata") or {}).get("namespace") or app_namespace or "") or None
    modified = [d for d in diffs if d.modified]
    notes: list[str] = []

    # live objects with their owners; a fresh read when the cached state has no managedFields
    async def live_of(d: ResourceDiff) -> dict[str, Any] | None:
        if d.live is not None and (d.live.get("metadata") or {}).get("managedFields"):
            return d.live
        obj = d.live or d.normalized_live or d.predicted_live or {}
        version = str(obj.get("apiVersion", "v1")).rsplit("/", 1)[-1]
        try:
            fresh = await argocd.resource(name, group=d.group, version=version, kind=d.kind, namespace=d.namespace,
                                          resource_name=d.name, app_namespace=app_namespace)  # fmt: skip
        except ArgoCDError as e:
            notes.append(f"{d.kind} {d.name}: could not read the live object ({e}); ownership unknown")
            return d.live
        return fresh or d.live

    lives = await asyncio.gather(*(live_of(d) for d in modified))
    desired, live, reported, missing = [], [], {}, []
    for d, lv in zip(modified, lives, strict=True):
        obj = _with_owners(d, lv)
        if d.target is None or obj is None:
            side = "Git" if d.target is None else "the cluster"
            notes.append(f"{d.kind} {d.name} is missing from {side}: not a field difference, not analysed")
            if d.target is not None:  # Git has it, the cluster not: the report must not pass for clean
                missing.append(resource_ref(d.target))
            continue
        desired.append(d.target)
        live.append(obj)
        reported[(d.group, d.kind, d.namespace, d.name)] = _reported_pointers(d)

    context: list[dict[str, Any]] = [app] + [d.live for d in diffs if d.live is not None]
    if desired:
        context += await _cluster_context(app, cluster, desired, app_ns, notes)
    same_revision = _synced_same_revision(app)
    report = explain(desired, live, context, app=name, synced_same_revision=same_revision,
                     reported=reported)  # fmt: skip
    if report.renders_wanted:
        # a difference only Argo CD (or nobody) owns, that nothing else explained: only two uncached renders of
        # the revision tell a chart that renders differently each time; the renders cost Argo CD's repo server a
        # full render each, so they are asked for only then
        again = await _second_render(argocd, name, facts.get("revision"), app_namespace, desired, notes)
        report = explain(desired, live, context, app=name, desired_again=again, synced_same_revision=same_revision,
                         reported=reported)  # fmt: skip
    report.notes = notes + report.notes
    report.not_compared = missing + report.not_compared
    report.application = facts
    report.warnings = loop_warnings(facts, report.findings)
    return report


def _synced_same_revision(app: dict[str, Any]) -> bool:
    status = app.get("status") or {}
    op = status.get("operationState") or {}
    applied = (op.get("syncResult") or {}).get("revision") or ((op.get("operation") or {}).get("sync") or {}).get(
        "revision"
    )
    return bool(applied) and op.get("phase") == "Succeeded" and applied == (status.get("sync") or {}).get("revision")


async def _cluster_context(
    app: dict[str, Any],
    cluster: Clusters | ClusterSource | None,
    desired: list[dict[str, Any]],
    app_ns: str | None,
    notes: list[str],
) -> list[dict[str, Any]]:
    if cluster is None:
        notes.append(wording.NO_CLUSTER.format(reason="cluster access not requested"))
        return []
    source: ClusterSource | None
    if isinstance(cluster, Clusters):
        source, why_not = cluster.for_destination((app.get("spec") or {}).get("destination") or {})
        if source is None:
            notes.append(wording.NO_CLUSTER.format(reason=why_not))
            return []
    else:
        source = cluster
    namespaces = {resource_ref(o).namespace for o in desired} - {""}
    # custom resources (a CRD's group always has a dot): their CRDs' schemas prove defaults and pruned fields
    refs = [resource_ref(o) for o in desired]
    crds = {f"{plural(r.kind)}.{r.group}" for r in refs if "." in r.group and not is_known(r.group, r.kind)}
    ctx = await source.context_for(namespaces, app_ns, crds)
    notes.extend(ctx.missing)
    return ctx.objects


async def _second_render(
    argocd: ArgoCDClient,
    name: str,
    revision: Any,
    app_namespace: str | None,
    desired: list[dict[str, Any]],
    notes: list[str],
) -> list[dict[str, Any]]:
    """Two uncached renders of the synced revision; per object, the one that disagrees with what was applied."""
    try:
        renders = await asyncio.gather(
            *(
                argocd.manifests(name, revision=revision or None, no_cache=True, app_namespace=app_namespace)
                for _ in range(2)
            )
        )
    except ArgoCDError as e:
        notes.append(f"could not render the revision again ({e}); nondeterministic charts are not detected")
        return []
    applied = {object_key(o): o for o in desired}
    by_name = {(k[0], k[1], k[3]): k for k in applied}
    chosen: dict[ObjKey, dict[str, Any]] = {}
    for render in renders:
        for obj in render:
            key = object_key(obj)
            if key not in applied and not key[2] and (key[0], key[1], key[3]) in by_name:
                # a render leaves the namespace out where Argo CD fills in the destination's
                key = by_name[(key[0], key[1], key[3])]
                obj = {**obj, "metadata": {**obj.get("metadata", {}), "namespace": key[2]}}
            if key not in chosen or not deep_equal(obj, applied.get(key)):
                chosen[key] = obj
    return list(chosen.values())


def _time(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
