"""The cluster context an analysis may use, indexed once per run.

Built from ``--context`` objects plus the app's own desired and live objects (an
HPA that is part of the app explains its Deployment's replicas as well as one
from another app does). It answers: which scaler targets an object, which
mutating webhooks would intercept an update of it, which Application a tracking
id names, which Flux object applies it, which ignoreDifferences already exist,
which CustomResourceDefinition (and so which schema defaults) a custom resource has.

Guarantees: pure; lookups never raise on malformed context objects (they are
skipped); label selectors follow metav1.LabelSelector semantics.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.analysis.schema import group_of
from bot.model import ObjectRef

TRACKING_ANNOTATION = "argocd.argoproj.io/tracking-id"
INSTANCE_LABEL = "app.kubernetes.io/instance"
_CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
        "StorageClass", "PriorityClass", "IngressClass", "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration", "APIService", "CSIDriver", "RuntimeClass", "VolumeSnapshotClass",
        "ClusterIssuer", "GatewayClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    }
)  # fmt: skip


def cluster_scoped(kind: str) -> bool:
    """Whether ``kind`` is one of the well-known cluster-scoped kinds (a namespace in its manifest is ignored)."""
    return kind in _CLUSTER_SCOPED_KINDS


SCALER_KINDS = frozenset({"HorizontalPodAutoscaler", "ScaledObject", "MachineAutoscaler"})
"""Objects whose ``spec.scaleTargetRef`` names what they scale: HPAs, KEDA's ScaledObjects, OpenShift's
MachineAutoscalers (the cluster autoscaler's per-MachineSet bounds)."""
_INDEXED = SCALER_KINDS | {"MutatingWebhookConfiguration", "Namespace", "Application", "Rollout", "SleepInfo",
                           "ConfigMap", "CustomResourceDefinition"}  # fmt: skip
"""The kinds :meth:`ContextIndex.build` keeps (a ConfigMap only when it is argocd-cm)."""
_IRREGULAR_PLURALS = {"Endpoints": "endpoints", "NetworkPolicy": "networkpolicies"}


DiffMode = Literal["legacy", "server-side"]
COMPARE_OPTIONS = "argocd.argoproj.io/compare-options"


def app_diff_mode(application: dict[str, Any]) -> DiffMode:
    """The Application's diff mode from its ``argocd.argoproj.io/compare-options`` annotation (Argo CD's default,
    when it says nothing, is the legacy three-way diff; a controller-wide ``controller.diff.server.side`` is not
    visible here)."""
    options = str(annotations_of(application).get(COMPARE_OPTIONS) or "")
    flags = {o.strip() for o in options.split(",")}
    return "server-side" if "ServerSideDiff=true" in flags else "legacy"


def _revision_list(block: Any) -> list[str]:
    """``revisions`` (multi-source, one per source) or ``revision`` of a status block, as a list."""
    if not isinstance(block, dict):
        return []
    many = [str(r) for r in block.get("revisions") or [] if r is not None]
    return many or ([str(block["revision"])] if block.get("revision") else [])


def app_revisions(application: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Git's target revision(s) (``status.sync.revision``, or ``revisions`` per source for a multi-source app) and
    the one(s) Argo CD last synced (the last ``status.history`` entry, else a succeeded ``operationState``'s
    ``syncResult``); empty when the Application does not say."""
    status = application.get("status") or {}
    target = _revision_list(status.get("sync"))
    history = [h for h in status.get("history") or [] if isinstance(h, dict)]
    synced = _revision_list(history[-1]) if history else []
    op = status.get("operationState") or {}
    if not synced and op.get("phase") == "Succeeded":
        synced = _revision_list(op.get("syncResult"))
    return target, synced


def git_ahead(application: dict[str, Any]) -> bool:
    """Git's target revision is not the one Argo CD last synced: what differs may be Git's change, not drift."""
    target, synced = app_revisions(application)
    return bool(target) and bool(synced) and target != synced


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def labels_of(obj: dict[str, Any]) -> dict[str, str]:
    lab = meta(obj).get("labels")
    return lab if isinstance(lab, dict) else {}


def annotations_of(obj: dict[str, Any]) -> dict[str, str]:
    ann = meta(obj).get("annotations")
    return ann if isinstance(ann, dict) else {}


def plural(kind: str) -> str:
    """The API resource name of a kind (``Ingress`` -> ``ingresses``), as RBAC and webhooks spell it."""
    if kind in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[kind]
    low = kind.lower()
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return low[:-1] + "ies"
    if low.endswith(("s", "x", "ch", "sh")):
        return low + "es"
    return low + "s"


def tracked_app(obj: dict[str, Any]) -> tuple[str | None, str]:
    """The Application an object's tracking names, and how (``annotation``/``label``/``none``)."""
    tid = annotations_of(obj).get(TRACKING_ANNOTATION)
    if isinstance(tid, str) and ":" in tid:
        return tid.split(":", 1)[0], "annotation"
    inst = labels_of(obj).get(INSTANCE_LABEL)
    if isinstance(inst, str) and inst:
        return inst, "label"
    return None, "none"


def same_app(a: str, b: str) -> bool:
    """Tracking ids of apps outside the control-plane namespace read ``<namespace>_<name>``."""
    return a == b or a.endswith("_" + b) or b.endswith("_" + a)


def selector_matches(selector: Any, labels: dict[str, str]) -> bool | None:
    """metav1.LabelSelector semantics; ``None`` selector matches everything. Unknown operators: ``None``."""
    if not selector:
        return True
    if not isinstance(selector, dict):
        return None
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            ok = key in labels and labels[key] in values
        elif op == "NotIn":
            ok = key not in labels or labels[key] not in values
        elif op == "Exists":
            ok = key in labels
        elif op == "DoesNotExist":
            ok = key not in labels
        else:
            return None
        if not ok:
            return False
    return True


@dataclass(frozen=True)
class WebhookMatch:
    configuration: ObjectRef
    webhook: str
    certain: bool
    """False when the namespace's labels were not available to evaluate its namespaceSelector."""
    operations: tuple[str, ...]
    catch_all: bool = False
    """Its rules match every resource (``*`` groups and ``*`` resources, as Gatekeeper's and Kyverno's stock
    configurations do): that it matches this object says nothing about this object in particular."""


@dataclass
class ContextIndex:
    scalers: list[dict[str, Any]] = field(default_factory=list)
    mutating: list[dict[str, Any]] = field(default_factory=list)
    namespaces: dict[str, dict[str, Any]] = field(default_factory=dict)
    applications: dict[str, dict[str, Any]] = field(default_factory=dict)
    rollouts: list[dict[str, Any]] = field(default_factory=list)
    sleepers: list[dict[str, Any]] = field(default_factory=list)
    """kube-green SleepInfos: they scale their namespace's Deployments to zero and back."""
    argocd_cm: dict[str, Any] | None = None
    crds: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """CustomResourceDefinitions by (group, kind): their schemas prove CRD defaults."""

    @classmethod
    def build(cls, *groups: Iterable[dict[str, Any]]) -> ContextIndex:
        idx = cls()
        seen: set[tuple[str, str, str]] = set()
        for objs in groups:
            for o in objs:
                kind = o.get("kind")
                if kind not in _INDEXED:
                    continue  # most objects of an app: nothing here is about them
                m = meta(o)
                key = (str(kind), str(m.get("namespace") or ""), str(m.get("name")))
                if key in seen:
                    continue
                seen.add(key)
                if kind in SCALER_KINDS:
                    idx.scalers.append(o)
                elif kind == "MutatingWebhookConfiguration":
                    idx.mutating.append(o)
                elif kind == "Namespace":
                    idx.namespaces[str(m.get("name"))] = o
                elif kind == "Application" and group_of(str(o.get("apiVersion", ""))) == "argoproj.io":
                    idx.applications[str(m.get("name"))] = o
                elif kind == "Rollout":
                    idx.rollouts.append(o)
                elif kind == "SleepInfo" and group_of(str(o.get("apiVersion", ""))) == "kube-green.com":
                    idx.sleepers.append(o)
                elif kind == "ConfigMap" and m.get("name") == "argocd-cm":
                    idx.argocd_cm = o
                elif kind == "CustomResourceDefinition" and isinstance(o.get("spec"), dict):
                    names = o["spec"].get("names") or {}
                    idx.crds.setdefault((str(o["spec"].get("group")), str(names.get("kind"))), o)
        return idx

    # --- scalers --------------------------------------------------------------------------------
    def scaler_for(self, obj: dict[str, Any]) -> ObjectRef | None:
        """The ScaledObject (preferred: it owns the HPA it creates), HPA or MachineAutoscaler targeting ``obj``."""
        m = meta(obj)
        best: ObjectRef | None = None
        for s in self.scalers:
            sm = meta(s)
            if (sm.get("namespace") or "") != (m.get("namespace") or ""):
                continue
            ref = (s.get("spec") or {}).get("scaleTargetRef") or {}
            kind = ref.get("kind") or ("Deployment" if s.get("kind") == "ScaledObject" else None)
            api = ref.get("apiVersion") or ("apps/v1" if s.get("kind") == "ScaledObject" else None)
            if ref.get("name") != m.get("name") or kind != obj.get("kind"):
                continue
            if api and group_of(api) != group_of(str(obj.get("apiVersion", ""))):
                continue
            found = ObjectRef(str(s.get("kind")), str(sm.get("name")), sm.get("namespace"))
            if s.get("kind") == "ScaledObject" or best is None:
                best = found
        return best

    # --- admission webhooks ----------------------------------------------------------------------
    def webhooks_for(self, obj: dict[str, Any]) -> list[WebhookMatch]:
        """Mutating webhooks whose rules, scope and selectors admit a CREATE or UPDATE of ``obj``."""
        api = str(obj.get("apiVersion", ""))
        group, version = group_of(api), api.rsplit("/", 1)[-1]
        kind = str(obj.get("kind"))
        resource = plural(kind)
        ns = meta(obj).get("namespace")
        namespaced = bool(ns) and kind not in _CLUSTER_SCOPED_KINDS
        out: list[WebhookMatch] = []
        for cfg in self.mutating:
            cm = meta(cfg)
            for wh in cfg.get("webhooks") or []:
                if not isinstance(wh, dict):
                    continue
                ops, catch_all = _rule_ops(wh.get("rules") or [], group, version, resource, namespaced)
                if not ops:
                    continue
                certain = True
                if namespaced or kind == "Namespace":
                    ns_name = str(ns if namespaced else meta(obj).get("name"))
                    ns_obj = self.namespaces.get(ns_name)
                    ns_labels = dict(labels_of(ns_obj)) if ns_obj else {}
                    ns_labels.setdefault("kubernetes.io/metadata.name", ns_name)
                    ok = selector_matches(wh.get("namespaceSelector"), ns_labels)
                    if ok is False and ns_obj is None:
                        ok, certain = None, False  # the namespace's own labels are unknown
                    if ok is False:
                        continue
                    certain = certain and ok is True
                oks = selector_matches(wh.get("objectSelector"), labels_of(obj))
                if oks is False:
                    continue
                out.append(
                    WebhookMatch(
                        ObjectRef(str(cfg.get("kind")), str(cm.get("name"))),
                        str(wh.get("name")),
                        certain and oks is True,
                        tuple(sorted(ops)),
                        catch_all,
                    )
                )
        return out

    # --- operators -------------------------------------------------------------------------------
    def controller_for(self, obj: dict[str, Any]) -> ObjectRef | None:
        """A context object known to drive ``obj``: an Argo Rollout referencing it, cert-manager's CA source."""
        m = meta(obj)
        ns, name, kind = m.get("namespace"), m.get("name"), obj.get("kind")
        for r in self.rollouts:
            rm = meta(r)
            if rm.get("namespace") != ns:
                continue
            spec = r.get("spec") or {}
            wref = spec.get("workloadRef") or {}
            if wref.get("kind") == kind and wref.get("name") == name:
                return ObjectRef("Rollout", str(rm.get("name")), rm.get("namespace"))
            routing = ((spec.get("strategy") or {}).get("canary") or {}).get("trafficRouting") or {}
            istio = routing.get("istio") or {}
            vss = list(istio.get("virtualServices") or []) + [istio.get("virtualService") or {}]
            if kind == "VirtualService" and any(isinstance(v, dict) and v.get("name") == name for v in vss):
                return ObjectRef("Rollout", str(rm.get("name")), rm.get("namespace"))
        if kind in ("Deployment", "StatefulSet", "CronJob"):
            for s in self.sleepers:
                if meta(s).get("namespace") == ns and _sleeps(s, str(kind), str(name)):
                    return ObjectRef("SleepInfo", str(meta(s).get("name")), ns)
        src = annotations_of(obj).get("cert-manager.io/inject-ca-from")
        if isinstance(src, str) and "/" in src:
            cns, cname = src.split("/", 1)
            return ObjectRef("Certificate", cname, cns)
        return None

    def self_heal(self, app: str | None) -> bool:
        """The Application among the inputs has selfHeal on."""
        application = self.applications.get(app or "") if app else None
        automated = (((application or {}).get("spec") or {}).get("syncPolicy") or {}).get("automated")
        return isinstance(automated, dict) and bool(automated.get("selfHeal"))

    def synced_same_revision(self, app: str | None) -> bool:
        """The Application among the inputs last synced, successfully, the revision Git is at now."""
        application = self.applications.get(app or "") if app else None
        if application is None:
            return False
        target, synced = app_revisions(application)
        op = (application.get("status") or {}).get("operationState") or {}
        return bool(target) and target == synced and op.get("phase", "Succeeded") == "Succeeded"

    def git_ahead(self, app: str | None) -> bool:
        """The Application among the inputs says Git is ahead of what it last synced."""
        application = self.applications.get(app or "") if app else None
        return application is not None and git_ahead(application)

    def diff_mode(self, app: str | None) -> DiffMode | None:
        """How Argo CD compares the app: ``server-side`` when its compare options say ``ServerSideDiff=true``,
        else ``legacy``; ``None`` when the Application is not among the inputs."""
        application = self.applications.get(app or "") if app else None
        return None if application is None else app_diff_mode(application)

    # --- existing ignoreDifferences --------------------------------------------------------------
    def ignore_rules(self, app: str | None) -> list[dict[str, Any]]:
        """ignoreDifferences already in force: the Application's own plus argocd-cm's system-level ones."""
        rules: list[dict[str, Any]] = []
        application = self.applications.get(app or "") if app else None
        if application:
            rules.extend(
                r for r in (application.get("spec") or {}).get("ignoreDifferences") or [] if isinstance(r, dict)
            )
        data = (self.argocd_cm or {}).get("data") or {}
        prefix = "resource.customizations.ignoreDifferences."
        for key, text in data.items():
            if not key.startswith(prefix) or not isinstance(text, str):
                continue
            gk = key[len(prefix) :]
            import yaml  # rarely needed: not imported by every explain

            try:
                body = yaml.safe_load(text) or {}
            except yaml.YAMLError:
                continue
            if not isinstance(body, dict):
                continue
            if gk == "all":
                group, kind = "*", "*"
            else:
                group, _, kind = gk.rpartition("_")
            rules.append({**body, "group": group, "kind": kind})
        return rules


def _sleeps(info: dict[str, Any], kind: str, name: str) -> bool:
    """Whether a kube-green SleepInfo acts on this object: every workload of its namespace unless ``excludeRef``
    names it, or only those ``includeRef`` names when it is given."""
    spec = info.get("spec") or {}

    def names(refs: Any) -> bool:
        return any(isinstance(r, dict) and r.get("name") == name and r.get("kind", kind) == kind for r in refs or [])

    if spec.get("includeRef"):
        return names(spec.get("includeRef"))
    return not names(spec.get("excludeRef"))


def _rule_ops(rules: list[Any], group: str, version: str, resource: str, namespaced: bool) -> tuple[set[str], bool]:
    """The operations (CREATE, UPDATE) of the rules that match the resource, and whether every such rule matches
    every resource (wildcard groups and resources)."""
    ops: set[str] = set()
    catch_all = True
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        if not _any_match(rule.get("apiGroups"), group) or not _any_match(rule.get("apiVersions"), version):
            continue
        resources = rule.get("resources") or []
        if not any(r in ("*", "*/*", resource) for r in resources):
            continue
        scope = rule.get("scope") or "*"
        if (scope == "Namespaced" and not namespaced) or (scope == "Cluster" and namespaced):
            continue
        matched = {o for op in rule.get("operations") or [] if op in ("*", "UPDATE", "CREATE")
                   for o in (("CREATE", "UPDATE") if op == "*" else (op,))}  # fmt: skip
        if matched:
            ops |= matched
            wild = "*" in (rule.get("apiGroups") or []) and any(r in ("*", "*/*") for r in resources)
            catch_all = catch_all and wild
    return ops, catch_all and bool(ops)


def _any_match(values: Any, want: str) -> bool:
    return isinstance(values, list) and any(v in ("*", want) for v in values)
