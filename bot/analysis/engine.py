"""The analysis: desired + live + context in, a Report out. Pure: no I/O of any kind.

For every desired object with a live counterpart (matched by API group, kind,
namespace and name; ``pairing`` says how incomplete pastes are matched), every difference (``diff``) gets its owners
(``managedfields``), a cause (``causes``) and a fix (``rules``). Differences an
existing ignoreDifferences rule already hides (the Application's own, or
argocd-cm's) are not findings. Secret values are masked before they reach a
Finding. Missing inputs (no live counterpart, no managedFields) become notes in
the report and lower the confidence instead of failing; desired objects that were
not compared are listed in ``Report.not_compared``, so that a report without
findings never passes for "no drift" when something was not looked at.

Input a user got slightly wrong is said first (``Report.warnings``) and never
becomes a verdict: an object given twice is counted once (its last copy, as Argo
CD does); an app name that matches no tracking id of the manifests is said, and
an object whose live tracking names the app its manifest names is never taken for
another app's (``causes``), whatever name was given; a finding on an
object whose managedFields are missing or unreadable is never ``confirmed``.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

from bot.analysis import masking
from bot.analysis.argocdview import ArgoView, view
from bot.analysis.argoscope import destination_server, excluded, skip_reason, tracks
from bot.analysis.causes import ObjectInputs, decide
from bot.analysis.context import ContextIndex, meta, same_app, tracked_app
from bot.analysis.diff import Delta, diff_objects
from bot.analysis.managedfields import Entry, entries_of, owners, unreadable
from bot.analysis.pairing import Ident, identity, pair_objects
from bot.analysis.pointer import MISSING, covers, join, readable
from bot.analysis.resources import prune_issue, skipped_note
from bot.analysis.rules import propose
from bot.analysis.schema import group_of
from bot.analysis.verify import rule_paths
from bot.model import ComparedObject, Finding, Report, ResourceRef, Skipped
from bot.wording import report as wording

ObjKey = tuple[str, str, str, str]


def resource_ref(obj: dict[str, Any]) -> ResourceRef:
    api = str(obj.get("apiVersion") or "")
    m = meta(obj)
    return ResourceRef(
        group=group_of(api),
        version=api.rsplit("/", 1)[-1] if api else "",
        kind=str(obj.get("kind")),
        namespace=str(m.get("namespace") or ""),
        name=str(m.get("name")),
    )


def ref_key(ref: ResourceRef) -> ObjKey:
    """How objects are matched: API group, kind, namespace and name (never the version)."""
    return (ref.group, ref.kind, ref.namespace, ref.name)


def object_key(obj: dict[str, Any]) -> ObjKey:
    """``ref_key(resource_ref(obj))`` without the :class:`ResourceRef` (every object of an app is keyed several
    times: once per side to find repeats, once to find what only the cluster has)."""
    m = meta(obj)
    return group_of(str(obj.get("apiVersion") or "")), str(obj.get("kind")), str(m.get("namespace") or ""), \
        str(m.get("name"))  # fmt: skip


def infer_app(desired: Iterable[dict[str, Any]]) -> str | None:
    """The Application the manifests were rendered for, from their tracking annotation or label."""
    names = Counter(app for app, _ in map(tracked_app, desired) if app)
    return names.most_common(1)[0][0] if names else None


def _once(objs: Sequence[dict[str, Any]], side: str, warnings: list[str]) -> tuple[list[dict[str, Any]], list[Ident]]:
    """Each object once: the last copy, where the first stood (Argo CD keeps the last of repeated resources and warns,
    RepeatedResourceWarning); a warning per repeated object. Pastes without apiVersion or kind are not compared here:
    their identity is incomplete, and pairing hands each live object out once anyway. With the :func:`identity` of
    each object kept (pairing matches by it)."""
    idents = [identity(o) for o in objs]
    keys = [i if o.get("apiVersion") and o.get("kind") else None for i, o in zip(idents, objs, strict=True)]
    last = {k: (o, i) for k, o, i in zip(keys, objs, idents, strict=True) if k is not None}
    if len(last) == len(keys) - keys.count(None):
        return list(objs), idents  # no object given twice (nearly always)
    counts = Counter(k for k in keys if k is not None)
    out: list[dict[str, Any]] = []
    out_idents: list[Ident] = []
    for key, obj, ident in zip(keys, objs, idents, strict=True):
        if key is None:
            out.append(obj)
            out_idents.append(ident)
        elif key in last:
            kept, kept_ident = last.pop(key)
            out.append(kept)
            out_idents.append(kept_ident)
            if counts[key] > 1:
                label = resource_ref(obj).label
                warnings.append(wording.REPEATED_RESOURCE.format(label=label, count=counts[key], side=side))
    return out, out_idents


def _tracked_instead(app: str | None, desired: Sequence[dict[str, Any]], warnings: list[str]) -> str | None:
    """The manifests' own app when ``app`` matches none of their tracking ids (a typo, or a Helm release name in the
    instance label), said in a warning; ``None`` when it matches, or when nothing can be checked (no tracking)."""
    tracked = sorted({name for name, _ in map(tracked_app, desired) if name})
    if app is None or not tracked or any(same_app(name, app) for name in tracked):
        return None
    used = infer_app(desired)
    warnings.append(wording.APP_MATCHES_NO_TRACKING.format(app=app, tracked=", ".join(tracked), used=used))
    return used


def _normalize_desired(obj: dict[str, Any]) -> dict[str, Any]:
    """What Argo CD compares: a Secret's stringData folded into data (base64), as Argo CD does."""
    if obj.get("kind") == "Secret" and group_of(str(obj.get("apiVersion", ""))) == "" and obj.get("stringData"):
        data = dict(obj.get("data") or {})
        for k, v in (obj.get("stringData") or {}).items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        out = {k: v for k, v in obj.items() if k != "stringData"}
        out["data"] = data
        return out
    return obj


