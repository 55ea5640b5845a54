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
warnings) are added to the report and change the advice. A resource only one side
has (a live object Git no longer has, which Argo CD serves with ``modified`` false
and marks ``requiresPruning`` in its status; a Git object the cluster lacks) gets
its reason from the Application's status (``bot.analysis.resources``); when Argo CD
says OutOfSync and nothing differs, the report says so (``nothing_differs``).

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
from bot.analysis.argoscope import skip_reason
from bot.analysis.context import app_diff_mode, app_revisions, plural
from bot.analysis.resources import missing_issue, nothing_differs, prune_issue, skipped_note
from bot.analysis.schema import is_known
from bot.model import Finding, Report, ResourceIssue, Skipped
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
    target, synced = app_revisions(app)
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
        "target_revisions": target,
        "synced_revisions": synced,
        "git_ahead": bool(target) and bool(synced) and target != synced,
    }


def git_ahead_note(app: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any] | None:
    """When Git is ahead of what Argo CD last synced: the revisions, why the sync has not run (as far as the
    Application says) and the sentence that says it; ``None`` otherwise."""
    if not facts.get("git_ahead"):
        return None
    op = (app.get("status") or {}).get("operationState") or {}
    phase = str(op.get("phase") or "")
    if phase in ("Failed", "Error"):
        why_not = "failed"
    elif phase in ("Running", "Terminating"):
        why_not = "running"
    else:
        why_not = "automated" if facts.get("automated") else "manual"
    synced, target = facts["synced_revisions"], facts["target_revisions"]
    text = wording.GIT_AHEAD.format(
        synced=", ".join(_short(r) for r in synced), target=", ".join(_short(r) for r in target),
        why_not=wording.GIT_AHEAD_WHY_NOT[why_not].format(phase=phase.lower(), message=str(op.get("message") or "")),
    )  # fmt: skip
    return {"synced": list(synced), "target": list(target), "why_not": why_not, "text": text}


def _short(revision: str) -> str:
    """A Git commit as people quote it (its first 7 characters); chart versions and tags as they are."""
    full_sha = len(revision) == 40 and all(c in "0123456789abcdef" for c in revision)
    return revision[:7] if full_sha else revision


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
        if d.live is None and d.normalized_live is None:
            return None  # not in the cluster: nothing to read (a missing resource, said below)
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
    desired, live, reported = [], [], {}
    for d, lv in zip(modified, lives, strict=True):
        obj = _with_owners(d, lv)
        if d.target is None or obj is None:
            continue  # a resource only one side has: below
        desired.append(d.target)
        live.append(obj)
        reported[(d.group, d.kind, d.namespace, d.name)] = _reported_pointers(d)
    issues, skipped = one_sided(name, app, diffs)

    context: list[dict[str, Any]] = [app] + [d.live for d in diffs if d.live is not None]
    applied: list[dict[str, Any]] | None = None
    if desired:
        context += await _cluster_context(app, cluster, desired, app_ns, notes)
        applied = await _applied_render(argocd, name, app, facts, app_namespace, desired, notes)  # Git ahead only
    same_revision = _synced_same_revision(app)
    report = explain(desired, live, context, app=name, synced_same_revision=same_revision,
                     reported=reported, applied=applied)  # fmt: skip
    if report.renders_wanted:
        # a difference only Argo CD (or nobody) owns, that nothing else explained: only two uncached renders of
        # the revision tell a chart that renders differently each time; the renders cost Argo CD's repo server a
        # full render each, so they are asked for only then
        again = await _second_render(argocd, name, facts.get("revision"), app_namespace, desired, notes)
        report = explain(desired, live, context, app=name, desired_again=again, synced_same_revision=same_revision,
                         reported=reported, applied=applied)  # fmt: skip
    report.resources = issues + report.resources
    report.skipped = skipped + report.skipped
    if skipped:
        report.notes.append(skipped_note(report.skipped))
    report.notes = notes + report.notes
    report.application = facts
    report.git_ahead = git_ahead_note(app, facts)
    if report.git_ahead is not None:
        report.notes.insert(0, report.git_ahead["text"])
    report.warnings = loop_warnings(facts, report.findings)
    if not report.findings and not report.resources and facts.get("sync_status") == "OutOfSync":
        report.nothing_differs = nothing_differs(app, name)
    return report


