"""The system-level rule for a fleet-wide drift: the narrowest ``argocd-cm`` customization covering every app of the
group, checked against the desired and live objects of every app the bot knows.

The candidate, in this order (never ``.all``, never a whole section such as ``/spec``):

1. ``managedFieldsManagers: [writer]`` on the group's ``<group>_<Kind>`` key, when the writer is not Argo CD's own
   manager and owns only leaf fields (scalars, never a whole list item, map or atomic list) in every live object of
   the group: it hides what that writer writes and nothing Argo CD writes;
2. else the group's field path (``jsonPointers`` or ``jqPathExpressions``) on the same key, every object of the kind.

The check (:func:`system_rule`) applies the candidate to every object of that group/kind in every known app and
sorts what it hides: the group's own drift, fields beyond it (the fleet blast radius: apps, objects, fields), and
among those the **Git-managed** ones: fields Git renders and Argo CD owns live (for objects without managedFields:
fields Git renders). A rule hiding a Git-managed field is refused, and so is one whose check missed more than
:data:`MAX_UNCHECKED_SHARE` of the apps (an app the bot could not read, or one that drifts and that the bot has not
analysed yet, is left out, and counted).

Pure: objects in, a :class:`SystemRule` out; the refusal says why in words of :mod:`bot.wording.report`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from bot.analysis.fleet import AppObjects, BlastRadius, FleetGroup, SystemRule
from bot.analysis.managedfields import ARGOCD_MANAGERS, child_for_item, entries_of
from bot.analysis.pointer import MISSING, Path, join, resolve, split
from bot.analysis.schema import group_of
from bot.analysis.verify import jq_paths, rule_paths
from bot.wording import report as wording

MAX_UNCHECKED_SHARE = 0.10
FIRST_NAMES = 5
CM_PREFIX = "resource.customizations.ignoreDifferences."

Obj = dict[str, Any]


def cm_key(group: str, kind: str) -> str:
    """``resource.customizations.ignoreDifferences.<group>_<Kind>``; core kinds: ``.<Kind>`` (never ``.all``)."""
    return f"{CM_PREFIX}{group}_{kind}" if group else f"{CM_PREFIX}{kind}"


def _label(kind: str, obj: Obj) -> str:
    m = obj.get("metadata") or {}
    ns, name = m.get("namespace") or "", m.get("name") or ""
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"


def _object_id(obj: Obj) -> str:
    m = obj.get("metadata") or {}
    return f"{m['namespace']}/{m.get('name')}" if m.get("namespace") else str(m.get("name"))


def _of_kind(obj: Obj | None, group: str, kind: str) -> bool:
    return obj is not None and obj.get("kind") == kind and group_of(str(obj.get("apiVersion") or "")) == group


def owned_leaves(fields: Mapping[str, Any], live: Any, path: Path = ()) -> Iterator[tuple[Path, bool]]:
    """Each field a FieldsV1 tree owns in ``live``: (path, is a leaf). A node owned with ``.`` (a list item, a map
    as such) or a ``{}`` over a map or list (atomic) is not a leaf."""
    for name, child in fields.items():
        if name == ".":
            continue
        node = child if isinstance(child, dict) else {}
        if name.startswith("f:"):
            key = name[2:]
            value = live.get(key) if isinstance(live, dict) else None
            sub: Path = (*path, key)
        elif isinstance(live, list):
            found = [(i, v) for i, v in enumerate(live) if child_for_item({name: node}, v, i) is not None]
            if not found:
                continue
            idx, value = found[0]
            sub = (*path, idx)
        else:
            continue
        if "." in node:
            yield sub, False  # the list item or the map as such
        if not set(node) - {"."}:
            if "." not in node:
                yield sub, not isinstance(value, dict | list)  # a {} over a map or list owns it whole (atomic)
            continue
        yield from owned_leaves(node, value, sub)


def _manager_paths(live: Obj | None, manager: str) -> list[tuple[Path, bool]]:
    out: list[tuple[Path, bool]] = []
    for e in entries_of(live or {}) or []:
        if e.manager == manager:
            out.extend(owned_leaves(e.fields, live))
    return out


def _argocd_owns(live: Obj | None, path: Path) -> bool:
    for e in entries_of(live or {}) or []:
        if e.manager in ARGOCD_MANAGERS and any(p == path for p, _ in owned_leaves(e.fields, live)):
            return True
    return False


def _pattern_paths(pattern: str, obj: Obj) -> list[Path]:
    """The paths of ``obj`` a pointer with ``*`` for list indices (a finding without a rule) stands for."""
    want = split(pattern)
    found: list[Path] = []

    def walk(cur: Any, depth: int, path: Path) -> None:
        if depth == len(want):
            found.append(path)
            return
        tok = want[depth]
        if isinstance(cur, list) and tok == "*":
            for i, v in enumerate(cur):
                walk(v, depth + 1, (*path, i))
        elif isinstance(cur, dict) and tok in cur:
            walk(cur[tok], depth + 1, (*path, tok))

    walk(obj, 0, ())
    return found


def path_rule(path: str) -> dict[str, list[str]]:
    return {"jqPathExpressions": [path]} if path.startswith(".") else {"jsonPointers": [path]}


def paths_of(path: str, obj: Obj) -> list[Path]:
    """Where the group's normalised path is in ``obj``."""
    if path.startswith("."):
        try:
            return jq_paths(path, obj)
        except ValueError:
            return []
    if "*" in path:
        return _pattern_paths(path, obj)
    return rule_paths({"jsonPointers": [path]}, obj)


