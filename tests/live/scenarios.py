"""The live casebook's scenarios: each a script of real API calls and the verdict ``argo-why`` must reach.

A scenario's script runs in a fresh namespace: Argo CD syncs the desired objects (client-side apply, ``csa``, or
server-side apply, ``ssa``, as the Application would), then the drift's writer acts through its own API calls
(tests/live/writers.py). The live objects are then read back from the server with their managedFields, and the
context objects (HPAs, ScaledObjects, webhook configurations, CRDs, the Namespace) too.

An :class:`Expect` is one finding: the object, the field, the cause and the writer's field manager, and whether
Argo CD still reports the field under each diff mode (``legacy``: its three-way diff, which compares objects after
a round trip through their Go types, so ``1000m`` and ``1`` are equal; ``ssd``: server-side diff, where what the
API server's defaulting and the webhooks would write is part of the prediction). A scenario without an Expect is a
clean sync: zero findings is its verdict.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import helm_python as helm
import yaml

from tests.live.webhook import SidecarInjector
from tests.live.writers import Cluster, Obj, serve

Sync = Literal["csa", "ssa"]
TRACKING = "argocd.argoproj.io/tracking-id"
INSTANCE = "app.kubernetes.io/instance"
RANDOM_CHART = Path(__file__).parent / "charts" / "random"


@dataclass(frozen=True)
class Expect:
    kind: str
    name: str
    pointer: str
    cause: str
    manager: str | None
    legacy: bool = True
    """Argo CD's legacy diff reports the field."""
    ssd: bool = True
    """Argo CD's server-side diff reports the field."""
    confidence: str | None = None
    """The confidence ``explain`` must give (with the Application in its context), when the scenario is about it."""
    files: str | None = None
    """The cause ``explain`` gives on the files alone (no Application), when less than with it: what the objects
    themselves prove."""


@dataclass
class Script:
    """What a scenario's script works with, and what it leaves for the checks."""

    cluster: Cluster
    namespace: str
    app: str
    injector: SidecarInjector
    desired: list[Obj] = field(default_factory=list)
    """Argo CD's target state (tracking annotation included), as explain's --desired and the app's resources."""
    context: list[Obj] = field(default_factory=list)
    """Objects to read back from the server for --context."""
    desired_again: list[Obj] | None = None
    sync: Sync = "csa"
    applied: list[Obj] | None = None
    """What Argo CD last synced, when Git has moved on since (``git_moves``): the render of the synced revision."""
    leftover: list[Obj] = field(default_factory=list)
    """Objects Argo CD applied at an earlier revision that Git no longer has (what it reports as requiring pruning)."""

    def track(self, obj: Obj, app: str | None = None) -> Obj:
        """The object as Argo CD applies it: in the destination namespace, with its tracking annotation."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("namespace", self.namespace)
        group = str(obj["apiVersion"]).rpartition("/")[0]
        ref = f"{app or self.app}:{group}/{obj['kind']}:{meta['namespace']}/{meta['name']}"
        meta.setdefault("annotations", {})[TRACKING] = ref
        return obj

    def argocd(self, *objs: Obj) -> None:
        """Argo CD syncs these objects (already tracked) in the scenario's sync mode; they are the desired state."""
        for obj in objs:
            if self.sync == "ssa":
                self.cluster.argocd_server_side_apply(obj)
            else:
                self.cluster.argocd_client_side_apply(obj)
            self.desired.append(obj)

    def git_moves(self, *objs: Obj) -> None:
        """Git moves on after the sync and nothing syncs it: ``objs`` (tracked) replace their desired objects; what
        Argo CD applied stays, as the render of the revision it last synced."""
        if self.applied is None:
            self.applied = list(self.desired)
        for obj in objs:
            key = (obj["kind"], obj["metadata"]["name"])
            self.desired = [obj if (d["kind"], d["metadata"]["name"]) == key else d for d in self.desired]

    def argocd_earlier(self, *objs: Obj) -> None:
        """Argo CD synced these at an earlier revision; Git no longer has them: they stay in the cluster."""
        for obj in objs:
            self.argocd(obj)
            self.desired.remove(obj)
            self.leftover.append(obj)

    def install(self, *objs: Obj) -> None:
        """Objects the cluster has beside the app (an HPA, a CRD, a webhook configuration): created, read as context."""
        for obj in objs:
            obj = copy.deepcopy(obj)
            if obj["kind"] not in ("CustomResourceDefinition", "MutatingWebhookConfiguration"):
                obj["metadata"].setdefault("namespace", self.namespace)
            self.cluster.create(obj, "helm")
            self.context.append(obj)


