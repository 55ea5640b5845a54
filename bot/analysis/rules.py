"""The fix for a finding, and the narrowest ignoreDifferences rule when one is warranted.

Rules are scoped by ``group`` (API group without version; core kinds have none),
``kind``, ``name`` and ``namespace``. Plain paths become ``jsonPointers``; a
path through a list selects the item by its merge key, or by the fields that
tell it apart from its siblings, in ``jqPathExpressions`` -- never by index. An
item added to or removed from a list compared as a whole, or a list with no
identifying field, is covered by a pointer to the list itself. The rule never
uses ``managedFieldsManagers`` (Argo CD's own managers would hide everything;
another manager's ownership is often wider than the drift, as Argo Rollouts
owning a whole VirtualService route list shows).

Every rule is verified: applied to this very pair of objects (the jq paths
evaluated with the ``jq`` bindings, as Argo CD evaluates them with gojq), it must
remove the finding and remove nothing that is not listed in ``hides``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations
from typing import Any

import jq

from bot.analysis import schema
from bot.analysis.diff import Delta, diff_objects
from bot.analysis.pointer import MISSING, Path, Token, covers, join, resolve
from bot.model import Action, Fix, ResourceRef
from bot.wording import ALTERNATIVES

RESPECT = "RespectIgnoreDifferences=true"
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PREFERRED = ("name", "type", "key", "id", "path", "port", "containerPort", "host", "uid")

_ACTIONS: dict[str, tuple[Action, bool, bool, list[str]]] = {
    # cause: (action, proposes a rule, the rule is only a fallback, sync options)
    "autoscaler": ("ignore", True, False, [RESPECT]),
    "operator": ("ignore", True, False, [RESPECT]),
    "mutating-webhook": ("ignore", True, False, []),
    "api-defaulting": ("server-side-diff", True, True, []),
    "normalization": ("change-source", True, True, []),
    "nondeterministic-render": ("change-source", False, False, []),
    "shared-resource": ("resolve-ownership", False, False, []),
    "other-gitops": ("resolve-ownership", False, False, []),
    "manual-edit": ("revert", False, False, []),
    "unknown": ("investigate", False, False, []),
}


@lru_cache(maxsize=1024)
def _compiled(expr: str) -> Any:
    return jq.compile(f"[path({expr})]")


def jq_paths(expr: str, obj: Any) -> list[Path]:
    """The paths ``expr`` selects in ``obj``; ``ValueError`` when jq rejects it."""
    result = _compiled(expr).input_value(obj).first()
    return [tuple(p) for p in result or []]


def _key_expr(path: Sequence[str]) -> str:
    out = ""
    for k in path:
        out = _then_key(out, k)
    return out


def _then_key(expr: str, key: str) -> str:
    """``expr`` followed by map key ``key``: ``.name``, or ``["a/b"]`` (``.["a/b"]`` at the start of a stage)."""
    if _IDENT.match(key):
        return f"{expr}.{key}"
    return f"{expr}[{json.dumps(key)}]" if expr else f".[{json.dumps(key)}]"


def _condition(fields: Sequence[tuple[tuple[str, ...], Any, Any]]) -> str:
    parts = []
    for fpath, value, default in fields:
        lhs = _key_expr(fpath)
        if default is not None:
            lhs = f"({lhs} // {json.dumps(default)})"
        parts.append(f"{lhs} == {json.dumps(value)}")
    return " and ".join(parts)


def _scalar_fields(item: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}
    for k, v in item.items():
        if isinstance(v, str | int | bool) and v != "":
            out[(k,)] = v
        elif isinstance(v, dict):
            for k2, v2 in v.items():
                if isinstance(v2, str | int | bool) and v2 != "":
                    out[(k, k2)] = v2
    return out


def _rank(fpath: tuple[str, ...]) -> tuple[int, int, str]:
    last = fpath[-1]
    pref = _PREFERRED.index(last) if last in _PREFERRED else len(_PREFERRED)
    return (len(fpath), pref, ".".join(fpath))


def _identifying(
    siblings: list[Any], index: int, avoid: Token | None, counterpart: Any
) -> list[tuple[tuple[str, ...], Any, Any]] | None:
    """The fewest fields (stable between Git and live) that single out ``siblings[index]``."""
    item = siblings[index]
    if not isinstance(item, dict):
        return None
    fields = _scalar_fields(item)
    other = _scalar_fields(counterpart) if isinstance(counterpart, dict) else {}
    candidates = sorted((f for f in fields if f[0] != avoid and (not other or other.get(f) == fields[f])), key=_rank)
    for size in (1, 2):
        for combo in combinations(candidates[:8], size):
            clashes = [
                s for j, s in enumerate(siblings)
                if j != index and isinstance(s, dict) and all(_scalar_fields(s).get(f) == fields[f] for f in combo)
            ]  # fmt: skip
            if not clashes:
                return [(f, fields[f], None) for f in combo]
    return None


def _build_rule_path(
    delta: Delta, desired: dict[str, Any], live: dict[str, Any], group: str, kind: str
) -> dict[str, list[str]]:
    path = delta.path
    root = delta.atomic_root
    # An item added or removed as a whole, a reordered list or an element of a list of scalars:
    # the list compared as a whole is the narrowest thing a rule can name.
    if root is not None and (
        (len(path) == len(root) + 1 and (delta.desired is MISSING or delta.live is MISSING)) or path == root
    ):
        return {"jsonPointers": [join(root)]}
    if not any(isinstance(t, int) for t in path):
        return {"jsonPointers": [join(path)]}
    stages: list[str] = []
    cur = ""
    for pos, tok in enumerate(path):
        if not isinstance(tok, int):
            cur = _then_key(cur, tok)
            continue
        siblings = resolve(live, path[:pos])
        if not isinstance(siblings, list) or not 0 <= tok < len(siblings):
            return {"jsonPointers": [join(path[:pos])]}
        lt = schema.list_type(group, kind, schema.schema_path(path[:pos] + (0,))[:-2])
        cond: list[tuple[tuple[str, ...], Any, Any]] | None = None
        if lt.kind == "map" and isinstance(siblings[tok], dict):
            cond = [((k,), siblings[tok].get(k, lt.key_defaults.get(k)), lt.key_defaults.get(k)) for k in lt.keys]
        else:
            avoid = path[pos + 1] if pos + 1 < len(path) else None
            counterpart = resolve(desired, delta.desired_path[: pos + 1])
            cond = _identifying(siblings, tok, avoid, None if counterpart is MISSING else counterpart)
        if cond is None:
            return {"jsonPointers": [join(path[:pos])]}
        stages.append((cur or ".") + "[]")
        stages.append(f"select({_condition(cond)})")
        cur = ""
    if cur:
        stages.append(cur)
    return {"jqPathExpressions": [" | ".join(stages)]}


def rule_paths(rule: dict[str, Any], obj: dict[str, Any]) -> list[Path]:
    """Every path of ``obj`` the rule hides (pointers that exist, jq paths as evaluated)."""
    out: list[Path] = []
    for ptr in rule.get("jsonPointers") or []:
        toks: list[Token] = []
        cur: Any = obj
        for raw in ptr[1:].split("/") if ptr else []:
            t = raw.replace("~1", "/").replace("~0", "~")
            tok: Token = int(t) if isinstance(cur, list) and t.isdigit() else t
            toks.append(tok)
            cur = resolve(cur, [tok])
        if cur is not MISSING:
            out.append(tuple(toks))
    for expr in rule.get("jqPathExpressions") or []:
        out.extend(jq_paths(expr, obj))
    return out


def _sort_key(path: Path) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, t) if isinstance(t, int) else (1, t) for t in path)


def apply_rule(rule: dict[str, Any], obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` without what the rule hides (deepest, highest indices first)."""
    out = copy.deepcopy(obj)
    for p in sorted(set(rule_paths(rule, obj)), key=_sort_key, reverse=True):
        parent = resolve(out, p[:-1])
        last = p[-1]
        if isinstance(parent, dict) and isinstance(last, str):
            parent.pop(last, None)
        elif isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
            del parent[last]
    return out


