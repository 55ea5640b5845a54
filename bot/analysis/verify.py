"""What an ignoreDifferences rule hides, evaluated as Argo CD evaluates it, and whether it hides exactly a finding.

A rule's ``jsonPointers`` name existing paths; its ``jqPathExpressions`` are evaluated with the ``jq`` bindings, as
Argo CD evaluates them with gojq (:func:`rule_paths`, :func:`jq_paths`). :func:`apply_rule` removes what a rule hides
from an object, and :func:`verify` holds a candidate rule to the promise of ``rules``: on this very pair of objects
it must remove the finding, remove nothing outside what it hides, hide no value Git sets that does not differ, and
create no difference of its own. ``rules`` proposes the candidates; this module only judges them.

Guarantees: pure (no I/O); the objects passed in are never modified.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

import jq

from bot.analysis.diff import Delta, diff_objects
from bot.analysis.pointer import MISSING, Path, Token, covers, resolve


@lru_cache(maxsize=1024)
def _compiled(expr: str) -> Any:
    return jq.compile(f"[path({expr})]")


def jq_paths(expr: str, obj: Any) -> list[Path]:
    """The paths ``expr`` selects in ``obj``; ``ValueError`` when jq rejects it."""
    result = _compiled(expr).input_value(obj).first()
    return [tuple(p) for p in result or []]


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


def apply_rule(rule: dict[str, Any], obj: dict[str, Any], paths: Sequence[Path] | None = None) -> dict[str, Any]:
    """A copy of ``obj`` without what the rule hides (deepest, highest indices first).

    Only the maps and lists on the way to a hidden value are copied; the rest is shared with ``obj`` (a whole copy
    of a live object, managedFields and all, for every rule verified was most of the time of a large explain): the
    copy is for reading. ``paths``: ``rule_paths(rule, obj)`` when the caller has it."""
    out = dict(obj)
    copied = {id(out)}
    for p in sorted(set(rule_paths(rule, obj) if paths is None else paths), key=_sort_key, reverse=True):
        parent: Any = out
        for tok in p[:-1]:
            parent = _copied_child(parent, tok, copied)
            if parent is MISSING:
                break
        last = p[-1]
        if isinstance(parent, dict) and isinstance(last, str):
            parent.pop(last, None)
        elif isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
            del parent[last]
    return out


def _copied_child(parent: Any, tok: Token, copied: set[int]) -> Any:
    """``resolve(parent, [tok])``, a copy of it in ``parent`` when it is a map or list not copied yet."""
    if isinstance(parent, dict):
        if tok not in parent:
            return MISSING
        key: Any = tok
    elif isinstance(parent, list):
        try:
            key = int(tok)
        except (TypeError, ValueError):
            return MISSING
        if not 0 <= key < len(parent):
            return MISSING
    else:
        return MISSING
    child = parent[key]
    if isinstance(child, dict | list) and id(child) not in copied:
        child = dict(child) if isinstance(child, dict) else list(child)
        copied.add(id(child))
        parent[key] = child
    return child


def _leaves(value: Any, path: Path) -> Iterator[Path]:
    """The paths of the scalar values in ``value`` (empty maps and lists hold nothing Git manages)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path


def _spares_git(desired: dict[str, Any], differing: Sequence[Path], hidden_paths: Sequence[Path]) -> bool:
    """Every value Git sets that the rule hides (``hidden_paths``: its paths in ``desired``) differs live: nothing Git
    manages and agrees on goes unseen."""
    for hidden in hidden_paths:
        for leaf in _leaves(resolve(desired, hidden), hidden):
            if not any(leaf[: len(d)] == d for d in differing):
                return False
    return True


def _signature(d: Delta) -> tuple[Any, ...]:
    """A difference as the same difference wherever a removed list item shifted it: its path without indices and
    both values."""
    shape = tuple("[]" if isinstance(t, int) else t for t in d.path)
    return (shape, *(None if v is MISSING else json.dumps(v, sort_keys=True) for v in (d.desired, d.live)))


def verify(
    rule: dict[str, Any],
    delta: Delta,
    desired: dict[str, Any],
    live: dict[str, Any],
    hides: list[str],
    *,
    live_paths: list[Path] | None = None,
) -> list[str] | None:
    """``hides`` completed when the rule removes this finding and only differences inside what it hides, spares
    every value Git sets that agrees with live, and creates no difference of its own (hiding a live item Git renders
    would); ``None`` when it does not. Differences are matched by :func:`_signature`, since hiding a list item shifts
    the indices of the items after it. An item only Git has is hidden in Git's object: its pointer joins ``hides``.
    ``live_paths``: ``rule_paths(rule, live)`` when the caller has it (each jq evaluation serializes the object)."""
    try:
        before = diff_objects(desired, live)
        hidden_desired = rule_paths(rule, desired)
        if live_paths is None:
            live_paths = rule_paths(rule, live)
        applied = apply_rule(rule, desired, hidden_desired), apply_rule(rule, live, live_paths)
        after = Counter(_signature(d) for d in diff_objects(*applied))
        if not _spares_git(desired, [d.desired_path for d in before], hidden_desired):
            return None
    except ValueError:
        return None
    removed = []

    def hidden(d: Delta) -> bool:
        return any(covers(h, d.pointer) for h in hides) or (
            d.live is MISSING and any(d.desired_path[: len(h)] == h for h in hidden_desired)
        )

    # the same difference on sibling items (one CA in every webhook) has one signature: the ones the rule leaves
    # are matched first, so that the one it hides is the one found removed, whichever sibling the rule is for
    for d in sorted(before, key=hidden):
        sig = _signature(d)
        if after[sig] > 0:
            after[sig] -= 1
        else:
            removed.append(d)
    if +after:  # a difference that was not there before
        return None
    out = list(hides)
    for d in removed:
        if d.live is MISSING and any(d.desired_path[: len(h)] == h for h in hidden_desired):
            out.append(d.pointer)  # the rule hides it on Git's side
    if delta not in removed or (delta.live is not MISSING and not any(covers(h, delta.pointer) for h in out)):
        return None  # the finding must go, and where it shows: the rule names its live pointer or one above it
    # a hidden list item shifts the ones after it: their positional differences go with it
    shifted = [h.rsplit("/", 1)[0] for h in out if h.rsplit("/", 1)[-1].isdigit()]
    if not all(any(covers(h, d.pointer) for h in [*out, *shifted]) for d in removed):
        return None
    return sorted(h for h in set(out) if not any(o != h and covers(o, h) for o in out))
