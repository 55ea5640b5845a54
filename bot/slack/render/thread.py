"""The thread under the parent: per finding its evidence and its fix (with what not to do), then the notes.

What it guarantees beyond :mod:`bot.slack.render.blocks`: a finding's blocks (evidence, then fix) stay in one
message whenever they fit in one, so the thread is split only between findings; every message carries a
plain summary of the findings it holds ("part N of M"). The proposed rule is shown as YAML in a code block,
exactly as the Report holds it.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from bot.fixes.proposal import merge_rules
from bot.model import Finding, Report
from bot.slack.render.blocks import JSONBlock, Message, context, message, pack, section
from bot.slack.render.escaping import clip, code, code_block, cut_note, escape, fill, value_md
from bot.slack.render.fixes import FixButtons, fix_block, slot_finding
from bot.slack.render.inputs import Alert
from bot.slack.render.phrases import (
    POINTER_LIMIT,
    app_md,
    kind_md,
    note_texts,
    report_counts,
    verdict,
    verdict_plain,
)
from bot.slack.render.resources import resource_groups, resources_plain
from bot.wording import slack as wording
from bot.wording.report import (
    NO_NARROW_RULE,
    PASTE_FALLBACK_RULES,
    PASTE_RULES,
    cause_title,
    is_text,
    plural,
    text_changes,
)

HIDES_SHOWN = 5


def _owner_line(f: Finding) -> str:
    w = f.writer
    if w.manager is None:
        return escape(wording.SLACK_NO_OWNER)
    sub = fill(wording.SLACK_OWNER_SUBRESOURCE, subresource=code(w.subresource)) if w.subresource else ""
    return fill(
        wording.SLACK_OWNER,
        manager=code(w.manager),
        operation=escape(clip(w.operation or "?", 40)),
        subresource=sub,
        time=escape(clip(w.time, 60)) if w.time else escape(wording.SLACK_UNKNOWN_TIME),
    )


def _evidence_section(f: Finding, number: int, total: int, note: str) -> JSONBlock:
    w = f.writer
    title = cause_title(f.cause, added=f.desired is None)
    lines = [
        fill(wording.SLACK_FINDING_TITLE, number=str(number), total=str(total), verdict=verdict(f)),
        fill(wording.SLACK_CAUSE, cause=code(f.cause), title=escape(title), confidence=escape(f.confidence)),
    ]
    if f.explanation:
        lines.append(escape(f.explanation))
    lines.append(escape(wording.SLACK_EVIDENCE))
    bullets = [_owner_line(f)]
    if w.co_owners:
        owners = ", ".join(code(o) for o in w.co_owners[:10])
        bullets.append(fill(wording.SLACK_CO_OWNERS, owners=owners))
    if w.object is not None:
        name = f"{w.object.namespace}/{w.object.name}" if w.object.namespace else w.object.name
        bullets.append(fill(wording.SLACK_OBJECT, object=f"{kind_md(w.object.kind)} {code(name)}"))
    # the analysis' own evidence; its managedFields line is the owner line above
    bullets += [escape(clip(e, 600)) for e in f.evidence if not e.startswith("managedFields:")]
    bullets.append(fill(wording.SLACK_VALUES, desired=value_md(f.desired), live=value_md(f.live)))
    if is_text(f.desired) and is_text(f.live):  # the lines that changed, not both texts whole
        changed = ", ".join(code(c) for c in text_changes(str(f.desired), str(f.live)))
        bullets.append(fill(wording.SLACK_TEXT_CHANGED, changes=changed))
    lines += [f"• {b}" for b in bullets]
    return section("\n".join(lines), note)


def _hides(f: Finding) -> str:
    shown = [code(p, POINTER_LIMIT) for p in f.fix.hides[:HIDES_SHOWN]]
    rest = len(f.fix.hides) - HIDES_SHOWN
    if rest > 0:
        shown.append(escape(wording.SLACK_AND_MORE.format(count=rest)))
    return ", ".join(shown) if shown else code(f.pointer, POINTER_LIMIT)


def _decide(f: Finding) -> list[str]:
    """For a field changed by hand: decide which value is right, and what a sync (the revert) would undo."""
    values = {"field": code(f.field_name, POINTER_LIMIT), "live": value_md(f.live), "desired": value_md(f.desired)}
    who = code(f.writer.manager) if f.writer.manager else escape(wording.SLACK_NO_OWNER)
    return [fill(wording.SLACK_MANUAL_DECIDE, who=who, **values), f"• {fill(wording.SLACK_MANUAL_KEEP)}",
            f"• {fill(wording.SLACK_MANUAL_REVERT, **values)}"]  # fmt: skip


def _fix_section(f: Finding, note: str) -> JSONBlock:
    fix = f.fix
    better = fill(wording.SLACK_BETTER_FIX, alternative=escape(fix.alternative)) if fix.alternative else ""
    # what not to do is the finding's own: merged across findings, one's advice would contradict another's fix
    do_not = [wording.SLACK_DO_NOT_TITLE, *(f"• {escape(line)}" for line in fix.avoid)]
    do_not = do_not if fix.avoid else []
    if fix.rule is None and f.cause == "manual-edit":
        reason = wording.SLACK_NO_RULE_REASONS.get(f.cause, wording.SLACK_NO_RULE_REASONS["unknown"])
        return section("\n".join([*_decide(f), fill(wording.SLACK_NO_RULE, reason=escape(reason)), *do_not]), note)
    if fix.rule is None:
        if fix.verified is False:
            reason = NO_NARROW_RULE
        elif not f.shown_by_argocd:
            reason = wording.SLACK_NO_RULE_NOT_SHOWN
        else:
            reason = wording.SLACK_NO_RULE_REASONS.get(f.cause, wording.SLACK_NO_RULE_REASONS["unknown"])
        lines = [fill(wording.SLACK_NO_RULE, reason=escape(reason))]
        return section("\n".join([*lines, *([better] if better else []), *do_not]), note)

    rule_yaml = yaml.safe_dump([fix.rule], sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)
    rule = [
        fill(wording.SLACK_FALLBACK_RULE if fix.fallback else wording.SLACK_RULE, hides=_hides(f)),
        code_block(rule_yaml.rstrip("\n")),
    ]
    if fix.sync_options:
        options = yaml.safe_dump(list(fix.sync_options), default_flow_style=False, allow_unicode=True, width=1000)
        rule += [escape(wording.SLACK_SYNC_OPTIONS), code_block(options.rstrip("\n"))]
    if fix.verified is False:
        rule.append(f"{wording.SLACK_ICON_ERROR} {escape(wording.SLACK_RULE_UNVERIFIED)}")
    parts = ([better] if better else []) + rule if fix.fallback else rule + ([better] if better else [])
    return section("\n".join([*parts, *do_not]), note)


def _app_facts(report: Report) -> str | None:
    facts = report.application
    if not facts:
        return None
    if facts.get("automated"):
        sync = wording.SLACK_SYNC_SELF_HEAL if facts.get("self_heal") else wording.SLACK_SYNC_AUTOMATED
    else:
        sync = wording.SLACK_SYNC_MANUAL
    respect = wording.SLACK_ON if facts.get("respect_ignore_differences") else wording.SLACK_OFF
    existing = len(facts.get("ignore_differences") or [])
    return fill(wording.SLACK_THREAD_APP_FACTS, sync=escape(sync), respect=escape(respect), existing=str(existing))


def _notes_groups(notes: Sequence[str], note: str) -> list[tuple[list[JSONBlock], str]]:
    texts = note_texts(notes)
    return [([context(texts[i : i + 10], note)], "") for i in range(0, len(texts), 10)]


def thread_messages(report: Report, alert: Alert, fixes: FixButtons | None = None, *, view_url: str | None = None,
                    view_hours: int = 24) -> list[Message]:  # fmt: skip
    """The thread under the parent: one section pair per finding (what not to do in its fix section), then the rules
    to paste and the notes.

    ``view_url``: the signed link to the drift page (:mod:`bot.web.view`), said under the title of the first message
    ("Full diff", valid ``view_hours``).

    ``fixes`` adds, under each finding that has a rule, its Open PR button (slot ``finding-N``) and, where the
    better fix is in the source, "Open PR: fix the source" (slot ``source-N``); under a field changed by hand,
    "Open PR: commit the live value to Git" (slot ``commit-N``); or the PR already opened.

    Split into as many messages as needed so that each stays within the limits of :mod:`bot.slack.render`. Git ahead
    of the cluster and nothing else (``Report.git_ahead_only``) gets no thread: its parent is the one calm message.
    """
    if report.git_ahead_only:
        return []
    note = cut_note(alert.app)
    app = app_md(alert)
    sided = resource_groups(report, note)
    if not report.findings and sided:  # resources only one side has, or an OutOfSync with nothing that differs
        final = pack([*sided, *_notes_groups(report.notes, note)])
        plain = wording.SLACK_TEXT_RESOURCES.format(app=alert.app, items=resources_plain(report))
        if not report.resources:
            plain = wording.SLACK_TEXT_NOTHING_DIFFERS.format(app=alert.app)
        return [message(plain, blocks) for blocks, _ in final]
    if not report.findings:
        resources = plural(wording.SLACK_RESOURCES, report.resources_compared)
        clean = [
            ([section(fill(wording.SLACK_NO_DRIFT, resources=escape(resources), app=app), note)], ""),
            *_notes_groups(report.notes, note),
        ]
        plain = wording.SLACK_NO_DRIFT.format(resources=resources, app=alert.app)
        return [message(plain, blocks) for blocks, _ in pack(clean)]

    counts = {k: escape(v) for k, v in report_counts(report).items()}
    head = [section(fill(wording.SLACK_THREAD_TITLE, app=app, compared=str(report.resources_compared), **counts), note)]
    facts = _app_facts(report)
    if facts:
        head.append(context([facts], note))
    if view_url:
        link = f"<{escape(view_url).replace('|', '%7C')}|{escape(wording.SLACK_FULL_DIFF_LINK)}>"
        head.append(context([fill(wording.SLACK_FULL_DIFF, link=link, hours=str(view_hours))], note))
    total = len(report.findings)
    groups: list[tuple[list[JSONBlock], str]] = []
    for number, f in enumerate(report.findings, 1):
        blocks = [*head] if number == 1 else [{"type": "divider"}]
        blocks += [_evidence_section(f, number, total, note), _fix_section(f, note)]
        if fixes is not None:
            for kind in ("ignore", "source", "commit"):
                button = fix_block(slot_finding(number - 1, kind), kind, [f], alert.app, fixes)
                blocks += [button] if button is not None else []
        groups.append((blocks, verdict_plain(f)))
    packed = pack(groups)

    messages = []
    for part, (blocks, summaries) in enumerate(packed, 1):
        plain = wording.SLACK_TEXT_THREAD.format(
            app=alert.app, part=part, parts=len(packed), findings="; ".join(summaries)
        )
        messages.append(message(plain, blocks))

    if sided:
        plain = wording.SLACK_TEXT_RESOURCES.format(app=alert.app, items=resources_plain(report))
        messages += [message(plain, blocks) for blocks, _ in pack(sided)]
    paste = _paste_groups(report, note)
    if paste:
        messages += [message(wording.SLACK_TEXT_PASTE.format(app=alert.app), blocks) for blocks, _ in pack(paste)]
    if report.notes:
        final = pack(_notes_groups(report.notes, note))
        messages += [message(wording.SLACK_TEXT_NOTES.format(app=alert.app), blocks) for blocks, _ in final]
    return messages


def _paste_groups(report: Report, note: str) -> list[tuple[list[JSONBlock], str]]:
    """Where several findings have rules: all of them as one would paste them, one ignoreDifferences entry per
    object (merged as the pull request merges them), fallback rules apart."""
    groups: list[tuple[list[JSONBlock], str]] = []
    for fallback, title in ((False, PASTE_RULES), (True, PASTE_FALLBACK_RULES)):
        ruled = [f for f in report.findings if f.fix.rule is not None and f.fix.fallback == fallback]
        if len(ruled) < 2:
            continue
        tree: dict[str, object] = {"ignoreDifferences": merge_rules(f.fix.rule for f in ruled if f.fix.rule)}
        options = list(dict.fromkeys(o for f in ruled for o in f.fix.sync_options))
        if options:
            tree["syncPolicy"] = {"syncOptions": options}
        text = yaml.safe_dump(tree, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)
        groups.append(([section(f"*{escape(title)}:*\n{code_block(text.rstrip())}", note)], ""))
    return groups
