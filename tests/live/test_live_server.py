"""The rest of the suite on the real API server (tests/harness/kube_server.py).

* ``argo-why why``'s cluster context (bot/sources/cluster.py) read by the official kubernetes client from the real
  server: HPAs, KEDA ScaledObjects (through their CRD), MutatingWebhookConfigurations, Namespaces and the CRDs of
  the app's custom resources; an API that is not installed is no error, and RBAC's 403 is said;
* every object of the Helm chart, for the default values and each values file of deploy/values/, created with
  server-side dry-run, so that the API server's own validation, defaulting and admission judge the chart.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from bot.sources.cluster import ClusterSource
from tests.deploy.test_chart import CASES, render
from tests.harness.kube_server import KubeServer
from tests.live.scenarios import SCALED_OBJECT_CRD, hpa
from tests.live.webhook import SidecarInjector, sidecar_injector  # noqa: F401  (fixture)
from tests.live.writers import ApiError, Cluster, Obj, is_namespaced, path_of, serve

SERVICE_MONITOR_CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "servicemonitors.monitoring.coreos.com"},
    "spec": {"group": "monitoring.coreos.com", "scope": "Namespaced",
             "names": {"kind": "ServiceMonitor", "plural": "servicemonitors", "singular": "servicemonitor",
                       "listKind": "ServiceMonitorList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "required": ["endpoints", "selector"],
                                                           "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}  # fmt: skip
"""The Prometheus Operator's ServiceMonitor kind (its real CRD's required fields; the rest of its schema kept
open): what a cluster that scrapes with the operator serves."""

CHART_KINDS = {
    ("", "Secret"): ("secrets", True), ("", "Service"): ("services", True),
    ("", "ServiceAccount"): ("serviceaccounts", True), ("", "ConfigMap"): ("configmaps", True),
    ("", "PersistentVolumeClaim"): ("persistentvolumeclaims", True),
    ("apps", "Deployment"): ("deployments", True), ("apps", "StatefulSet"): ("statefulsets", True),
    ("rbac.authorization.k8s.io", "ClusterRole"): ("clusterroles", False),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ("clusterrolebindings", False),
    ("rbac.authorization.k8s.io", "Role"): ("roles", True),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("rolebindings", True),
    ("networking.k8s.io", "Ingress"): ("ingresses", True),
    ("policy", "PodDisruptionBudget"): ("poddisruptionbudgets", True),
    ("monitoring.coreos.com", "ServiceMonitor"): ("servicemonitors", True),
}  # fmt: skip
for (_group, _kind), (_plural, _namespaced) in CHART_KINDS.items():
    serve(_group, _kind, _plural, _namespaced)


@pytest.fixture(scope="module")
def cluster(kube_server: KubeServer) -> Iterator[Cluster]:
    c = Cluster(kube_server)
    try:
        yield c
    finally:
        c.close()


def established(cluster: Cluster, crd: Obj) -> None:
    if not cluster.exists(crd):
        cluster.create(crd, "helm")
    for _ in range(100):
        conditions = (cluster.get(crd).get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
            return
        time.sleep(0.1)
    raise AssertionError(f"{crd['metadata']['name']} never became Established")


async def test_why_reads_its_cluster_context_from_the_real_server(
    kube_server: KubeServer,
    kube_namespace: str,
    cluster: Cluster,
    sidecar_injector: SidecarInjector,  # noqa: F811
) -> None:
    ns = kube_namespace
    established(cluster, SCALED_OBJECT_CRD)
    cluster.create({**hpa(), "metadata": {"name": "web", "namespace": ns}})
    cluster.create({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                    "metadata": {"name": "worker", "namespace": ns},
                    "spec": {"scaleTargetRef": {"name": "worker"}}})  # fmt: skip
    webhooks = sidecar_injector.configuration(ns)
    cluster.create(webhooks)
    other = f"{ns}-other"
    kube_server.create_namespace(other)
    cluster.create({**hpa("elsewhere"), "metadata": {"name": "elsewhere", "namespace": other}})

    with kube_server.api_client() as api:
        source = ClusterSource(api, "test")
        crds = ["scaledobjects.keda.sh", "widgets.absent.example.com"]
        ctx = await source.context_for([ns], "argocd", crds)
    found = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in ctx.objects}
    assert {("HorizontalPodAutoscaler", ns, "web"), ("ScaledObject", ns, "worker"), ("Namespace", None, ns),
            ("MutatingWebhookConfiguration", None, webhooks["metadata"]["name"]),
            ("CustomResourceDefinition", None, "scaledobjects.keda.sh")} <= found  # fmt: skip
    assert ("HorizontalPodAutoscaler", other, "elsewhere") not in found  # only the drifted objects' namespaces
    # Rollouts and Applications are not installed here: absent APIs are no evidence and no error
    assert not ctx.missing and not any(o["kind"] in ("Rollout", "Application") for o in ctx.objects)
    namespace = next(o for o in ctx.objects if o["kind"] == "Namespace")
    assert namespace["metadata"]["labels"]["kubernetes.io/metadata.name"] == ns  # what namespaceSelectors match


async def test_a_forbidden_read_is_said_not_fatal(
    kube_server: KubeServer, kube_namespace: str, cluster: Cluster
) -> None:
    """A service account allowed to read namespaces only: the other reads answer 403, each becomes a note."""
    ns = kube_namespace
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader", "namespace": ns}}
    cluster.create(sa)
    cluster.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": f"{ns}-ns-reader"},
                    "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list"]}]})  # fmt: skip
    cluster.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "metadata": {"name": f"{ns}-ns-reader"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                "name": f"{ns}-ns-reader"},
                    "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}]})  # fmt: skip
    token = cluster.call("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/reader/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})  # fmt: skip
    configuration = client.Configuration(host=kube_server.url)
    configuration.ssl_ca_cert = str(kube_server.ca_file)
    configuration.api_key = {"BearerToken": token["status"]["token"]}
    configuration.api_key_prefix = {"BearerToken": "Bearer"}
    with client.ApiClient(configuration) as api:
        ctx = await ClusterSource(api, "test").context_for([ns], None)
    assert [o["kind"] for o in ctx.objects] == ["Namespace"]
    assert any(m.startswith(f"HorizontalPodAutoscalers in {ns}: not allowed (403") for m in ctx.missing), ctx.missing


def chart_objects(case: str, namespace: str) -> list[Obj]:
    objects: list[Obj] = render(CASES[case], name="argo-why", namespace=namespace)["objects"]
    out = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        if is_namespaced(obj):
            obj["metadata"].setdefault("namespace", namespace)
        out.append(obj)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_chart_object_passes_a_server_side_dry_run(
    case: str, kube_namespace: str, cluster: Cluster, tmp_path: Path
) -> None:
    """``kubectl create --dry-run=server`` of every object: real validation, defaulting and admission."""
    established(cluster, SERVICE_MONITOR_CRD)
    objects = chart_objects(case, kube_namespace)
    failures: list[str] = []
    created: list[Any] = []
    for obj in objects:
        try:
            created.append(cluster.call("POST", path_of(obj, name=False), obj,
                                        params={"dryRun": "All", "fieldManager": "helm"}))  # fmt: skip
        except ApiError as e:
            failures.append(f"{obj['kind']} {obj['metadata']['name']}: {e}")
    assert not failures, "\n".join(failures)
    kinds = {o["kind"] for o in objects}
    assert {"Deployment", "Service", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"} <= kinds
    # A dry run stores nothing.
    assert not any(cluster.exists(o) for o in objects if o["kind"] == "Deployment")
    # What the server defaulted is what the bot runs with: e.g. the Deployment's pod keeps the chart's security.
    deployment_out = next(o for o in created if o["kind"] == "Deployment")
    pod = deployment_out["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["serviceAccountName"] == "argo-why"
    (tmp_path / "created.yaml").write_text(yaml.safe_dump_all(created))