def whole_section(path: str) -> bool:
    """A path naming a top-level section (``/spec``, ``.data``) or the object itself."""
    if path.startswith("."):
        return "|" not in path and "[" not in path and path.count(".") <= 1
    return len(split(path)) <= 1


def _hidden(rule: dict[str, list[str]], desired: Obj | None, live: Obj | None) -> set[Path]:
    managers = rule.get("managedFieldsManagers")
    if managers:
        return {p for m in managers for p, _ in _manager_paths(live, m)}
    out: set[Path] = set()
    for obj in (desired, live):
        if obj is not None:
            out |= {tuple(p) for p in rule_paths(rule, obj)}
    return out


def _git_managed(path: Path, desired: Obj | None, live: Obj | None) -> bool:
    if desired is None:
        return False
    if resolve(desired, path) is MISSING:
        return False  # Git does not render it
    if live is not None and entries_of(live) is not None:
        return _argocd_owns(live, path)
    return True


def _first(names: Sequence[str]) -> str:
    shown = ", ".join(names[:FIRST_NAMES])
    return shown + (wording.AND_MORE.format(count=len(names) - FIRST_NAMES) if len(names) > FIRST_NAMES else "")


def system_rule(group: FleetGroup, known: Mapping[str, AppObjects]) -> SystemRule:
    """The group's system-level rule, its blast radius over ``known`` (every app the bot knows), and whether it
    may be offered."""
    check = SystemRuleCheck(group)
    for app, objs in known.items():
        check.add(app, objs)
    return check.result()


_Hidden = tuple[str, tuple[tuple[str, bool], ...]]
"""An object where a rule hides more than the drift: its label, and each such path with whether Git manages it."""


