"""``argo-why blame``: print an object with the field manager(s) owning every line.

This is a byte-for-byte emulation of kubectl-blame (github.com/knight42/kubectl-blame,
``cmd/marshal.go`` and ``cmd/util.go``), so that people who know that tool read the same
thing here, and so that its test data can check this module. In short:

* every line is prefixed with ``manager operation `` (or ``manager (operation time) ``),
  padded to one width; a line whose field no entry owns shows the owners of its nearest
  owned ancestor, and a line with no owned ancestor shows blanks;
* a field owned by several entries gets one prefix line per owner, joined by ``/``;
* map keys are printed sorted; list items are matched to ``k:``/``v:`` FieldsV1 nodes
  (``i:`` too, which kubectl-blame rejects); lists are printed in the compact style;
* strings are quoted as Go's ``sigs.k8s.io/yaml`` (yaml.v2) would, including its
  folding of long lines at 80 columns; multi-line strings are printed as literal blocks.

Guarantees: pure functions (no file or network I/O; the clock is read only when no
``now`` is given); the input object is never modified; an object without
``metadata.managedFields`` raises :class:`BadInput` (it was exported without
``--show-managed-fields``); a Secret's ``data``/``stringData`` values and its
last-applied-configuration annotation are replaced by the mask before anything is
printed, so Secret values never appear in the output.
"""

from __future__ import annotations

import base64
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from typing import Any

from bot.analysis.managedfields import Entry, decode_member, entries_of
from bot.analysis.masking import is_secret
from bot.errors import BadInput
from bot.wording import MASK

TIME_FORMATS = ("none", "relative", "full")
"""Accepted ``time_format`` values, as kubectl-blame's ``--time`` flag."""

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_FULL_TIME_WIDTH = len("2006-01-02 15:04:05 -0700")  # Go's layout; every formatted time has this width


def blame(obj: dict[str, Any], *, time_format: str = "none", now: datetime | None = None) -> str:
    """The annotated text of one object, ending with a newline.

    ``time_format`` is ``none``, ``relative`` (age against ``now``) or ``full`` (the
    time in ``now``'s zone, or in the system's local zone when ``now`` is not given,
    as kubectl-blame prints it).
    """
    return _blame(obj, time_format, *_clock(now))


def blame_many(objs: list[dict[str, Any]], *, time_format: str = "none", now: datetime | None = None) -> str:
    """Every object (the items of a ``List`` each on their own), separated by ``---`` lines.

    This is kubectl-blame's output for a file of several documents or a ``kind: List``.
    """
    clock = _clock(now)  # one reading for all, so that relative times agree between objects
    parts: list[str] = []
    for obj in objs:
        items = obj.get("items") if isinstance(obj, dict) else None
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
            parts.extend(_blame(item, time_format, *clock) for item in items)
        else:
            parts.append(_blame(obj, time_format, *clock))
    return "---\n".join(parts)


def _clock(now: datetime | None) -> tuple[datetime, tzinfo | None]:
    """``now`` made aware, and the zone full times are shown in (None: the system's, per date)."""
    if now is None:
        return datetime.now(UTC), None
    if now.tzinfo is None:
        return now.replace(tzinfo=UTC), UTC
    return now, now.tzinfo


def _blame(obj: Any, time_format: str, now: datetime, zone: tzinfo | None) -> str:
    if time_format not in TIME_FORMATS:
        raise BadInput(f"unknown time format {time_format!r} (expected one of {', '.join(TIME_FORMATS)})")
    if not isinstance(obj, dict):
        raise BadInput("expected a Kubernetes object (a mapping)")
    entries = entries_of(obj)
    if not entries:
        raise BadInput(
            f"{_label(obj)}: .metadata.managedFields is empty; export the object with "
            "`kubectl get -o yaml --show-managed-fields`"
        )
    infos = _manager_infos(entries, time_format, now, zone)
    root = _build_tree(entries, infos)
    # kubectl-blame's blank prefix is as wide as the (last) entry's prefix; all are padded alike.
    printer = _Printer(" " * _go_len(infos[-1]))
    printer.write_map(0, True, root, _printable(obj))
    return "".join(printer.out)


