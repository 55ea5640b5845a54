"""Field ownership from ``metadata.managedFields`` (FieldsV1).

FieldsV1 is a tree: ``f:<name>`` a map field, ``k:<json>`` an associative-list
item by its key fields, ``v:<json>`` a set member, ``i:<n>`` a list item by
position, ``.`` the element itself, ``{}`` a leaf. An entry owns a field when its
tree holds the field's node as a leaf or with ``.``, or holds a leaf at an
ancestor (an atomic list, map or struct owned as a whole). An entry that only
owns fields below the node does not own the node. ``k:`` keys are decoded as
JSON and compared as values, never as text.

Guarantees: pure functions over already-parsed objects; a missing
``managedFields`` (exported without ``--show-managed-fields``) is reported as
``None``, never confused with "owned by nobody", and so is one that cannot be
read (not a list, an entry that is not a mapping or has no ``fieldsV1``: one
unreadable entry could be the owner of any field): :func:`unreadable` says why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bot.analysis.pointer import Token

ARGOCD_MANAGERS = frozenset({"argocd-controller", "argocd-application-controller"})
"""Argo CD's own field managers (3.x and 2.x), for every sync mode."""

SYNTHETIC_MANAGERS = frozenset({"before-first-apply", "ancient-changes"})
"""Entries the API server invents: fields from before managedFields existed, or collapsed history."""

# Values server-side apply assumes for omitted key fields (typed/helpers.go getAssociativeKeyDefault).
KEY_DEFAULTS: dict[str, Any] = {"protocol": "TCP"}


@dataclass(frozen=True)
class Entry:
    """One managedFields entry."""

    manager: str
    operation: str | None
    subresource: str | None
    time: str | None
    api_version: str | None
    fields: dict[str, Any]

    @property
    def is_argocd(self) -> bool:
        return self.manager in ARGOCD_MANAGERS


def unreadable(obj: dict[str, Any]) -> tuple[str, int] | None:
    """Why the object's managedFields cannot be read, as a key of ``MANAGED_FIELDS_PROBLEMS`` and the 1-based entry
    it concerns (0: the whole field); ``None`` when they can (or when there are none)."""
    raw = (obj.get("metadata") or {}).get("managedFields")
    if not raw:
        return None
    if not isinstance(raw, list):
        return "not-a-list", 0
    for n, e in enumerate(raw, start=1):
        if not isinstance(e, dict):
            return "entry-not-a-mapping", n
        if not isinstance(e.get("fieldsV1"), dict):
            return "no-fields", n
    return None


def entries_of(obj: dict[str, Any]) -> list[Entry] | None:
    """The object's managedFields entries; ``None`` when the object carries none at all, or none that can be read."""
    raw = (obj.get("metadata") or {}).get("managedFields")
    if not raw or unreadable(obj) is not None:
        return None
    out = []
    for e in raw:
        fields = e.get("fieldsV1")
        out.append(
            Entry(
                manager=str(e.get("manager") or ""),
                operation=e.get("operation"),
                subresource=e.get("subresource") or None,
                time=e.get("time"),
                api_version=e.get("apiVersion"),
                fields=fields if isinstance(fields, dict) else {},
            )
        )
    return out


@lru_cache(maxsize=4096)
def decode_member(raw: str) -> Any:
    """Decode the JSON after ``k:``/``v:``; ``None`` (never raises) when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


def item_matches_key(item: Any, key: Any) -> bool:
    """Whether a live list item is the one a ``k:{...}`` key names (key defaults applied)."""
    if not isinstance(item, dict) or not isinstance(key, dict):
        return False
    for name, want in key.items():
        have = item.get(name, KEY_DEFAULTS.get(name))
        if have != want or (type(have) is bool and type(want) is not bool):
            return False
    return True


def child_for_item(node: dict[str, Any], item: Any, index: int) -> dict[str, Any] | None:
    """The child of a FieldsV1 list node that stands for ``item`` (at ``index``), if any."""
    for name, child in node.items():
        if name.startswith("k:"):
            if item_matches_key(item, decode_member(name[2:])):
                return child if isinstance(child, dict) else {}
        elif name.startswith("v:"):
            if decode_member(name[2:]) == item:
                return child if isinstance(child, dict) else {}
        elif name.startswith("i:") and name[2:] == str(index):
            return child if isinstance(child, dict) else {}
    return None


def node_at(fields: dict[str, Any], live: Any, path: Sequence[Token]) -> tuple[dict[str, Any] | None, bool]:
    """Walk ``path`` through an entry's tree alongside the live object.

    Returns ``(node, via_ancestor_leaf)``: the node for the path (or ``None`` when
    the entry has none), and whether an ancestor leaf (atomic owner) was hit first.
    """
    node: dict[str, Any] = fields
    cur = live
    for depth, tok in enumerate(path):
        if depth > 0 and not node:
            return node, True  # a leaf above the path: owned as a whole
        if isinstance(tok, int) or (isinstance(cur, list) and str(tok).isdigit()):
            if not isinstance(cur, list):
                return None, False
            idx = int(tok)
            if not 0 <= idx < len(cur):
                return None, False
            child = child_for_item(node, cur[idx], idx)
            cur = cur[idx]
        else:
            child = node.get("f:" + str(tok))
            cur = cur.get(tok) if isinstance(cur, dict) else None
        if child is None:
            return None, False
        node = child if isinstance(child, dict) else {}
    return node, False


def owns(entry: Entry, live: Any, path: Sequence[Token]) -> bool:
    """Whether ``entry`` owns the field at ``path`` itself (or through an atomic ancestor)."""
    if not path:
        return False
    node, via_leaf = node_at(entry.fields, live, path)
    if node is None:
        return False
    return via_leaf or not node or "." in node


def owners(entries: Sequence[Entry], live: Any, path: Sequence[Token]) -> list[Entry]:
    """Every entry that owns the field at ``path`` (co-owners included), in managedFields order."""
    return [e for e in entries if owns(e, live, path)]
