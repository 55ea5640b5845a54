"""The printer: the object as YAML, every line prefixed with the owners of its field.

This is kubectl-blame's ``cmd/marshal.go`` (``marshalMapWithCtx``,
``marshalListWithCtx``) and the helpers of ``cmd/util.go`` it uses: the prefix of
each entry (``ManagerInfo.String()``: manager, operation and, with ``--time``, the
time column) and the literal blocks of multi-line strings
(``toYAMLStringValueln``). Strings are quoted by ``emitter`` as yaml.v2 would.

Guarantees: pure (the clock is whatever ``now`` the caller passes); every prefix
of one object has the same width in bytes (Go pads by ``len``), an entry without
a time included; map keys are printed sorted; lists in the compact style (``- ``
under the key); a line whose field nobody owns shows its nearest owned
ancestor's owners, or the blank prefix; a field with several owners gets one
prefix line per owner, joined by ``/``.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, tzinfo
from typing import Any

from bot.analysis.blame.emitter import yaml_string
from bot.analysis.blame.goduration import human_duration
from bot.analysis.blame.govalue import format_basic, go_len
from bot.analysis.blame.tree import Node, item_node
from bot.analysis.managedfields import Entry

_FULL_TIME_WIDTH = len("2006-01-02 15:04:05 -0700")  # Go's layout; every formatted time has this width


def _parse_time(raw: Any) -> datetime | None:
    """A managedFields ``time`` (RFC 3339 text, or a datetime from a YAML loader); None if unusable."""
    if isinstance(raw, datetime):
        t = raw
    elif isinstance(raw, str) and raw:
        try:
            t = datetime.fromisoformat(raw)
        except ValueError:
            return None
    else:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def manager_infos(entries: list[Entry], time_format: str, now: datetime, zone: tzinfo | None) -> list[str]:
    """Each entry's prefix (kubectl-blame's ``ManagerInfo.String()``), all of one width."""
    times: list[str] = []
    for e in entries:
        t = _parse_time(e.time)
        if t is None or time_format == "none":
            times.append("")
        elif time_format == "relative":
            times.append(human_duration(now - t))
        else:
            times.append(t.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S %z"))
    managers = [e.manager for e in entries]
    operations = [e.operation if isinstance(e.operation, str) else "" for e in entries]
    mgr_width = max(go_len(m) for m in managers)
    op_width = max(go_len(o) for o in operations)
    # An entry without a time still gets the time column (blank), so that columns line up.
    time_width = _FULL_TIME_WIDTH if time_format == "full" else max(go_len(t) for t in times)

    infos = []
    for manager, operation, when in zip(managers, operations, times, strict=True):
        manager += " " * (mgr_width - go_len(manager))
        operation += " " * (op_width - go_len(operation))
        when = " " * (time_width - go_len(when)) + when
        infos.append(f"{manager} ({operation} {when}) " if when else f"{manager} {operation} ")
    return infos


class Printer:
    """kubectl-blame's ``marshalMapWithCtx`` / ``marshalListWithCtx``, writing into ``out``.

    ``empty`` is the blank prefix, for lines no entry owns (and for literal block lines).
    """

    def __init__(self, empty: str) -> None:
        self.empty = empty
        self.out: list[str] = []

    def info(self, node: Node | None) -> str:
        """The owners of ``node`` or of its nearest owned ancestor, one prefix line per owner."""
        while node is not None:
            if node.managers:
                return "/\n".join(node.managers)
            node = node.parent
        return self.empty

    def write_scalar(self, value: Any, level: int) -> None:
        if isinstance(value, str):
            self.out.append(_yaml_string_value_line(self.empty, value, level))
        elif value is None:
            self.out.append("null\n")
        else:
            self.out.append(format_basic(value) + "\n")

    def write_map(self, level: int, newline: bool, node: Node, obj: dict[str, Any]) -> None:
        w = self.out.append
        if not obj:
            w("{}\n")
            return
        for i, key in enumerate(sorted(obj)):
            value = obj[key]
            child = node.fields.get(key)
            if i == 0 and not newline:
                w(yaml_string(key))  # the first key of a list item shares the "- " line
            else:
                w(self.info(child if child is not None else node))
                w("  " * level)
                w(yaml_string(key))
            w(":")
            target = child if child is not None else node
            if isinstance(value, dict):
                w(" " if not value else "\n")
                self.write_map(level + 1, True, target, value)
            elif isinstance(value, list):
                w(" " if not value else "\n")
                self.write_list(level, True, target, value)  # compact style: "- " under the key
            else:
                w(" ")
                self.write_scalar(value, level + 1)

    def write_list(self, level: int, newline: bool, node: Node, items: list[Any]) -> None:
        w = self.out.append
        if not items:
            w("[]\n")
            return
        prefix = self.info(node)
        for i, item in enumerate(items):
            if isinstance(item, dict):
                child = item_node(node, item, i) or node
                # The "- " line also carries the item's first key, so it shows that key's owner.
                first = child.fields.get(min(item)) if item else None
                w(self.info(first if first is not None else child))
                w("  " * level)
                w("- ")
                self.write_map(level + 1, False, child, item)
            elif isinstance(item, list):
                # Faithful to kubectl-blame, which prints nested lists on a shared line.
                if i != 0 or newline:
                    w(prefix)
                    w("  " * level)
                    w("- ")
                self.write_list(level + 1, False, node, item)
            else:
                member = item_node(node, item, i)
                w(self.info(member) if member is not None else prefix)
                w("  " * level)
                w("- ")
                self.write_scalar(item, level + 1)


def _is_control(ch: str) -> bool:
    return unicodedata.category(ch) == "Cc"  # Go's unicode.IsControl


def _yaml_string_value_line(prefix: str, s: str, level: int) -> str:
    """kubectl-blame's ``toYAMLStringValueln``: its own literal block for multi-line text."""
    if "\n" in s and not any(_is_control(ch) for ch in s if ch != "\n"):
        header = "|+\n" if s.endswith("\n\n") else "|\n" if s.endswith("\n") else "|-\n"
        body = s[:-1] if s.endswith("\n") else s
        # Block lines get the blank prefix: they belong to the key line above.
        lines = [prefix + "  " * level + line + "\n" if line else "\n" for line in body.split("\n")]
        return header + "".join(lines)
    return yaml_string(s) + "\n"
