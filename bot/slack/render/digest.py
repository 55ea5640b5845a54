"""The digest: one message for a burst of apps drifting at once, instead of a flood of parents.

What it guarantees beyond :mod:`bot.slack.render.blocks`: one line per app, in the order given, with its
"Show details" button (``recheck``) when the caller passes ids for it; the lines that do not fit in one
message are counted in a last "and N more apps" line, for which room is always kept.
"""

from __future__ import annotations

from collections import Counter

from bot import wording
from bot.jobs import ActionId
from bot.model import Report
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
from bot.slack.render.escaping import cut_note, escape, fill, plural
from bot.slack.render.inputs import Alert, Buttons
from bot.slack.render.phrases import app_md


def _top_cause(report: Report) -> str:
    counts = Counter(f.cause for f in report.findings)
    first = {c: i for i, c in reversed(list(enumerate(f.cause for f in report.findings)))}
    cause = min(counts, key=lambda c: (-counts[c], first[c]))
    return wording.CAUSE_TITLES.get(cause, cause)


def _digest_line(alert: Alert, report: Report | None) -> tuple[str, str]:
    """The app's line in the digest, as mrkdwn and as plain text."""
    app = app_md(alert)
    values: dict[str, str] = {}
    if alert.status == "failed":
        template = wording.SLACK_DIGEST_FAILED
    elif alert.status == "synced":
        template = wording.SLACK_DIGEST_SYNCED
    elif report is None:
        template = wording.SLACK_DIGEST_PENDING
    elif not report.findings:
        template = wording.SLACK_DIGEST_CLEAN
    else:
        template = wording.SLACK_DIGEST_LINE
        values = {"differences": plural(wording.SLACK_DIFFERENCES, len(report.findings)), "cause": _top_cause(report)}
    text = fill(template, app=app, **{k: escape(v) for k, v in values.items()})
    if report is not None and report.warnings and alert.status == "drift":
        text = f"{wording.SLACK_ICON_WARNING} {text}"
    return text, template.format(app=alert.app, **values)


def digest_message(items: list[tuple[Alert, Report | None]], buttons: dict[str, Buttons] | None) -> Message:
    """One message for a burst of apps drifting at once: one line per app, each with "Show details".

    The button is ``recheck`` with ``buttons[app].recheck`` as its value (apps missing from ``buttons`` get
    none); beyond what fits in one message, "and N more apps".
    """
    note = cut_note("<app>")
    count = plural(wording.SLACK_APPS, len(items))
    blocks: list[JSONBlock] = [
        section(f"{wording.SLACK_ICON_DRIFT} " + fill(wording.SLACK_DIGEST_TITLE, apps=escape(count)), note)
    ]
    if buttons:
        blocks.append(context([escape(wording.SLACK_DIGEST_HINT)], note))
    reserve = json_size(context([escape(plural(wording.SLACK_DIGEST_MORE, len(items)))], note)) + 2
    size = json_size(blocks)
    names: list[str] = []
    shown = 0
    for alert, report in items:
        text, plain = _digest_line(alert, report)
        block = section(text, note)
        ids = (buttons or {}).get(alert.app)
        if ids is not None:
            block["accessory"] = button(wording.SLACK_BUTTON_DETAILS, ActionId.RECHECK, ids.recheck)
        last = shown == len(items) - 1
        if len(blocks) + (1 if last else 2) > MAX_BLOCKS or size + json_size(block) + 2 + (0 if last else reserve) > (
            MESSAGE_BUDGET
        ):
            break
        blocks.append(block)
        size += json_size(block) + 2
        names.append(plain)
        shown += 1
    rest = len(items) - shown
    if rest > 0:
        more = plural(wording.SLACK_DIGEST_MORE, rest)
        blocks.append(context([escape(more)], note))
        names.append(more)
    title = wording.SLACK_DIGEST_TITLE.format(apps=count)
    return message(f"{title}: " + "; ".join(names), blocks)
