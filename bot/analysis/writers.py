"""Step 5 of the cause rules: the owner decides, and who the known owners are.

No managedFields at all -> unknown; nobody owns the field -> a mutating webhook
(a value no request sent came in on admission), or, when the value is absent, a
removal (``unknown``: a removal records no field manager); only Argo CD owns it (the
field, or an atomic list around a webhook's item) -> a mutating webhook when one
intercepts the object or what Argo CD sent (``FieldFacts.sent``) is Git's value,
else unknown; another owner -> autoscaler (a scaler in the context,
kube-controller-manager through the scale subresource, or the cluster autoscaler),
manual edit (Helm's command line included), other GitOps tool or operator.

Confidence means something: ``confirmed`` only when ownership and context both
prove the cause (a known controller's manager name, a matching HPA, ScaledObject
or MachineAutoscaler; for a webhook, proof that the value changed on admission and
a configuration whose rules name this kind of object). A webhook that intercepts
every resource proves nothing on its own: with proof of admission it is ``likely``,
without it the verdict is ``unknown`` and says both readings (Git ahead, or the
webhook). A manager this module does not know, with nothing in the context pointing
at it, is at most ``likely`` and the reason says it could be a person's script.

Guarantees: pure; reasons and evidence never contain field values (Secrets).
"""

from __future__ import annotations

from bot.analysis.canonical import deep_equal
from bot.analysis.context import WebhookMatch, labels_of
from bot.analysis.facts import FieldFacts, Verdict
from bot.analysis.managedfields import SYNTHETIC_MANAGERS, unreadable
from bot.analysis.pointer import MISSING
from bot.analysis.schema import is_known
from bot.model import ObjectRef, Writer
from bot.wording import report as wording

_HUMAN_MANAGERS = frozenset({"Mozilla", "k9s", "argocd-server", "Lens", "OpenLens", "headlamp", "kubernetes-dashboard"})
_GITOPS_MANAGERS = {
    "kustomize-controller": "Flux (kustomize-controller)",
    "helm-controller": "Flux (helm-controller)",
    "fleet-agent": "Rancher Fleet",
    "kapp": "kapp",
    "kapp-controller": "kapp-controller",
    "pulumi-kubernetes": "Pulumi",
}
_HELM_CLI = frozenset({"helm"})
"""The field manager of the Helm command line (helm install/upgrade/rollback since Helm 3)."""
_FLUX_LABELS = (
    ("kustomize.toolkit.fluxcd.io/name", "kustomize.toolkit.fluxcd.io/namespace", "Kustomization"),
    ("helm.toolkit.fluxcd.io/name", "helm.toolkit.fluxcd.io/namespace", "HelmRelease"),
)
AUTOSCALER_MANAGERS = {"cluster-autoscaler": "the Cluster Autoscaler"}
"""Scalers that write replica counts themselves, through the scale subresource, without an HPA: by name."""
KNOWN_CONTROLLERS = frozenset(
    {
        "kube-controller-manager", "cloud-controller-manager", "kube-scheduler", "kubelet", "kube-apiserver",
        "vpa-updater", "vpa-recommender", "vpa-admission-controller", "keda-operator",
        "rollouts-controller", "argo-rollouts", "pilot-discovery", "istiod", "istio-operator", "linkerd-destination",
        "linkerd-proxy-injector", "cainjector", "external-secrets", "kyverno", "gatekeeper", "trust-manager",
        "aws-load-balancer-controller", "ingress-nginx-controller", "prometheus-operator", "strimzi-cluster-operator",
        "cluster-policy-controller", "cluster-version-operator", "machine-config-operator", "service-ca-operator",
        "knative-serving-controller", "tekton-pipelines-controller", "metallb-controller", "crossplane",
    }
)  # fmt: skip
"""Field managers of controllers whose name alone says who they are (exact names)."""
KNOWN_CONTROLLER_PREFIXES = (
    "cert-manager", "openshift.io/", "openshift-", "externalsecrets.external-secrets.io/", "kyverno-",
    "crossplane-", "provider-aws", "provider-gcp", "provider-azure", "provider-kubernetes", "istio-", "flagger",
)  # fmt: skip
"""Prefixes of such names: a project's controllers, each with its own suffix."""


