"""Kubernetes objects as the Argo CD and Kubernetes fakes read, match and serialize them.

Guarantees: ``go_json`` writes JSON byte for byte as Go's ``json.Marshal`` does (compact, keys sorted, ``<>&``,
U+2028 and U+2029 escaped); ``load_manifests`` reads every object of a YAML or JSON file (all documents, ``*List``
kinds flattened) and keeps RFC 3339 times as the strings the API serves; ``parse_label_selector`` accepts
Kubernetes' label selector syntax and raises ``ValueError`` on anything else, and ``labels_match`` applies it as
kube-apiserver does; ``_state``/``_loads_state`` encode and decode a ResourceDiff's state strings (``"null"`` for a
missing side).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
Key = tuple[str, str, str, str]  # (group, kind, namespace, name), "" for core group / cluster scope


def go_json(value: Any, *, sort_keys: bool = True) -> str:
    """JSON as Go's ``json.Marshal`` writes it: compact, map keys sorted (unstructured objects are maps), UTF-8 kept,
    and ``<``, ``>``, ``&``, U+2028, U+2029 escaped (Go's HTML-safe default)."""
    text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028")):
        text = text.replace(char, escaped)
    return text.replace("\u2029", "\\u2029")


def split_api_version(api_version: str) -> tuple[str, str]:
    """("apps", "v1") for "apps/v1", ("", "v1") for the core "v1"."""
    group, _, version = api_version.rpartition("/")
    return group, version


def object_key(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    group, _ = split_api_version(str(obj.get("apiVersion", "")))
    return group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))


def plural(kind: str) -> str:
    """The resource name of a kind as Kubernetes' default RESTMapper guesses it."""
    lower = kind.lower()
    if lower == "endpoints":
        return lower
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: the casebook is big


class _NoTimestampLoader(_BaseLoader):  # type: ignore[misc]
    """SafeLoader that keeps RFC 3339 times as strings, as the API serves them (PyYAML would build datetimes)."""


_NoTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_manifests(path: Path) -> list[Obj]:
    """Every object of a YAML or JSON file: all documents, ``kind: List`` (and ``*List``) flattened."""
    objs: list[Obj] = []
    for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_NoTimestampLoader):
        if not isinstance(doc, dict):
            continue
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            objs.extend(item for item in doc["items"] if isinstance(item, dict))
        else:
            objs.append(doc)
    return objs


def parse_label_selector(selector: str) -> list[tuple[str, str, frozenset[str]]]:
    """Kubernetes label selector syntax: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``, ``k in (a,b)``,
    ``k notin (a,b)``, comma-separated. Returns (key, operator, values); raises ValueError on bad syntax."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(selector):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(selector[start:i])
            start = i + 1
    parts.append(selector[start:])
    requirements: list[tuple[str, str, frozenset[str]]] = []
    name = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
    value = r"[-A-Za-z0-9_.]*"
    for raw in parts:
        part = raw.strip()
        if not part:
            if selector.strip():
                raise ValueError(f"invalid empty requirement in {selector!r}")
            continue
        if m := re.fullmatch(rf"({name})\s+(in|notin)\s*\(([^)]*)\)", part):
            values = frozenset(v.strip() for v in m[3].split(","))
            requirements.append((m[1], m[2], values))
        elif m := re.fullmatch(rf"!\s*({name})", part):
            requirements.append((m[1], "!", frozenset()))
        elif m := re.fullmatch(rf"({name})\s*(==|!=|=)\s*({value})", part):
            requirements.append((m[1], "!=" if m[2] == "!=" else "=", frozenset({m[3]})))
        elif re.fullmatch(name, part):
            requirements.append((part, "exists", frozenset()))
        else:
            raise ValueError(f"unable to parse requirement: {part!r}")
    return requirements


def labels_match(requirements: list[tuple[str, str, frozenset[str]]], labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    for key, op, values in requirements:
        present = key in labels
        ok = {
            "=": present and labels.get(key) in values,
            "in": present and labels.get(key) in values,
            "!=": not present or labels.get(key) not in values,
            "notin": not present or labels.get(key) not in values,
            "exists": present,
            "!": not present,
        }[op]
        if not ok:
            return False
    return True


def _loads_state(state: Any) -> Obj | None:
    if not isinstance(state, str) or state == "null":
        return None
    value = json.loads(state)
    return value if isinstance(value, dict) else None


def _state(obj: Obj | None) -> str:
    return "null" if obj is None else go_json(obj)