def _rule_applies(rule: dict[str, Any], ref: ResourceRef) -> bool:
    group = rule.get("group") or ""
    kind = rule.get("kind") or ""
    if not fnmatchcase(ref.group, group) or not fnmatchcase(ref.kind, kind):
        return False
    if rule.get("name") and rule["name"] != ref.name:
        return False
    return not (rule.get("namespace") and rule["namespace"] != ref.namespace)


def _already_ignored(
    delta: Delta,
    ref: ResourceRef,
    rules: Sequence[dict[str, Any]],
    desired: dict[str, Any],
    live: dict[str, Any],
    entries: list[Entry] | None,
) -> bool:
    for rule in rules:
        if not _rule_applies(rule, ref):
            continue
        managers = set(rule.get("managedFieldsManagers") or [])
        if managers and entries is not None and any(e.manager in managers for e in owners(entries, live, delta.path)):
            return True
        try:
            hidden = [join(p) for p in rule_paths(rule, live)] + [join(p) for p in rule_paths(rule, desired)]
        except ValueError:
            continue  # a rule jq cannot run hides nothing, in Argo CD as here
        if any(covers(h, delta.pointer) for h in hidden):
            return True
    return False


def explain(
    desired: Sequence[dict[str, Any]],
    live: Sequence[dict[str, Any]],
    context: Sequence[dict[str, Any]] = (),
    *,
    app: str | None = None,
    desired_again: Sequence[dict[str, Any]] | None = None,
    synced_same_revision: bool = False,
    reported: Mapping[ObjKey, Set[str] | None] | None = None,
    applied: Sequence[dict[str, Any]] | None = None,
) -> Report:
    """Analyse why ``live`` differs from ``desired``; see the module docstring.

    ``synced_same_revision`` (bot mode): Argo CD's last sync applied the revision it renders now.
    ``applied`` (bot mode, Git ahead): the render of the revision Argo CD last synced, what it sent then. Whether
    Git is ahead, or synced at its revision, comes from the Application among the inputs (its synced revision
    against its target).
    ``reported`` (bot mode): the pointers Argo CD's own diff reports per object (``None``: it cannot say); a
    difference it does not report is not a finding. Without it, each finding says whether Argo CD would show it
    (``bot.analysis.argocdview``).
    """
    warnings: list[str] = []
    desired, desired_idents = _once(desired, wording.SIDE_DESIRED, warnings)
    live, live_idents = _once(live, wording.SIDE_LIVE, warnings)
    app = app or infer_app(desired)
    report = Report(app=app, warnings=warnings)
    instead = _tracked_instead(app, desired, warnings)
    if app is None:
        report.notes.append(wording.NO_APP)
    again_by_key = {object_key(o): o for o in desired_again or ()}
    pairs = pair_objects(desired, live, (desired_idents, live_idents))
    index = ContextIndex.build(context, [lobj for _, lobj in pairs if lobj is not None], live, desired)
    # the Application read from the context: the one named, else (a typo) the one the manifests' tracking names
    app_in_context = instead if instead is not None and app not in index.applications else app
    existing_rules = index.ignore_rules(app_in_context)
    ahead, same_revision = index.git_ahead(app_in_context), index.synced_same_revision(app_in_context)
    applied_by_key = {object_key(o): o for o in applied or ()}
    report.diff_mode = index.diff_mode(app_in_context)
    application = index.applications.get(app_in_context) if app_in_context else None
    server = destination_server(index.applications.values(), app_in_context)

    for raw, lobj in pairs:
        dobj = _normalize_desired(raw)
        # hooks, `hook: Skip` and excluded kinds: Argo CD gives them no sync status, so neither do we
        skip = skip_reason(raw, lobj) or ("excluded" if excluded(raw, index.argocd_cm, server) else None)
        if skip is not None:
            report.skipped.append(Skipped(resource_ref(dobj), skip))
            continue
        if lobj is None:
            ref = resource_ref(dobj)
            report.not_compared.append(ref)
            report.notes.append(wording.NOT_LIVE.format(label=ref.label))
            continue
        report.resources_compared += 1
        deltas = diff_objects(dobj, lobj)
        managed = bool(meta(lobj).get("managedFields"))  # entries_of's None, without reading every object's entries
        problem = unreadable(lobj) if managed else None
        if not deltas and managed and problem is None:
            continue  # in sync: nothing more is needed of it (most objects of a large app)
        ref, live_ref = resource_ref(dobj), resource_ref(lobj)
        ref = ResourceRef(ref.group, ref.kind, live_ref.namespace, ref.name, live_ref.version or ref.version)
        if problem is not None:
            what = wording.MANAGED_FIELDS_PROBLEMS[problem[0]].format(n=problem[1])
            report.notes.append(wording.MANAGED_FIELDS_UNREADABLE.format(label=ref.label, problem=what))
        elif not managed:
            report.notes.append(wording.NO_MANAGED_FIELDS.format(label=ref.label))
        if not deltas:
            continue
        entries = entries_of(lobj)
        again = again_by_key.get(object_key(dobj))
        inputs = ObjectInputs(
            ref,
            dobj,
            lobj,
            entries,
            app,
            index,
            _normalize_desired(again) if again else None,
            desired_again is not None,
            synced_same_revision or same_revision,
            ahead,
            applied_by_key.get(object_key(dobj)),
        )
        answer = reported.get(ref_key(ref)) if reported is not None else None
        argo = view(dobj, lobj, report.diff_mode, answer)
        report.objects.append(ComparedObject(ref, masking.masked_object(dobj), masking.masked_object(lobj)))
        for delta in deltas:
            if existing_rules and _already_ignored(delta, ref, existing_rules, dobj, lobj, entries):
                report.ignored += 1
                continue
            finding = _finding(delta, inputs, report.diff_mode, argo)
            if answer is None or finding.shown_by_argocd:
                report.findings.append(finding)
        # counted whether or not the finding is kept: with a second render its cause, and so whether Argo CD
        # shows it, may change
        report.renders_wanted += inputs.render_wanted
    _only_live(report, pairs, live, app, application, index, server)
    if report.skipped:
        report.notes.append(skipped_note(report.skipped))
    if report.not_compared:
        report.notes.insert(
            0,
            wording.NOT_COMPARED.format(
                count=len(report.not_compared), total=wording.plural(wording.DESIRED_OBJECTS, len(pairs))
            ),
        )
    if report.diff_mode is not None:
        shown_app = wording.app_shown(app_in_context) if app_in_context else report.subject
        report.notes.append(wording.DIFF_MODE_NOTE[report.diff_mode].format(app=shown_app))
    if report.ignored:
        report.notes.append(wording.ALREADY_IGNORED.format(count=wording.plural(wording.DIFFERENCES, report.ignored)))
    hidden = sum(not f.shown_by_argocd for f in report.findings)
    if hidden:
        total = wording.plural(wording.DIFFERENCES, len(report.findings))
        report.notes.append(wording.NOT_SHOWN_NOTE.format(count=hidden, total=total))
    report.findings.sort(key=Finding.sort_key)
    report.resources.sort(key=lambda r: ref_key(r.resource))
    return report