def _label(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
    return f"{obj.get('kind') or 'object'} {name}".strip()


# --- prefixes: "manager operation " ----------------------------------------------------------


def _go_len(s: str) -> int:
    """Go's ``len``: kubectl-blame pads by bytes, not characters."""
    return len(s.encode("utf-8", "surrogatepass"))


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


def _microseconds(d: timedelta) -> int:
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def _human_duration(d: timedelta) -> str:
    """k8s.io/apimachinery's ``duration.HumanDuration`` (``5m30s``, ``3h``, ``2d4h``, ``3y12d``)."""
    us = _microseconds(d)
    seconds = -(-us // 1_000_000) if us < 0 else us // 1_000_000  # Go truncates toward zero
    # Up to a second in the future counts as now: clocks of client and API server drift.
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = us // 60_000_000
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = us // 3_600_000_000
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _manager_infos(entries: list[Entry], time_format: str, now: datetime, zone: tzinfo | None) -> list[str]:
    """Each entry's prefix (kubectl-blame's ``ManagerInfo.String()``), all of one width."""
    times: list[str] = []
    for e in entries:
        t = _parse_time(e.time)
        if t is None or time_format == "none":
            times.append("")
        elif time_format == "relative":
            times.append(_human_duration(now - t))
        else:
            times.append(t.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S %z"))
    managers = [e.manager for e in entries]
    operations = [e.operation if isinstance(e.operation, str) else "" for e in entries]
    mgr_width = max(_go_len(m) for m in managers)
    op_width = max(_go_len(o) for o in operations)
    # An entry without a time still gets the time column (blank), so that columns line up.
    time_width = _FULL_TIME_WIDTH if time_format == "full" else max(_go_len(t) for t in times)

    infos = []
    for manager, operation, when in zip(managers, operations, times, strict=True):
        manager += " " * (mgr_width - _go_len(manager))
        operation += " " * (op_width - _go_len(operation))
        when = " " * (time_width - _go_len(when)) + when
        infos.append(f"{manager} ({operation} {when}) " if when else f"{manager} {operation} ")
    return infos


# --- the ownership tree, merged over all entries -----------------------------------------------


@dataclass(eq=False)
class _Node:
    """One FieldsV1 path element, with the prefixes of the entries that own it (in entry order)."""

    parent: _Node | None
    fields: dict[str, _Node] = field(default_factory=dict)
    keys: list[tuple[dict[str, Any], _Node]] = field(default_factory=list)
    key_ids: dict[str, _Node] = field(default_factory=dict)
    values: dict[str, _Node] = field(default_factory=dict)
    indexes: dict[int, _Node] = field(default_factory=dict)
    managers: list[str] = field(default_factory=list)
    owners: set[int] = field(default_factory=set)


_INDEX = re.compile(r"[+-]?[0-9]+")


def _canonical(value: Any) -> str:
    """One spelling per value, so that ``k:{"a":1,"b":2}`` and ``k:{"b":2,"a":1}`` meet."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _child(node: _Node, name: str) -> _Node | None:
    """The child of ``node`` for one FieldsV1 key, created if needed; None for keys to skip."""
    kind, raw = name[:2], name[2:]
    if kind == "f:":
        return node.fields.setdefault(raw, _Node(node))
    if kind == "k:":
        key = decode_member(raw)
        if not isinstance(key, dict):
            return None
        ident = _canonical(key)
        if ident not in node.key_ids:
            node.key_ids[ident] = _Node(node)
            node.keys.append((key, node.key_ids[ident]))
        return node.key_ids[ident]
    if kind == "v:":
        value = decode_member(raw)
        if value is None and raw.strip() != "null":
            return None
        return node.values.setdefault(_canonical(value), _Node(node))
    if kind == "i:" and _INDEX.fullmatch(raw):
        return node.indexes.setdefault(int(raw), _Node(node))
    return None  # "." or an element type this version does not know: structured-merge-diff skips it


def _add(node: _Node, fields: dict[str, Any], owner: int, info: str) -> None:
    for name, sub in fields.items():
        child = _child(node, name)
        if child is None:
            continue
        sub = sub if isinstance(sub, dict) else {}
        # A FieldsV1 node is itself owned when it holds "." or nothing the parser understands
        # (structured-merge-diff's readIterV1); otherwise it only leads to owned fields below.
        owned = "." in sub or not any(_is_element(k) for k in sub)
        if owned and owner not in child.owners:
            child.owners.add(owner)
            child.managers.append(info)
        _add(child, sub, owner, info)


def _is_element(name: str) -> bool:
    return name[:2] in ("f:", "k:", "v:", "i:")


def _build_tree(entries: list[Entry], infos: list[str]) -> _Node:
    root = _Node(None)
    for owner, (entry, info) in enumerate(zip(entries, infos, strict=True)):
        _add(root, entry.fields, owner, info)
    return root


def _same_value(a: Any, b: Any) -> bool:
    """structured-merge-diff's value equality: numbers by value, but a bool is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _key_matches(key: dict[str, Any], item: dict[str, Any]) -> bool:
    # As kubectl-blame's fieldListMatchObject: every key field must be present in the item
    # (server-side apply's key defaults, such as protocol TCP, are deliberately not applied).
    return all(name in item and _same_value(item[name], want) for name, want in key.items())


def _item_node(node: _Node, item: Any, index: int) -> _Node | None:
    """The tree node standing for one list item, if any entry names it."""
    if isinstance(item, dict):
        for key, child in node.keys:
            if _key_matches(key, item):
                return child
    elif not isinstance(item, list):
        member = node.values.get(_canonical(item))
        if member is not None:
            return member
    return node.indexes.get(index)


# --- the printer: marshalMapWithCtx / marshalListWithCtx -----------------------------------------


class _Printer:
    def __init__(self, empty: str) -> None:
        self.empty = empty
        self.out: list[str] = []

    def info(self, node: _Node | None) -> str:
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
            self.out.append(_format_basic(value) + "\n")

    def write_map(self, level: int, newline: bool, node: _Node, obj: dict[str, Any]) -> None:
        w = self.out.append
        if not obj:
            w("{}\n")
            return
        for i, key in enumerate(sorted(obj)):
            value = obj[key]
            child = node.fields.get(key)
            if i == 0 and not newline:
                w(_yaml_string(key))  # the first key of a list item shares the "- " line
            else:
                w(self.info(child if child is not None else node))
                w("  " * level)
                w(_yaml_string(key))
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

    def write_list(self, level: int, newline: bool, node: _Node, items: list[Any]) -> None:
        w = self.out.append
        if not items:
            w("[]\n")
            return
        prefix = self.info(node)
        for i, item in enumerate(items):
            if isinstance(item, dict):
                child = _item_node(node, item, i) or node
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
                member = _item_node(node, item, i)
                w(self.info(member) if member is not None else prefix)
                w("  " * level)
                w("- ")
                self.write_scalar(item, level + 1)


# --- values as Go's unstructured JSON holds them ------------------------------------------------


def _printable(obj: dict[str, Any]) -> dict[str, Any]:
    """A deep copy as kubectl-blame prints it: no managedFields, JSON types, Secret values masked."""
    out = _go_value(obj)
    assert isinstance(out, dict)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)  # Go: obj.SetManagedFields(nil) removes the key
    api = str(out.get("apiVersion") or "")
    if is_secret(api.rsplit("/", 1)[0] if "/" in api else "", str(out.get("kind"))):
        for key in ("data", "stringData"):
            if isinstance(out.get(key), dict):
                out[key] = dict.fromkeys(out[key], MASK)
            elif key in out and out[key] is not None:
                out[key] = MASK  # malformed, but a value all the same: never print it
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if isinstance(annotations, dict) and _LAST_APPLIED in annotations:
            annotations[_LAST_APPLIED] = MASK  # it repeats the data in clear
    return out


def _go_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, float):
        return _format_basic(key)
    return str(_go_value(key))


def _rfc3339(t: datetime) -> str:
    text = t.isoformat()
    return text[: -len("+00:00")] + "Z" if text.endswith("+00:00") else text


def _go_value(value: Any) -> Any:
    """The value as it would be after a JSON round trip (a YAML loader may give more types)."""
    if isinstance(value, dict):
        return {_go_key(k): _go_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_go_value(v) for v in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, datetime):
        return _rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")  # encoding/json's []byte
    return str(value)


def _format_basic(value: Any) -> str:
    """Go's ``formatBasicType``: ints in decimal, floats with ``strconv.FormatFloat(f, 'f', -1)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        # repr() is the shortest round-trip form, as Go's precision -1; 'f' forbids exponents.
        text = format(Decimal(repr(value)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return str(value)


# --- strings as sigs.k8s.io/yaml (gopkg.in/yaml.v2) writes them ---------------------------------


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
    return _yaml_string(s) + "\n"


def _yaml_string(s: str) -> str:
    """``yaml.Marshal(s)`` without its final newline (kubectl-blame's ``toYAMLString``)."""
    if "\n" in s:
        style = "literal"
    elif _resolves_as_string(s) and not _BASE60_FLOAT.fullmatch(s):
        style = "plain"
    else:
        style = "double"  # would read back as a bool, number, null or timestamp
    a = _analyze(s)
    if style == "plain" and not a.block_plain_allowed:
        style = "single"
    if style == "single" and not a.single_quoted_allowed:
        style = "double"
    if style == "literal" and not a.block_allowed:
        style = "double"
    return _Emitter().document(s, style)[:-1]


# yaml.v2 resolve.go: plain scalars that YAML 1.1 reads as something other than a string.
_RESOLVE_MAP = frozenset(
    {
        *("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"),
        *("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"),
        *("", "~", "null", "Null", "NULL"),
        *(".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"),
        "<<",
    }
)
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9_]+([eE][-+]?[0-9_]+)?")
_BASE60_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_TIMESTAMPS = (
    re.compile(
        r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})[Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})([.,][0-9]+)?"
        r"(Z|[+-][0-9]{2}:[0-9]{2})"
    ),
    re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2}) ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})([.,][0-9]+)?"),
    re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"),
)


