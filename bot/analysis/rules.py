"""The fix for a finding, and the narrowest ignoreDifferences rule when one is warranted.

Rules are scoped by ``group`` (API group without version; core kinds have none),
``kind``, ``name`` and ``namespace``. Plain paths become ``jsonPointers``; a
path through a list selects items in ``jqPathExpressions`` (``selectors``), never
by index: by merge key, by the fields that tell the item apart, and an item only
live has by its own content. A fallback rule (normalization, defaulting) may
name the differing leaf in every item (``.spec.dataFrom[].extract.nullBytePolicy``),
since a default is the same everywhere. A whole list is named only when Git
renders nothing in it. The rule never uses ``managedFieldsManagers`` (Argo CD's
own managers would hide everything; another manager's ownership is often wider
than the drift, as Argo Rollouts owning a whole VirtualService route list shows).

A rule never hides what Git manages. Every candidate is verified on this very
pair of objects by ``verify`` (jq evaluated with the ``jq`` bindings, as Argo CD
evaluates it with gojq): it must remove the finding, remove nothing outside
``hides``, hide no value Git sets that does not differ, and create no difference
of its own. When no candidate passes, no rule is proposed and the finding says why.
This module proposes the candidates and what a verified rule costs (its caution
and sync caveat); ``verify`` judges them.
A rule that hides an image, a command, args or a whole section carries a
``caution``: future Git changes to those will not be synced either.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bot.analysis import schema, selectors
from bot.analysis.canonical import deep_equal
from bot.analysis.diff import Delta
from bot.analysis.pointer import MISSING, Path, Token, join, resolve, split
from bot.analysis.verify import rule_paths, verify
from bot.model import Action, Fix, ResourceRef
from bot.wording import report as wording
from bot.wording.report import ALTERNATIVES

RESPECT = "RespectIgnoreDifferences=true"
_SELECT, _EVERY = "select", "every"

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
    # Git ahead: the fix is to sync (the new action value), never a rule that would stop Git's change from syncing
    "not-synced": ("sync", False, False, []),
}
_NO_RULE_ACTION: dict[str, Action] = {"mutating-webhook": "server-side-diff"}
"""The action when a cause that wants a rule gets none (no selector spares Git's values); else change-source."""


def _candidates(delta: Delta, desired: dict[str, Any], live: dict[str, Any], group: str, kind: str,
                fallback: bool) -> Iterator[dict[str, list[str]]]:  # fmt: skip
    """Rule paths for the difference, narrowest and most robust first; each is verified before it is used."""
    path, root = delta.path, delta.atomic_root
    if not any(isinstance(t, int) for t in path):
        yield {"jsonPointers": [join(path)]}
        return
    if path == root:  # the same members reordered: the list compared as a whole is the thing that differs
        yield {"jsonPointers": [join(root)]}
        return
    strategies = (_EVERY, _SELECT) if fallback else (_SELECT, _EVERY)
    inner = max(i for i, t in enumerate(path) if isinstance(t, int))

    def item() -> Iterator[dict[str, list[str]]]:
        for strategy in strategies:
            expr = _expression(delta, desired, live, group, kind, strategy)
            if expr is not None:
                yield {"jqPathExpressions": [expr]}

    def whole_list() -> Iterator[dict[str, list[str]]]:
        # the innermost list as a whole (items above it selected by key): kept only if it hides no value Git sets
        # that agrees with live, as when Git renders nothing there or a controller replaced all of a container's args
        if not any(isinstance(t, int) for t in path[:inner]):
            yield {"jsonPointers": [join(path[:inner])]}
            return
        for strategy in strategies:
            expr = _expression(delta, desired, live, group, kind, strategy, upto=inner)
            if expr is not None:
                yield {"jqPathExpressions": [expr]}

    whole_item = inner == len(path) - 1 and (delta.desired is MISSING or delta.live is MISSING)
    if whole_item and (not resolve(desired, delta.desired_path[:-1]) or delta.live is MISSING):
        # Git renders nothing in this list, or the item is Git's and gone live: the list is where the finding shows
        yield from whole_list()
        yield from _added_items(delta, desired, live, group, kind, strategies)
        yield from item()
    else:
        yield from _added_items(delta, desired, live, group, kind, strategies)
        yield from item()
        yield from whole_list()


def _added_items(delta: Delta, desired: dict[str, Any], live: dict[str, Any], group: str, kind: str,
                 strategies: tuple[str, ...]) -> Iterator[dict[str, list[str]]]:  # fmt: skip
    """For a difference in a list compared by position whose only change is items live has in addition (appended,
    prepended or inserted), the rule that selects those items by content: without them the list is Git's."""
    for pos in range(len(delta.path) - 1, -1, -1):
        if not isinstance(delta.path[pos], int):
            continue
        lt = schema.list_type(group, kind, schema.schema_path(delta.path[:pos] + (0,))[:-2])
        git_items, live_items = resolve(desired, delta.desired_path[:pos]), resolve(live, delta.path[:pos])
        if lt.kind == "map" or not isinstance(git_items, list) or not isinstance(live_items, list):
            continue
        added = _added(git_items, live_items)
        conds = [selectors.added_condition(live_items[i], git_items) for i in added or ()]
        if not conds or any(c is None for c in conds):
            continue
        for strategy in strategies:
            base = _expression(delta, desired, live, group, kind, strategy, upto=pos)
            if base is not None:
                either = " or ".join(f"({c})" if len(conds) > 1 else str(c) for c in conds)
                yield {"jqPathExpressions": [f"{base}[] | select({either})"]}
        return


def _added(git_items: list[Any], live_items: list[Any]) -> list[int] | None:
    """The indices of the live items to drop so that the live list is Git's, in order; ``None`` when no such set."""
    added, at = [], 0
    for i, item in enumerate(live_items):
        if at < len(git_items) and deep_equal(item, git_items[at]):
            at += 1
        else:
            added.append(i)
    return added if at == len(git_items) and added else None


def _expression(
    delta: Delta, desired: dict[str, Any], live: dict[str, Any], group: str, kind: str, strategy: str,
    upto: int | None = None,
) -> str | None:  # fmt: skip
    """One jq path expression for the difference (or for its first ``upto`` tokens); ``None`` when some list item
    cannot be selected."""
    path = delta.path[:upto]
    stages: list[str] = []
    cur = ""
    for pos, tok in enumerate(path):
        if not isinstance(tok, int):
            cur = selectors.then_key(cur, tok)
            continue
        cond = _item_condition(delta, desired, live, group, kind, pos, strategy)
        if cond is None:
            return None
        if not cond:  # every item: .spec.dataFrom[].extract...
            cur = (cur or ".") + "[]"
            continue
        stages += [(cur or ".") + "[]", f"select({cond})"]
        cur = ""
    if cur:
        stages.append(cur)
    return " | ".join(stages)


def _item_condition(
    delta: Delta, desired: dict[str, Any], live: dict[str, Any], group: str, kind: str, pos: int, strategy: str
) -> str | None:
    """The condition for the list item at ``delta.path[pos]``: ``""`` for every item, ``None`` for none possible."""
    path, dpath = delta.path, delta.desired_path
    siblings = resolve(live, path[:pos])
    git_items = resolve(desired, dpath[:pos])
    git_items = git_items if isinstance(git_items, list) else []
    last = pos == len(path) - 1
    if last and delta.desired is MISSING:  # an item only live has: by its content, sparing every Git item
        return selectors.added_condition(delta.live, git_items)
    if last and delta.live is MISSING:  # an item only Git has: by what tells it apart from the live items
        own = dpath[pos]
        if not isinstance(own, int) or not isinstance(siblings, list):
            return None
        return selectors.added_condition(git_items[own], siblings)
    tok = path[pos]
    if not isinstance(siblings, list) or not isinstance(tok, int) or not 0 <= tok < len(siblings):
        return None
    lt = schema.list_type(group, kind, schema.schema_path(path[:pos] + (0,))[:-2])
    if lt.kind == "map" and isinstance(siblings[tok], dict):
        return selectors.key_condition(siblings[tok], lt)
    if strategy == _EVERY:
        return ""
    counterpart = resolve(desired, dpath[: pos + 1])
    found = selectors.identifying(siblings, tok, path[pos + 1 :], None if counterpart is MISSING else counterpart)
    return selectors.condition(found) if found is not None else None


def _caution(hides: list[str], live: dict[str, Any], ref: ResourceRef) -> str | None:
    """What else the rule stops syncing, when that is an image, a command, args or a whole section."""
    wide = []
    for ptr in hides:
        toks = ptr.split("/")[1:]
        section = len(toks) <= 2 and toks[:1] != ["metadata"] and isinstance(resolve(live, toks), dict | list)
        if section or {"image", "command", "args"} & set(toks):
            wide.append(ptr)
    if not wide:
        return None
    return wording.CAUTION_WIDE_RULE.format(fields=", ".join(wide), resource=ref.label)


def _sync_caveat(hides: list[str], sync_options: list[str], live: dict[str, Any], ref: ResourceRef) -> str:
    """What a sync still does to the hidden fields: the rule only changes the diff unless RespectIgnoreDifferences
    is set, which only spares existing resources and, in a custom resource, takes from live the whole outermost list
    the hidden fields sit in (a JSON merge patch replaces lists whole)."""
    fields = ", ".join(hides)
    if RESPECT not in sync_options:
        return wording.SYNC_CAVEAT_NO_RESPECT.format(fields=fields)
    text = wording.SYNC_CAVEAT_NEW_RESOURCE.format(resource=ref.label, fields=fields)
    if not schema.is_known(ref.group, ref.kind):
        lists = sorted({join(p[: min(i for i, t in enumerate(p) if isinstance(t, int))]) for p in _hidden(hides, live)
                        if any(isinstance(t, int) for t in p)})  # fmt: skip
        if lists:
            text += wording.SYNC_CAVEAT_CR_LIST.format(lists=", ".join(lists))
    return text


def _hidden(hides: list[str], live: dict[str, Any]) -> Iterator[Path]:
    """The hidden pointers as token paths of ``live`` (list indices as ``int``)."""
    for ptr in hides:
        toks: list[Token] = []
        cur: Any = live
        for t in split(ptr):
            tok: Token = int(t) if isinstance(cur, list) and t.isdigit() else t
            toks.append(tok)
            cur = resolve(cur, [tok])
        yield tuple(toks)


def propose(
    cause: str, delta: Delta, ref: ResourceRef, desired: dict[str, Any], live: dict[str, Any],
    *, alternative: str | None = None, who: str | None = None, allocated: bool = False, shown: bool = True,
    self_heal: bool = False,
) -> Fix:  # fmt: skip
    """The fix of one finding: its action, its rule when the cause warrants one (verified), its better fix and what
    not to do, which never goes against this fix. ``allocated``: Git leaves empty a field the cluster allocates, so
    deleting it from Git is the fix and a rule only a fallback. ``shown=False``: Argo CD's own diff does not show the
    difference, so neither a rule nor another diff mode changes anything: what is left is the better fix in Git, and
    none at all when the live value is one the cluster fills in (a default, a status, an allocated value), which
    never goes into Git. ``self_heal``: the Application already has selfHeal on (the advice says what it does)."""
    fix = _propose(cause, delta, ref, desired, live, alternative)
    if not shown:
        # an allocated field's own better fix already says to delete the empty value from Git
        server_filled = not allocated and (cause == "api-defaulting" or "status" in delta.path)
        fix = Fix(
            action="change-source", alternative=wording.ALTERNATIVE_NOT_SHOWN if server_filled else fix.alternative
        )
    if allocated:
        fix.action = "change-source"
        fix.fallback = fix.rule is not None
    fix.avoid = wording.avoid_for(cause, rule=fix.rule is not None, action=fix.action, who=who, allocated=allocated,
                                  self_heal=self_heal)  # fmt: skip
    return fix


def _propose(
    cause: str, delta: Delta, ref: ResourceRef, desired: dict[str, Any], live: dict[str, Any], alternative: str | None
) -> Fix:
    action, wants_rule, fallback, sync_options = _ACTIONS[cause]
    fix = Fix(action=action, alternative=alternative or ALTERNATIVES[cause])
    if not wants_rule:
        return fix
    scope: dict[str, Any] = {"group": ref.group} if ref.group else {}
    scope.update(kind=ref.kind, name=ref.name)
    if ref.namespace:
        scope["namespace"] = ref.namespace
    tried: set[str] = set()
    # Every candidate starts at the difference's first key and never looks back at the root (no variable, no
    # `..`): evaluated on that part of the live object alone, it selects the same paths, and jq is not handed the
    # whole object (managedFields, status...) for each candidate.
    top = delta.path[0]
    within = {top: live[top]} if isinstance(top, str) and top in live else live
    for paths in _candidates(delta, desired, live, ref.group, ref.kind, fallback):
        if repr(paths) in tried:
            continue
        tried.add(repr(paths))
        rule = {**scope, **paths}
        try:
            live_paths = rule_paths(rule, within)
        except ValueError:
            continue
        hides = sorted({join(p) for p in live_paths})
        verified = verify(rule, delta, desired, live, hides, live_paths=live_paths)
        if verified:
            fix.rule, fix.hides, fix.verified, fix.fallback = rule, verified, True, fallback
            fix.sync_options = list(sync_options)
            fix.caution = _caution(hides, live, ref)
            fix.sync_caveat = _sync_caveat(verified, fix.sync_options, live, ref)
            return fix
    # no rule spares what Git manages: say so, and point at the fix that needs none
    fix.verified = False
    if not fallback:
        fix.action = _NO_RULE_ACTION.get(cause, "change-source")
    return fix
