"""Decide the cause of one difference, in the order the casebook applies the rules.

1. shared-resource: the live tracking names another Application;
2. normalization: equal after canonicalisation;
3. api-defaulting: Git leaves the field unset and only Argo CD (or nobody) wrote it,
   a known API default or a value filled into a list compared as a whole;
4. nondeterministic-render: two renders of the same revision disagree and Argo CD
   wrote the live value;
5. by the owner: no managedFields at all -> unknown; nobody -> mutating webhook;
   Argo CD -> mutating webhook when one intercepts updates of the object, else
   unknown; replicas with a scaler -> autoscaler; a person's tool -> manual edit;
   Flux and other GitOps tools -> other-gitops; any other named controller -> operator.

Every rule reads one :class:`FieldFacts` (the difference, its object, its owners
and the owner a verdict names), built once per difference.

Guarantees: pure; never returns a cause outside the contract vocabulary; the
``reason`` and ``evidence`` strings never contain field values (Secrets).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.analysis import schema
from bot.analysis.canonical import deep_equal, equivalent, is_empty
from bot.analysis.context import (
    TRACKING_ANNOTATION,
    ContextIndex,
    annotations_of,
    labels_of,
    same_app,
    tracked_app,
)
from bot.analysis.diff import Delta
from bot.analysis.managedfields import ARGOCD_MANAGERS, SYNTHETIC_MANAGERS, Entry, owners
from bot.analysis.pointer import MISSING, resolve
from bot.model import Cause, Confidence, ObjectRef, ResourceRef, Writer

_HUMAN_MANAGERS = frozenset({"Mozilla", "k9s", "argocd-server", "Lens", "OpenLens", "headlamp", "kubernetes-dashboard"})
_GITOPS_MANAGERS = {
    "kustomize-controller": "Flux (kustomize-controller)",
    "helm-controller": "Flux (helm-controller)",
    "fleet-agent": "Rancher Fleet",
    "kapp": "kapp",
    "kapp-controller": "kapp-controller",
    "pulumi-kubernetes": "Pulumi",
    "helm": "Helm (CLI or a pipeline)",
}
_FLUX_LABELS = (
    ("kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace", "Kustomization"),
    ("helm.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/namespace", "HelmRelease"),
)


def is_human(manager: str) -> bool:
    """kubectl in all its forms (``kubectl``, ``kubectl-edit``, ``kubectl.exe``), web consoles, k9s, Argo CD's UI."""
    return manager in _HUMAN_MANAGERS or manager.startswith("kubectl")


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


@dataclass
class Verdict:
    cause: Cause
    confidence: Confidence
    writer: Writer
    reason: str
    evidence: list[str] = field(default_factory=list)


def _entry_text(e: Entry) -> str:
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
        return cls(delta, obj, tuple(found), tuple(others), chosen, tuple(_entry_text(e) for e in found))

    def writer(self, obj: ObjectRef | None = None) -> Writer:
        """The chosen owner as the writer (with ``obj``, the object that explains it), the others as co-owners."""
        chosen = self.chosen
        co = tuple(sorted({e.manager for e in self.owners if chosen is None or e.manager != chosen.manager}))
        if chosen is None:
            return Writer(object=obj, co_owners=co)
        return Writer(chosen.manager, chosen.operation, chosen.subresource, chosen.time, obj, co)


def decide(delta: Delta, inp: ObjectInputs) -> Verdict:
    facts = FieldFacts.of(delta, inp)
    for rule in _BEFORE_OWNER:
        verdict = rule(facts)
        if verdict is not None:
            return verdict
    return _by_owner(facts)