def _is_timestamp(s: str) -> bool:
    """yaml.v2 parseTimestamp: the layouts it tries, with Go's range checks."""
    for layout in _TIMESTAMPS:
        m = layout.fullmatch(s)
        if m is None:
            continue
        parts = [int(g) for g in m.groups()[:6] if g is not None]
        try:
            date(parts[0], parts[1], parts[2])
        except ValueError:
            continue
        if len(parts) == 6 and (parts[3] > 23 or parts[4] > 59 or parts[5] > 59):
            continue
        return True
    return False


def _go_int(s: str) -> int | None:
    """``strconv.ParseInt(s, 0, 64)``'s syntax (0x, 0o, 0b, leading-0 octal), ignoring range."""
    sign, digits = (s[0], s[1:]) if s[:1] in ("+", "-") else ("", s)
    base = 10
    if digits[:1] == "0":
        if len(digits) >= 3 and digits[1] in "bBoOxX":
            base, digits = {"b": 2, "o": 8, "x": 16}[digits[1].lower()], digits[2:]
        else:
            base, digits = 8, digits[1:]
    elif not digits:
        return None
    if not all(ch.isascii() and ch.isalnum() and int(ch, 36) < base for ch in digits):
        return None
    value = int(digits, base) if digits else 0
    return -value if sign == "-" else value


