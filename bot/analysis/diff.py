"""Structural diff of a desired object against its live counterpart, with Kubernetes semantics.

What counts (tests/scenarios/casebook/README.md, "What is a finding"):

* only what the desired manifest sets is compared; of ``metadata`` only labels and
  annotations; ``status`` never;
* a field Git sets that differs live, or is absent live, is a difference;
* associative lists are matched by merge key (key defaults applied), never by
  position, and the path uses the live index of the matched item; a desired item
  with no live match is reported at the index where it would be appended;
* atomic lists, and every list of a kind whose schema is unknown, are compared as
  whole values: the same members in another order give one difference at the
  list; otherwise item by item by position, where a key present only live *is* a
  difference (reported at the key), and extra items are differences at their index.

Guarantees: pure; an object diffed against itself yields nothing; every
``Delta.path`` resolves in the live object unless the live side is ``MISSING``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from bot.analysis import schema
from bot.analysis.canonical import deep_equal, same_members
from bot.analysis.pointer import MISSING, Path, join

_METADATA_COMPARED = ("labels", "annotations")
_TOP_LEVEL_SKIPPED = frozenset({"apiVersion", "kind", "metadata", "status"})
_SCALARS = frozenset({str, int, float, bool})
_ABSENT = object()  # not MISSING: a live object may hold anything, this it cannot


@dataclass(frozen=True)
class Delta:
    path: Path
    """Where the difference is, with live list indices."""
    desired_path: Path
    """The same place in the desired object (desired list indices)."""
    desired: Any
    live: Any
    atomic_root: Path | None = None
    """The outermost atomic list (live path) this difference sits in, if any."""

    @property
    def pointer(self) -> str:
        return join(self.path)


class _Differ:
    def __init__(self, group: str, kind: str) -> None:
        self.group = group
        self.kind = kind
        self.out: list[Delta] = []

    # --- merge semantics (what Git sets) -------------------------------------------------------
    def merge(self, d: Any, live: Any, path: Path, dpath: Path) -> None:
        if isinstance(d, dict) and isinstance(live, dict):
            for key, dv in d.items():
                if dv is None:
                    continue  # null in a manifest leaves the field unset
                lv = live.get(key, _ABSENT)
                if lv is _ABSENT:
                    self.add(path + (key,), dpath + (key,), dv, MISSING)
                elif type(dv) is type(lv) and type(dv) in _SCALARS:
                    # most fields are equal leaves of one type: deep_equal is == for them (no bool/int mix-up)
                    if dv != lv:
                        self.add(path + (key,), dpath + (key,), dv, lv)
                elif dv == lv and _same_json(dv, lv):
                    # an unchanged subtree (most of a live object) needs no walk, and a walk could pair two items
                    # of a list by a repeated merge key and report a change that is not there
                    continue
                else:
                    self.merge(dv, lv, path + (key,), dpath + (key,))
        elif isinstance(d, list) and isinstance(live, list):
            lt = schema.list_type(self.group, self.kind, schema.schema_path(path + (0,))[:-2])
            if lt.kind == "map":
                self.merge_map_list(d, live, path, dpath, lt)
            elif lt.kind == "set":
                self.merge_set_list(d, live, path, dpath)
            else:
                self.atomic_list(d, live, path, dpath, path)
        elif not deep_equal(d, live):
            self.add(path, dpath, d, live)

    def merge_map_list(self, d: list[Any], live: list[Any], path: Path, dpath: Path, lt: schema.ListType) -> None:
        index: dict[tuple[Any, ...], int] = {}
        for i, item in enumerate(live):
            key = lt.key_of(item)
            if key is not None:
                index.setdefault(key, i)
        appended = len(live)
        for j, item in enumerate(d):
            key = lt.key_of(item)
            found = index.get(key) if key is not None else None
            if found is None:
                self.add(path + (appended,), dpath + (j,), item, MISSING)
                appended += 1
            else:
                self.merge(item, live[found], path + (found,), dpath + (j,))

    def merge_set_list(self, d: list[Any], live: list[Any], path: Path, dpath: Path) -> None:
        appended = len(live)
        for j, item in enumerate(d):
            if not any(deep_equal(item, x) for x in live):
                self.add(path + (appended,), dpath + (j,), item, MISSING)
                appended += 1

    # --- atomic semantics (compared as a whole) ------------------------------------------------
    def atomic_list(self, d: list[Any], live: list[Any], path: Path, dpath: Path, root: Path) -> None:
        if deep_equal(d, live):
            return
        if same_members(d, live):
            self.add(path, dpath, d, live, root)
            return
        for i in range(max(len(d), len(live))):
            if i >= len(d):
                self.add(path + (i,), dpath + (i,), MISSING, live[i], root)
            elif i >= len(live):
                self.add(path + (i,), dpath + (i,), d[i], MISSING, root)
            else:
                self.atomic_value(d[i], live[i], path + (i,), dpath + (i,), root)

    def atomic_value(self, d: Any, live: Any, path: Path, dpath: Path, root: Path) -> None:
        if isinstance(d, dict) and isinstance(live, dict):
            for key in sorted(d.keys() | live.keys(), key=str):
                if key not in live:
                    self.add(path + (key,), dpath + (key,), d[key], MISSING, root)
                elif key not in d:
                    self.add(path + (key,), dpath + (key,), MISSING, live[key], root)
                else:
                    self.atomic_value(d[key], live[key], path + (key,), dpath + (key,), root)
        elif isinstance(d, list) and isinstance(live, list):
            self.atomic_list(d, live, path, dpath, root)
        elif not deep_equal(d, live):
            self.add(path, dpath, d, live, root)

    def add(self, path: Path, dpath: Path, d: Any, live: Any, root: Path | None = None) -> None:
        self.out.append(Delta(path, dpath, d, live, root))


def _same_json(a: Any, b: Any) -> bool:
    """The same JSON text: stricter than ``==``, which takes ``True`` for ``1`` (a change to Kubernetes). A pair it
    calls different (``1`` and ``1.0`` too, or what orjson cannot write) is compared field by field with
    :func:`deep_equal`'s semantics, so it decides only what is skipped, never a finding; orjson's text is faster
    than ``deep_equal``'s walk of a whole spec."""
    try:
        return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError is one: an integer beyond 64 bits, a key that is not a string
        return False


def diff_objects(desired: dict[str, Any], live: dict[str, Any]) -> list[Delta]:
    """Every difference between a desired object and its live counterpart."""
    group = schema.group_of(str(desired.get("apiVersion") or live.get("apiVersion") or ""))
    kind = str(desired.get("kind") or live.get("kind") or "")
    differ = _Differ(group, kind)
    dmeta = desired.get("metadata") or {}
    lmeta = live.get("metadata") or {}
    for section in _METADATA_COMPARED:
        dv = dmeta.get(section)
        if isinstance(dv, dict) and dv:
            lv = lmeta.get(section)
            differ.merge(dv, lv if isinstance(lv, dict) else {}, ("metadata", section), ("metadata", section))
    for key, dv in desired.items():
        if key in _TOP_LEVEL_SKIPPED or dv is None:
            continue
        if key not in live:
            differ.add((key,), (key,), dv, MISSING)
        else:
            differ.merge(dv, live[key], (key,), (key,))
    return differ.out