@dataclass(frozen=True)
class Scenario:
    name: str
    sync: Sync
    script: Callable[[Script], None]
    expect: tuple[Expect, ...] = ()
    ssd_error: str = ""
    """What Argo CD's server-side diff fails with for this app (its dry-run apply is refused), if it fails."""
    resources: tuple[tuple[str, str, str], ...] = ()
    """(kind, name, state) of every resource only one side has (``resources[]``): requires-pruning, missing."""
    skipped: tuple[tuple[str, str, str], ...] = ()
    """(kind, name, reason) of every resource explain leaves out as Argo CD does (hooks, IgnoreExtraneous)."""


# -- objects ------------------------------------------------------------------------------------------------------


def deployment(name: str = "web", replicas: int | None = 2, image: str = "nginx:1.27", **pod: Any) -> Obj:
    container: Obj = {"name": "web", "image": image, "ports": [{"containerPort": 8080}]}
    container.update(pod.pop("container", {}))
    spec: Obj = {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container], **pod}},
    }
    if replicas is not None:
        spec = {"replicas": replicas, **spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
            "spec": spec}  # fmt: skip


def service(name: str = "web", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80}], **spec}}  # fmt: skip


def configmap(name: str = "settings", **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {"mode": "steady"}}


def hpa(target: str = "web") -> Obj:
    return {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": target},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                 "minReplicas": 2, "maxReplicas": 10,
                 "metrics": [{"type": "Resource", "resource": {
                     "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]},
    }  # fmt: skip


def crd(group: str, kind: str, plural: str, schema: Obj, version: str = "v1", **extra: Any) -> Obj:
    serve(group, kind, plural)
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
                 "versions": [{"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
                               "subresources": extra.pop("subresources", {})}],
                 **extra},
    }  # fmt: skip


SCALED_OBJECT_CRD = crd("keda.sh", "ScaledObject", "scaledobjects", {
    "type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
}, version="v1alpha1")  # fmt: skip
DATABASE_CRD = crd("db.example.com", "Database", "databases", {
    "type": "object",
    "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "string"},
        "engine": {"type": "string", "default": "postgres"},
        "backup": {"type": "object", "default": {}, "properties": {
            "schedule": {"type": "string", "default": "0 3 * * *"}, "retainDays": {"type": "integer", "default": 7}}},
        "storageClass": {"type": "string"},
    }}},
})  # fmt: skip
QUEUE_CRD = crd("mq.example.com", "Queue", "queues", {
    "type": "object",
    "properties": {"spec": {"type": "object", "properties": {
        "partitions": {"type": "integer"},
        "options": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    }}},
}, preserveUnknownFields=False)  # fmt: skip


def _ready(cluster: Cluster, crd_obj: Obj) -> None:
    """A new CRD serves its kind once Established; wait for it."""
    import time

    for _ in range(100):
        status = cluster.get(crd_obj).get("status") or {}
        if any(c.get("type") == "Established" and c.get("status") == "True" for c in status.get("conditions") or []):
            return
        time.sleep(0.1)
    raise AssertionError(f"CRD {crd_obj['metadata']['name']} never became Established")


def install_crd(s: Script, crd_obj: Obj) -> None:
    if not s.cluster.exists(crd_obj):
        s.cluster.create(crd_obj, "helm")
    _ready(s.cluster, crd_obj)
    s.context.append(crd_obj)