def _resolves_as_string(s: str) -> bool:
    """Whether yaml.v2 reads ``s``, written plain, back as the same string (resolve.go)."""
    if s in _RESOLVE_MAP:
        return False
    first = s[0]
    if first == ".":
        if _DOT_FLOAT.fullmatch(s):
            try:
                return math.isinf(float(s))  # Go's ParseFloat rejects out-of-range values
            except ValueError:
                return True
        return True
    if first not in "+-0123456789":
        return True
    if _is_timestamp(s):
        return False
    plain = s.replace("_", "")
    value = _go_int(plain) if plain else None
    unsigned = plain[:1] not in ("+", "-")
    if value is not None and (-(2**63) <= value < 2**63 or (unsigned and value < 2**64)):
        return False  # ParseInt or ParseUint accepts it
    if _YAML_FLOAT.fullmatch(plain) and not math.isinf(float(plain)):
        return False
    # An unsigned integer too big for uint64 still resolves, as a big.Int.
    return not (value is not None and unsigned)


@dataclass
class _Analysis:
    block_plain_allowed: bool = True
    single_quoted_allowed: bool = True
    block_allowed: bool = True


_BREAKS = "\r\n\x85\u2028\u2029"


def _printable_char(ch: str) -> bool:
    """yaml.v2 is_printable: LF, ASCII printables, and BMP text (no surrogates, BOM, U+FFFE/F)."""
    cp = ord(ch)
    return cp == 0x0A or 0x20 <= cp <= 0x7E or 0xA0 <= cp <= 0xD7FF or (0xE000 <= cp <= 0xFFFD and cp != 0xFEFF)


