"""``/argo why`` against the real Argo CD, with the account and RBAC deploy/README.md tells users to create: an app
in another namespace (apps in any namespace), an app the account may not read, an app that does not exist."""

from __future__ import annotations

import json

import pytest

from tests.harness.argocd_e2e import APPROVER, E2E, ephemeral_to, namespace_for, project, wait_for
from tests.harness.argocd_objects import deployment, ref
from tests.harness.argocd_stack import APPS_NAMESPACE

pytestmark = pytest.mark.argocd


def test_an_app_in_another_namespace_is_alerted_and_explained_on_demand(e2e: E2E) -> None:
    name = "elsewhere"
    project(e2e, "e2e-apps", source_namespaces=[APPS_NAMESPACE])
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    web = deployment(name, replicas=1)
    e2e.add_files({f"apps/{name}/deployment.yaml": web})
    e2e.create_app(name, f"apps/{name}", ns, namespace=APPS_NAMESPACE, project="e2e-apps")
    e2e.sync(name, APPS_NAMESPACE)
    e2e.past_grace(name, APPS_NAMESPACE)
    e2e.cluster.kubectl_edit(ref(web, ns), {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.25"}]}}}})  # fmt: skip

    alert = e2e.wait_parents(name, "the notifications webhook's alert for apps/elsewhere")
    assert APPS_NAMESPACE in json.dumps(alert[0])
    e2e.why(f"{APPS_NAMESPACE}/{name}")
    answers = e2e.wait_parents(name, "the answer to /argo why", 2)
    text = wait_for(lambda: e2e.thread_text(answers[1]), lambda t: "Cause" in t, "the answer's thread")
    assert "Cause: `manual-edit`" in text and "kubectl-edit" in text, text


def test_an_app_the_account_may_not_read_is_answered_with_the_missing_permission(e2e: E2E) -> None:
    name = "restricted"
    project(e2e, "e2e-restricted")
    ns = namespace_for(name)
    e2e.add_files({f"apps/{name}/deployment.yaml": deployment(name, replicas=1)})
    e2e.create_app(name, f"apps/{name}", ns, project="e2e-restricted")
    # One permission less than deploy/README.md asks for: this project's apps may not be read by the bot.
    policy = e2e.stack.kubectl("-n", "argocd", "get", "configmap", "argocd-rbac-cm", "-o",
                               "jsonpath={.data.policy\\.csv}")  # fmt: skip
    policy += "\np, argo-why, applications, get, e2e-restricted/*, deny\n"
    e2e.stack.kubectl("-n", "argocd", "patch", "configmap", "argocd-rbac-cm", "--type", "merge", "-p",
                      json.dumps({"data": {"policy.csv": policy}}))  # fmt: skip
    _, body = wait_for(lambda: e2e.answer("GET", f"/api/v1/applications/{name}", e2e.stack.bot_token),
                       lambda r: r[0] == 403, "Argo CD enforcing the deny line", 30)  # fmt: skip
    assert body.get("code") == 7, body  # gRPC PermissionDenied, as the bot's client expects

    e2e.why(name)

    text = ephemeral_to(e2e, APPROVER, name)
    assert "`applications, get`" in text and "policy.csv" in text, text
    assert "e2e-restricted" in text or f"*/{name}" in text, text
    assert e2e.parents(name) == []


def test_an_app_that_does_not_exist_is_answered_in_words(e2e: E2E) -> None:
    e2e.why("no-such-app")

    text = ephemeral_to(e2e, APPROVER, "no-such-app")
    assert "no application no-such-app" in text, text
    assert e2e.parents("no-such-app") == []