GENERIC_MANAGERS = {
    "manager": "the default name of every Kubebuilder (controller-runtime) controller's binary",
    "main": "the name `go run` gives any Go program",
    "Go-http-client": "the user agent of any Go program that sets none",
    "OpenAPI-Generator": "the user agent of the Kubernetes Python client and other generated clients",
}
"""Field managers that are only a default name (the binary's or the user agent's): they name no controller, so
they are no evidence of one, nor of a person; only the context (a scaler, a Rollout, ...) can say more."""


def is_human(manager: str) -> bool:
    """kubectl in all its forms (``kubectl``, ``kubectl-edit``, ``kubectl.exe``), web consoles, k9s, Argo CD's UI."""
    return manager in _HUMAN_MANAGERS or manager.startswith("kubectl")


def is_known_controller(manager: str) -> bool:
    return manager in KNOWN_CONTROLLERS or manager.startswith(KNOWN_CONTROLLER_PREFIXES)


def by_owner(f: FieldFacts) -> Verdict:
    """No managedFields at all, nobody, only Argo CD, or another writer."""
    if f.obj.entries is None:
        reason = (
            wording.REASON_UNREADABLE_MANAGED_FIELDS if unreadable(f.obj.live) else wording.REASON_NO_MANAGED_FIELDS
        )
        return Verdict("unknown", "possible", Writer(), reason, list(f.evidence))
    if not f.owners:
        return _unowned(f)
    if not f.others:
        return _argocd_owned(f)
    return _other_owner(f)


def _unowned(f: FieldFacts) -> Verdict:
    """No entry owns the field: a webhook's own edit (ownership is recorded before mutating admission), or replicas
    scaled to 0 through the scale subresource: Scale's ``replicas`` is omitempty, so the API server records an
    empty field set for the scaler (no entry at all) and takes the field from its previous owner."""
    ev = list(f.evidence)
    scaler = f.obj.index.scaler_for(f.obj.live) if f.delta.path == ("spec", "replicas") else None
    if scaler is not None:
        zero = f.delta.live == 0
        return Verdict(
            "autoscaler",
            "confirmed" if zero else "likely",
            Writer(object=scaler),
            (wording.REASON_SCALED_TO_ZERO if zero else wording.REASON_SCALER_UNOWNED).format(what=scaler.label),
            [wording.EVIDENCE_SCALER.format(scaler=scaler.label), *ev],
        )
    if f.delta.live is MISSING:
        # a removal leaves no owner (ownership follows values), and no default explains it (those rules came first)
        sent = f.sent()
        if sent is not None and deep_equal(sent.value, f.delta.desired):
            how = wording.SENT_HOW[sent.source]
            return Verdict("unknown", "possible", Writer(), wording.REASON_REMOVED_SENT.format(how=how),
                           [wording.EVIDENCE_SENT_GIT.format(how=how), wording.EVIDENCE_REMOVED, *ev],
                           wording.ALTERNATIVE_REMOVED)  # fmt: skip
        return Verdict("unknown", "possible", Writer(), wording.REASON_REMOVED, [wording.EVIDENCE_REMOVED, *ev],
                       wording.ALTERNATIVE_REMOVED)  # fmt: skip
    hooks = f.obj.index.webhooks_for(f.obj.live)
    if hooks:
        # nobody owns a value no request sent: it came in on admission (ownership is recorded before it)
        h = _pick(hooks)
        proven = h.certain and not h.catch_all
        return Verdict(
            "mutating-webhook",
            "confirmed" if proven else "likely",
            Writer(object=h.configuration),
            wording.REASON_WEBHOOK_UNOWNED.format(
                webhook=h.webhook, configuration=h.configuration.label, operations="/".join(h.operations)
            ),
            [_webhook_evidence(h), *ev],
        )
    return Verdict("mutating-webhook", "likely", Writer(), wording.REASON_NOBODY_OWNS, ev)