def _analyze(s: str) -> _Analysis:
    """yaml.v2 ``yaml_emitter_analyze_scalar``, reduced to what a root scalar needs."""
    if not s:
        return _Analysis(True, True, False)
    block_ind = s.startswith(("---", "..."))
    line_breaks = special = False
    leading_space = leading_break = trailing_space = trailing_break = False
    break_space = space_break = previous_space = previous_break = False
    preceded_by_ws = True
    n = len(s)
    for i, ch in enumerate(s):
        followed_by_ws = i + 1 >= n or s[i + 1] in " \t"
        if i == 0:
            if ch in "#,[]{}&*!|>'\"%@`" or (ch in "?:-" and followed_by_ws):
                block_ind = True
        elif (ch == ":" and followed_by_ws) or (ch == "#" and preceded_by_ws):
            block_ind = True
        if not _printable_char(ch):
            special = True
        if ch == " ":
            leading_space = leading_space or i == 0
            trailing_space = trailing_space or i == n - 1
            break_space = break_space or previous_break
            previous_space, previous_break = True, False
        elif ch in _BREAKS:
            line_breaks = True
            leading_break = leading_break or i == 0
            trailing_break = trailing_break or i == n - 1
            space_break = space_break or previous_space
            previous_space, previous_break = False, True
        else:
            previous_space = previous_break = False
        preceded_by_ws = ch in " \t\0" or ch in _BREAKS
    a = _Analysis()
    if leading_space or leading_break or trailing_space or trailing_break or line_breaks or block_ind:
        a.block_plain_allowed = False
    if trailing_space:
        a.block_allowed = False
    if break_space:
        a.block_plain_allowed = a.single_quoted_allowed = False
    if space_break or special:
        a.block_plain_allowed = a.single_quoted_allowed = a.block_allowed = False
    return a


_ESCAPES = {
    0x00: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r",
    0x1B: "e", 0x22: '"', 0x5C: "\\", 0x85: "N", 0xA0: "_", 0x2028: "L", 0x2029: "P",
}  # fmt: skip


