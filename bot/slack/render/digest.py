"""The digest: one message for a burst of apps drifting at once, instead of a flood of parents.

What it guarantees beyond :mod:`bot.slack.render.blocks`:

* when one line per app fits in one message, that is what it shows, in the order given, each line with its "Show
  details" button (``recheck``) when the caller passes ids for it;
* otherwise the apps are grouped by cause and writer (the failed, the pending, the synced and the clean ones in a
  group each), the largest group first, each with its count and the first few names; every app is counted in a
  group, and the message says where the full list is (``listed``: attached in the thread, or to be attached when
  the burst is over): :func:`digest_list` renders that list, one CSV row per app;
* failed apps say why when the caller passes the reason.

Each app comes as its :class:`DigestSummary` (:func:`digest_summary` of its alert and report), not its report: a
digest may list a thousand apps, and its message is rendered again at every flush.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from typing import Literal
from urllib.parse import quote

from bot.analysis.managedfields import ARGOCD_MANAGERS
from bot.intake.jobs import ActionId
from bot.model import DigestSummary, Report
from bot.slack.render.blocks import (
    MAX_BLOCKS,
    MESSAGE_BUDGET,
    JSONBlock,
    Message,
    button,
    context,
    json_size,
    message,
    section,
)
from bot.slack.render.escaping import NAME_LIMIT, clip, cut_note, escape, fill
from bot.slack.render.inputs import Alert, Buttons
from bot.slack.render.phrases import app_md
from bot.wording import slack as wording
from bot.wording.report import CAUSE_TITLES, plural

DigestEntry = tuple[Alert, DigestSummary]
GROUP_NAMES = 8
REASON_LIMIT = 200


def _top_cause(report: Report) -> str:
    counts = Counter(f.cause for f in report.findings)
    first = {c: i for i, c in reversed(list(enumerate(f.cause for f in report.findings)))}
    return min(counts, key=lambda c: (-counts[c], first[c]))


def _writer(report: Report, cause: str) -> str:
    """Who writes the top cause's fields, named so that apps hit by the same writer share it: the field manager
    (not Argo CD's own), else the kind of the object acting (with its name when cluster-wide, like a webhook); ""
    when nobody is named."""
    w = next(f.writer for f in report.findings if f.cause == cause)
    if w.manager and w.manager not in ARGOCD_MANAGERS:
        return w.manager
    if w.object is not None:
        return w.object.kind if w.object.namespace else f"{w.object.kind} {w.object.name}"
    return ""


def digest_summary(alert: Alert, report: Report | None) -> DigestSummary:
    """What the digest shows of an app (``report`` ``None``: not analysed yet, "pending")."""
    warned = bool(report is not None and report.warnings and alert.status == "drift")
    if alert.status in ("failed", "synced"):
        return DigestSummary(alert.status, warned=warned)
    if report is None:
        return DigestSummary("pending")
    if not report.findings:
        return DigestSummary("one-sided" if report.resources else "clean", warned=warned)
    cause = _top_cause(report)
    return DigestSummary("drift", len(report.findings), cause, _writer(report, cause), warned)


def _digest_line(alert: Alert, summary: DigestSummary, reason: str | None) -> tuple[str, str]:
    """The app's line in the digest, as mrkdwn and as plain text."""
    app = app_md(alert)
    values: dict[str, str] = {}
    template = wording.SLACK_DIGEST_LINES[summary.state]
    if summary.state == "failed" and reason:
        template, values = wording.SLACK_DIGEST_FAILED_WHY, {"reason": clip(reason, REASON_LIMIT)}
    elif summary.state == "drift":
        cause = CAUSE_TITLES.get(summary.cause, summary.cause)
        values = {"differences": plural(wording.SLACK_DIFFERENCES, summary.differences), "cause": cause}
    text = fill(template, app=app, **{k: escape(v) for k, v in values.items()})
    if summary.warned:
        text = f"{wording.SLACK_ICON_WARNING} {text}"
    return text, template.format(app=alert.app, **values)


def _group(summary: DigestSummary) -> tuple[str, str]:
    """(cause, writer) of an app for the grouped digest; a state's title and "" for the apps without findings."""
    if summary.state != "drift":
        return wording.SLACK_DIGEST_STATES[summary.state], ""
    return CAUSE_TITLES.get(summary.cause, summary.cause), summary.writer or wording.SLACK_DIGEST_NO_WRITER


def digest_message(items: Sequence[DigestEntry], buttons: dict[str, Buttons] | None, *,
                   reasons: dict[str, str] | None = None,
                   listed: Literal["later", "attached"] = "later") -> Message:  # fmt: skip
    """One message for a burst of apps drifting at once: one line per app with "Show details" when they all fit
    (the button is ``recheck`` with ``buttons[app].recheck`` as its value; apps missing from ``buttons`` get none),
    else the apps grouped by cause and writer, and where the full list is (``listed``). ``reasons``: why the
    analysis of a failed app failed, by app name."""
    count = plural(wording.SLACK_APPS, len(items))
    title = wording.SLACK_DIGEST_TITLE.format(apps=count)
    blocks, lines = _one_line_each(items, buttons, reasons)
    if _fits(blocks, lines):
        return message(f"{title}: " + "; ".join(p for _, p in lines), [*blocks, *(b for b, _ in lines)])
    return _grouped(items, title, count, listed)


def lines_fit(items: Sequence[DigestEntry], buttons: dict[str, Buttons] | None,
              reasons: dict[str, str] | None = None) -> bool:  # fmt: skip
    """Whether :func:`digest_message` shows one line per app (else it groups them, and the list is a file)."""
    if len(items) > MAX_BLOCKS:
        return False
    return _fits(*_one_line_each(items, buttons, reasons))


def _one_line_each(items: Sequence[DigestEntry], buttons: dict[str, Buttons] | None, reasons: dict[str, str] | None
                   ) -> tuple[list[JSONBlock], list[tuple[JSONBlock, str]]]:  # fmt: skip
    note = cut_note("<app>")
    count = plural(wording.SLACK_APPS, len(items))
    blocks: list[JSONBlock] = [
        section(f"{wording.SLACK_ICON_DRIFT} " + fill(wording.SLACK_DIGEST_TITLE, apps=escape(count)), note)
    ]
    if buttons:
        blocks.append(context([escape(wording.SLACK_DIGEST_HINT)], note))
    lines: list[tuple[JSONBlock, str]] = []
    for alert, summary in items:
        text, plain = _digest_line(alert, summary, (reasons or {}).get(alert.app))
        block = section(text, note)
        ids = (buttons or {}).get(alert.app)
        if ids is not None:
            block["accessory"] = button(wording.SLACK_BUTTON_DETAILS, ActionId.RECHECK, ids.recheck)
        lines.append((block, plain))
    return blocks, lines


def _fits(blocks: list[JSONBlock], lines: list[tuple[JSONBlock, str]]) -> bool:
    size = json_size(blocks) + sum(json_size(b) + 2 for b, _ in lines)
    return len(blocks) + len(lines) <= MAX_BLOCKS and size <= MESSAGE_BUDGET


def _grouped(items: Sequence[DigestEntry], title: str, count: str, listed: Literal["later", "attached"]) -> Message:
    note = cut_note("<app>")
    groups: dict[tuple[str, str], list[Alert]] = {}
    for alert, summary in items:
        groups.setdefault(_group(summary), []).append(alert)
    where = wording.SLACK_DIGEST_LIST_ATTACHED if listed == "attached" else wording.SLACK_DIGEST_LIST_LATER
    blocks: list[JSONBlock] = [
        section(f"{wording.SLACK_ICON_DRIFT} " + fill(wording.SLACK_DIGEST_TITLE, apps=escape(count)), note),
        context([escape(wording.SLACK_DIGEST_GROUPED + " " + where.format(apps=count))], note),
    ]
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    reserve = json_size(context([escape(plural(wording.SLACK_DIGEST_MORE_GROUPS, len(ordered)))], note)) + 2
    size = json_size(blocks)
    plain: list[str] = []
    shown = 0
    for (cause, writer), alerts in ordered:
        head = wording.SLACK_DIGEST_GROUP if writer else wording.SLACK_DIGEST_GROUP_NO_WRITER
        names = ", ".join(app_md(a) for a in alerts[:GROUP_NAMES])
        rest = len(alerts) - GROUP_NAMES
        more = " " + escape(wording.SLACK_AND_MORE.format(count=rest)) if rest > 0 else ""
        text = fill(head, count=str(len(alerts)), cause=escape(cause), writer=escape(clip(writer, NAME_LIMIT)))
        block = section(f"{text}\n{names}{more}", note)
        last = shown == len(ordered) - 1
        if len(blocks) + (1 if last else 2) > MAX_BLOCKS or size + json_size(block) + 2 + (0 if last else reserve) > (
            MESSAGE_BUDGET
        ):
            break
        blocks.append(block)
        size += json_size(block) + 2
        plain.append(head.format(count=len(alerts), cause=cause, writer=writer).replace("*", ""))
        shown += 1
    if shown < len(ordered):
        rest_groups = len(ordered) - shown
        more_text = plural(wording.SLACK_DIGEST_MORE_GROUPS, rest_groups)
        blocks.append(context([escape(more_text)], note))
        plain.append(more_text)
    return message(f"{title}: " + "; ".join(plain), blocks)


def digest_list(items: Sequence[DigestEntry], reasons: dict[str, str] | None = None) -> str:
    """Every app of a digest, one CSV row each (app, namespace, status, differences, cause, writer, detail, link),
    for the file attached in the digest's thread."""
    out = io.StringIO()
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(wording.SLACK_DIGEST_LIST_COLUMNS)
    for alert, summary in items:
        state = summary.state
        cause, writer = _group(summary) if state == "drift" else ("", "")
        differences = str(summary.differences) if state == "drift" else ""
        detail = (reasons or {}).get(alert.app, "") if state == "failed" else ""
        path = "/".join(quote(p, safe="") for p in (alert.app_namespace, alert.app) if p)
        link = f"{alert.argocd_url.rstrip('/')}/applications/{path}" if alert.argocd_url else ""
        rows.writerow([alert.app, alert.app_namespace or "", wording.SLACK_DIGEST_STATES[state], differences, cause,
                       _cell(writer), _cell(detail), link])  # fmt: skip
    return out.getvalue()


def _cell(text: str) -> str:
    """A cell a spreadsheet shows as text: a leading ``=``, ``+``, ``-`` or ``@`` would start a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
