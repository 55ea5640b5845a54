"""A fix from chat to a Synced app on the real Argo CD: the alert's Open PR approved in Slack, the pull request (on
the fake GitHub, whose repository is the one Argo CD reads) merged, Argo CD applies the Application's new definition
(app of apps: a parent Application with automated sync tracks the child's manifest) and compares again with the new
``ignoreDifferences`` rule: the child is Synced, and the bot's thread says the drift is resolved."""

from __future__ import annotations

import urllib.error

import pytest

from tests.harness.argocd_e2e import CHANNEL, E2E, REPO, click, namespace_for, wait, wait_for
from tests.harness.argocd_objects import deployment, hpa, ref
from tests.harness.argocd_stack import IN_CLUSTER

pytestmark = pytest.mark.argocd


def child_application(e2e: E2E, name: str, dest: str, definition: str) -> dict[str, object]:
    return {
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd", "annotations": {"argo-why.io/definition": definition}},
        "spec": {"project": "default",
                 "source": {"repoURL": e2e.repo_url, "targetRevision": "main", "path": f"apps/{name}"},
                 "destination": {"server": IN_CLUSTER, "namespace": dest}},
    }  # fmt: skip


def exists(e2e: E2E, name: str) -> bool:
    try:
        e2e.app(name)
    except urllib.error.HTTPError:
        return False
    return True


def test_an_approved_pr_merged_in_git_makes_the_app_synced_and_the_thread_says_so(e2e: E2E) -> None:
    name = "pr-flow"
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    web = deployment(name, replicas=2)
    definition = f"argocd/{name}/application.yaml"
    url = e2e.github.file_url(REPO, "main", definition)
    e2e.add_files({f"apps/{name}/deployment.yaml": web, f"apps/{name}/hpa.yaml": hpa(name),
                   definition: child_application(e2e, name, ns, url)})  # fmt: skip
    e2e.create_app(f"{name}-root", f"argocd/{name}", "argocd", automated=True)
    wait(lambda: exists(e2e, name), "the child Application, applied by its parent", 60)
    e2e.sync(name)
    e2e.past_grace(name)
    e2e.cluster.autoscale(ref(web, ns), 5)
    [parent] = e2e.wait_parents(name, "the alert")

    click(e2e, parent, "open_pr")
    [pr] = wait(lambda: e2e.github.pulls(REPO), "the pull request", 60)
    e2e.github.merge_pr(REPO, pr.number)
    e2e.refresh(f"{name}-root")  # Argo CD reads the merge; the parent's automated sync applies the child's new spec

    app = e2e.wait_app(name, lambda a: a["status"]["sync"]["status"] == "Synced", "Synced with the merged rule",
                       timeout=90)  # fmt: skip
    assert app["spec"]["ignoreDifferences"] == [{"group": "apps", "kind": "Deployment", "name": name,
                                                "namespace": ns, "jsonPointers": ["/spec/replicas"]}]  # fmt: skip
    assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"]
    text = wait_for(lambda: e2e.thread_text(parent), lambda t: "was merged and" in t,
                    "the thread saying the drift is resolved", 90)  # fmt: skip
    assert f"{name}" in text and "Synced again" in text
    assert e2e.slack.messages(CHANNEL)  # the channel holds the thread