class _Emitter:
    """yaml.v2's emitter writing one document that holds one scalar (what yaml.Marshal(s) does).

    The line folding is kept on purpose: yaml.v2 folds plain and quoted scalars after
    column 80, and kubectl-blame prints the folded lines as they come.
    """

    best_width = 80

    def __init__(self) -> None:
        self.buf: list[str] = []
        self.column = 0
        self.indent = -1
        self.whitespace = True
        self.indention = True

    def put(self, text: str) -> None:
        self.buf.append(text)
        self.column += len(text)

    def put_break(self) -> None:
        self.buf.append("\n")
        self.column = 0

    def write_break(self, ch: str) -> None:
        if ch == "\n":
            self.put_break()
        else:
            self.buf.append(ch)
            self.column = 0

    def write_indent(self) -> None:
        indent = max(self.indent, 0)
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.put_break()
        while self.column < indent:
            self.put(" ")
        self.whitespace = self.indention = True

    def write_indicator(self, indicator: str, need_whitespace: bool, is_whitespace: bool) -> None:
        if need_whitespace and not self.whitespace:
            self.put(" ")
        self.put(indicator)
        self.whitespace = is_whitespace
        self.indention = False

    def document(self, s: str, style: str) -> str:
        self.indent = 2  # yaml_emitter_increase_indent(flow=true) from the root's -1
        {"plain": self.plain, "single": self.single, "double": self.double, "literal": self.literal}[style](s)
        self.indent = -1
        self.write_indent()  # document end
        return "".join(self.buf)

    def plain(self, s: str) -> None:
        if not self.whitespace:
            self.put(" ")
        spaces = breaks = False
        for i, ch in enumerate(s):
            if ch == " ":
                nxt = s[i + 1] if i + 1 < len(s) else ""
                if not spaces and self.column > self.best_width and nxt != " ":
                    self.write_indent()
                else:
                    self.put(ch)
                spaces = True
            elif ch in _BREAKS:
                if not breaks and ch == "\n":
                    self.put_break()
                self.write_break(ch)
                self.indention = breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put(ch)
                self.indention = spaces = breaks = False
        self.whitespace = self.indention = False

    def single(self, s: str) -> None:
        self.write_indicator("'", True, False)
        spaces = breaks = False
        last = len(s) - 1
        for i, ch in enumerate(s):
            if ch == " ":
                nxt = s[i + 1] if i < last else ""
                if not spaces and self.column > self.best_width and 0 < i < last and nxt != " ":
                    self.write_indent()
                else:
                    self.put(ch)
                spaces = True
            elif ch in _BREAKS:
                if not breaks and ch == "\n":
                    self.put_break()
                self.write_break(ch)
                self.indention = breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put("''" if ch == "'" else ch)
                self.indention = spaces = breaks = False
        self.write_indicator("'", False, False)
        self.whitespace = self.indention = False

    def double(self, s: str) -> None:
        self.write_indicator('"', True, False)
        # yaml.v2's is_bom looks at the start of the value, not at the character: a value that
        # starts with a BOM gets every character escaped.
        bom = s.startswith("\ufeff")
        spaces = False
        last = len(s) - 1
        for i, ch in enumerate(s):
            cp = ord(ch)
            if bom or not _printable_char(ch) or ch in _BREAKS or ch in '"\\':
                if cp in _ESCAPES:
                    self.put("\\" + _ESCAPES[cp])
                elif cp <= 0xFF:
                    self.put(f"\\x{cp:02X}")
                elif cp <= 0xFFFF:
                    self.put(f"\\u{cp:04X}")
                else:
                    self.put(f"\\U{cp:08X}")
                spaces = False
            elif ch == " ":
                if not spaces and self.column > self.best_width and 0 < i < last:
                    self.write_indent()
                    if s[i + 1] == " ":
                        self.put("\\")
                else:
                    self.put(ch)
                spaces = True
            else:
                self.put(ch)
                spaces = False
        self.write_indicator('"', False, False)
        self.whitespace = self.indention = False

    def literal(self, s: str) -> None:
        self.write_indicator("|", True, False)
        if s and (s[0] == " " or s[0] in _BREAKS):
            self.write_indicator("2", False, False)  # indentation indicator: best_indent
        if not s or s[-1] not in _BREAKS:
            self.write_indicator("-", False, False)
        elif len(s) == 1 or s[-2] in _BREAKS:
            self.write_indicator("+", False, False)
        self.put_break()
        self.indention = self.whitespace = True
        breaks = True
        for ch in s:
            if ch in _BREAKS:
                self.write_break(ch)
                self.indention = breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put(ch)
                self.indention = breaks = False
