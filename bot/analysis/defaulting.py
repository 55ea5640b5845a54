"""Proof that a value is a default: the evidence behind ``api-defaulting``, never an assumption.

A live value Git does not set is the API server's (or the schema's) default only
when some source says so and the value agrees with it:

1. the ``default:`` of the CRD's openAPIV3Schema, when the CRD is among the inputs
   (``--context``, or the app's own desired or live objects): ``confirmed``;
2. the built-in kinds' tables (``data/defaults.json``: API defaulting, allocation,
   admission plugins, serialization, never a controller's later write; and, for the
   kinds it leaves out, webhook configurations and API services in
   ``data/known-defaults.json``): ``confirmed``;
3. well-known CRDs' schema defaults bundled in ``data/known-defaults.json`` (Gateway
   API, External Secrets), which vary with the installed version: ``likely``.

A map is a default when each of its leaves is one (a PVC template's
``status: {phase: Pending}``). The converse case, Git writing a default the
server does not store, is :func:`dropped`: a value equal to the schema's default
(``confirmed`` as above), or a ``false``/``0``, which Go's ``omitempty`` leaves out
(``likely``: absent means the zero value to Go-based APIs and controllers).

Guarantees: pure; lookups are cached per kind; a malformed CRD or table entry
proves nothing (``None``), never raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from bot.analysis.canonical import deep_equal
from bot.analysis.pointer import Token, escape
from bot.analysis.remarshal import undeclared
from bot.analysis.schema import data_file, is_known

_LITERAL = re.compile(r"^[A-Za-z0-9_./%:-]*$")
"""A table value meant literally; anything else (``<allocated>``, ``=metadata.name``, prose) stands for 'any'."""
_NOT_DEFAULTING = frozenset({"controller"})
"""Mechanisms of defaults.json that are a controller's later write, not defaulting."""
_REWRITES = frozenset({"normalization"})
"""Mechanisms of defaults.json that rewrite a value present in the request (quantities rounded): they say what a
present value becomes, never that an absent one means the same."""


@dataclass(frozen=True)
class Proof:
    """Where a default comes from, for the evidence line and the confidence."""

    source: str
    pattern: str
    certain: bool
    pruned: bool = False
    """The field is not declared by the CRD's schema: the server prunes it (not a default)."""
    builtin: bool = False
    """With ``pruned``: the schema is a built-in kind's Go type (``source`` names it), not a CRD."""


@dataclass(frozen=True)
class _Rule:
    pattern: tuple[str, ...]
    value: Any
    mechanism: str


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_file(f"data/{name}"))
    return data


@cache
def _builtin(kind: str) -> tuple[_Rule, ...]:
    """defaults.json's rules for a built-in kind (``data/defaults.json``: what the API server fills in, per kind)."""
    out = []
    for ptr, spec in (_load("defaults.json").get(kind) or {}).items():
        if isinstance(spec, dict) and ptr.startswith("/") and spec.get("mechanism") not in _NOT_DEFAULTING:
            out.append(_Rule(tuple(ptr[1:].split("/")), spec.get("value"), str(spec.get("mechanism", "default"))))
    return tuple(out)


@cache
def _known(group: str, kind: str) -> tuple[tuple[_Rule, ...], bool]:
    """known-defaults.json's rules for ``group/kind``, and whether they are certain (built-in) or version-dependent."""
    table = _load("known-defaults.json").get(f"{group}/{kind}")
    if not isinstance(table, dict):
        return (), False
    rules = tuple(_Rule(tuple(p[1:].split("/")), v, "default") for p, v in (table.get("defaults") or {}).items())
    return rules, bool(table.get("certain"))


def _matches(pattern: tuple[str, ...], path: Sequence[Token]) -> bool:
    return len(pattern) == len(path) and all(p in ("*", escape(t)) for p, t in zip(pattern, path, strict=True))


def _fits(rule: _Rule, value: Any, literal: bool = False) -> bool:
    """Whether ``value`` is what the rule fills in (a symbolic value, such as an allocated IP, fits anything, unless
    ``literal``: then only a rule that names the value itself fits, and never one that rewrites a present value)."""
    want = rule.value
    if literal and rule.mechanism in _REWRITES:
        return False
    if isinstance(want, str):
        if not _LITERAL.match(want.replace("|", "")):
            return not literal
        return isinstance(value, str) and value in want.split("|")
    if isinstance(want, list) and any(isinstance(w, str) and not _LITERAL.match(w) for w in want):
        return isinstance(value, list) and not literal
    return deep_equal(want, value)


def _by_table(rules: tuple[_Rule, ...], path: tuple[Token, ...], value: Any, literal: bool = False) -> _Rule | None:
    """The rule explaining ``value`` at ``path``, or for a map, one rule per leaf (the first is returned)."""
    for rule in rules:
        if _matches(rule.pattern, path) and _fits(rule, value, literal):
            return rule
    if isinstance(value, dict) and value:
        found = [_by_table(rules, (*path, k), v, literal) for k, v in value.items()]
        if all(found):
            return found[0]
    return None


def _schema_node(crd: dict[str, Any], version: str, path: Sequence[Token]) -> dict[str, Any] | None:
    versions = [v for v in (crd.get("spec") or {}).get("versions") or [] if isinstance(v, dict)]
    chosen = next((v for v in versions if v.get("name") == version), None)
    chosen = chosen or next((v for v in versions if v.get("storage")), None)
    node = (((chosen or {}).get("schema") or {}).get("openAPIV3Schema")) or None
    for tok in path:
        if not isinstance(node, dict):
            return None
        if isinstance(tok, int):
            node = node.get("items")
        else:
            props = node.get("properties") or {}
            node = props.get(tok) if tok in props else node.get("additionalProperties")
    return node if isinstance(node, dict) else None