def _shared(f: FieldFacts) -> Verdict | None:
    inp = f.obj
    if not inp.app:
        return None
    desired_has_annotation = TRACKING_ANNOTATION in annotations_of(inp.desired)
    live_app, mode = tracked_app(inp.live)
    if live_app is None:
        return None
    if desired_has_annotation and mode != "annotation":
        return None
    if not desired_has_annotation and (mode != "label" or tracked_app(inp.desired)[1] != "label"):
        return None
    if same_app(live_app, inp.app):
        return None
    app_obj = inp.index.applications.get(live_app)
    ref = ObjectRef("Application", live_app, (app_obj or {}).get("metadata", {}).get("namespace")) if app_obj else None
    how = "tracking annotation" if mode == "annotation" else f"{'app.kubernetes.io/instance'} label"
    return Verdict(
        "shared-resource",
        "confirmed",
        f.writer(ref),
        f"Application {live_app} also applies this object and synced it last",
        [f"the live {how} names Application {live_app}, not {inp.app}", *f.evidence],
    )


def _normalization(f: FieldFacts) -> Verdict | None:
    why = equivalent(f.delta.desired, f.delta.live, f.delta.path)
    if why is None:
        return None
    return Verdict("normalization", "confirmed", f.writer(), why, list(f.evidence))


def _defaulting(f: FieldFacts) -> Verdict | None:
    delta, ref = f.delta, f.obj.ref
    if not (delta.desired is MISSING or is_empty(delta.desired)) or delta.live is MISSING or f.others:
        return None
    defaults = schema.known_defaults(ref.kind, delta.pointer)
    if defaults:
        pattern, _value, mechanism = defaults[0]
        return Verdict(
            "api-defaulting",
            "confirmed",
            f.writer(),
            f"the API server fills {pattern} ({mechanism}) when the manifest leaves it out",
            [f"known API default: {ref.kind} {pattern}", *f.evidence],
        )
    if delta.atomic_root is not None:
        crd = not schema.is_known(ref.group, ref.kind)
        source = "the CRD's schema defaults" if crd else "API server defaulting"
        return Verdict(
            "api-defaulting",
            "likely",
            f.writer(),
            f"{source} filled this into a list that is compared as a whole; no other writer touched it",
            list(f.evidence),
        )
    return None


def _nondeterministic(f: FieldFacts) -> Verdict | None:
    delta, inp = f.delta, f.obj
    if not inp.again_given or inp.again is None or f.others:
        return None
    again_value = resolve(inp.again, delta.desired_path)
    argo_owns = any(e.is_argocd for e in f.owners)
    if _argocd_mask(again_value) and _argocd_mask(delta.desired):
        # Argo CD masks Secret values ("++++"), so two renders cannot be compared. But if Argo CD wrote the
        # live value while applying this very revision, and renders something else now, the render changed.
        if inp.synced_same_revision and argo_owns and _argocd_mask(delta.live):
            return Verdict("nondeterministic-render", "likely", f.writer(),
                           "Argo CD applied this same revision at its last sync and wrote another value than it "
                           "renders now (Secret values are masked, so the renders themselves cannot be compared)",
                           list(f.evidence))  # fmt: skip
        return None
    if deep_equal(again_value, delta.desired):
        return None
    if not argo_owns and inp.entries is not None and f.owners:
        return None
    confidence: Confidence = "confirmed" if argo_owns else "likely"
    return Verdict(
        "nondeterministic-render",
        confidence,
        f.writer(),
        "two renders of the same revision give different values, and Argo CD wrote the live one",
        ["--desired and --desired-again differ at this field", *f.evidence],
    )


_BEFORE_OWNER: tuple[Callable[[FieldFacts], Verdict | None], ...] = (
    _shared,
    _normalization,
    _defaulting,
    _nondeterministic,
)
"""Steps 1 to 4 of the module docstring, tried in this order; the first verdict wins, else the owner decides."""


def _by_owner(f: FieldFacts) -> Verdict:
    """Step 5: no managedFields at all, nobody, only Argo CD, or another writer."""
    if f.obj.entries is None:
        return Verdict(
            "unknown",
            "possible",
            Writer(),
            "the live object carries no managedFields, so nobody can be named",
            list(f.evidence),
        )
    if not f.owners:
        return _unowned(f)
    if not f.others:
        return _argocd_owned(f)
    return _other_owner(f)


