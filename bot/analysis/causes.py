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

Guarantees: pure; never returns a cause outside the contract vocabulary; the
``reason`` and ``evidence`` strings never contain field values (Secrets).
"""

from __future__ import annotations

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


def _writer(chosen: Entry | None, all_owners: list[Entry], obj: ObjectRef | None = None) -> Writer:
    co = tuple(sorted({e.manager for e in all_owners if chosen is None or e.manager != chosen.manager}))
    if chosen is None:
        return Writer(object=obj, co_owners=co)
    return Writer(chosen.manager, chosen.operation, chosen.subresource, chosen.time, obj, co)


def _entry_text(e: Entry) -> str:
    sub = f", subresource {e.subresource}" if e.subresource else ""
    return f"managedFields: {e.manager} ({e.operation or '?'}{sub}) at {e.time or 'unknown time'} owns this field"


def decide(delta: Delta, inp: ObjectInputs) -> Verdict:
    found = owners(inp.entries, inp.live, delta.path) if inp.entries is not None else []
    others = sorted((e for e in found if not e.is_argocd), key=lambda e: e.time or "", reverse=True)
    argo = [e for e in found if e.is_argocd]
    chosen = others[0] if others else (argo[0] if argo else None)
    evidence = [_entry_text(e) for e in found]

    v = (
        _shared(delta, inp, chosen, found, evidence)
        or _normalization(delta, chosen, found, evidence)
        or _defaulting(delta, inp, others, chosen, found, evidence)
        or _nondeterministic(delta, inp, others, chosen, found, evidence)
    )
    return v or _by_owner(delta, inp, others, argo, chosen, found, evidence)


def _shared(delta: Delta, inp: ObjectInputs, chosen: Entry | None, found: list[Entry], ev: list[str]) -> Verdict | None:
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
    ev = [f"the live {how} names Application {live_app}, not {inp.app}", *ev]
    return Verdict(
        "shared-resource",
        "confirmed",
        _writer(chosen, found, ref),
        f"Application {live_app} also applies this object and synced it last",
        ev,
    )


def _normalization(delta: Delta, chosen: Entry | None, found: list[Entry], ev: list[str]) -> Verdict | None:
    why = equivalent(delta.desired, delta.live, delta.path)
    if why is None:
        return None
    return Verdict("normalization", "confirmed", _writer(chosen, found), why, ev)


def _defaulting(
    delta: Delta,
    inp: ObjectInputs,
    others: list[Entry],
    chosen: Entry | None,
    found: list[Entry],
    ev: list[str],
) -> Verdict | None:
    if not (delta.desired is MISSING or is_empty(delta.desired)) or delta.live is MISSING or others:
        return None
    defaults = schema.known_defaults(inp.ref.kind, delta.pointer)
    if defaults:
        pattern, _value, mechanism = defaults[0]
        return Verdict(
            "api-defaulting",
            "confirmed",
            _writer(chosen, found),
            f"the API server fills {pattern} ({mechanism}) when the manifest leaves it out",
            [f"known API default: {inp.ref.kind} {pattern}", *ev],
        )
    if delta.atomic_root is not None:
        crd = not schema.is_known(inp.ref.group, inp.ref.kind)
        source = "the CRD's schema defaults" if crd else "API server defaulting"
        return Verdict(
            "api-defaulting",
            "likely",
            _writer(chosen, found),
            f"{source} filled this into a list that is compared as a whole; no other writer touched it",
            ev,
        )
    return None


def _nondeterministic(
    delta: Delta,
    inp: ObjectInputs,
    others: list[Entry],
    chosen: Entry | None,
    found: list[Entry],
    ev: list[str],
) -> Verdict | None:
    if not inp.again_given or inp.again is None or others:
        return None
    again_value = resolve(inp.again, delta.desired_path)
    argo_owns = any(e.is_argocd for e in found)
    if _argocd_mask(again_value) and _argocd_mask(delta.desired):
        # Argo CD masks Secret values ("++++"), so two renders cannot be compared. But if Argo CD wrote the
        # live value while applying this very revision, and renders something else now, the render changed.
        if inp.synced_same_revision and argo_owns and _argocd_mask(delta.live):
            return Verdict("nondeterministic-render", "likely", _writer(chosen, found),
                           "Argo CD applied this same revision at its last sync and wrote another value than it "
                           "renders now (Secret values are masked, so the renders themselves cannot be compared)",
                           ev)  # fmt: skip
        return None
    if deep_equal(again_value, delta.desired):
        return None
    if not argo_owns and inp.entries is not None and found:
        return None
    confidence: Confidence = "confirmed" if argo_owns else "likely"
    return Verdict(
        "nondeterministic-render",
        confidence,
        _writer(chosen, found),
        "two renders of the same revision give different values, and Argo CD wrote the live one",
        ["--desired and --desired-again differ at this field", *ev],
    )


def _by_owner(
    delta: Delta,
    inp: ObjectInputs,
    others: list[Entry],
    argo: list[Entry],
    chosen: Entry | None,
    found: list[Entry],
    ev: list[str],
) -> Verdict:
    if inp.entries is None:
        return Verdict(
            "unknown",
            "possible",
            Writer(),
            "the live object carries no managedFields, so nobody can be named",
            ev,
        )
    if not found:
        hooks = inp.index.webhooks_for(inp.live)
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
        if delta.live is MISSING:
            return Verdict("unknown", "possible", Writer(), "the field is absent live and no manager explains why", ev)
        return Verdict(
            "mutating-webhook",
            "likely",
            Writer(),
            "no field manager owns the live value: admission webhooks change objects without recording ownership",
            ev,
        )
    if not others:
        hooks = [h for h in inp.index.webhooks_for(inp.live) if "UPDATE" in h.operations]
        if hooks:
            h = hooks[0]
            return Verdict(
                "mutating-webhook",
                "confirmed" if h.certain else "likely",
                _writer(argo[0], found, h.configuration),
                f"Argo CD sent its value (so it owns the field), and webhook {h.webhook} of "
                f"{h.configuration.label} rewrote it on admission",
                [f"{h.configuration.label}: webhook {h.webhook} matches UPDATE", *ev],
            )
        return Verdict(
            "unknown",
            "possible",
            _writer(argo[0], found),
            "Argo CD itself wrote the live value (a rollback, an older revision or a manual sync); "
            "nothing in the inputs shows another writer",
            ev,
        )
    assert chosen is not None
    m = chosen.manager
    scaler = inp.index.scaler_for(inp.live)
    if delta.path == ("spec", "replicas") and (
        scaler is not None or (m == "kube-controller-manager" and chosen.subresource == "scale")
    ):
        via = " through the scale subresource" if chosen.subresource == "scale" else ""
        what = scaler.label if scaler else "an autoscaler"
        return Verdict(
            "autoscaler",
            "confirmed" if scaler else "likely",
            _writer(chosen, found, scaler),
            f"{what} sets the replica count ({m}{via})",
            ([f"{scaler.label} targets this object"] if scaler else []) + ev,
        )
    if is_human(m):
        return Verdict("manual-edit", "confirmed", _writer(chosen, found), f"a person changed it with {m}", ev)
    if m in SYNTHETIC_MANAGERS:
        return Verdict(
            "unknown",
            "possible",
            _writer(chosen, found),
            f"the owner is the API server's placeholder entry {m}; the real writer is lost",
            ev,
        )
    if m in _GITOPS_MANAGERS:
        obj = _flux_object(inp.live)
        return Verdict(
            "other-gitops",
            "confirmed",
            _writer(chosen, found, obj),
            f"{_GITOPS_MANAGERS[m]} applies this object too",
            ev,
        )
    ctrl = inp.index.controller_for(inp.live)
    return Verdict(
        "operator",
        "confirmed",
        _writer(chosen, found, ctrl),
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


__all__ = ["ARGOCD_MANAGERS", "ObjectInputs", "Verdict", "decide", "is_human"]
