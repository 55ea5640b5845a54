"""The Report as text for a person in a terminal.

Grouped by resource, one verdict per field, then the evidence, the proposed rule
as YAML and the advice (the better fix and what not to do, both the finding's
own). Where several findings have rules, the rules to paste follow, one
ignoreDifferences entry per object. Pure: Report in, string out. Values are
already masked in the Report; nothing else is read.
"""

from __future__ import annotations

from itertools import groupby

import yaml

from bot.fixes.proposal import merge_rules
from bot.model import Finding, Report
from bot.wording import report as wording


def _yaml(data: object, indent: int) -> str:
    text = yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=100).rstrip("\n")
    pad = " " * indent
    return "\n".join(pad + line for line in text.splitlines())


def _writer_line(f: Finding) -> str:
    w = f.writer
    if w.manager is None:
        who = "no managedFields entry owns it"
    else:
        sub = f", subresource {w.subresource}" if w.subresource else ""
        who = f"{w.manager} ({w.operation or '?'}{sub}) at {w.time or 'unknown time'}"
    if w.object is not None:
        who += f"; {w.object.label}"
    if w.co_owners:
        who += f"; co-owned with {', '.join(w.co_owners)}"
    return who


def _text_changes(f: Finding) -> list[str]:
    """For a text of several lines on both sides, the lines that changed (instead of both texts whole)."""
    if wording.is_text(f.desired) and wording.is_text(f.live):
        return wording.text_changes(str(f.desired), str(f.live))
    return []


def _finding(f: Finding) -> list[str]:
    heading = f"  {f.field_name}" + (f"  ({f.pointer})" if f.field_name != f.pointer else "")
    lines = [
        heading,
        f"    verdict:  {f.cause} ({f.confidence}): {wording.cause_title(f.cause, added=f.desired is None)}",
        f"    Git:      {wording.short_value(f.desired, 100) if f.desired is not None else '(absent)'}",
        f"    live:     {wording.short_value(f.live, 100) if f.live is not None else '(absent)'}",
        *(f"    changed:  {c}" for c in _text_changes(f)),
        f"    writer:   {_writer_line(f)}",
        f"    why:      {f.explanation}",
        f"    fix:      {f.fix.action}",
    ]
    if f.fix.rule is not None:
        label = "fallback rule" if f.fix.fallback else "rule"
        lines.append(f"    {label} (spec.ignoreDifferences of the Application):")
        lines.append(_yaml([f.fix.rule], 6))
        if f.fix.sync_options:
            lines.append(f"    syncOptions: {', '.join(f.fix.sync_options)}")
        lines.append(f"    hides:    {', '.join(f.fix.hides)}")
    if f.fix.alternative:
        lines.append(f"    better:   {f.fix.alternative}")
    # what not to do belongs to its finding: merged across findings, one finding's advice contradicts another's fix
    lines += [f"    {'avoid:' if i == 0 else '':<10}{line}" for i, line in enumerate(f.fix.avoid)]
    return lines


def _application(report: Report) -> list[str]:
    facts = report.application
    if not facts:
        return []
    sync = "automated" + (" with selfHeal" if facts.get("self_heal") else "") if facts.get("automated") else "manual"
    lines = [
        f"Application {facts.get('namespace')}/{facts.get('name')} (project {facts.get('project')}): "
        f"{facts.get('sync_status')}, {facts.get('health')}, revision {str(facts.get('revision') or '?')[:12]}",
        f"  sync: {sync}; {wording.plural(wording.SYNCS, int(facts.get('syncs_same_revision_last_hour') or 0))} "
        "of this revision in the last hour; "
        f"self-heal attempts: {facts.get('auto_heal_attempts') or 0}",
        f"  RespectIgnoreDifferences: {'on' if facts.get('respect_ignore_differences') else 'off'}; "
        f"compare options: {facts.get('compare_options') or 'none'}; "
        f"existing ignoreDifferences: {len(facts.get('ignore_differences') or [])}",
    ]
    lines += [f"  SharedResourceWarning: {m}" for m in facts.get("shared_resource_warnings") or []]
    if report.git_ahead is not None:  # said first, calmly: what differs is Git's change, not drift
        lines.append(f"  {report.git_ahead.get('text')}")
    return [*lines, ""]


