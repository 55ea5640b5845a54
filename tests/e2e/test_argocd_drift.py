"""The real bot against the real Argo CD: an Application synced by Argo CD's own controller, a writer drifting a
field through the API as the real writer does, Argo CD's own notifications controller firing the trigger that
deploy/argocd-notifications installs, and the bot's thread read from Argo CD's real ``managed-resources``."""

from __future__ import annotations

import pytest

from tests.harness.argocd_e2e import E2E, namespace_for, wait_for
from tests.harness.argocd_objects import configmap, deployment, hpa, ref

pytestmark = pytest.mark.argocd


def synced_app(e2e: E2E, name: str, files: dict[str, object], *, sync_options: list[str] | None = None) -> str:
    """``files`` under ``apps/<name>/`` in Git, an Application of them synced by Argo CD; its destination namespace."""
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    e2e.add_files({f"apps/{name}/{path}": body for path, body in files.items()}, f"add {name}")  # type: ignore[misc]
    e2e.create_app(name, f"apps/{name}", ns, sync_options=sync_options)
    e2e.sync(name)
    e2e.past_grace(name)
    return ns


def one_thread(e2e: E2E, app: str) -> str:
    """The one parent the bot posted for ``app``, with its thread, as text."""
    parent = e2e.wait_parents(app, f"the bot's alert for {app}")
    text = wait_for(lambda: e2e.thread_text(parent[0]), lambda t: "Cause" in t, f"the explanation in {app}'s thread",
                    30)  # fmt: skip
    assert len(e2e.parents(app)) == 1, e2e.parents(app)
    return str(text)


def test_an_autoscaler_rewriting_replicas_of_a_client_side_applied_deployment(e2e: E2E) -> None:
    name = "scale-csa"
    web = deployment(name, replicas=2)
    ns = synced_app(e2e, name, {"deployment.yaml": web, "hpa.yaml": hpa(name)})

    e2e.cluster.autoscale(ref(web, ns), 5)  # kube-controller-manager's GET + PUT of /scale

    text = one_thread(e2e, name)
    assert "Cause: `autoscaler`" in text, text
    assert "kube-controller-manager" in text and "scale subresource" in text
    assert f"HorizontalPodAutoscaler `{ns}/{name}`" in text
    assert "/spec/replicas" in text and "RespectIgnoreDifferences=true" in text


def test_an_operator_server_side_applying_a_field_of_a_server_side_applied_configmap(e2e: E2E) -> None:
    name = "operator-ssa"
    settings = configmap(f"{name}-settings", {"mode": "standard", "owner": "platform"})
    ns = synced_app(e2e, name, {"configmap.yaml": settings}, sync_options=["ServerSideApply=true"])

    patch = {**ref(settings, ns), "data": {"mode": "tuned"}}
    e2e.cluster.server_side_apply(patch, "tuning-operator")  # an operator's Apply, force=true

    text = one_thread(e2e, name)
    assert "Cause: `operator`" in text, text
    assert "tuning-operator" in text and "/data/mode" in text


def test_a_person_editing_a_deployment_with_kubectl_edit(e2e: E2E) -> None:
    name = "edit-csa"
    web = deployment(name, replicas=1)
    ns = synced_app(e2e, name, {"deployment.yaml": web})

    e2e.cluster.kubectl_edit(ref(web, ns), {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.26"}]}}}})  # fmt: skip

    text = one_thread(e2e, name)
    assert "Cause: `manual-edit`" in text, text
    assert "kubectl-edit" in text and "nginx:1.26" in text
    assert "jsonPointers" not in text  # a person's edit gets no ignore rule
