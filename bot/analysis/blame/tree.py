"""The ownership tree: every managedFields entry's FieldsV1 set merged into one tree.

Each node is one FieldsV1 path element (``f:`` field, ``k:`` associative-list key,
``v:`` set member, ``i:`` index) and carries, in entry order, the line prefixes of
the entries that own it. The printer walks the object and this tree side by side;
``item_node`` finds the node of a list item the way kubectl-blame does
(``fieldListMatchObject`` in ``cmd/util.go``).

Guarantees: pure; a node is owned by an entry exactly when structured-merge-diff
would put it in that entry's set (it holds ``.`` or nothing it can parse), so an
entry that only owns fields below a node does not own the node; ``k:`` keys that
differ only in key order meet; unknown element kinds are skipped, not errors;
list items match keys without server-side apply's key defaults (``protocol:
TCP``), as kubectl-blame does.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from bot.analysis.managedfields import Entry, decode_member


@dataclass(eq=False)
class Node:
    """One FieldsV1 path element, with the prefixes of the entries that own it (in entry order)."""

    parent: Node | None
    fields: dict[str, Node] = field(default_factory=dict)
    keys: list[tuple[dict[str, Any], Node]] = field(default_factory=list)
    key_ids: dict[str, Node] = field(default_factory=dict)
    values: dict[str, Node] = field(default_factory=dict)
    indexes: dict[int, Node] = field(default_factory=dict)
    managers: list[str] = field(default_factory=list)
    owners: set[int] = field(default_factory=set)


_INDEX = re.compile(r"[+-]?[0-9]+")


def _canonical(value: Any) -> str:
    """One spelling per value, so that ``k:{"a":1,"b":2}`` and ``k:{"b":2,"a":1}`` meet."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _child(node: Node, name: str) -> Node | None:
    """The child of ``node`` for one FieldsV1 key, created if needed; None for keys to skip."""
    kind, raw = name[:2], name[2:]
    if kind == "f:":
        return node.fields.setdefault(raw, Node(node))
    if kind == "k:":
        key = decode_member(raw)
        if not isinstance(key, dict):
            return None
        ident = _canonical(key)
        if ident not in node.key_ids:
            node.key_ids[ident] = Node(node)
            node.keys.append((key, node.key_ids[ident]))
        return node.key_ids[ident]
    if kind == "v:":
        value = decode_member(raw)
        if value is None and raw.strip() != "null":
            return None
        return node.values.setdefault(_canonical(value), Node(node))
    if kind == "i:" and _INDEX.fullmatch(raw):
        return node.indexes.setdefault(int(raw), Node(node))
    return None  # "." or an element type this version does not know: structured-merge-diff skips it


def _add(node: Node, fields: dict[str, Any], owner: int, info: str) -> None:
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


def build_tree(entries: list[Entry], infos: list[str]) -> Node:
    root = Node(None)
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


def item_node(node: Node, item: Any, index: int) -> Node | None:
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
