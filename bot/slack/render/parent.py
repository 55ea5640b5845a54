"""The parent message: the one message per drift episode in the channel.

What it guarantees beyond :mod:`bot.slack.render.blocks`: the title, the facts (revision, project, unsettled
syncs) and the buttons always fit; the warnings come before the verdicts, and the two share what is left of
the message's budget (verdicts beyond it are counted in a "more in the thread" line).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.intake.jobs import ActionId
from bot.model import Finding, Report
from bot.slack.render.blocks import (
    MAX_SECTION,
    MESSAGE_BUDGET,
    JSONBlock,
    Message,
    actions_block,
    context,
    fit_section,
    json_size,
    message,
    section,
)
from bot.slack.render.escaping import clip, code, cut_note, escape, fill, in_code
from bot.slack.render.fixes import SLOT_ALL, FixButtons, fix_block
from bot.slack.render.inputs import Alert, Buttons
from bot.slack.render.phrases import app_md, note_texts, report_counts, verdict, verdict_plain
from bot.slack.render.resources import nothing_differs_blocks, one_sided_count, parent_lines, resources_plain
from bot.wording import slack as wording
from bot.wording.report import plural

PARENT_VERDICTS = 10

_SHA = re.compile(r"[0-9a-f]{40}")


def _short_revision(revision: str) -> str:
    return revision[:7] if _SHA.fullmatch(revision) else clip(revision, 40)


def _facts(alert: Alert, *, unsettled: bool) -> str:
    parts = []
    if alert.revision:
        parts.append(fill(wording.SLACK_REVISION, revision=code(_short_revision(alert.revision))))
    if alert.project:
        parts.append(fill(wording.SLACK_PROJECT, project=code(alert.project)))
    if unsettled and alert.unsettled_syncs > 0:
        parts.append(escape(plural(wording.SLACK_UNSETTLED, alert.unsettled_syncs)))
    return " · ".join(parts)


def _summary_plain(findings: Sequence[Finding], shown: int = 3) -> str:
    parts = [verdict_plain(f) for f in findings[:shown]]
    rest = len(findings) - shown
    if rest > 0:
        parts.append(wording.SLACK_AND_MORE.format(count=rest))
    return "; ".join(parts)


def parent_message(report: Report, alert: Alert, buttons: Buttons | None, fixes: FixButtons | None = None) -> Message:
    """The one message per drift episode: app, revision, syncs, warnings first, one verdict per field, buttons.

    ``alert.status`` "synced" turns it green (what had drifted stays listed, no buttons); "failed" says the
    analysis failed (Re-check and Mute only). ``buttons=None`` leaves the actions block out. ``fixes`` adds the
    Open PR button for every finding that has a rule (or the link of the PR already opened for them) in its own
    block. The title, the facts and the buttons always fit; the warnings and the verdicts share what is left.
    """
    note = cut_note(alert.app)
    app = app_md(alert)
    counts = {**report_counts(report), "count": one_sided_count(report)}
    plain: list[str] = []
    actions: list[str] = []
    # Git ahead of the cluster is not drift: one calm message, no thread (thread_messages gives none), no fix buttons
    calm = alert.status == "drift" and report.git_ahead_only

    if alert.status == "synced":
        title, icon = wording.SLACK_PARENT_SYNCED, wording.SLACK_ICON_SYNCED
    elif alert.status == "failed":
        title, icon = wording.SLACK_PARENT_FAILED, wording.SLACK_ICON_FAILED
        actions = [ActionId.MUTE, ActionId.RECHECK]
    elif calm:
        title, icon = wording.SLACK_PARENT_GIT_AHEAD, wording.SLACK_ICON_GIT_AHEAD
        actions = [ActionId.MUTE, ActionId.RECHECK]
    else:
        title = wording.SLACK_PARENT_DRIFT if report.findings else wording.SLACK_PARENT_DRIFT_NONE
        if not report.findings and report.resources:
            title = wording.SLACK_PARENT_RESOURCES
        icon = wording.SLACK_ICON_DRIFT
        actions = [ActionId.MUTE, ActionId.RECHECK]
        if report.findings:
            actions.insert(0, ActionId.SHOW_DIFF)
    head = [section(f"{icon} " + fill(title, app=app, **{k: escape(v) for k, v in counts.items()}), note)]
    plain.append(title.format(app=alert.app, **counts) + ".")
    facts = _facts(alert, unsettled=alert.status != "synced" and not calm)
    info = [context([facts], note)] if facts else []
    tail = [actions_block(buttons, alert.app, actions)] if buttons is not None and actions else []
    if fixes is not None and alert.status == "drift" and not calm:
        ruled = [f for f in report.findings if f.fix.rule is not None]
        block = fix_block(SLOT_ALL, "ignore", ruled, alert.app, fixes)
        tail += [block] if block is not None else []
    room = MESSAGE_BUDGET - json_size([*head, *info, *tail]) - 400  # 400: the "more in the thread" line, separators

    warnings: list[JSONBlock] = []
    if alert.status == "drift" and report.warnings:
        text = "\n\n".join(f"{wording.SLACK_ICON_WARNING} {escape(w)}" for w in report.warnings)
        block = fit_section(text, note, room - (2000 if report.findings else 0))
        warnings = [block] if block is not None else []
        room -= json_size(warnings)
        plain.append(clip(report.warnings[0], 300))

    body: list[JSONBlock] = []
    if alert.status == "failed":
        body.append(section(fill(wording.SLACK_PARENT_FAILED_HINT, app=in_code(alert.app)), note))
    elif calm and report.git_ahead is not None:
        ahead = str(report.git_ahead.get("text") or "")
        body.append(section(escape(ahead), note))
        plain.append(ahead)
        lines = [f"• {verdict(f)}" for f in report.findings[:PARENT_VERDICTS]]
        rest = len(report.findings) - len(lines)
        more = [fill(wording.SLACK_AND_MORE, count=str(rest))] if rest > 0 else []
        if lines:
            body.append(context(["\n".join(lines)[: MAX_SECTION - 200], *more], note))
    elif report.findings:
        lines = [escape(wording.SLACK_SYNCED_WAS)] if alert.status == "synced" else []
        header = len(lines)
        for f in report.findings[:PARENT_VERDICTS]:
            candidate = "\n".join([*lines, f"• {verdict(f)}"])
            if len(lines) > header and (len(candidate) > MAX_SECTION - 200 or json_size(candidate) + 60 > room):
                break
            lines.append(f"• {verdict(f)}")
        body.append(section("\n".join(lines), note))
        rest = len(report.findings) - (len(lines) - header)
        if alert.status == "drift":
            more = [fill(wording.SLACK_MORE_IN_THREAD, count=str(rest))] if rest > 0 else []
            also = [fill(wording.SLACK_ALSO_RESOURCES, count=escape(counts["count"]))] if report.resources else []
            body.append(context([*more, *also, escape(wording.SLACK_SEE_THREAD)], note))
        plain.append(_summary_plain(report.findings))
    elif alert.status == "drift" and report.resources:  # resources only one side has: which, and the thread
        body += [
            section("\n".join(parent_lines(report)), note),
            context([escape(wording.SLACK_SEE_THREAD_RESOURCES)], note),
        ]
        plain.append(resources_plain(report))
    elif alert.status == "drift" and report.nothing_differs is not None:
        body += nothing_differs_blocks(report, note)
        plain.append(str(report.nothing_differs.get("explanation") or ""))
    elif report.notes:
        body.append(context(note_texts(report.notes[:3]), note))

    return message(" ".join(plain), [*head, *warnings, *info, *body, *tail])