def verify(rule: dict[str, Any], delta: Delta, desired: dict[str, Any], live: dict[str, Any], hides: list[str]) -> bool:
    """The rule removes this finding, and every difference it removes is inside ``hides``."""
    try:
        before = {d.pointer for d in diff_objects(desired, live)}
        after = {d.pointer for d in diff_objects(apply_rule(rule, desired), apply_rule(rule, live))}
    except ValueError:
        return False
    if delta.pointer in after:
        return False
    return all(any(covers(h, p) for h in hides) for p in before - after)


def propose(cause: str, delta: Delta, ref: ResourceRef, desired: dict[str, Any], live: dict[str, Any]) -> Fix:
    action, wants_rule, fallback, sync_options = _ACTIONS[cause]
    fix = Fix(action=action, alternative=ALTERNATIVES[cause])
    if not wants_rule:
        return fix
    rule: dict[str, Any] = {}
    if ref.group:
        rule["group"] = ref.group
    rule["kind"] = ref.kind
    rule["name"] = ref.name
    if ref.namespace:
        rule["namespace"] = ref.namespace
    try:
        rule.update(_build_rule_path(delta, desired, live, ref.group, ref.kind))
        hides = sorted({join(p) for p in rule_paths(rule, live)} or {join(p) for p in rule_paths(rule, desired)})
    except ValueError:
        return fix
    if not hides:
        hides = [delta.pointer]
    if not verify(rule, delta, desired, live, hides):
        fix.verified = False
        return fix
    fix.rule = rule
    fix.hides = hides
    fix.verified = True
    fix.fallback = fallback
    fix.sync_options = list(sync_options)
    return fix