def _only_live(
    report: Report,
    pairs: Sequence[tuple[dict[str, Any], dict[str, Any] | None]],
    live: Sequence[dict[str, Any]],
    app: str | None,
    application: dict[str, Any] | None,
    index: ContextIndex,
    server: str | None,
) -> None:
    """Live objects Git no longer has that the app tracks as its own: Argo CD's "requires pruning" (hooks and
    IgnoreExtraneous objects apart, which it does not count)."""
    # matched live objects by identity (their keys are unique: repeats are gone); a pasted one was completed into a
    # copy, matched by its key
    given = {id(lobj) for lobj in live}
    matched = {id(lobj) for _, lobj in pairs if lobj is not None}
    completed = {object_key(lobj) for _, lobj in pairs if lobj is not None and id(lobj) not in given}
    for lobj in live:
        if id(lobj) in matched or not lobj.get("apiVersion") or not lobj.get("kind"):
            continue
        if completed and object_key(lobj) in completed:
            continue
        if not tracks(lobj, app) or excluded(lobj, index.argocd_cm, server):
            continue
        ref = resource_ref(lobj)
        reason = skip_reason(None, lobj)  # a leftover hook, or an object marked IgnoreExtraneous
        if reason is not None:
            report.skipped.append(Skipped(ref, reason))
        else:
            report.resources.append(prune_issue(ref, lobj, app, application))


