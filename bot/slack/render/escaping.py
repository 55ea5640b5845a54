"""Text for mrkdwn: escaping, clipping and cutting of user data. Pure string functions.

What it guarantees:

* :func:`escape` makes user data (app names, pointers, values, explanations, warnings, notes, reasons) safe
  for mrkdwn: ``&``, ``<`` and ``>`` become entities, so it can never form a link or a mention; no run of
  three backticks (a code fence) and no control character survives;
* inline values (:func:`code`, :func:`value_md`) never carry a backtick or a newline, code blocks
  (:func:`code_block`) never carry a fence;
* :func:`cut` shortens at a line end with a note, never inside an escape, a link or an open code block;
* values are shown as they are given: Secret values come masked from the Report, and nothing here can
  unmask them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.wording import slack as wording
from bot.wording.report import is_opaque, is_text, short_value

VALUE_LIMIT = 300
NAME_LIMIT = 120

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def escape(text: str) -> str:
    """``text`` made safe for mrkdwn: ``&``, ``<`` and ``>`` as entities (Slack's three control characters),
    no code fence (a zero-width space splits any run of three backticks) and no control character."""
    out = _CONTROL.sub("\ufffd", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    while "```" in out:
        out = out.replace("```", "``\u200b`")
    return out


def fill(template: str, **values: str) -> str:
    """A wording template as mrkdwn: the template escaped, then filled with values that are mrkdwn already."""
    return escape(template).format(**values)


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, ending in "…" when clipped."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def code(text: str, limit: int = NAME_LIMIT) -> str:
    """User data as inline code: clipped, on one line, escaped, without backticks."""
    inner = escape(clip(" ".join(text.split("\n")), limit)).replace("`", "'")
    return f"`{inner}`" if inner.strip() else '`""`'


def code_block(text: str) -> str:
    """User data as a code block, escaped (so without a fence of its own)."""
    return "```\n" + escape(text) + "\n```"


def _value_text(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value in a line: strings as they are, anything else (and odd strings) as JSON; cut at ``limit``. A long
    opaque string (a CA bundle) is its length and hash, a text of several lines its number of lines (the lines
    that changed are said beside it)."""
    if is_opaque(value) or is_text(value):
        return short_value(value)
    if isinstance(value, str) and value and value.strip() == value and "\n" not in value:
        text = value
    else:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return clip(text, limit)


def value_md(value: Any) -> str:
    """A desired or live value as inline code, or the wording for "absent"."""
    return escape(wording.SLACK_ABSENT) if value is None else code(_value_text(value), VALUE_LIMIT)


def cut(text: str, limit: int, note: str) -> str:
    """``text`` within ``limit`` characters; when longer, cut at a line end (if one is near) with ``note``."""
    if len(text) <= limit:
        return text
    room = limit - len(note) - 6
    head = text[:room]
    newline = head.rfind("\n")
    if newline > room - 600:
        head = head[:newline]
    amp = head.rfind("&")
    if amp != -1 and ";" not in head[amp:]:
        head = head[:amp]  # half an entity
    lt = head.rfind("<")
    if lt != -1 and ">" not in head[lt:]:
        head = head[:lt]  # half a link (user data has no raw "<": it is escaped)
    if head.count("```") % 2:
        head += "\n```"
    return head + "\n" + note


def in_code(app: str) -> str:
    """An app name for a template that already puts it in backticks."""
    return escape(clip(app, 60)).replace("`", "'")


def cut_note(app: str) -> str:
    """The note that ends a cut text: where to read the rest."""
    return fill(wording.SLACK_CUT, app=in_code(app))