def _pick(hooks: list[WebhookMatch]) -> WebhookMatch:
    """The webhook a verdict names: one whose rules name this kind of object before a catch-all, UPDATE first."""
    return min(hooks, key=lambda h: (h.catch_all, "UPDATE" not in h.operations))


def _webhook_evidence(h: WebhookMatch) -> str:
    ops = "/".join(h.operations)
    if h.catch_all:
        return wording.EVIDENCE_WEBHOOK_EVERYTHING.format(configuration=h.configuration.label, webhook=h.webhook,
                                                          operations=ops)  # fmt: skip
    return wording.EVIDENCE_WEBHOOK_OPS.format(configuration=h.configuration.label, webhook=h.webhook, operations=ops)


def _argocd_owned(f: FieldFacts) -> Verdict:
    """Only Argo CD owns the field (the field itself, or an atomic list or map around it).

    A matching webhook is a candidate; the value changing on admission is shown only by what Argo CD sent (its
    last-applied-configuration, or the last sync of this very revision) being Git's value while live differs.
    Confirmed needs both, and a webhook whose rules name this kind of object; one that matches every resource is
    never more than ``likely`` with that proof, and without it the verdict is ``unknown``."""
    hooks = f.obj.index.webhooks_for(f.obj.live)
    sent = f.sent()
    proof = sent is not None and deep_equal(sent.value, f.delta.desired) and not deep_equal(sent.value, f.delta.live)
    how = wording.SENT_HOW[sent.source] if sent is not None else ""
    ev = [wording.EVIDENCE_SENT_GIT.format(how=how)] if proof else []
    if hooks:
        # an item added to a list Argo CD owns as a whole is still the webhook's: ownership predates admission
        h = _pick(hooks)
        names = {"webhook": h.webhook, "configuration": h.configuration.label, "operations": "/".join(h.operations)}
        evidence = [_webhook_evidence(h), *ev, *f.evidence]
        if h.catch_all and not proof:
            return Verdict("unknown", "possible", f.writer(), wording.REASON_ARGOCD_WROTE_OR_WEBHOOK.format(**names),
                           evidence)  # fmt: skip
        if h.catch_all:
            return Verdict("mutating-webhook", "likely", f.writer(h.configuration),
                           wording.REASON_WEBHOOK_EVERYTHING.format(how=how, **names), evidence)  # fmt: skip
        certain = h.certain and "UPDATE" in h.operations and proof
        if proof:
            reason = wording.REASON_WEBHOOK_PROVEN.format(how=how, **names)
        else:
            reason = (wording.REASON_WEBHOOK_ADDED if f.delta.desired is MISSING else wording.REASON_WEBHOOK_REWROTE
                      ).format(**names)  # fmt: skip
        return Verdict("mutating-webhook", "confirmed" if certain else "likely", f.writer(h.configuration), reason,
                       evidence)  # fmt: skip
    if proof:
        ref = f.obj.ref
        if f.delta.desired is MISSING and not f.added_item and not is_known(ref.group, ref.kind) and not f.obj.crd():
            # a key that appeared at admission in a custom resource: a webhook, or a schema default of a CRD we
            # cannot see; neither is shown
            return Verdict("unknown", "possible", f.writer(), wording.REASON_WEBHOOK_OR_SCHEMA,
                           [wording.EVIDENCE_LAST_APPLIED, *f.evidence])  # fmt: skip
        return Verdict(
            "mutating-webhook",
            "likely",
            f.writer(),
            wording.REASON_SENT_GIT_VALUE,
            [wording.EVIDENCE_LAST_APPLIED, *f.evidence],
        )
    return Verdict("unknown", "possible", f.writer(), wording.REASON_ARGOCD_WROTE, list(f.evidence))