def _finding(delta: Delta, inp: ObjectInputs, diff_mode: str | None, argo: ArgoView) -> Finding:
    ref = inp.ref
    verdict = decide(delta, inp)
    if inp.entries is None and verdict.confidence == "confirmed":  # the note says so: no ownership, lowered confidence
        verdict = replace(verdict, confidence="likely")
    shown = argo.shows(delta.pointer, verdict.server_side_diff_hides)
    fix = propose(verdict.cause, delta, ref, inp.desired, inp.live, alternative=verdict.alternative,
                  who=verdict.who, allocated=verdict.allocated, shown=shown,
                  self_heal=inp.index.self_heal(inp.app))  # fmt: skip
    pointer = delta.pointer
    desired = masking.mask(ref.group, ref.kind, pointer, delta.desired)
    live = masking.mask(ref.group, ref.kind, pointer, delta.live)
    desired = None if desired is MISSING else desired
    live = None if live is MISSING else live
    path = readable(pointer, inp.live if inp.live is not None else inp.desired)
    text = wording.explanation(path, ref.label, verdict.reason, desired, live)
    if fix.verified is False:
        text += f" ({wording.NO_NARROW_RULE})"
    if fix.caution:
        text += f" {fix.caution}"
    if verdict.server_side_diff_hides and diff_mode == "legacy" and shown:
        text += f" {wording.SERVER_SIDE_DIFF_BETTER}"
    if (said := argo.sentence(delta.pointer, verdict.server_side_diff_hides)) is not None:
        text += f" {said}"
    return Finding(
        resource=ref,
        pointer=pointer,
        desired=desired,
        live=live,
        cause=verdict.cause,
        confidence=verdict.confidence,
        writer=verdict.writer,
        explanation=text,
        fix=fix,
        evidence=verdict.evidence,
        path=path,
        shown_by_argocd=shown,
    )
