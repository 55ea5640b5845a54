"""Resources only one side has, and an OutOfSync with nothing that differs: what Argo CD's own status says.

A resource in the cluster that Git no longer has "requires pruning"; one Git has that the cluster lacks is
"missing". Neither is a field difference, and each has its own reason, read from what the Application's status
and the objects say (the real API's fields only: ``spec.syncPolicy``, ``status.resources[]``,
``status.operationState`` with its ``operation.sync.resources`` and ``syncResult``, ``status.conditions``):

* to prune: the object's own ``Prune=false``/``Prune=confirm`` sync option, else the sync policy (auto-sync with
  or without prune, or syncs by hand); the fix is a sync with prune, a deletion, or keeping it on purpose;
* missing: the last sync's result for it (a failure, with the namespace that does not exist or the kind the cluster
  does not serve), a selective sync that left it out, a newer revision than the one synced, a sync that stopped
  before its wave, or a sync that applied it (so something deleted it since); ``unknown``, with what to look at,
  when nothing says.

When Argo CD says OutOfSync and neither a field nor a resource differs, :func:`nothing_differs` says so with the
comparison time against the sync's, the revisions, and the step that settles it (a hard refresh).

Guarantees: pure; every sentence comes from :mod:`bot.wording.report`; a missing or malformed status field only
makes the reason less specific, never raises.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from bot.analysis.argoscope import SYNC_OPTIONS, csv, prune_option
from bot.analysis.context import annotations_of, tracked_app
from bot.model import ResourceIssue, ResourceRef, Skipped
from bot.wording import report as wording

if TYPE_CHECKING:
    from datetime import datetime

Obj = dict[str, Any]
_NAMESPACE_MISSING = re.compile(r'namespaces "([^"]+)" not found')
_KIND_NOT_SERVED = re.compile(
    r'could not find the requested resource|no matches for kind|failed to discover server resources|^\S+ "" not found'
)


def _d(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _key(item: Obj) -> tuple[str, str, str, str]:
    return (str(item.get("group") or ""), str(item.get("kind") or ""), str(item.get("namespace") or ""),
            str(item.get("name") or ""))  # fmt: skip


def _ref_key(ref: ResourceRef) -> tuple[str, str, str, str]:
    return (ref.group, ref.kind, ref.namespace, ref.name)


def _operation(application: Obj | None) -> Obj:
    return _d(_d(_d(application).get("status")).get("operationState"))


def _result_for(application: Obj | None, ref: ResourceRef) -> Obj | None:
    """The last sync's result for this resource (hook results apart)."""
    results = _d(_operation(application).get("syncResult")).get("resources") or []
    found = [r for r in results if isinstance(r, dict) and not r.get("hookType") and _key(r) == _ref_key(ref)]
    return found[-1] if found else None


def _automated(application: Obj | None) -> Obj | None:
    automated = _d(_d(_d(application).get("spec")).get("syncPolicy")).get("automated")
    if not isinstance(automated, dict) or automated.get("enabled") is False:  # 3.1+: automated.enabled: false
        return None
    return automated


def _policy(application: Obj) -> str:
    automated = _automated(application)
    if automated is None:
        return wording.SYNC_POLICY_MANUAL
    return wording.SYNC_POLICY_AUTO.format(prune=str(bool(automated.get("prune"))).lower())


def prune_issue(ref: ResourceRef, live: Obj, app: str | None, application: Obj | None,
                status_says: bool = False) -> ResourceIssue:  # fmt: skip
    """A live object the app tracks that Git no longer has. ``status_says``: Argo CD's ``status.resources[]``
    marks it ``requiresPruning``."""
    evidence = [wording.PRUNE_EVIDENCE_STATUS] if status_says else []
    name, how = tracked_app(live)
    if name is not None and not status_says:
        evidence.append(wording.PRUNE_EVIDENCE_TRACKED.format(how=how, app=name))
    option = prune_option(live)
    if option is not None:
        reason = "prune-disabled" if option == "Prune=false" else "prune-needs-confirmation"
        evidence.append(wording.PRUNE_EVIDENCE_OPTION.format(option=option))
    elif application is None:
        reason = "not-pruned"
    else:
        automated = _automated(application)
        reason = "manual-sync" if automated is None else "prune-pending" if automated.get("prune") else "auto-prune-off"
        evidence.append(wording.PRUNE_EVIDENCE_POLICY.format(policy=_policy(application)))
    result = _result_for(application, ref)
    if result is not None and result.get("status") == "PruneSkipped":
        evidence.append(wording.MISSING_EVIDENCE_RESULT.format(status=result.get("status"),
                                                               message=result.get("message") or ""))  # fmt: skip
    fix = wording.PRUNE_FIXES.get(reason, wording.PRUNE_FIX).format(app=app or "APP")
    return ResourceIssue(ref, "requires-pruning", reason, wording.PRUNE_REASONS[reason].format(label=ref.label), fix,
                         evidence)  # fmt: skip


def _revisions(value: Obj, one: str, many: str) -> list[str]:
    if value.get(many):
        return [str(r) for r in value.get(many) or []]
    return [str(value[one])] if value.get(one) else []


def _short(revisions: list[str]) -> str:
    return ", ".join(r[:12] for r in revisions)