def _other_owner(f: FieldFacts) -> Verdict:
    """Another manager wrote the field last: a scaler, a person, a placeholder, another GitOps tool, an operator."""
    chosen, live, ev = f.chosen, f.obj.live, list(f.evidence)
    assert chosen is not None
    m = chosen.manager
    scaler = f.obj.index.scaler_for(live)
    via_scale = chosen.subresource == "scale"
    replicas = f.delta.path == ("spec", "replicas")
    if is_human(m):
        # the manager that wrote the field is who wrote it: a person's kubectl scale is a person's, even through the
        # scale subresource and even while an HPA targets the object (which is context: it will overwrite it)
        reason = wording.REASON_PERSON.format(manager=m)
        if scaler is None or not replicas:
            return Verdict("manual-edit", "confirmed", f.writer(), reason, ev)
        kind = str(live.get("kind"))
        return Verdict("manual-edit", "confirmed", f.writer(),
                       reason + wording.REASON_SCALER_TOO.format(scaler=scaler.label, kind=kind),
                       [*ev, wording.EVIDENCE_SCALER_TOO.format(scaler=scaler.label, kind=kind)],
                       wording.ALTERNATIVE_SCALED_BY_HAND.format(scaler=scaler.label))  # fmt: skip
    known_scaler = m in AUTOSCALER_MANAGERS and (replicas or via_scale)
    if (replicas and scaler is not None) or (m == "kube-controller-manager" and via_scale) or known_scaler:
        what = scaler.label if scaler else AUTOSCALER_MANAGERS.get(m, wording.AN_AUTOSCALER)
        # confirmed when the write is the scaler's own: the HPA controller writes through the scale subresource
        proven = known_scaler or (scaler is not None and (via_scale or m == "kube-controller-manager"))
        return Verdict(
            "autoscaler",
            "confirmed" if proven else "likely",
            f.writer(scaler),
            wording.REASON_AUTOSCALER.format(what=what, manager=m, via=wording.VIA_SCALE if via_scale else ""),
            ([wording.EVIDENCE_SCALER.format(scaler=scaler.label)] if scaler else []) + ev,
        )
    if m in SYNTHETIC_MANAGERS:
        return Verdict("unknown", "possible", f.writer(), wording.REASON_SYNTHETIC.format(manager=m), ev)
    if m in _HELM_CLI:
        # the Helm command line: a person or a pipeline running helm, not a GitOps controller (Flux: helm-controller)
        return Verdict("manual-edit", "likely", f.writer(), wording.REASON_HELM_CLI.format(manager=m), ev)
    if m in _GITOPS_MANAGERS:
        tool = _GITOPS_MANAGERS[m]
        return Verdict("other-gitops", "confirmed", f.writer(_flux_object(live)),
                       wording.REASON_OTHER_GITOPS.format(tool=tool), ev)  # fmt: skip
    ctrl = f.obj.index.controller_for(live)
    if ctrl is None and m in GENERIC_MANAGERS:
        return Verdict("unknown", "possible", f.writer(),
                       wording.REASON_GENERIC_MANAGER.format(manager=m, what=GENERIC_MANAGERS[m],
                                                             operation=chosen.operation or "a write"),
                       [*ev, wording.EVIDENCE_GENERIC_MANAGER.format(manager=m)])  # fmt: skip
    if ctrl is not None or is_known_controller(m):
        via = wording.ON_BEHALF.format(label=ctrl.label) if ctrl else ""
        return Verdict("operator", "confirmed", f.writer(ctrl), wording.REASON_OPERATOR.format(manager=m, via=via), ev)
    return Verdict(
        "operator",
        "likely",
        f.writer(),
        wording.REASON_UNKNOWN_MANAGER.format(manager=m, operation=chosen.operation or "a write"),
        [*ev, wording.EVIDENCE_UNKNOWN_MANAGER.format(manager=m)],
    )


def _flux_object(live: dict[str, object]) -> ObjectRef | None:
    labels = labels_of(live)
    for name_label, ns_label, kind in _FLUX_LABELS:
        if labels.get(name_label):
            return ObjectRef(kind, labels[name_label], labels.get(ns_label))
    return None
