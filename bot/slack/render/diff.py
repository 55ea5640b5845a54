"""The "Show diff" answer: Git against live for every finding, unified-style.

What it guarantees beyond :mod:`bot.slack.render.blocks`: the diff is shown in a code block only when the
whole of it fits; otherwise the message says so and the full text comes back for the caller to upload as a
file, never a diff cut in the middle. Values are the Report's, so Secret values stay masked; a long opaque value
(a caBundle) is its length and hash, as everywhere else.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

import yaml

from bot.model import Report
from bot.slack.render.blocks import MAX_SECTION, Message, message, section
from bot.slack.render.escaping import code_block, cut_note, escape, fill
from bot.slack.render.inputs import Alert
from bot.slack.render.phrases import app_md, resource_name
from bot.wording import slack as wording
from bot.wording.report import is_opaque, opaque_summary, plural


def _summarised(value: Any) -> Any:
    """``value`` with every long opaque string (a caBundle, a token) replaced by its length and hash, as the thread,
    the text report and the page show it: a 1,564-character base64 line tells a person nothing."""
    if is_opaque(value):
        return f"[{opaque_summary(value)}]"
    if isinstance(value, dict):
        return {k: _summarised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_summarised(v) for v in value]
    return value


def _diff_lines(value: Any) -> list[str]:
    value = _summarised(value)
    if value is None:
        return []
    if isinstance(value, str):
        if value and value.strip() == value:
            return value.splitlines()
        return [json.dumps(value, ensure_ascii=False)]  # empty, or with edge whitespace: quoted to be seen
    if isinstance(value, dict | list):
        return yaml.safe_dump(value, sort_keys=True, default_flow_style=False, allow_unicode=True).splitlines()
    return [json.dumps(value, ensure_ascii=False)]


def _diff_text(report: Report, app: str) -> str:
    lines = [wording.SLACK_DIFF_FROM.format(app=app), wording.SLACK_DIFF_TO.format(app=app)]
    for f in report.findings:
        absent = ""
        if f.desired is None:
            absent = wording.SLACK_DIFF_ABSENT_GIT
        elif f.live is None:
            absent = wording.SLACK_DIFF_ABSENT_LIVE
        resource = f"{f.resource.kind} {resource_name(f)}"
        lines.append(wording.SLACK_DIFF_HUNK.format(pointer=f.pointer, resource=resource, absent=absent))
        old, new = _diff_lines(f.desired), _diff_lines(f.live)
        if len(old) > 1 or len(new) > 1:
            body = difflib.unified_diff(old, new, lineterm="", n=max(len(old), len(new)))
            lines += [line for line in body if not line.startswith(("---", "+++", "@@"))]
        else:
            lines += [f"-{x}" for x in old] + [f"+{x}" for x in new]
    return "\n".join(lines) + "\n"


def diff_message(report: Report, alert: Alert, limit: int = 2900) -> tuple[Message, str | None]:
    """Git against live for every finding, unified-style, in a code block of at most ``limit`` characters.

    When it does not fit: a short message, and the full (unescaped) text as the second element, for the caller
    to upload as a file in the thread. Values are the Report's, so Secret values stay masked.
    """
    note = cut_note(alert.app)
    app = app_md(alert)
    if not report.findings:
        text = fill(wording.SLACK_DIFF_NONE, app=app)
        return message(wording.SLACK_DIFF_NONE.format(app=alert.app), [section(text, note)]), None
    differences = plural(wording.SLACK_DIFFERENCES, len(report.findings))
    full = _diff_text(report, alert.app)
    block = code_block(full.rstrip("\n"))
    if len(block) <= min(limit, MAX_SECTION):
        title = fill(wording.SLACK_DIFF_TITLE, app=app, differences=escape(differences))
        plain = wording.SLACK_DIFF_TITLE.format(app=alert.app, differences=differences)
        return message(plain, [section(title, note), section(block, note)]), None
    lines = str(full.count("\n"))
    text = fill(wording.SLACK_DIFF_FILE, app=app, differences=escape(differences), lines=lines)
    plain = wording.SLACK_DIFF_FILE.format(app=alert.app, differences=differences, lines=lines)
    return message(plain, [section(text, note)]), full
