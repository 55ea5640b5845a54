"""A value as the drift page writes it on one line: YAML's flow style, embedded text split into lines, long opaque
values folded.

``sidebyside`` lays Git's object beside the live one field by field; this module decides what one side of one row
reads: :func:`scalar_text` writes a scalar as YAML does in flow style, :func:`embedded_lines` splits a string worth
comparing line by line (multi-line text, a JSON object or array pretty-printed), and :func:`cell` folds a long
opaque string (a ``caBundle``) into a :class:`Cell` holding the whole value, which the page shows by its length and
a short hash.

Guarantees: pure (no I/O); values are written as given (Secret values must already be masked).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.analysis.pointer import MISSING

LONG_VALUE = 120
"""A one-line string longer than this, without spaces, is opaque (base64, a certificate): folded on the page."""
_JSON_MIN = 40  # shorter JSON strings read fine on one line


@dataclass(frozen=True)
class Cell:
    """One side of a row: indentation (in levels), the text, and the opaque value it holds, if folded."""

    indent: int
    text: str
    long_value: str | None = None
    """The full value when it is too long to show (the page folds it to its length and a hash)."""


def scalar_text(value: Any) -> str:
    """A scalar as YAML writes it in flow style (``"on"`` and ``""`` quoted, ``1.0`` kept, ``{}`` for an empty map)."""
    if value is None:
        return "null"
    if isinstance(value, bool | int | float) or value in ({}, []):
        return json.dumps(value)
    import yaml  # the page's values only: not imported by every explain

    text = yaml.safe_dump(value, default_flow_style=True, width=2**31, allow_unicode=True)
    text = text.removesuffix("\n").removesuffix("\n...").strip()
    # a string YAML must quote is written "…" (also valid YAML), as every sentence and advice writes it: one
    # spelling of "" and "on" on the page and in the fix beside it
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) and text.startswith("'") else text


def embedded_lines(value: Any) -> list[str] | None:
    """The lines of a string worth comparing line by line: multi-line text, or JSON pretty-printed."""
    if not isinstance(value, str):
        return None
    if "\n" in value.rstrip("\n"):
        return value.splitlines()
    stripped = value.strip()
    if len(stripped) >= _JSON_MIN and stripped[:1] in "{[":
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return None
        if isinstance(parsed, dict | list):
            return json.dumps(parsed, indent=2, ensure_ascii=False).splitlines()
    return None


def is_long(value: Any) -> bool:
    """An opaque one-line string (no spaces, longer than :data:`LONG_VALUE`): the page folds it."""
    return isinstance(value, str) and len(value) > LONG_VALUE and not any(c.isspace() for c in value)


def is_structured(value: Any) -> bool:
    """A map or list with something in it: its fields are rows of their own, not one value."""
    return isinstance(value, dict | list) and bool(value)


def dash(indent: int, value: Any) -> Cell | None:
    """The bare ``-`` of a list item whose first field goes on lines of its own; ``None`` for an absent side."""
    return None if value is MISSING else Cell(indent, "-")


def cell(indent: int, label: str, value: Any, *, header: bool = False) -> Cell | None:
    """``label value`` on one side of a row (``label`` alone for a header whose fields follow), a long opaque value
    folded; ``None`` for an absent side."""
    if value is MISSING:
        return None
    if header and isinstance(value, dict | list) and value:
        return Cell(indent, label)
    if is_long(value):
        return Cell(indent, f"{label} ", long_value=str(value))
    return Cell(indent, f"{label} {scalar_text(value)}")
