"""What the cause rules read about one differing field, and what they return.

:class:`ObjectInputs` is everything known about one drifted object;
:class:`FieldFacts` adds, for one difference, its owners and the owner a verdict
names; :class:`Verdict` is a rule's answer. Built once per difference, never
changed, shared by ``causes`` (the order of the rules) and ``writers`` (the
rules that read the owner).

Guarantees: pure; evidence lines never contain field values (Secrets).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bot.analysis.context import ContextIndex, annotations_of
from bot.analysis.diff import Delta
from bot.analysis.managedfields import Entry, owners
from bot.analysis.pointer import MISSING
from bot.model import Cause, Confidence, ObjectRef, ResourceRef, Writer

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass
class ObjectInputs:
    """Everything known about one drifted object."""

    ref: ResourceRef
    desired: dict[str, Any]
    live: dict[str, Any]
    entries: list[Entry] | None
    app: str | None
    index: ContextIndex
    again: dict[str, Any] | None = None
    again_given: bool = False
    synced_same_revision: bool = False
    """Argo CD's last sync applied the revision it renders now (bot mode: from the Application)."""
    render_wanted: bool = False
    """Set by the cause rules when no second render was given and one could decide a difference of this object
    (only Argo CD, or nobody, owns it, and no earlier rule explained it)."""

    def crd(self) -> dict[str, Any] | None:
        """The object's CustomResourceDefinition, when the inputs hold it."""
        return self.index.crds.get((self.ref.group, self.ref.kind))

    def last_applied(self) -> dict[str, Any] | None:
        """What the last client-side apply sent (``kubectl.kubernetes.io/last-applied-configuration``), if parsable."""
        text = annotations_of(self.live).get(LAST_APPLIED)
        try:
            value = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass
class Verdict:
    cause: Cause
    confidence: Confidence
    writer: Writer
    reason: str
    evidence: list[str] = field(default_factory=list)
    alternative: str | None = None
    """The better fix when this situation has its own (else the cause's, ``ALTERNATIVES``)."""
    who: str | None = None
    """Who stores the value in its own form or fills it in, when not the API server (a custom resource's webhook)."""
    allocated: bool = False
    """Git leaves empty a field the cluster allocates (clusterIP, nodePort, volumeName): delete it from Git."""
    server_side_diff_hides: bool = False
    """Argo CD's server-side diff would not show this difference: its dry-run apply includes the API server's
    defaulting, canonical forms and the webhooks' mutations."""


def entry_text(e: Entry) -> str:
    sub = f", subresource {e.subresource}" if e.subresource else ""
    return f"managedFields: {e.manager} ({e.operation or '?'}{sub}) at {e.time or 'unknown time'} owns this field"


@dataclass(frozen=True)
class FieldFacts:
    """Everything the rules read about one differing field; built once by :meth:`of`, never changed."""

    delta: Delta
    """The difference: where (pointer, live and desired path) and the two values."""
    obj: ObjectInputs
    """The object it is in: desired and live, managedFields, Application, context, second render."""
    owners: tuple[Entry, ...]
    """Every managedFields entry owning the field (none when the object has no managedFields)."""
    others: tuple[Entry, ...]
    """The owners other than Argo CD, the latest first."""
    chosen: Entry | None
    """The owner a verdict names: the latest owner other than Argo CD, else Argo CD, else nobody."""
    evidence: tuple[str, ...]
    """One line per owner, the evidence every verdict starts from."""

    @classmethod
    def of(cls, delta: Delta, obj: ObjectInputs) -> FieldFacts:
        found = owners(obj.entries, obj.live, delta.path) if obj.entries is not None else []
        others = sorted((e for e in found if not e.is_argocd), key=lambda e: e.time or "", reverse=True)
        argo = [e for e in found if e.is_argocd]
        chosen = others[0] if others else (argo[0] if argo else None)
        return cls(delta, obj, tuple(found), tuple(others), chosen, tuple(entry_text(e) for e in found))

    @property
    def added_item(self) -> bool:
        """The difference is a whole item live has and Git does not render (in a list compared by position)."""
        return self.delta.desired is MISSING and bool(self.delta.path) and isinstance(self.delta.path[-1], int)

    def writer(self, obj: ObjectRef | None = None) -> Writer:
        """The chosen owner as the writer (with ``obj``, the object that explains it), the others as co-owners."""
        chosen = self.chosen
        co = tuple(sorted({e.manager for e in self.owners if chosen is None or e.manager != chosen.manager}))
        if chosen is None:
            return Writer(object=obj, co_owners=co)
        return Writer(chosen.manager, chosen.operation, chosen.subresource, chosen.time, obj, co)