def render(report: Report) -> str:
    head = [f"WARNING: {w}" for w in report.warnings] + _application(report)
    return "\n".join(head) + ("\n" if head else "") + _body(report)


def _resources(report: Report) -> list[str]:
    """The resources only one side has, by state, each with its reason and fix; then an OutOfSync nothing explains."""
    out: list[str] = []
    for state, title in wording.RESOURCE_STATES.items():
        for r in (r for r in report.resources if r.state == state):
            res = r.resource
            api = f"{res.group}/{res.version}" if res.group else res.version or "v1"
            out += [f"{res.label} ({api}): {title}", f"    reason:   {r.reason}", f"    why:      {r.explanation}",
                    f"    fix:      {r.fix}", *(f"    evidence: {e}" for e in r.evidence), ""]  # fmt: skip
    if report.nothing_differs is not None:
        out += [str(report.nothing_differs.get("explanation") or ""), f"fix: {report.nothing_differs.get('fix')}", ""]
    return out


def _body(report: Report) -> str:
    if not report.findings and (report.resources or report.nothing_differs is not None):
        compared_n = wording.plural(wording.RESOURCES, report.resources_compared)
        count = wording.plural(wording.RESOURCES_COUNTED, len(report.resources))
        head_lines = [wording.RESOURCES_HEAD.format(app=report.subject, compared=compared_n, count=count), ""]
        lines = [*(head_lines if report.resources else []), *_resources(report)]
        return "\n".join([*lines, *(f"note: {n}" for n in report.notes)]) + "\n"
    if not report.findings:
        app, compared = report.subject, report.resources_compared
        head = wording.NO_DRIFT.format(compared=wording.plural(wording.RESOURCES, compared), app=app)
        if report.app is None:  # no app to name: the objects are (never a placeholder "the app")
            head = wording.NO_DRIFT_UNNAMED.format(matching=wording.plural(wording.MATCH_GIT, compared))
        if report.not_compared:
            labels = ", ".join(r.label for r in report.not_compared)
            head = wording.INCOMPLETE.format(compared=wording.plural(wording.RESOURCES, compared), app=app,
                                             count=wording.plural(wording.DESIRED_OBJECTS, len(report.not_compared)),
                                             labels=labels)  # fmt: skip
        return "\n".join([head, *(f"note: {n}" for n in report.notes)]) + "\n"
    shown = [f for f in report.findings if f.shown_by_argocd]
    counted = shown or report.findings
    hidden = len(report.findings) - len(shown)
    rest = "" if not hidden else wording.HIDDEN_SOME.format(count=hidden) if shown else wording.HIDDEN_ALL
    out = [
        f"{report.subject}: {wording.plural(wording.DIFFERENCES, len(counted))} in "
        f"{wording.plural(wording.RESOURCES, len({f.resource for f in counted}))}{rest} "
        f"(of {report.resources_compared} compared)",
        "",
    ]
    for res, group in groupby(report.findings, key=lambda f: f.resource):
        api = f"{res.group}/{res.version}" if res.group else res.version or "v1"
        out.append(f"{res.label} ({api})")
        for f in group:
            out.extend(_finding(f))
            out.append("")
    out += _paste(report.findings)
    out += _resources(report)
    for n in report.notes:
        if report.git_ahead is None or n != report.git_ahead.get("text"):  # already said with the Application
            out.append(f"note: {n}")
    return "\n".join(out) + "\n"


def _paste(findings: list[Finding]) -> list[str]:
    """The rules of several findings as one would paste them: one ignoreDifferences entry per object (the PR merges
    them the same way), fallback rules apart. Nothing when a single rule is proposed: it is shown as it is."""
    out: list[str] = []
    for fallback, title in ((False, wording.PASTE_RULES), (True, wording.PASTE_FALLBACK_RULES)):
        rules = [f.fix.rule for f in findings if f.fix.rule is not None and f.fix.fallback == fallback]
        if len(rules) < 2:
            continue
        options = list(dict.fromkeys(o for f in findings if f.fix.rule is not None and f.fix.fallback == fallback
                                     for o in f.fix.sync_options))  # fmt: skip
        out += [f"{title}:", _yaml({"ignoreDifferences": merge_rules(rules)}, 2)]
        if options:
            out.append(_yaml({"syncPolicy": {"syncOptions": options}}, 2))
        out.append("")
    return out