class SystemRuleCheck:
    """:func:`system_rule` fed one app at a time, in any order, each app's objects walked once: a fleet's kept objects
    are read in batches and never held all at once (a storm's thousand apps). Both candidates (the writer's fields,
    the field path) are measured on every object, since the first is chosen only once every app of the group was
    seen (its writer must own only leaves in all of them); what each would hide beyond the drift is kept per app."""

    def __init__(self, group: FleetGroup) -> None:
        self.group = group
        self._members = set(group.objects)
        self._rules = [path_rule(group.path)]
        if group.writer not in ARGOCD_MANAGERS:
            self._rules.append({"managedFieldsManagers": [group.writer]})
        # per rule, per app: each object where it hides more than the drift, with those paths and whether Git manages
        # each (the texts of the radius are made only for the rule chosen, in result(); a path's text is shared)
        self._beyond: list[dict[str, list[_Hidden]]] = [{} for _ in self._rules]
        self._texts: dict[str, str] = {}
        self._owns_leaf = self._owns_whole = False
        self._apps = 0
        self._unchecked: list[str] = []
        self._pending: list[str] = []

    def add(self, app: str, objs: AppObjects) -> None:
        g = self.group
        self._apps += 1
        if objs.pending:
            self._pending.append(app)
        elif objs.pairs is None:
            self._unchecked.append(app)
        if objs.pairs is None:
            return
        for desired, live in objs.pairs:  # `for`, not truthiness: a stored app's pairs are decoded at each use
            obj = live if live is not None else desired
            if obj is None or not _of_kind(obj, g.group, g.kind):
                continue
            member = (app, _object_id(obj)) in self._members
            if member and live is not None and len(self._rules) > 1:
                for _, leaf in _manager_paths(live, g.writer):
                    self._owns_leaf, self._owns_whole = True, self._owns_whole or not leaf
            drift = set(paths_of(g.path, live or {})) | set(paths_of(g.path, desired or {})) if member else set()
            for rule, beyond_of in zip(self._rules, self._beyond, strict=True):
                beyond = sorted(_hidden(rule, desired, live) - drift, key=lambda p: join(p))
                if beyond:
                    paths = tuple((self._text(join(p)), _git_managed(p, desired, live)) for p in beyond)
                    beyond_of.setdefault(app, []).append((_label(g.kind, obj), paths))

    def _text(self, text: str) -> str:
        return self._texts.setdefault(text, text)

    def _chosen(self) -> int:
        """The narrowest rule for the group: its writer's fields (when it owns only leaves in every object of the
        group), else its field path (see the module docstring)."""
        return 1 if len(self._rules) > 1 and self._owns_leaf and not self._owns_whole else 0

    def result(self) -> SystemRule:
        group, chosen = self.group, self._chosen()
        rule, beyond_of = self._rules[chosen], self._beyond[chosen]
        objects: list[str] = []
        fields: list[str] = []
        git: list[str] = []
        for app in sorted(beyond_of):
            for obj, paths in beyond_of[app]:
                label = f"{app}: {obj}"
                objects.append(label)
                for path, git_managed in paths:
                    fields.append(f"{label} {path}")
                    if git_managed:
                        git.append(f"{label} {path}")
        unchecked, pending, total = sorted(self._unchecked), sorted(self._pending), self._apps
        radius = BlastRadius(covered=group.apps, apps=tuple(sorted(beyond_of)), objects=tuple(objects),
                             fields=tuple(fields), git_managed=tuple(git),
                             checked=total - len(unchecked) - len(pending), unchecked=tuple(unchecked),
                             pending=tuple(pending))  # fmt: skip
        refusal = None
        if whole_section(group.path) and "managedFieldsManagers" not in rule:
            refusal = wording.SYSTEM_RULE_WHOLE_SECTION.format(path=group.path)
        elif git:
            refusal = wording.SYSTEM_RULE_HIDES_GIT.format(count=wording.plural(wording.GIT_MANAGED_FIELDS, len(git)),
                                                           fields=_first(git))  # fmt: skip
        elif total and len(unchecked) + len(pending) > MAX_UNCHECKED_SHARE * total:
            if len(pending) > len(unchecked):
                refusal = wording.SYSTEM_RULE_PENDING.format(count=len(pending), total=total, apps=_first(pending))
            else:
                refusal = wording.SYSTEM_RULE_UNCHECKED.format(count=len(unchecked), total=total,
                                                               apps=_first(unchecked))  # fmt: skip
        return SystemRule(group=group, key=cm_key(group.group, group.kind), value=rule, radius=radius,
                          refusal=refusal)  # fmt: skip
