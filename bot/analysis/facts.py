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
from typing import Any, Literal

from bot.analysis.context import ContextIndex, annotations_of
from bot.analysis.diff import Delta
from bot.analysis.managedfields import Entry, owners
from bot.analysis.pointer import MISSING, resolve
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
    git_ahead: bool = False
    """Git's target revision (or revisions, multi-source) is not the one Argo CD last synced (bot mode)."""
    applied: dict[str, Any] | None = None
    """The object as the last synced revision renders it, when Git is ahead and that render was read (bot mode)."""
    render_wanted: bool = False
    """Set by the cause rules when no second render was given and one could decide a difference of this object
    (only Argo CD, or nobody, owns it, and no earlier rule explained it)."""

    def crd(self) -> dict[str, Any] | None:
        """The object's CustomResourceDefinition, when the inputs hold it."""
        return self.index.crds.get((self.ref.group, self.ref.kind))

    def argocd_last_applied(self) -> dict[str, Any] | None:
        """The last-applied-configuration when Argo CD wrote it: a client-side apply by Argo CD's own manager owns
        the annotation (a person's ``kubectl apply`` rewrites it under another manager, server-side apply keeps
        none). ``None`` when it is not Argo CD's or the object has no managedFields."""
        if self.entries is None:
            return None
        writers = owners(self.entries, self.live, ("metadata", "annotations", LAST_APPLIED))
        if writers and not all(e.is_argocd and e.operation == "Update" for e in writers):
            return None  # another manager's kubectl apply rewrote it
        if not writers and not any(e.is_argocd and e.operation == "Update" for e in self.entries):
            return None  # an export without the annotation's owner: only an Argo CD client-side apply vouches for it
        return self.last_applied()

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


@dataclass(frozen=True)
class Sent:
    """What Argo CD last sent at one field (``MISSING``: it sent nothing there), and what shows it."""

    value: Any
    source: Literal["last-applied", "revision", "render"]


_ITEM_KEYS = ("name", "containerPort", "port", "mountPath", "devicePath", "key", "type", "ip", "topologyKey")
"""Fields that tell list items apart in Kubernetes' associative lists (the merge keys), tried in this order."""


def find_like(sent: Any, delta: Delta, live: Any, desired: Any) -> Any:
    """The value at ``delta``'s field of ``sent`` (an older version of the object): items of associative lists
    matched by their merge key against Git's item (or the live one, for an item only live has), so that a list Git
    reordered or extended since never pairs one container's value with another's; atomic lists by position, as they
    are compared."""
    path, desired_path, root = delta.path, delta.desired_path, delta.atomic_root
    cur: Any = sent
    for depth, tok in enumerate(path):
        if not isinstance(tok, int):
            cur = cur.get(tok, MISSING) if isinstance(cur, dict) else MISSING
            continue
        if not isinstance(cur, list):
            return MISSING
        if root is not None and depth >= len(root):
            cur = cur[tok] if 0 <= tok < len(cur) else MISSING
            continue
        item = resolve(desired, desired_path[: depth + 1]) if depth < len(desired_path) else MISSING
        if item is MISSING:
            item = resolve(live, path[: depth + 1])
        key = next((k for k in _ITEM_KEYS if isinstance(item, dict) and k in item), None)
        if key is None:
            cur = cur[tok] if 0 <= tok < len(cur) else MISSING
        else:
            cur = next((c for c in cur if isinstance(c, dict) and c.get(key) == item[key]), MISSING)
        if cur is MISSING:
            return MISSING
    return cur


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

    def sent(self) -> Sent | None:
        """What Argo CD last sent at this field, when something shows it: its own last-applied-configuration (a
        client-side apply), the revision equality of its last sync (it applied what Git renders now), or the render
        of the revision it last synced (Git ahead). ``None`` when nothing does."""
        obj = self.obj
        sent = obj.argocd_last_applied()
        if sent is not None:
            return Sent(find_like(sent, self.delta, obj.live, obj.desired), "last-applied")
        if obj.synced_same_revision:
            return Sent(self.delta.desired, "revision")
        if obj.applied is not None:
            return Sent(find_like(obj.applied, self.delta, obj.live, obj.desired), "render")
        return None

    @property
    def argocd_only(self) -> bool:
        """Argo CD's managers own the field and nobody else does."""
        return bool(self.owners) and not self.others

    def writer(self, obj: ObjectRef | None = None) -> Writer:
        """The chosen owner as the writer (with ``obj``, the object that explains it), the others as co-owners."""
        chosen = self.chosen
        co = tuple(sorted({e.manager for e in self.owners if chosen is None or e.manager != chosen.manager}))
        if chosen is None:
            return Writer(object=obj, co_owners=co)
        return Writer(chosen.manager, chosen.operation, chosen.subresource, chosen.time, obj, co)
