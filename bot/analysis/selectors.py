"""jq conditions that pick one list item out: by merge key, by the fields that tell it apart, by content.

Argo CD evaluates ``jqPathExpressions`` with gojq; a rule selects a list item with
``.list[] | select(<condition>)``, never by index (indices shift when a
controller or a webhook adds an item). The conditions built here are:

* :func:`key_condition`: the merge key of an associative list (``.name == "app"``,
  key defaults spelled out with ``//`` so that an omitted ``protocol`` still matches);
* :func:`identifying`: the fewest scalar fields, the same in Git and live, that
  single an item out among its siblings, never a field the difference itself is in;
* :func:`added_condition`: for an item only live has, the fewest of its fields that
  no item Git renders shares, else its whole content (``. == {...}``); ``None``
  when a Git item is identical, since then no selector can spare Git's.

Guarantees: pure; every condition is valid jq; ``None`` means "no such selector".
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from bot.analysis.canonical import deep_equal
from bot.analysis.schema import ListType

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PREFERRED = ("name", "type", "key", "id", "path", "port", "containerPort", "host", "uid")
Field = tuple[tuple[str, ...], Any, Any]
"""A condition term: the field's path inside the item, the value it must have, its key default (or None)."""


def then_key(expr: str, key: str) -> str:
    """``expr`` followed by map key ``key``: ``.name``, or ``["a/b"]`` (``.["a/b"]`` at the start of a stage)."""
    if _IDENT.match(key):
        return f"{expr}.{key}"
    return f"{expr}[{json.dumps(key)}]" if expr else f".[{json.dumps(key)}]"


def key_expr(path: Sequence[str]) -> str:
    out = ""
    for k in path:
        out = then_key(out, k)
    return out


def condition(fields: Sequence[Field]) -> str:
    parts = []
    for fpath, value, default in fields:
        lhs = key_expr(fpath) or "."
        if default is not None:
            lhs = f"({lhs} // {json.dumps(default)})"
        parts.append(f"{lhs} == {json.dumps(value)}")
    return " and ".join(parts)


def key_condition(item: dict[str, Any], lt: ListType) -> str:
    return condition([((k,), item.get(k, lt.key_defaults.get(k)), lt.key_defaults.get(k)) for k in lt.keys])


def scalar_fields(item: Any) -> dict[tuple[str, ...], Any]:
    """The item's scalar fields, one or two levels deep (an item that is itself a scalar: ``()``)."""
    if isinstance(item, str | int | bool) and item != "":
        return {(): item}
    out: dict[tuple[str, ...], Any] = {}
    if not isinstance(item, dict):
        return out
    for k, v in item.items():
        if isinstance(v, str | int | bool) and v != "":
            out[(k,)] = v
        elif isinstance(v, dict):
            for k2, v2 in v.items():
                if isinstance(v2, str | int | bool) and v2 != "":
                    out[(k, k2)] = v2
    return out


def _rank(fpath: tuple[str, ...]) -> tuple[int, int, str]:
    last = fpath[-1] if fpath else ""
    pref = _PREFERRED.index(last) if last in _PREFERRED else len(_PREFERRED)
    return (len(fpath), pref, ".".join(fpath))


def _overlaps(fpath: tuple[str, ...], remainder: Sequence[Any]) -> bool:
    """Whether the field is the differing one, or holds it, or lies inside it."""
    n = min(len(fpath), len(remainder))
    return bool(remainder) and tuple(remainder[:n]) == fpath[:n]


def _fewest(
    fields: dict[tuple[str, ...], Any], candidates: list[tuple[str, ...]], others: Sequence[Any]
) -> list[Field] | None:
    """The fewest (one or two) of ``candidates`` whose values no item of ``others`` shares all of."""
    for size in (1, 2):
        for combo in combinations(candidates[:8], size):
            if not any(all(scalar_fields(o).get(f) == fields[f] for f in combo) for o in others):
                return [(f, fields[f], None) for f in combo]
    return None


def identifying(siblings: list[Any], index: int, remainder: Sequence[Any], counterpart: Any) -> list[Field] | None:
    """The fewest fields, stable between Git and live and clear of the difference, that single out an item."""
    fields = scalar_fields(siblings[index])
    if not fields or () in fields:
        return None
    other = scalar_fields(counterpart) if isinstance(counterpart, dict) else {}
    stable = [f for f in fields if not _overlaps(f, remainder) and (not other or other.get(f) == fields[f])]
    others = [s for j, s in enumerate(siblings) if j != index and isinstance(s, dict)]
    return _fewest(fields, sorted(stable, key=_rank), others)


def added_condition(item: Any, git_items: Sequence[Any]) -> str | None:
    """A condition matching ``item`` (only live has it) and none of the items Git renders in that list."""
    if any(deep_equal(item, g) for g in git_items):
        return None
    fields = scalar_fields(item)
    chosen = _fewest(fields, sorted(fields, key=_rank), git_items) if fields else None
    if chosen is not None:
        return condition(chosen)
    return f". == {json.dumps(item, sort_keys=True, separators=(',', ':'))}"
