"""Git's object beside the live one, aligned by field, every live line with the managedFields entries that own it.

This is what the drift page (``bot.report.html``) draws: one :class:`Row` per line of YAML-like text, with the
desired line on the left and the live line on the right, for the same field. Alignment follows the analysis'
own rules (``diff``): map keys by name, associative lists by their merge keys (key defaults applied), set lists
by value, and the items of other lists by ``name`` when every item on both sides has a distinct one, else by
position; a desired list item with no live match gets the live index the diff gives it (appended after the live
items), so that a finding's pointer names its row. Embedded text is compared line by line inside its field:
multi-line strings, and strings holding a JSON object or array (pretty-printed first). A long opaque string
(a ``caBundle``) is one row whose value is folded to its length and a short hash by the page. What one side of a
row reads, the value written on its line, is ``valuetext``'s; this module decides which rows there are.

Ownership is kubectl-blame's: a line whose field no entry owns shows the owners of its nearest owned ancestor,
marked as inherited. ``metadata.managedFields`` itself and ``status`` are left out of the rows (the first is the
legend of writers, the second is never compared).

Guarantees: pure (no I/O, no clock); the inputs are never modified; values are shown as given: Secret values
must already be masked (``masking.masked_object``), which ``engine`` does before an object reaches a Report.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.analysis import schema
from bot.analysis.managedfields import Entry, entries_of, owners
from bot.analysis.pointer import MISSING, Path, join
from bot.analysis.valuetext import Cell, cell, dash, embedded_lines, is_structured, scalar_text

_SKIPPED_META = frozenset({"managedFields"})
_SKIPPED_TOP = frozenset({"status"})

Side = Literal["left", "right"]


@dataclass(frozen=True)
class Owner:
    """One managedFields entry, as a line shows it; ``number`` is its position in the object's list (from 1)."""

    number: int
    manager: str
    operation: str | None
    subresource: str | None
    time: str | None


@dataclass(frozen=True)
class Row:
    left: Cell | None
    right: Cell | None
    pointer: str
    """The live field this row stands for (RFC 6901, live list indices), as findings name it."""
    owners: tuple[Owner, ...] = ()
    inherited: bool = False
    """The owners are those of the nearest owned ancestor: nobody owns this field itself."""
    embedded: bool = False
    """A line of text embedded in the field (a ConfigMap value, a JSON annotation)."""

    @property
    def differs(self) -> bool:
        if self.left is None or self.right is None:
            return self.left is not self.right
        return (self.left.text, self.left.long_value) != (self.right.text, self.right.long_value)


@dataclass
class SideBySide:
    rows: list[Row] = field(default_factory=list)
    writers: list[Owner] = field(default_factory=list)
    """Every managedFields entry of the live object, in order (the legend); empty when it has none."""
    has_managed_fields: bool = True


