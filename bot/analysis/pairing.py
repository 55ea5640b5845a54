"""Which live object is the counterpart of each desired object.

Objects are matched by API group, kind, namespace and name. Real inputs are not
always complete, and these shapes are matched too, each only when the match is
unique on both sides (one desired object and one live object fit):

* a namespace missing on one side: Argo CD fills in the destination namespace
  when a manifest leaves it out, and a pasted live object may lack it;
* a live object pasted without ``apiVersion`` (issue and UI pastes often start
  at ``kind:``): matched by kind, namespace and name; its group and version are
  taken from its managedFields when every entry names the same one, and a group
  that disagrees with the desired object's is no match;
* a live object pasted without ``kind`` either (from ``metadata:`` on): matched
  by namespace and name, with the same managedFields check.

A live object matched that way is completed (a copy with the ``apiVersion`` and
``kind`` it was matched with, and the desired object's namespace when it has none)
so that everything downstream sees a whole object: the rule is scoped to that
namespace, the heading names it, and the context of that namespace (its HPA) is found.

:func:`looks_swapped` tells desired and live objects given the wrong way round:
the "desired" side carries what only the API server writes, the "live" side none of it.

Guarantees: pure; a pasted (incomplete) live object is the counterpart of at
most one desired object; the order of the desired objects is kept.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from bot.analysis.context import cluster_scoped, meta
from bot.analysis.schema import group_of

Obj = dict[str, Any]


def managed_api_version(obj: Obj) -> str | None:
    """The apiVersion every managedFields entry of ``obj`` was written with, when they all agree."""
    entries = meta(obj).get("managedFields")
    versions = {e.get("apiVersion") for e in entries or () if isinstance(e, dict) and e.get("apiVersion")}
    return str(versions.pop()) if len(versions) == 1 else None


Ident = tuple[str, str, str, str]


def identity(obj: Obj) -> Ident:
    """API group, kind, namespace and name, as strings (empty when absent): how objects are matched."""
    m = meta(obj)
    api = str(obj.get("apiVersion") or "")
    return group_of(api), str(obj.get("kind") or ""), str(m.get("namespace") or ""), str(m.get("name") or "")


class _Live:
    """The live objects, indexed for the ways they can be matched; each one is handed out once."""

    def __init__(self, live: Sequence[Obj], idents: Sequence[Ident] | None = None) -> None:
        self.full: dict[tuple[str, str, str, str], int] = {}
        self.by_name: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        self.loose: dict[str, list[int]] = defaultdict(list)
        self.objs = list(live)
        self.used: set[int] = set()
        for i, obj in enumerate(self.objs):
            group, kind, ns, name = idents[i] if idents is not None else identity(obj)
            if obj.get("apiVersion") and kind:
                self.full.setdefault((group, kind, ns, name), i)
                self.by_name[(group, kind, name)].append(i)
            else:
                self.loose[name].append(i)

    def take(self, i: int | None) -> int | None:
        if i is None or i in self.used:
            return None
        self.used.add(i)
        return i

    def exact(self, group: str, kind: str, ns: str, name: str) -> int | None:
        found = self.full.get((group, kind, ns, name))
        if found is not None or not ns:
            if found is None:  # the manifest leaves the namespace out: any namespace, if only one fits
                found = _only(self.by_name.get((group, kind, name), []))
            return found
        # a live object without a namespace (pasted so) stands for the desired one, if only one fits
        return _only([i for i in self.by_name.get((group, kind, name), []) if not identity(self.objs[i])[2]])

    def pasted(self, desired: Obj, kind_unique: bool, name_unique: bool) -> int | None:
        """A live object without apiVersion (or kind) that can only be ``desired``'s counterpart."""
        group, kind, ns, name = identity(desired)
        fits = []
        for i in self.loose.get(name, []):
            lgroup, lkind, lns, _ = identity(self.objs[i])
            if (lkind and (lkind != kind or not kind_unique)) or (not lkind and not name_unique):
                continue
            if lns and ns and lns != ns:
                continue
            if self.objs[i].get("apiVersion") and lgroup != group:  # an apiVersion without a kind names the group
                continue
            managed = managed_api_version(self.objs[i])
            if managed is not None and group_of(managed) != group:
                continue
            fits.append(i)
        return _only(fits)


def _only(candidates: list[int]) -> int | None:
    return candidates[0] if len(candidates) == 1 else None


def _completed(live: Obj, desired: Obj) -> Obj:
    """``live`` with the apiVersion and kind it was matched with (managedFields' version first), and the desired
    object's namespace when the paste has none."""
    namespace = meta(desired).get("namespace")
    kind = str(live.get("kind") or desired.get("kind") or "")
    add_namespace = bool(namespace) and not meta(live).get("namespace") and not cluster_scoped(kind)
    if live.get("apiVersion") and live.get("kind") and not add_namespace:
        return live
    api = str(live.get("apiVersion") or managed_api_version(live) or desired.get("apiVersion") or "")
    rest = {k: v for k, v in live.items() if k not in ("apiVersion", "kind")}
    if add_namespace:
        fields = list(meta(live).items())
        at = next((i + 1 for i, (k, _) in enumerate(fields) if k == "name"), 0)  # where kubectl prints it
        rest["metadata"] = dict([*fields[:at], ("namespace", namespace), *fields[at:]])
    return {"apiVersion": api, "kind": live.get("kind") or desired.get("kind"), **rest}


SERVER_WRITTEN = ("uid", "resourceVersion", "creationTimestamp", "managedFields")
"""Metadata only the API server writes: every live export has some, rendered manifests none."""


def server_written(obj: Obj) -> bool:
    m = meta(obj)
    return any(m.get(k) for k in SERVER_WRITTEN)


def looks_swapped(desired: Sequence[Obj], live: Sequence[Obj]) -> bool:
    """Whether ``--desired`` and ``--live`` were given the wrong way round: every "desired" object carries metadata
    only the API server writes (uid, resourceVersion, managedFields) and no "live" object does."""
    return bool(desired) and bool(live) and all(map(server_written, desired)) and not any(map(server_written, live))


def pair_objects(
    desired: Sequence[Obj], live: Sequence[Obj], idents: tuple[Sequence[Ident], Sequence[Ident]] | None = None
) -> list[tuple[Obj, Obj | None]]:
    """Each desired object with its live counterpart (completed when it was pasted without apiVersion or kind),
    or ``None`` when it has none. ``idents``: the :func:`identity` of each desired and each live object, when the
    caller has them."""
    index = _Live(live, idents[1] if idents is not None else None)
    idents_d = idents[0] if idents is not None else [identity(d) for d in desired]
    kinds = Counter((kind, ns, name) for _, kind, ns, name in idents_d)
    names = Counter((ns, name) for _, _, ns, name in idents_d)
    out: list[tuple[Obj, Obj | None]] = []
    for dobj, (group, kind, ns, name) in zip(desired, idents_d, strict=True):
        found = index.exact(group, kind, ns, name)
        if found is None and index.loose:
            found = index.take(index.pasted(dobj, kinds[(kind, ns, name)] == 1, names[(ns, name)] == 1))
        out.append((dobj, _completed(index.objs[found], dobj) if found is not None else None))
    return out
