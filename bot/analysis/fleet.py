"""Findings across the fleet: the small keyed record of one finding, and the grouping of the same drift in many apps.

A :class:`FleetFinding` is what the fleet index keeps of a finding (not the report): the resource's group and kind,
the field path normalised so that the same field of two apps compares equal (list items by the key or selector of
the finding's rule, never by a live index, which differs from app to app), the writer (its field manager, never its
object: the HPA of each app has another name, its controller the same manager), the cause and the object.

:func:`group_findings` puts together the findings that share group/kind, path and writer; a group is fleet-wide
when at least ``min_apps`` apps have it. Guarantees: pure, deterministic (apps and objects sorted, fleet-wide groups
first, then by number of apps), linear in the number of findings.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from bot.model import Finding, Report

_INDEX = re.compile(r"(?<=/)\d+(?=/|$)")
FLEET_MIN_APPS_DEFAULT = 3


class FleetFinding(NamedTuple):
    """One finding of one app, as the fleet index keeps it (a tuple: cheap to build by the ten thousand)."""

    group: str
    kind: str
    path: str
    """Normalised: the rule's jq expression (list items by key or selector), its JSON pointer, else the finding's
    pointer with list indices written ``*``."""
    writer: str
    cause: str
    object: str
    """``namespace/name`` (``name`` when cluster-scoped)."""

    @property
    def signature(self) -> tuple[str, str, str, str]:
        return (self.group, self.kind, self.path, self.writer)

    @property
    def sig_id(self) -> str:
        """A short stable id of :attr:`signature` (a Redis key part)."""
        return signature_id(self.signature)

    def to_list(self) -> list[str]:
        return [self.group, self.kind, self.path, self.writer, self.cause, self.object]

    @classmethod
    def from_list(cls, raw: Sequence[Any]) -> FleetFinding | None:
        """The inverse of :meth:`to_list`; ``None`` for anything else (the index is read defensively)."""
        if len(raw) != 6 or not all(type(v) is str for v in raw):
            return None
        return cls._make(raw)


def signature_id(sig: tuple[str, str, str, str]) -> str:
    return hashlib.sha256("\x00".join(sig).encode()).hexdigest()[:16]


def normalised_path(f: Finding) -> str:
    rule = f.fix.rule or {}
    for key in ("jqPathExpressions", "jsonPointers"):
        values = rule.get(key)
        if isinstance(values, list) and len(values) == 1 and isinstance(values[0], str):
            return values[0]
    return _INDEX.sub("*", f.pointer)


def writer_of(f: Finding) -> str:
    w = f.writer
    if w.manager:
        return w.manager
    return f"{w.object.kind}/{w.object.name}" if w.object is not None else "nobody"


def records_of(report: Report) -> list[FleetFinding]:
    """The fleet records of a report's findings, one per distinct (signature, object)."""
    seen: dict[tuple[str, ...], FleetFinding] = {}
    for f in report.findings:
        r = f.resource
        obj = f"{r.namespace}/{r.name}" if r.namespace else r.name
        rec = FleetFinding(r.group, r.kind, normalised_path(f), writer_of(f), f.cause, obj)
        seen.setdefault((*rec.signature, obj), rec)
    return list(seen.values())


@dataclass(frozen=True)
class FleetGroup:
    """The same field written by the same writer on the same kind, in one or more apps."""

    group: str
    kind: str
    path: str
    writer: str
    cause: str
    """The cause most of its findings have."""
    apps: tuple[str, ...]
    objects: tuple[tuple[str, str], ...]
    """(app, object) of every finding of the group."""
    fleet_wide: bool

    @property
    def signature(self) -> tuple[str, str, str, str]:
        return (self.group, self.kind, self.path, self.writer)

    @property
    def sig_id(self) -> str:
        return signature_id(self.signature)

    @property
    def group_kind(self) -> str:
        """``apps/Deployment``, ``ConfigMap`` for the core group."""
        return f"{self.group}/{self.kind}" if self.group else self.kind


def group_findings(by_app: Mapping[str, Iterable[FleetFinding]], min_apps: int) -> list[FleetGroup]:
    """Every group of the fleet's findings, fleet-wide ones (``>= min_apps`` apps) first, then most apps first."""
    # one dict lookup per finding (signature -> apps, (app, object) pairs, causes): grouping the whole index is
    # on the path of every /argo drift and fleet line
    # Apps in order, so that each group's apps come sorted (an app is added once: when it is not the last one added)
    # and its objects nearly so (sorting them is then a pass over runs already in order).
    found: dict[tuple[str, str, str, str], tuple[list[str], list[tuple[str, str]], list[str]]] = {}
    get = found.get
    for app in sorted(by_app):
        for group, kind, path, writer, cause, obj in by_app[app]:
            sig = (group, kind, path, writer)  # rec.signature, without the property's call
            acc = get(sig)
            if acc is None:
                found[sig] = ([app], [(app, obj)], [cause])
                continue
            members, objects, causes = acc
            if members[-1] != app:  # apps come in order: an app already counted is the last one
                members.append(app)
            objects.append((app, obj))
            causes.append(cause)
    out = []
    for key, (members, objects, causes) in found.items():
        first = causes[0]
        if causes.count(first) == len(causes):  # one cause (most groups): no tally
            cause = first
        else:
            cause = max(sorted(Counter(causes).items()), key=lambda kv: kv[1])[0]
        objects.sort()
        out.append(FleetGroup(*key, cause=cause, apps=tuple(members), objects=tuple(objects),
                              fleet_wide=len(members) >= min_apps))  # fmt: skip
    out.sort(key=lambda g: (not g.fleet_wide, -len(g.apps), g.signature))
    return out


@dataclass(frozen=True)
class AppObjects:
    """What the bot could read of one app: (desired, live) of each of its resources (``None``: that side is absent).
    ``pairs`` is ``None`` when the app could not be read at all, or was not read (``pending``)."""

    pairs: Sequence[tuple[dict[str, Any] | None, dict[str, Any] | None]] | None
    pending: bool = False
    """Not read on purpose: the app drifts and its analysis (which keeps its objects) is still to come."""


@dataclass(frozen=True)
class BlastRadius:
    covered: tuple[str, ...]
    """The apps of the group (the drift the rule is for)."""
    apps: tuple[str, ...]
    """Apps where the rule hides something beyond the drift."""
    objects: tuple[str, ...]
    """``app: Kind ns/name`` of each object where it hides something beyond the drift."""
    fields: tuple[str, ...]
    """``app: Kind ns/name /pointer`` of each field it hides beyond the drift."""
    git_managed: tuple[str, ...]
    """The fields among ``fields`` that Git manages."""
    checked: int
    unchecked: tuple[str, ...]
    """The apps that could not be read (left out of the check)."""
    pending: tuple[str, ...] = ()
    """The apps that drift and are not analysed yet (left out of the check, until their analysis)."""


@dataclass(frozen=True)
class SystemRule:
    group: FleetGroup
    key: str
    """The ``argocd-cm`` key, ``resource.customizations.ignoreDifferences.apps_Deployment``."""
    value: dict[str, list[str]]
    """The rule under that key: ``managedFieldsManagers``, ``jsonPointers`` or ``jqPathExpressions``."""
    radius: BlastRadius
    refusal: str | None
    """Why it is not offered (``None``: offered)."""

    @property
    def offered(self) -> bool:
        return self.refusal is None