def missing_issue(ref: ResourceRef, target: Obj, app: str | None, application: Obj | None) -> ResourceIssue:
    """A resource Git has and the cluster lacks, with the reason Argo CD's status gives (see the module docstring)."""
    status = _d(_d(application).get("status"))
    op = _operation(application)
    phase = str(op.get("phase") or "")
    result = _result_for(application, ref)
    sync_op = _d(_d(op.get("operation")).get("sync"))
    chosen = [r for r in sync_op.get("resources") or [] if isinstance(r, dict)]
    applied = _revisions(_d(op.get("syncResult")), "revision", "revisions")
    wanted = _revisions(_d(status.get("sync")), "revision", "revisions")
    evidence: list[str] = []
    values: dict[str, str] = {"label": ref.label, "namespace": ref.namespace, "phase": phase}
    if result is not None:
        evidence.append(wording.MISSING_EVIDENCE_RESULT.format(status=result.get("status"),
                                                               message=result.get("message") or ""))  # fmt: skip
    if csv(target, SYNC_OPTIONS):
        evidence.append(wording.MISSING_EVIDENCE_OPTION.format(options=annotations_of(target).get(SYNC_OPTIONS)))
    message = str((result or {}).get("message") or "")
    if result is not None and result.get("status") == "SyncFailed":
        if m := _NAMESPACE_MISSING.search(message):
            reason, values["namespace"] = "namespace-missing", m[1]
        elif _KIND_NOT_SERVED.search(message):
            reason = "kind-not-served"
        else:
            reason = "sync-failed"
    elif chosen and not any(_key(r) == _ref_key(ref) for r in chosen):
        reason = "selective-sync"
        values["count"] = wording.plural(wording.RESOURCES, len(chosen))
        listed = ", ".join(f"{r.get('kind')}/{r.get('name')}" for r in chosen[:5])
        evidence.append(wording.MISSING_EVIDENCE_SELECTIVE.format(resources=listed))
    elif applied and wanted and applied != wanted:
        reason = "not-synced"
        values.update(target=_short(wanted), applied=_short(applied))
    elif phase in ("Failed", "Error") and result is None:
        reason = "sync-stopped"
        values["wave"] = str(annotations_of(target).get("argocd.argoproj.io/sync-wave") or "0")
    elif result is not None and result.get("status") == "Synced" and phase == "Succeeded":
        reason = "deleted-after-sync"
    else:
        reason = "unknown"
    if phase and reason in ("sync-stopped", "sync-failed", "unknown"):
        evidence.append(wording.MISSING_EVIDENCE_OPERATION.format(phase=phase, message=op.get("message") or ""))
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") in ("SyncError", "ComparisonError", "ExcludedResourceWarning"):
            evidence.append(wording.MISSING_EVIDENCE_CONDITION.format(type=c.get("type"), message=c.get("message")))
    fix = wording.MISSING_FIXES[reason].format(app=app or "APP", group=ref.group, kind=ref.kind, name=ref.name)
    return ResourceIssue(ref, "missing", reason, wording.MISSING_REASONS[reason].format(**values), fix, evidence)


def _time(raw: Any) -> datetime | None:
    from datetime import datetime  # only for an object left to prune: most runs have none

    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")) if raw else None
    except ValueError:
        return None


def nothing_differs(application: Obj, app: str) -> dict[str, Any]:
    """What Argo CD's status says when it reports OutOfSync and nothing differs (see the module docstring)."""
    status = _d(application.get("status"))
    op = _operation(application)
    reconciled, finished = status.get("reconciledAt"), op.get("finishedAt")
    r_time, f_time = _time(reconciled), _time(finished)
    after = r_time >= f_time if r_time is not None and f_time is not None else None
    wanted = _revisions(_d(status.get("sync")), "revision", "revisions")
    applied = _revisions(_d(op.get("syncResult")), "revision", "revisions")
    listed = [r for r in status.get("resources") or [] if isinstance(r, dict) and r.get("status") == "OutOfSync"]
    labels = [ResourceRef(*_key(r)).label for r in listed]
    sentences = [wording.NOTHING_DIFFERS.format(app=app)]
    if after is not None:
        sentences.append(wording.NOTHING_DIFFERS_COMPARED.format(
            reconciled=reconciled, finished=finished, when=wording.NOTHING_DIFFERS_WHEN["after" if after else "before"]
        ))  # fmt: skip
    if wanted:
        sentences.append(wording.NOTHING_DIFFERS_REVISION.format(revision=_short(wanted),
                                                                 applied=_short(applied) or "?"))  # fmt: skip
    if labels:
        sentences.append(wording.NOTHING_DIFFERS_LISTED.format(labels=", ".join(labels[:10])))
    return {
        "sync_status": _d(status.get("sync")).get("status"),
        "revision": wanted[0] if len(wanted) == 1 else wanted or None,
        "synced_revision": applied[0] if len(applied) == 1 else applied or None,
        "reconciled_at": reconciled,
        "sync_finished_at": finished,
        "compared_after_sync": after,
        "out_of_sync_resources": [ResourceRef(*_key(r), version=str(r.get("version") or "")).to_dict() for r in listed],
        "explanation": " ".join(sentences),
        "fix": wording.NOTHING_DIFFERS_FIX.format(app=app),
    }


def skipped_note(skipped: list[Skipped]) -> str:
    items = ", ".join(f"{s.resource.label} ({wording.SKIP_REASONS.get(s.reason, s.reason)})" for s in skipped[:10])
    if len(skipped) > 10:
        items += wording.AND_MORE.format(count=len(skipped) - 10)
    return wording.SKIPPED_NOTE.format(items=items)
