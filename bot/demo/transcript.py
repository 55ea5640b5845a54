"""Block Kit messages as plain terminal text, for the offline demo (what a person would see in Slack).

Pure: a message dict (``text`` and ``blocks``) in, indented lines out. Buttons are shown as ``[ Label ]``;
mrkdwn markers are left as they are, which reads well enough in a terminal, and Slack's escapes (``&lt;``) are shown
as the characters Slack shows. A long line wraps under itself (a context line's "· " is not repeated) and never
inside a link ``<url|label>``.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

_LINK = re.compile(r"<[^<>|\s]+\|[^<>]*>")
"""A mrkdwn link ``<url|label>``: wrapped as one word, or its label would be split over two lines."""
_KEEP = "\u00a0"  # textwrap breaks at ASCII whitespace only: a no-break space holds a link's words together


def _text(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("text") or "")
    return str(obj or "")


def block_lines(block: dict[str, Any], width: int) -> list[str]:
    kind = block.get("type")
    if kind == "header":
        title = _text(block.get("text"))
        return [title, "─" * min(len(title), width)]
    if kind == "section":
        out = []
        if block.get("text"):
            out += _wrap(_text(block["text"]), width)
        for f in block.get("fields") or []:
            out += _wrap(_text(f), width)
        acc = block.get("accessory")
        if isinstance(acc, dict) and acc.get("type") == "button":
            out.append(f"[ {_text(acc.get('text'))} ]")
        return out
    if kind == "context":
        return _wrap("  ".join(_text(e) for e in block.get("elements") or []), width, prefix="· ")
    if kind == "actions":
        return ["  ".join(f"[ {_text(e.get('text'))} ]" for e in block.get("elements") or [])]
    if kind == "divider":
        return ["┄" * min(40, width)]
    if kind in ("markdown", "rich_text"):
        return _wrap(str(block.get("text") or ""), width)
    return []


def _wrap(text: str, width: int, prefix: str = "") -> list[str]:
    out: list[str] = []
    in_code = False
    for line in text.splitlines() or [""]:
        if line.strip().startswith("```"):
            in_code = not in_code
            rest = line.strip()[3:]
            if rest.endswith("```"):
                in_code = not in_code
                rest = rest[:-3]
            if rest:
                out.append("    " + rest)
            continue
        if in_code or not line:
            out.append(("    " if in_code else "") + line)
        else:
            # a long link stays on one line, so that it can be copied from the terminal and opened, its label with
            # it; a continued line is indented under the first, never given a bullet of its own
            held = _LINK.sub(lambda m: m.group(0).replace(" ", _KEEP), line.replace(_KEEP, " "))
            wrapped = textwrap.wrap(held, width=width, initial_indent=prefix, subsequent_indent=" " * len(prefix)
                                    or "  ", break_long_words=False, break_on_hyphens=False) or [""]  # fmt: skip
            out += [w.replace(_KEEP, " ") for w in wrapped]
    # Slack shows its three escaped characters as themselves (in code blocks too): so does the terminal
    return [line.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") for line in out]


def render_message(message: dict[str, Any], *, width: int = 100, indent: str = "") -> str:
    blocks = message.get("blocks") or []
    lines = (
        [line for b in blocks for line in block_lines(b, width)] if blocks else _wrap(str(message.get("text")), width)
    )
    return "\n".join(indent + line for line in lines)