def _unowned(f: FieldFacts) -> Verdict:
    """No entry owns the field: a webhook's own edit (ownership is recorded before mutating admission)."""
    ev = list(f.evidence)
    hooks = f.obj.index.webhooks_for(f.obj.live)
    if hooks:
        h = hooks[0]
        return Verdict(
            "mutating-webhook",
            "confirmed" if h.certain else "likely",
            Writer(object=h.configuration),
            f"no field manager owns it, and webhook {h.webhook} of {h.configuration.label} "
            f"intercepts {'/'.join(h.operations)} of this object",
            [f"{h.configuration.label}: webhook {h.webhook} matches", *ev],
        )
    if f.delta.live is MISSING:
        return Verdict("unknown", "possible", Writer(), "the field is absent live and no manager explains why", ev)
    return Verdict(
        "mutating-webhook",
        "likely",
        Writer(),
        "no field manager owns the live value: admission webhooks change objects without recording ownership",
        ev,
    )


def _argocd_owned(f: FieldFacts) -> Verdict:
    """Only Argo CD owns the field: a webhook rewrote what it sent, or nothing shows another writer."""
    hooks = [h for h in f.obj.index.webhooks_for(f.obj.live) if "UPDATE" in h.operations]
    if hooks:
        h = hooks[0]
        return Verdict(
            "mutating-webhook",
            "confirmed" if h.certain else "likely",
            f.writer(h.configuration),
            f"Argo CD sent its value (so it owns the field), and webhook {h.webhook} of "
            f"{h.configuration.label} rewrote it on admission",
            [f"{h.configuration.label}: webhook {h.webhook} matches UPDATE", *f.evidence],
        )
    return Verdict(
        "unknown",
        "possible",
        f.writer(),
        "Argo CD itself wrote the live value (a rollback, an older revision or a manual sync); "
        "nothing in the inputs shows another writer",
        list(f.evidence),
    )


def _other_owner(f: FieldFacts) -> Verdict:
    """Another manager wrote the field last: a scaler, a person, a placeholder, another GitOps tool, an operator."""
    chosen, live, ev = f.chosen, f.obj.live, list(f.evidence)
    assert chosen is not None
    m = chosen.manager
    scaler = f.obj.index.scaler_for(live)
    if f.delta.path == ("spec", "replicas") and (
        scaler is not None or (m == "kube-controller-manager" and chosen.subresource == "scale")
    ):
        via = " through the scale subresource" if chosen.subresource == "scale" else ""
        what = scaler.label if scaler else "an autoscaler"
        return Verdict(
            "autoscaler",
            "confirmed" if scaler else "likely",
            f.writer(scaler),
            f"{what} sets the replica count ({m}{via})",
            ([f"{scaler.label} targets this object"] if scaler else []) + ev,
        )
    if is_human(m):
        return Verdict("manual-edit", "confirmed", f.writer(), f"a person changed it with {m}", ev)
    if m in SYNTHETIC_MANAGERS:
        return Verdict(
            "unknown",
            "possible",
            f.writer(),
            f"the owner is the API server's placeholder entry {m}; the real writer is lost",
            ev,
        )
    if m in _GITOPS_MANAGERS:
        return Verdict(
            "other-gitops",
            "confirmed",
            f.writer(_flux_object(live)),
            f"{_GITOPS_MANAGERS[m]} applies this object too",
            ev,
        )
    ctrl = f.obj.index.controller_for(live)
    return Verdict(
        "operator",
        "confirmed",
        f.writer(ctrl),
        f"the controller {m} writes this field" + (f" on behalf of {ctrl.label}" if ctrl else ""),
        ev,
    )


def _argocd_mask(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and set(value) == {"+"}


def _flux_object(live: dict[str, Any]) -> ObjectRef | None:
    labels = labels_of(live)
    for name_label, ns_label, kind in _FLUX_LABELS:
        if labels.get(name_label):
            return ObjectRef(kind, labels[name_label], labels.get(ns_label))
    return None


__all__ = ["ARGOCD_MANAGERS", "FieldFacts", "ObjectInputs", "Verdict", "decide", "is_human"]