async def _applied_render(
    argocd: ArgoCDClient,
    name: str,
    app: dict[str, Any],
    facts: dict[str, Any],
    app_namespace: str | None,
    desired: list[dict[str, Any]],
    notes: list[str],
) -> list[dict[str, Any]] | None:
    """Git ahead: the render of the revision Argo CD last synced (one call), what it sent then; ``None`` when Git is
    not ahead, the app has several sources (one revision per source), or the render fails (said in a note)."""
    synced = facts.get("synced_revisions") or []
    if not facts.get("git_ahead") or len(synced) != 1 or (app.get("spec") or {}).get("sources"):
        return None
    try:
        render = await argocd.manifests(name, revision=synced[0], app_namespace=app_namespace)
    except ArgoCDError as e:
        notes.append(wording.NO_APPLIED_RENDER.format(revision=_short(synced[0]), error=e))
        return None
    return _in_destination(render, desired)


def one_sided(
    name: str, app: dict[str, Any], diffs: Sequence[ResourceDiff]
) -> tuple[list[ResourceIssue], list[Skipped]]:
    """The resources only one side has, as Argo CD counts them: a live object Git no longer has that its status marks
    ``requiresPruning`` (Argo CD's ``modified`` is false for those), a Git object the cluster lacks; hooks,
    ``hook: Skip`` and ``IgnoreExtraneous`` objects are not counted (``managed-resources`` leaves hooks out itself)."""
    status = {(str(r.get("group") or ""), str(r.get("kind") or ""), str(r.get("namespace") or ""),
               str(r.get("name") or "")): r
              for r in (app.get("status") or {}).get("resources") or [] if isinstance(r, dict)}  # fmt: skip
    issues: list[ResourceIssue] = []
    skipped: list[Skipped] = []
    for d in diffs:
        if (d.target is None) == (d.live is None):
            continue
        key = (d.group, d.kind, d.namespace, d.name)
        entry = status.get(key)
        ref = resource_ref(d.target or d.live or {})
        if reason := skip_reason(d.target, d.live):
            skipped.append(Skipped(ref, reason))
        elif d.target is not None:
            issues.append(missing_issue(ref, d.target, name, app))
        elif d.live is not None and (entry is None or entry.get("requiresPruning")):
            # an entry without requiresPruning: an object that only copied the app's tracking (not counted)
            issues.append(prune_issue(ref, d.live, name, app, status_says=entry is not None))
    issues.sort(key=lambda r: (r.resource.group, r.resource.kind, r.resource.namespace, r.resource.name))
    return issues, skipped


def _synced_same_revision(app: dict[str, Any]) -> bool:
    status = app.get("status") or {}
    op = status.get("operationState") or {}
    result, operation = op.get("syncResult") or {}, (op.get("operation") or {}).get("sync") or {}
    applied = result.get("revisions") or operation.get("revisions")
    target = (status.get("sync") or {}).get("revisions")
    if not (applied and target):  # one source: one revision
        applied = result.get("revision") or operation.get("revision")
        target = (status.get("sync") or {}).get("revision")
    return bool(applied) and op.get("phase") == "Succeeded" and applied == target


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
    chosen: dict[ObjKey, dict[str, Any]] = {}
    for render in renders:
        for obj in _in_destination(render, desired):
            key = object_key(obj)
            if key not in chosen or not deep_equal(obj, applied.get(key)):
                chosen[key] = obj
    return list(chosen.values())


def _in_destination(render: list[dict[str, Any]], desired: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A render's objects with the namespace Argo CD fills in where the render leaves it out (the destination's)."""
    keys = {object_key(o) for o in desired}
    by_name = {(k[0], k[1], k[3]): k for k in keys}
    out = []
    for obj in render:
        key = object_key(obj)
        if key not in keys and not key[2] and (key[0], key[1], key[3]) in by_name:
            key = by_name[(key[0], key[1], key[3])]
            obj = {**obj, "metadata": {**obj.get("metadata", {}), "namespace": key[2]}}
        out.append(obj)
    return out


def _time(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
