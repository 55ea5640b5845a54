"""The Go test tooling works for real: the API server built from k8s.io/kubernetes records what writers did in
managedFields, and Argo CD's own diff (argodiff) judges a drift in the legacy and server-side diff modes.

These tests are the smoke tests of tests/harness/kube_server.py and tests/harness/argocd_diff.py; the live casebook
builds on them.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from kubernetes import client

from tests.harness.argocd_diff import ArgoDiff, ArgoDiffError
from tests.harness.kube_server import SERVICE_CIDR, KubeServer

KUBECTL_USER_AGENT = "kubectl/v1.34.2 (linux/amd64) kubernetes/6a2b4da"
"""What kubectl 1.34 sends: the API server names the field manager of a request without one after the
User-Agent's first part ("kubectl")."""


def desired_deployment(name: str, namespace: str, replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


def server_side_apply(api: Any, obj: dict[str, Any], manager: str = "argocd-controller") -> dict[str, Any]:
    """What Argo CD's sync does with ServerSideApply=true: an Apply patch by argocd-controller, forcing conflicts."""
    apps = client.AppsV1Api(api)
    result = apps.patch_namespaced_deployment(
        obj["metadata"]["name"], obj["metadata"]["namespace"], obj,
        field_manager=manager, force=True, _content_type="application/apply-patch+yaml",
    )  # fmt: skip
    out: dict[str, Any] = api.sanitize_for_serialization(result)
    return out


def kubectl_scale(kube_server: KubeServer, name: str, namespace: str, replicas: int) -> None:
    """``kubectl scale deployment/NAME --replicas=N``: a merge patch of the scale subresource, with no field
    manager: the server derives one from kubectl's User-Agent."""
    with kube_server.api_client() as api:
        api.user_agent = KUBECTL_USER_AGENT
        client.AppsV1Api(api).patch_namespaced_deployment_scale(
            name, namespace, {"spec": {"replicas": replicas}}, _content_type="application/merge-patch+json"
        )


def read_deployment(api: Any, name: str, namespace: str) -> dict[str, Any]:
    obj: dict[str, Any] = api.sanitize_for_serialization(
        client.AppsV1Api(api).read_namespaced_deployment(name, namespace)
    )
    obj.setdefault("apiVersion", "apps/v1")
    obj.setdefault("kind", "Deployment")
    return obj


def test_server_records_apply_then_kubectl_scale_in_managed_fields(
    kube_server: KubeServer, kube_api: Any, kube_namespace: str
) -> None:
    server_side_apply(kube_api, desired_deployment("web", kube_namespace))
    kubectl_scale(kube_server, "web", kube_namespace, 5)

    live = read_deployment(kube_api, "web", kube_namespace)
    assert live["spec"]["replicas"] == 5
    entries = {(e["manager"], e["operation"], e.get("subresource", "")): e for e in live["metadata"]["managedFields"]}
    assert set(entries) == {("argocd-controller", "Apply", ""), ("kubectl", "Update", "scale")}
    assert entries[("kubectl", "Update", "scale")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    # The scale took spec.replicas away from the applier: Argo CD's Apply entry no longer owns it.
    apply_spec = entries[("argocd-controller", "Apply", "")]["fieldsV1"]["f:spec"]
    assert "f:replicas" not in apply_spec
    assert "f:template" in apply_spec
    # And the API server defaulted what nobody wrote (no manager owns it).
    assert live["spec"]["strategy"]["type"] == "RollingUpdate"
    assert live["spec"]["template"]["spec"]["containers"][0]["terminationMessagePath"] == "/dev/termination-log"


def test_server_allocates_service_ips_from_the_service_range(kube_api: Any, kube_namespace: str) -> None:
    service = client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(selector={"app": "web"}, ports=[client.V1ServicePort(port=80)]),
    )
    created = kube_api.sanitize_for_serialization(
        client.CoreV1Api(kube_api).create_namespaced_service(kube_namespace, service)
    )
    assert ipaddress.ip_address(created["spec"]["clusterIP"]) in ipaddress.ip_network(SERVICE_CIDR)
    assert created["spec"]["ports"][0]["targetPort"] == 80  # filled from port by the server's defaulting


def test_default_service_account_exists_for_pods(kube_api: Any, kube_namespace: str) -> None:
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="p"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
    )
    created = kube_api.sanitize_for_serialization(client.CoreV1Api(kube_api).create_namespaced_pod(kube_namespace, pod))
    # The ServiceAccount admission plugin ran: it set the account and mounted its projected token volume.
    assert created["spec"]["serviceAccountName"] == "default"
    assert any(v["name"].startswith("kube-api-access-") for v in created["spec"]["volumes"])