# -- scripts ------------------------------------------------------------------------------------------------------


def kubectl_scale(s: Script) -> None:
    s.argocd(s.track(deployment()))
    s.cluster.kubectl_scale(s.desired[0], 5)


def hpa_scale(s: Script) -> None:
    s.argocd(s.track(deployment()))
    s.install(hpa())
    s.cluster.autoscale(s.desired[0], 4)


def kubectl_scale_with_hpa(s: Script) -> None:
    s.argocd(s.track(deployment()))
    s.install(hpa())
    s.cluster.kubectl_scale(s.desired[0], 6)


def keda_scale(s: Script) -> None:
    install_crd(s, SCALED_OBJECT_CRD)
    s.argocd(s.track(deployment(name="worker")))
    s.install({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "worker"},
               "spec": {"scaleTargetRef": {"name": "worker"}, "minReplicaCount": 0,
                        "maxReplicaCount": 20}})  # fmt: skip
    s.cluster.autoscale(s.desired[0], 0, user_agent="keda-operator/v2.17.0")


def kubectl_edit_image(s: Script) -> None:
    s.argocd(s.track(deployment()))
    s.cluster.kubectl_edit(s.desired[0], {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.27-debug"}]}}}})  # fmt: skip


def kubectl_patch_configmap(s: Script) -> None:
    s.argocd(s.track(configmap(mode="steady", level="info")))
    s.cluster.kubectl_patch(s.desired[0], {"data": {"level": "debug"}}, kind="merge")


def kubectl_apply_person(s: Script) -> None:
    s.argocd(s.track(configmap(mode="steady")))
    changed = copy.deepcopy(s.desired[0])
    changed["data"]["mode"] = "maintenance"
    s.cluster.client_side_apply(changed, "kubectl-client-side-apply")


def kubectl_apply_server_side(s: Script) -> None:
    s.argocd(s.track(deployment(container={"env": [{"name": "LOG_LEVEL", "value": "info"}]})))
    s.cluster.server_side_apply({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": s.namespace},
        "spec": {"template": {"spec": {"containers": [
            {"name": "web", "env": [{"name": "LOG_LEVEL", "value": "debug"}]}]}}},
    }, "kubectl")  # fmt: skip


def operator_late_init(s: Script) -> None:
    install_crd(s, DATABASE_CRD)
    db = s.track({"apiVersion": "db.example.com/v1", "kind": "Database", "metadata": {"name": "orders"},
                  "spec": {"size": "small", "storageClass": ""}})  # fmt: skip
    s.argocd(db)
    # The operator late-initialises the storage class it picked, by server-side apply of its own (force).
    s.cluster.server_side_apply({"apiVersion": "db.example.com/v1", "kind": "Database",
                                 "metadata": {"name": "orders", "namespace": s.namespace},
                                 "spec": {"storageClass": "fast-ssd"}}, "db-operator")  # fmt: skip


def operator_builtin(s: Script) -> None:
    s.argocd(s.track(deployment(container={"resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}})))
    # A rightsizing operator applies its own requests (vpa-updater's way, by server-side apply).
    s.cluster.server_side_apply({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": s.namespace},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "resources": {"requests": {"cpu": "250m"}}}]}}},
    }, "vpa-updater")  # fmt: skip


def webhook(s: Script) -> None:
    s.install(s.injector.configuration(s.namespace))
    s.argocd(s.track(deployment()))


def service_defaults(s: Script) -> None:
    # Git asks for an allocated address with clusterIP "" (a chart's default), the server allocates one.
    s.argocd(s.track(service(clusterIP="")))


def networkpolicy_protocol(s: Script) -> None:
    s.argocd(s.track({
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "web"},
        "spec": {"podSelector": {"matchLabels": {"app": "web"}},
                 "ingress": [{"ports": [{"port": 8080}]}]},
    }))  # fmt: skip


def quantities(s: Script) -> None:
    s.argocd(s.track(deployment(container={"resources": {"limits": {"cpu": "1000m", "memory": "1024Mi"}}})))


def unknown_field_and_quantities(s: Script) -> None:
    # a StatefulSet's serviceName copied into a Deployment: the server drops it (a warning; kubectl would refuse it)
    obj = s.track(deployment(container={"resources": {"limits": {"cpu": "1000m", "memory": "1024Mi"}}}))
    obj["spec"]["serviceName"] = "web"
    s.argocd(obj)


def crd_defaults_and_pruning(s: Script) -> None:
    install_crd(s, DATABASE_CRD)
    s.argocd(s.track({"apiVersion": "db.example.com/v1", "kind": "Database", "metadata": {"name": "orders"},
                      "spec": {"size": "small", "replicas": 3}}))  # fmt: skip


def crd_preserve_unknown_false(s: Script) -> None:
    install_crd(s, QUEUE_CRD)
    s.argocd(s.track({"apiVersion": "mq.example.com/v1", "kind": "Queue", "metadata": {"name": "events"},
                      "spec": {"partitions": 3, "options": {"compaction": True}, "retention": "7d"}}))  # fmt: skip


def two_apps_annotation(s: Script) -> None:
    other = s.track(configmap(name="shared"), app="platform")
    s.cluster.argocd_client_side_apply(other)  # the platform app synced it first
    ours = s.track(configmap(name="shared"))
    s.desired.append(ours)  # ours would write the same data, but the tracking id is the other app's


def two_apps_label(s: Script) -> None:
    theirs = configmap(name="shared")
    theirs["metadata"]["labels"] = {INSTANCE: "platform"}
    theirs["metadata"]["namespace"] = s.namespace
    s.cluster.argocd_client_side_apply(theirs)
    ours = copy.deepcopy(theirs)
    ours["metadata"]["labels"] = {INSTANCE: s.app}
    s.desired.append(ours)


def render_random(release: str, namespace: str) -> list[Obj]:
    with helm.Chart.load(str(RANDOM_CHART)) as chart:
        files = chart.render({}, name=release, namespace=namespace, is_install=True)
    return [o for path, text in sorted(files.items()) if path.endswith(".yaml") for o in yaml.safe_load_all(text) if o]


def helm_random(s: Script) -> None:
    s.argocd(*(s.track(o) for o in render_random("creds", s.namespace)))  # the sync applied render 1
    s.desired = [s.track(o) for o in render_random("creds", s.namespace)]  # Argo CD renders again: 2
    s.desired_again = [s.track(o) for o in render_random("creds", s.namespace)]  # and again: 3


def git_ahead(s: Script) -> None:
    """Argo CD synced revision A; Git is at B (auto-sync off). Gatekeeper's stock webhook intercepts every write in
    the namespace and changes nothing."""
    s.install(s.injector.catch_all_configuration(s.namespace))
    s.argocd(s.track(deployment(container={"env": [{"name": "LOG_LEVEL", "value": "info"}]})),
             s.track(configmap(mode="steady")))  # fmt: skip
    moved = configmap(mode="busy")
    moved["metadata"]["labels"] = {"tier": "web"}  # a field Git adds
    s.git_moves(s.track(deployment(image="nginx:1.28", container={"env": [{"name": "LOG_LEVEL", "value": "debug"}]})),
                s.track(moved))  # fmt: skip


def limit_removed(s: Script) -> None:
    """A person removes a memory limit Git sets with a JSON patch (kubectl patch --type=json): nobody owns an absent
    field, and Kubernetes has no default for a limit."""
    s.install(s.injector.catch_all_configuration(s.namespace))
    s.argocd(s.track(deployment(container={"resources": {"limits": {"cpu": "500m", "memory": "512Mi"}}})))
    s.cluster.kubectl_patch(s.desired[0], [{"op": "remove", "path": f"{LIMITS}/memory"}], kind="json")


def helm_upgrade(s: Script) -> None:
    """A pipeline runs ``helm upgrade`` over an object Argo CD manages: Helm's three-way patch, manager ``helm``."""
    s.argocd(s.track(configmap(mode="steady")))
    s.cluster.helm_upgrade(s.desired[0], {"data": {"mode": "release-train"}})


def clean(s: Script) -> None:
    s.argocd(s.track(deployment()), s.track(service()), s.track(configmap()))


def migration_job(name: str = "migrate", **annotations: str) -> Obj:
    pod = {"restartPolicy": "Never", "containers": [{"name": "migrate", "image": "migrate:1.4", "args": ["up"]}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "annotations": annotations},
            "spec": {"backoffLimit": 1, "template": {"spec": pod}}}  # fmt: skip


def hooks(s: Script) -> None:
    """A chart with a migration Job (PreSync, deleted once it succeeded) and a Helm test hook that a sync never
    runs: Argo CD applied the hook, then its delete policy removed it; the test Pod was never created."""
    job = s.track(migration_job(**{"argocd.argoproj.io/hook": "PreSync",
                                   "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}))  # fmt: skip
    s.argocd(job)
    s.cluster.delete(job)  # HookSucceeded: Argo CD deletes the hook after it succeeded
    test = s.track(migration_job("smoke-test", **{"helm.sh/hook": "test"}))
    s.desired.append(test)
    s.argocd(s.track(deployment()), s.track(service()))


def prune_pending(s: Script) -> None:
    """The ConfigMap was in Git at the revision synced before; Git dropped it and the sync ran without prune."""
    s.argocd_earlier(s.track(configmap("legacy-settings")))
    s.argocd(s.track(deployment()), s.track(configmap()))


def prune_ignored(s: Script) -> None:
    """The same, with the object kept on purpose: Prune=false and IgnoreExtraneous (neither pruned nor counted)."""
    kept = configmap("legacy-settings")
    kept["metadata"]["annotations"] = {"argocd.argoproj.io/sync-options": "Prune=false",
                                       "argocd.argoproj.io/compare-options": "IgnoreExtraneous"}  # fmt: skip
    s.argocd_earlier(s.track(kept))
    s.argocd(s.track(deployment()), s.track(configmap()))


DEP, CM = "Deployment", "ConfigMap"
LABEL = f"/metadata/labels/{INSTANCE.replace('/', '~1')}"
ANNOTATION = f"/metadata/annotations/{TRACKING.replace('/', '~1')}"
IMAGE = "/spec/template/spec/containers/0/image"
ENV = "/spec/template/spec/containers/0/env/0"
RESOURCES = "/spec/template/spec/containers/0/resources"
LIMITS = f"{RESOURCES}/limits"
REPLICAS = "/spec/replicas"
PROTOCOL = "/spec/ingress/0/ports/0/protocol"
NOT_DECLARED = ": field not declared in schema"

# fmt: off
SCENARIOS: tuple[Scenario, ...] = (
    Scenario("kubectl-scale-csa", "csa", kubectl_scale, (Expect(DEP, "web", REPLICAS, "manual-edit", "kubectl"),)),
    Scenario("kubectl-scale-ssa", "ssa", kubectl_scale, (Expect(DEP, "web", REPLICAS, "manual-edit", "kubectl"),)),
    Scenario("hpa-scale-csa", "csa", hpa_scale,
             (Expect(DEP, "web", "/spec/replicas", "autoscaler", "kube-controller-manager"),)),
    Scenario("hpa-scale-ssa", "ssa", hpa_scale,
             (Expect(DEP, "web", "/spec/replicas", "autoscaler", "kube-controller-manager"),)),
    Scenario("kubectl-scale-with-hpa", "ssa", kubectl_scale_with_hpa,
             (Expect(DEP, "web", "/spec/replicas", "manual-edit", "kubectl"),)),
    # A scale to 0 through /scale records no manager at all (Scale's replicas is omitempty): nobody owns it.
    Scenario("keda-scale-to-zero", "ssa", keda_scale, (Expect(DEP, "worker", "/spec/replicas", "autoscaler", None),)),
    Scenario("kubectl-edit-image", "csa", kubectl_edit_image,
             (Expect(DEP, "web", IMAGE, "manual-edit", "kubectl-edit"),)),
    Scenario("kubectl-patch-configmap", "ssa", kubectl_patch_configmap,
             (Expect(CM, "settings", "/data/level", "manual-edit", "kubectl-patch"),)),
    Scenario("kubectl-apply-by-a-person", "csa", kubectl_apply_person,
             (Expect(CM, "settings", "/data/mode", "manual-edit", "kubectl-client-side-apply"),)),
    Scenario("kubectl-apply-server-side", "csa", kubectl_apply_server_side,
             (Expect(DEP, "web", "/spec/template/spec/containers/0/env/0/value", "manual-edit", "kubectl"),)),
    Scenario("operator-late-initialises", "ssa", operator_late_init,
             (Expect("Database", "orders", "/spec/storageClass", "operator", "db-operator"),)),
    Scenario("operator-rightsizes", "ssa", operator_builtin,
             (Expect(DEP, "web", f"{RESOURCES}/requests/cpu", "operator", "vpa-updater"),)),
    # Only the image shows: the label and the sidecar are keys Git does not set (Argo CD compares what Git sets).
    Scenario("webhook-injects-csa", "csa", webhook,
             (Expect(DEP, "web", IMAGE, "mutating-webhook", "argocd-controller", ssd=False),)),
    Scenario("webhook-injects-ssa", "ssa", webhook,
             (Expect(DEP, "web", IMAGE, "mutating-webhook", "argocd-controller", ssd=False),)),
    # Argo CD's legacy diff round-trips Git's object through the Go type: clusterIP "" is omitempty and vanishes, but
    # the last-applied configuration still has it, so the three-way patch deletes the allocated IP: it shows.
    Scenario("service-cluster-ip-empty", "csa", service_defaults,
             (Expect("Service", "web", "/spec/clusterIP", "api-defaulting", None, ssd=False),)),
    # Argo CD's legacy and structured-merge diffs both apply the type's defaults: only explain shows it (issue 21).
    Scenario("networkpolicy-protocol-default-csa", "csa", networkpolicy_protocol,
             (Expect("NetworkPolicy", "web", PROTOCOL, "api-defaulting", "argocd-controller", legacy=False,
                     ssd=False),)),
    Scenario("networkpolicy-protocol-default-ssa", "ssa", networkpolicy_protocol,
             (Expect("NetworkPolicy", "web", PROTOCOL, "api-defaulting", "argocd-controller", legacy=False,
                     ssd=False),)),
    Scenario("quantities-canonical", "csa", quantities, (
        Expect(DEP, "web", f"{LIMITS}/cpu", "normalization", "argocd-controller", legacy=False, ssd=False),
        Expect(DEP, "web", f"{LIMITS}/memory", "normalization", "argocd-controller", legacy=False, ssd=False),
    )),
    # One field the Deployment type does not have: Argo CD's legacy diff skips the Go-type round trip
    # (argoproj/argo-cd#16400) and shows the quantities too; server-side diff's dry-run apply is refused.
    Scenario("unknown-field-shows-quantities", "csa", unknown_field_and_quantities, (
        Expect(DEP, "web", "/spec/serviceName", "normalization", None),
        Expect(DEP, "web", f"{LIMITS}/cpu", "normalization", "argocd-controller", ssd=False),
        Expect(DEP, "web", f"{LIMITS}/memory", "normalization", "argocd-controller", ssd=False),
    ), ssd_error=f".spec.serviceName{NOT_DECLARED}"),
    # Client-side apply: a server-side apply of an undeclared field is refused, and so is server-side diff's dry run.
    Scenario("crd-defaults-and-pruned-field", "csa", crd_defaults_and_pruning,
             (Expect("Database", "orders", "/spec/replicas", "normalization", None),),
             ssd_error=f".spec.replicas{NOT_DECLARED}"),
    Scenario("crd-preserve-unknown-fields-false", "csa", crd_preserve_unknown_false,
             (Expect("Queue", "events", "/spec/retention", "normalization", None),),
             ssd_error=f".spec.retention{NOT_DECLARED}"),
    Scenario("two-apps-tracking-annotation", "csa", two_apps_annotation,
             (Expect(CM, "shared", ANNOTATION, "shared-resource", "argocd-controller"),)),
    Scenario("two-apps-instance-label", "csa", two_apps_label,
             (Expect(CM, "shared", LABEL, "shared-resource", "argocd-controller"),)),
    Scenario("helm-random-render", "csa", helm_random, (
        Expect("Secret", "creds-credentials", "/data/ca.crt", "nondeterministic-render", "argocd-controller"),
        Expect("Secret", "creds-credentials", "/data/password", "nondeterministic-render", "argocd-controller"),
    )),
    # Git ahead (issue 30): what Argo CD sent is the live value. Client-side apply: its own last-applied-configuration
    # proves it on the files alone; server-side apply: the Application's revisions say it (likely), `why` reads the
    # synced revision's render (confirmed). Gatekeeper's catch-all webhook never makes it a webhook's doing.
    Scenario("git-ahead-csa", "csa", git_ahead, (
        Expect(DEP, "web", IMAGE, "not-synced", "argocd-controller", confidence="confirmed"),
        Expect(DEP, "web", f"{ENV}/value", "not-synced", "argocd-controller", confidence="confirmed"),
        Expect(CM, "settings", "/data/mode", "not-synced", "argocd-controller", confidence="confirmed"),
        Expect(CM, "settings", "/metadata/labels/tier", "not-synced", None, confidence="confirmed"),
    )),
    Scenario("git-ahead-ssa", "ssa", git_ahead, (
        Expect(DEP, "web", IMAGE, "not-synced", "argocd-controller", confidence="likely", files="unknown"),
        Expect(DEP, "web", f"{ENV}/value", "not-synced", "argocd-controller", confidence="likely", files="unknown"),
        Expect(CM, "settings", "/data/mode", "not-synced", "argocd-controller", confidence="likely", files="unknown"),
        Expect(CM, "settings", "/metadata/labels/tier", "not-synced", None, confidence="likely", files="unknown"),
    )),
    # A removed limit is a removal, never "the same value" (issue 30, item 3).
    Scenario("limit-removed-csa", "csa", limit_removed,
             (Expect(DEP, "web", f"{LIMITS}/memory", "unknown", None, confidence="possible"),)),
    Scenario("limit-removed-ssa", "ssa", limit_removed,
             (Expect(DEP, "web", f"{LIMITS}/memory", "unknown", None, confidence="possible"),)),
    Scenario("helm-upgrade-by-a-pipeline", "csa", helm_upgrade,
             (Expect(CM, "settings", "/data/mode", "manual-edit", "helm", confidence="likely"),)),
    Scenario("clean-csa", "csa", clean),
    Scenario("clean-ssa", "ssa", clean),
    # Hooks are never compared by Argo CD: a chart with hooks is clean (argoproj/argo-cd#1628).
    Scenario("hooks-not-compared-csa", "csa", hooks,
             skipped=(("Job", "migrate", "hook"), ("Job", "smoke-test", "hook"))),
    Scenario("hooks-not-compared-ssa", "ssa", hooks,
             skipped=(("Job", "migrate", "hook"), ("Job", "smoke-test", "hook"))),
    Scenario("prune-pending-csa", "csa", prune_pending,
             resources=(("ConfigMap", "legacy-settings", "requires-pruning"),)),
    Scenario("prune-pending-ssa", "ssa", prune_pending,
             resources=(("ConfigMap", "legacy-settings", "requires-pruning"),)),
    Scenario("prune-ignored-extraneous", "csa", prune_ignored,
             skipped=(("ConfigMap", "legacy-settings", "ignore-extraneous"),)),
)
# fmt: on
