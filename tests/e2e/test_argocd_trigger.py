"""The shipped trigger (deploy/argocd-notifications: ``on-drift-after-sync``, ``oncePer`` the sync's finish time) as
Argo CD's own notifications controller runs it: one webhook per drift episode, none for an app that merely synced and
stays Progressing (no Pods here: a Deployment never becomes Healthy), and the bot's one thread for the app."""

from __future__ import annotations

import json

import pytest

from tests.harness.argocd_e2e import E2E, namespace_for, wait, wait_for
from tests.harness.argocd_objects import deployment, ref

pytestmark = pytest.mark.argocd


def sends(e2e: E2E, app: str, namespace: str = "argocd") -> int:
    """How many episodes the notifications controller sent webhooks for (recorded on their way to the bot). It
    delivers at least once: its ``oncePer`` record is an annotation that a racing update of the Application can lose
    (argoproj-labs/argocd-notifications#183, #338), so one episode (one ``finishedAt``) may come twice."""
    return len(answers(e2e, app, namespace))


def answers(e2e: E2E, app: str, namespace: str = "argocd") -> dict[str, list[int]]:
    """The bot's answer statuses to each episode's webhooks, by the episode's sync ``finishedAt``."""
    out: dict[str, list[int]] = {}
    for sent in e2e.tap.for_app(app, namespace):
        out.setdefault(sent.body["operationState"]["finishedAt"], []).append(sent.status)
    return out


def test_one_webhook_and_one_thread_per_drift_episode_and_none_while_merely_progressing(e2e: E2E) -> None:
    name = "episodes"
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    web = deployment(name, replicas=1)
    e2e.add_files({f"apps/{name}/deployment.yaml": web})
    e2e.create_app(name, f"apps/{name}", ns)
    e2e.sync(name)
    app = e2e.quiet_after_sync(name)
    assert app["status"]["health"]["status"] == "Progressing"
    sent = [[s.at, s.body] for s in e2e.tap.for_app(name)]
    assert sends(e2e, name) == 0 and e2e.parents(name) == [], json.dumps([*sent, app["status"]])

    e2e.cluster.kubectl_edit(ref(web, ns), {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.25"}]}}}})  # fmt: skip
    e2e.wait_parents(name, "the first episode's thread")
    assert sends(e2e, name) == 1

    e2e.sync(name)  # the edit is reverted: Synced again
    e2e.quiet_after_sync(name)
    assert sends(e2e, name) == 1

    e2e.cluster.kubectl_edit(ref(web, ns), {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.24"}]}}}})  # fmt: skip
    wait(lambda: sends(e2e, name) == 2, "the second episode's webhook", 60)
    # each episode accepted once; a second copy of one (at-least-once delivery) is answered as a duplicate
    assert [statuses[0] == 202 and set(statuses[1:]) <= {200} for statuses in answers(e2e, name).values()] == [
        True, True], answers(e2e, name)  # fmt: skip
    # the same app drifting again re-uses its thread: the parent now counts the two syncs that did not settle it
    wait_for(lambda: e2e.parents(name), lambda p: len(p) == 1 and "2 syncs did not settle it" in
                        json.dumps(p[0]["blocks"]), "the parent updated for the second episode")  # fmt: skip
    e2e.quiet_after_sync(name)
    assert sends(e2e, name) == 2  # oncePer: a later comparison of the same episode sends nothing