@pytest.fixture
def scaled(kube_server: KubeServer, kube_api: Any, kube_namespace: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Deployment synced by Argo CD (server-side apply, 2 replicas), then scaled to 5 by kubectl: (desired, live)."""
    desired = desired_deployment("web", kube_namespace, replicas=2)
    server_side_apply(kube_api, desired)
    kubectl_scale(kube_server, "web", kube_namespace, 5)
    return desired, read_deployment(kube_api, "web", kube_namespace)


REPLICAS_RULE = {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}


def test_argocd_legacy_diff_sees_the_scale_and_the_rule_hides_it(
    argocd_diff_line: ArgoDiff, scaled: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    desired, live = scaled
    [web] = argocd_diff_line.diff([(desired, live)], mode="legacy").resources
    assert (web.kind, web.name, web.modified) == ("Deployment", "web", True)
    assert web.normalized_live is not None and web.predicted_live is not None
    assert (web.normalized_live["spec"]["replicas"], web.predicted_live["spec"]["replicas"]) == (5, 2)

    answer = argocd_diff_line.diff([(desired, live)], mode="legacy", ignore_differences=[REPLICAS_RULE])
    assert not answer.modified
    # The same rule from argocd-cm (system level), read by Argo CD's settings manager, hides it too.
    system = {"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers:\n- /spec/replicas\n"}
    assert not argocd_diff_line.diff([(desired, live)], mode="legacy", argocd_cm=system).modified


def test_argocd_legacy_diff_rule_hides_only_its_field(
    argocd_diff_line: ArgoDiff, scaled: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    desired, live = scaled
    desired["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    answer = argocd_diff_line.diff([(desired, live)], mode="legacy", ignore_differences=[REPLICAS_RULE])
    assert answer.modified  # a change Git makes to the image still shows


def test_argocd_server_side_diff_against_the_real_server(
    argocd_diff_line: ArgoDiff, kube_server: KubeServer, kube_api: Any, scaled: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    desired, live = scaled
    clean = desired_deployment("api", desired["metadata"]["namespace"])
    server_side_apply(kube_api, clean)
    clean_live = read_deployment(kube_api, "api", clean["metadata"]["namespace"])

    answer = argocd_diff_line.diff(
        [(desired, live), (clean, clean_live)], mode="server-side", kubeconfig=kube_server.kubeconfig
    )
    web, api = answer.resources
    assert web.modified and not api.modified
    assert web.predicted_live is not None and web.normalized_live is not None
    # The dry-run apply by argocd-controller (force) takes replicas back to Git's 2; the server's defaults are in
    # both sides, so the untouched Deployment is not modified.
    assert (web.normalized_live["spec"]["replicas"], web.predicted_live["spec"]["replicas"]) == (5, 2)
    assert web.predicted_live["spec"]["strategy"]["type"] == "RollingUpdate"

    hidden = argocd_diff_line.diff(
        [(desired, live)], mode="server-side", kubeconfig=kube_server.kubeconfig, ignore_differences=[REPLICAS_RULE]
    )
    assert not hidden.modified
    # The dry-run changed nothing on the server.
    assert read_deployment(kube_api, "web", desired["metadata"]["namespace"])["spec"]["replicas"] == 5


def test_argodiff_refuses_a_bad_request_and_answers_the_next(argocd_diff_line: ArgoDiff) -> None:
    desired = desired_deployment("x", "y")
    with pytest.raises(ArgoDiffError, match="unknown mode"):
        argocd_diff_line.diff([(desired, None)], mode="fast")  # type: ignore[arg-type]
    with pytest.raises(ArgoDiffError, match="needs kubeconfig"):
        argocd_diff_line.diff([(desired, None)], mode="server-side")
    with pytest.raises(ArgoDiffError, match='unknown field "ignoreDifference"'):
        argocd_diff_line.request({"ignoreDifference": [], "resources": []})
    # The same helper process answers the next request: a resource missing from the cluster is modified.
    [missing] = argocd_diff_line.diff([(desired, None)]).resources
    assert missing.modified and missing.normalized_live is None and missing.predicted_live is not None