def _by_schema(node: dict[str, Any] | None, value: Any) -> bool:
    if node is None:
        return False
    if "default" in node and deep_equal(node["default"], value):
        return True
    if isinstance(value, dict) and value and isinstance(node.get("properties"), dict):
        props = node["properties"]
        return all(k in props and _by_schema(props[k], v) for k, v in value.items())
    return False


def _crd_label(crd: dict[str, Any]) -> str:
    return f"the schema of CRD {(crd.get('metadata') or {}).get('name')}"


def proves(
    group: str,
    kind: str,
    version: str,
    path: tuple[Token, ...],
    value: Any,
    crd: dict[str, Any] | None,
    *,
    literal: bool = False,
) -> Proof | None:
    """Why ``value`` at ``path`` is a default the API server or the schema fills in, or ``None``. ``literal``: only a
    rule naming this very value proves it (for a value Git writes and the live object lacks)."""
    pointer = "/" + "/".join(escape(t) for t in path)
    if crd is not None and _by_schema(_schema_node(crd, version, path), value):
        return Proof(_crd_label(crd), pointer, True)
    if is_known(group, kind):
        rule = _by_table(_builtin(kind), path, value, literal)
        if rule is not None:
            return Proof(f"the API server ({rule.mechanism})", "/" + "/".join(rule.pattern), True)
    rules, certain = _known(group, kind)
    rule = _by_table(rules, path, value, literal)
    if rule is not None:
        source = "the API server (default)" if certain else f"the published schema of {kind} ({group})"
        return Proof(source, "/" + "/".join(rule.pattern), certain)
    return None


def scheme_default(group: str, kind: str, path: Sequence[Token], value: Any) -> bool:
    """Whether ``value`` at ``path`` is what Kubernetes' defaulting functions (``SetDefaults_*``, the ``default``
    mechanism of defaults.json) fill in: Argo CD's legacy diff runs them on its prediction too."""
    if not is_known(group, kind):
        return False
    rule = _by_table(_builtin(kind), tuple(path), value)
    return rule is not None and rule.mechanism == "default"


def pruned(version: str, path: Sequence[Token], crd: dict[str, Any] | None) -> Proof | None:
    """Why a field Git sets in a custom resource is absent live: the CRD's structural schema does not declare it,
    and the API server prunes undeclared fields (``preserveUnknownFields: false``, the only choice in
    apiextensions.k8s.io/v1) unless a node on the way keeps unknown fields. Only a CRD that is among the inputs
    proves it."""
    if crd is None:
        return None
    versions = [v for v in (crd.get("spec") or {}).get("versions") or [] if isinstance(v, dict)]
    chosen = next((v for v in versions if v.get("name") == version), None)
    node = (((chosen or {}).get("schema") or {}).get("openAPIV3Schema")) or None
    for depth, tok in enumerate(path):
        if not isinstance(node, dict) or node.get("x-kubernetes-preserve-unknown-fields") is True:
            return None
        if isinstance(tok, int):
            node = node.get("items")
            continue
        props = node.get("properties")
        if not isinstance(props, dict) or node.get("additionalProperties") not in (None, False):
            return None
        if tok in props:
            node = props[tok]
        else:
            pointer = "/" + "/".join(escape(t) for t in path[: depth + 1])
            return Proof(_crd_label(crd), pointer, True, pruned=True)
    return None


_ALLOCATED: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    ("", "Service"): (
        ("spec", "clusterIP"), ("spec", "clusterIPs"), ("spec", "clusterIPs", "*"), ("spec", "ports", "*", "nodePort"),
        ("spec", "healthCheckNodePort"),
    ),
    ("", "PersistentVolumeClaim"): (("spec", "volumeName"),),
}  # fmt: skip
"""Fields the cluster allocates per object (the Service IP and port allocators, the volume binder): a value Git
could hold there is either pinned on purpose or copied from one cluster, never a default to write."""


def allocated(group: str, kind: str, path: Sequence[Token]) -> bool:
    """Whether ``path`` of a ``group/kind`` object is a field the cluster allocates."""
    return any(_matches(p, path) for p in _ALLOCATED.get((group, kind), ()))


def undeclared_builtin(group: str, kind: str, version: str, path: Sequence[Token]) -> Proof | None:
    """Why a field Git sets in a built-in kind is absent live: the kind's Go type has no such field, so the API server
    drops it (with a warning; strict field validation refuses it)."""
    found = undeclared(f"{group}/{version}" if group else version, kind, path)
    if found is None:
        return None
    depth, type_name = found
    pointer = "/" + "/".join(escape(t) for t in path[: depth + 1])
    return Proof(f"the Kubernetes type {type_name}", pointer, True, pruned=True, builtin=True)


def dropped(
    group: str, kind: str, version: str, path: tuple[Token, ...], value: Any, crd: dict[str, Any] | None
) -> Proof | None:
    """Why Git's ``value``, absent live, means the same as absent: it is the default, or a zero the API drops. A
    rule about what a present value is rewritten to (a quantity's canonical form) proves nothing here: no memory
    limit is not the same as a limit (README, "How the analysis decides")."""
    proof = (
        undeclared_builtin(group, kind, version, path)
        or proves(group, kind, version, path, value, crd, literal=True)
        or pruned(version, path, crd)
    )
    if proof is not None:
        return proof
    if value is False or (type(value) in (int, float) and value == 0):
        # built-in types serialise through Go structs, and custom resources through their conversion webhooks and
        # controllers: an omitempty false or 0 disappears, and absent means the zero value to them
        where = "the API server" if is_known(group, kind) else "the API server or a conversion"
        return Proof(f"Go's omitempty: {where} does not keep a false or 0", "", False)
    return None