class _Builder:
    def __init__(self, group: str, kind: str, live: Any, entries: list[Entry] | None) -> None:
        self.group, self.kind, self.live, self.entries = group, kind, live, entries
        self.rows: list[Row] = []
        numbers = {id(e): i for i, e in enumerate(entries or [], 1)}
        self.owner_of = {
            id(e): Owner(numbers[id(e)], e.manager, e.operation, e.subresource, _text(e.time)) for e in entries or []
        }

    # --- ownership ----------------------------------------------------------------------------
    def owned(self, lpath: Path | None, parent: tuple[tuple[Owner, ...], bool]) -> tuple[tuple[Owner, ...], bool]:
        if lpath is None or not self.entries:
            return (), False
        found = tuple(self.owner_of[id(e)] for e in owners(self.entries, self.live, lpath))
        if found:
            return found, False
        return parent[0], bool(parent[0])

    # --- rows -----------------------------------------------------------------------------------
    def add(self, left: Cell | None, right: Cell | None, pointer: str, own: tuple[tuple[Owner, ...], bool],
            embedded: bool = False) -> None:  # fmt: skip
        self.rows.append(Row(left, right, pointer, own[0] if right else (), own[1] if right else False, embedded))

    def node(self, label: str, d: Any, lv: Any, dpath: Path, lpath: Path | None, indent: int,
             parent: tuple[tuple[Owner, ...], bool]) -> None:  # fmt: skip
        """One field (``label`` is ``key:`` or ``-``) on both sides; ``MISSING`` marks an absent side."""
        pointer = join(lpath if lpath is not None else dpath)
        own = self.owned(lpath if lv is not MISSING else None, parent)
        if isinstance(d, dict | MISSING.__class__) and isinstance(lv, dict | MISSING.__class__):
            self.mapping(label, d, lv, dpath, lpath, indent, own, pointer)
        elif isinstance(d, list | MISSING.__class__) and isinstance(lv, list | MISSING.__class__):
            self.add(cell(indent, label, d, header=True), cell(indent, label, lv, header=True), pointer, own)
            self.sequence(d if isinstance(d, list) else [], lv if isinstance(lv, list) else [], dpath,
                          lpath or dpath, indent + 1, own, d is MISSING, lv is MISSING)  # fmt: skip
        elif embedded_lines(d) is not None or embedded_lines(lv) is not None:
            self.embedded(label, d, lv, indent, pointer, own)
        elif is_structured(d) or is_structured(lv):  # a map on one side, a scalar on the other
            self.one_side("left", label, d, dpath, indent, pointer)
            self.one_side("right", label, lv, lpath or dpath, indent, pointer, own)
        else:
            self.add(cell(indent, label, d), cell(indent, label, lv), pointer, own)

    def mapping(self, label: str, d: Any, lv: Any, dpath: Path, lpath: Path | None, indent: int,
                own: tuple[tuple[Owner, ...], bool], pointer: str) -> None:  # fmt: skip
        dm: dict[str, Any] = d if isinstance(d, dict) else {}
        lm: dict[str, Any] = lv if isinstance(lv, dict) else {}
        child_indent = indent
        if label:
            if label == "-":  # a list item: its first key goes on the dash line, as YAML writes it
                self.item(d, lv, dpath, lpath, indent, own, pointer)
                return
            if not dm and not lm:
                self.add(cell(indent, label, d), cell(indent, label, lv), pointer, own)
                return
            self.add(cell(indent, label, d, header=True), cell(indent, label, lv, header=True), pointer, own)
            child_indent = indent + 1
        self.children(dm, lm, d is MISSING, lv is MISSING, dpath, lpath, child_indent, own)

    def children(self, dm: dict[str, Any], lm: dict[str, Any], d_absent: bool, l_absent: bool, dpath: Path,
                 lpath: Path | None, indent: int, own: tuple[tuple[Owner, ...], bool],
                 skip: Sequence[str] = ()) -> None:  # fmt: skip
        top = not dpath
        for key in _keys(dm, lm):
            if key in skip or (top and key in _SKIPPED_TOP) or (dpath == ("metadata",) and key in _SKIPPED_META):
                continue
            dv = dm.get(key, MISSING) if not d_absent else MISSING
            lv = lm.get(key, MISSING) if not l_absent else MISSING
            if dv is None and key in dm and key not in lm:
                continue  # null in a manifest leaves the field unset: nothing to show against
            self.node(f"{key}:", dv, lv, dpath + (key,), lpath + (key,) if lpath is not None else None, indent, own)

    def item(self, d: Any, lv: Any, dpath: Path, lpath: Path | None, indent: int,
             own: tuple[tuple[Owner, ...], bool], pointer: str) -> None:  # fmt: skip
        dm: dict[str, Any] = d if isinstance(d, dict) else {}
        lm: dict[str, Any] = lv if isinstance(lv, dict) else {}
        keys = _keys(dm, lm)
        if not keys:
            self.add(cell(indent, "-", d), cell(indent, "-", lv), pointer, own)
            return
        first = next((k for k in ("name", "key", "containerPort", "port", "type") if k in keys), keys[0])
        fd, fl = dm.get(first, MISSING) if d is not MISSING else MISSING, lm.get(first, MISSING)
        if is_structured(fd) or is_structured(fl) or embedded_lines(fd) or embedded_lines(fl):
            self.add(dash(indent, d), dash(indent, lv), pointer, own)
            self.children(dm, lm, d is MISSING, lv is MISSING, dpath, lpath, indent + 1, own)
            return
        sub_own = self.owned(lpath + (first,) if lpath is not None and fl is not MISSING else None, own)
        left = None if d is MISSING else Cell(indent, f"- {first}: {scalar_text(fd)}" if fd is not MISSING else "-")
        right = None if lv is MISSING else Cell(indent, f"- {first}: {scalar_text(fl)}" if fl is not MISSING else "-")
        self.add(left, right, pointer, sub_own if sub_own[0] else own)
        self.children(dm, lm, d is MISSING, lv is MISSING, dpath, lpath, indent + 1, own, skip=(first,))

    def sequence(self, d: list[Any], lv: list[Any], dpath: Path, lpath: Path, indent: int,
                 own: tuple[tuple[Owner, ...], bool], d_absent: bool, l_absent: bool) -> None:  # fmt: skip
        for di, li, at in self.align(d, lv, lpath):
            dv = MISSING if d_absent or di is None else d[di]
            live_v = MISSING if l_absent or li is None else lv[li]
            self.node("-", dv, live_v, dpath + (di if di is not None else at,), lpath + (at,), indent, own)

    def align(self, d: list[Any], lv: list[Any], lpath: Path) -> Iterator[tuple[int | None, int | None, int]]:
        """Pairs (desired index, live index, live index in the row's pointer), in live order then Git's extras."""
        lt = schema.list_type(self.group, self.kind, schema.schema_path(lpath + (0,))[:-2])
        key_of = lt.key_of if lt.kind == "map" else (_name_key if _named(d) and _named(lv) else None)
        if lt.kind == "set":
            key_of = _value_key
        if key_of is None:  # by position, as Argo CD compares an atomic list
            for i in range(max(len(d), len(lv))):
                yield (i if i < len(d) else None), (i if i < len(lv) else None), i
            return
        desired_at: dict[Any, int] = {}
        for j, item in enumerate(d):
            k = key_of(item)
            if k is not None:
                desired_at.setdefault(k, j)
        used: set[int] = set()
        for i, item in enumerate(lv):
            k = key_of(item)
            found = desired_at.get(k) if k is not None else None
            if found is not None and found not in used:
                used.add(found)
                yield found, i, i
            else:
                yield None, i, i
        appended = len(lv)
        for j in range(len(d)):
            if j not in used:
                yield j, None, appended
                appended += 1

    def embedded(self, label: str, d: Any, lv: Any, indent: int, pointer: str,
                 own: tuple[tuple[Owner, ...], bool]) -> None:  # fmt: skip
        left_lines = embedded_lines(d) if d is not MISSING else None
        right_lines = embedded_lines(lv) if lv is not MISSING else None
        marker = "|" if isinstance(d if d is not MISSING else lv, str) and "\n" in str(d if d is not MISSING else lv) \
            else "(JSON)"  # fmt: skip
        head_l = None if d is MISSING else Cell(indent, f"{label} {marker}" if left_lines is not None else
                                                 f"{label} {scalar_text(d)}")  # fmt: skip
        head_r = None if lv is MISSING else Cell(indent, f"{label} {marker}" if right_lines is not None else
                                                  f"{label} {scalar_text(lv)}")  # fmt: skip
        self.add(head_l, head_r, pointer, own)
        a, b = left_lines or [], right_lines or []
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        pairs: list[tuple[str | None, str | None]]
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                pairs = [(a[i1 + k], b[j1 + k]) for k in range(i2 - i1)]
            else:
                n = max(i2 - i1, j2 - j1)
                pairs = [(a[i1 + k] if i1 + k < i2 else None, b[j1 + k] if j1 + k < j2 else None) for k in range(n)]
            for left, right in pairs:
                self.add(None if left is None else Cell(indent + 1, left), None if right is None else
                         Cell(indent + 1, right), pointer, own, embedded=True)  # fmt: skip

    def one_side(self, side: Side, label: str, value: Any, path: Path, indent: int, pointer: str,
                 own: tuple[tuple[Owner, ...], bool] = ((), False)) -> None:  # fmt: skip
        if value is MISSING:
            return
        start = len(self.rows)
        if side == "left":
            self.node(label, value, MISSING, path, None, indent, own)
        else:
            self.node(label, MISSING, value, path, path, indent, own)
        if start < len(self.rows):  # one side's rows, all under the field's own pointer
            self.rows[start:] = [Row(r.left, r.right, pointer, r.owners, r.inherited, r.embedded)
                                 for r in self.rows[start:]]  # fmt: skip


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z") if hasattr(value, "isoformat") else str(value)


def _keys(dm: dict[str, Any], lm: dict[str, Any]) -> list[str]:
    """Git's keys in Git's order, then the keys only live has, in live order."""
    return [*dm, *(k for k in lm if k not in dm)]


def _named(items: list[Any]) -> bool:
    names = [i.get("name") for i in items if isinstance(i, dict)]
    return bool(items) and len(names) == len(items) and None not in names and len(set(map(str, names))) == len(names)


def _name_key(item: Any) -> Any:
    return str(item.get("name")) if isinstance(item, dict) else None


def _value_key(item: Any) -> Any:
    return json.dumps(item, sort_keys=True)


def side_by_side(desired: dict[str, Any], live: dict[str, Any]) -> SideBySide:
    """The aligned rows of one object pair (see the module docstring)."""
    group = schema.group_of(str(desired.get("apiVersion") or live.get("apiVersion") or ""))
    kind = str(desired.get("kind") or live.get("kind") or "")
    entries = entries_of(live)
    builder = _Builder(group, kind, live, entries)
    builder.children(desired, live, False, False, (), (), 0, ((), False))
    return SideBySide(builder.rows, list(builder.owner_of.values()), entries is not None)
