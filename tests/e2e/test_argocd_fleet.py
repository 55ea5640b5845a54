"""A system-level rule from chat to Synced apps on the real Argo CD (the fleet): three apps drifted by one real writer
(an operator's server-side apply with a field manager of this test's own, ``e2e-fleet-operator``), the bot's threads
offer the rule in argocd-cm, a fourth app joins the drift, an approver of app fixes who may not approve system rules
is told who may, two approvers open the PR covering the four (on the fake GitHub, a real repository Argo CD reads over
``git://``), it is merged, argocd-cm reaches the cluster because
Argo CD manages it (an Application of the argocd-cm manifest, automated sync, destination the ``argocd`` namespace),
Argo CD compares the apps again with the new customization, every covered app is Synced and each covered thread says
its drift is resolved.

The fleet needs settings the session's bot does not have (``FLEET_MIN_APPS`` 3, two approvers, a project routed to
another approver, ``ARGOCD_CM_DEFINITION``), so this module runs a bot of its own, with its own Slack, GitHub and
Redis: the webhook relay sends it the webhooks of the apps named ``fleet-*`` and nothing else, the session's bot never
sees them, and no other test sees this module's threads or pull requests. The merged rule hides only what
``e2e-fleet-operator`` writes, a manager no other test uses; the Application that manages argocd-cm is deleted at the
end without cascade (argocd-cm stays, with the rule).
"""

from __future__ import annotations

import contextlib
import json
import sys
import urllib.error
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from bot.wording.pr import PR_SYSTEM_APPS
from tests.fakes.git import FakeGitHub
from tests.fakes.slack import FakeSlack
from tests.harness.argocd_e2e import CHANNEL, E2E, bot_settings, click, ephemeral_to, namespace_for, project, wait
from tests.harness.argocd_objects import deployment, ref
from tests.harness.argocd_stack import ArgoCDStack
from tests.harness.kube_server import KubeServer
from tests.harness.redis_server import _redis_server_binary, _start_on_free_port, free_port
from tests.harness.service_kit import BotProcess
from tests.harness.webhook_tap import WebhookTap
from tests.live.writers import Cluster

pytestmark = pytest.mark.argocd

PREFIX = "fleet-"
PLATFORM = "acme/platform"
"""This module's repository (the session's is ``acme/gitops``), on its own fake GitHub and in the git daemon."""
WRITER = "e2e-fleet-operator"
PROJECT = "e2e-fleet"
SYSTEM_BLOCK = "argo-why-fix-system"
"""The block of the system-level rule's Open PR (beside the app rule's, with the same action_id)."""
ALICE, BOB, CAROL = "U0ALICE", "U0BOB", "U0CAROL"
KEY = "resource.customizations.ignoreDifferences.apps_Deployment"
CM_PATH = "argocd/config/argocd-cm.yaml"
CONFIG_APP = f"{PREFIX}argocd-config"
FIRST = [f"{PREFIX}{x}" for x in ("a", "b", "c")]
LATE = f"{PREFIX}d"
"""Drifts after the rule was offered to the first three, before the PR opens: the PR covers it too."""
APPS = [*FIRST, LATE]

Obj = dict[str, Any]


def argocd_cm_in_git(stack: ArgoCDStack) -> str:
    """The argocd-cm manifest as a person keeps it in Git: every key the running Argo CD has (the stack's own
    configuration and the bot's account, deploy/README.md), so that applying it changes nothing until a PR does."""
    live = json.loads(stack.kubectl("-n", "argocd", "get", "configmap", "argocd-cm", "-o", "json"))
    manifest = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "argocd-cm", "namespace": "argocd", "labels": live["metadata"]["labels"]},
                "data": live["data"]}  # fmt: skip
    return "# Argo CD's settings, applied by the Application argocd-config: changes go through a PR\n" + yaml.safe_dump(
        manifest, sort_keys=False
    )


@pytest.fixture(scope="module")
def fleet(argocd_stack: ArgoCDStack, kube_server: KubeServer, webhook_tap: WebhookTap,
          tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[E2E]:  # fmt: skip
    """A bot of the fleet's own (see the module docstring) and Argo CD managing its own argocd-cm."""
    redis = _start_on_free_port(_redis_server_binary(), tmp_path_factory.mktemp("fleet-redis"))
    with FakeSlack() as slack, FakeGitHub() as github:
        for user, name in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol")):
            slack.add_user(user, name)
        bare = github.add_repo(PLATFORM, {"README.md": "The platform team's GitOps repository.\n",
                                          CM_PATH: argocd_cm_in_git(argocd_stack)})  # fmt: skip
        argocd_stack.git.serve(PLATFORM, bare.path)  # Argo CD reads it over git://, as it reads the session's
        settings = bot_settings(argocd_stack, slack, github, redis.url)
        settings.runtime.fleet_min_apps = 3
        settings.git.approvers = [ALICE, BOB]
        settings.git.approver_routes = {PROJECT: [CAROL]}  # carol approves this project's app fixes, not system rules
        settings.git.argocd_cm_definition = github.file_url(PLATFORM, "main", CM_PATH)
        cluster = Cluster(kube_server)
        bot = BotProcess(settings, serve=True, port=free_port())
        webhook_tap.routes[PREFIX] = bot.url
        world = E2E(argocd_stack, slack, github, cluster, bot, settings, webhook_tap, repo=PLATFORM)
        try:
            world.ready()
            project(world, PROJECT)
            # Argo CD manages its own settings: the Application of argocd-cm's manifest, synced automatically
            world.create_app(CONFIG_APP, "argocd/config", "argocd", automated=True)
            world.wait_app(CONFIG_APP, lambda a: a["status"]["sync"]["status"] == "Synced"
                           and (a["status"].get("operationState") or {}).get("phase") == "Succeeded",
                           "argocd-cm applied from Git", timeout=90)  # fmt: skip
            yield world
        finally:
            if request.session.testsfailed:
                sys.stderr.write(f"\nthe fleet's argo-why serve log (tail):\n{bot.stderr()[-20000:]}\n")
            for name in [CONFIG_APP, *APPS]:  # never cascade: argocd-cm stays as Git now holds it
                with contextlib.suppress(urllib.error.HTTPError):  # an app the test did not get to create
                    argocd_stack.api("DELETE", f"/api/v1/applications/{name}?cascade=false")
            webhook_tap.routes.pop(PREFIX, None)
            bot.close()
            cluster.close()
            redis.stop()


def system_message(message: Obj) -> bool:
    return any(b.get("block_id") == SYSTEM_BLOCK for b in message.get("blocks") or [])


def fleet_line(world: E2E, parent: Obj) -> Obj | None:
    """The thread's fleet line when it offers the system-level rule's Open PR."""
    replies = world.slack.thread(CHANNEL, parent["ts"])
    return next((m for m in replies if "The same in" in m.get("text", "") and system_message(m)), None)


def reply(world: E2E, parent: Obj, words: str, what: str, timeout: float = 60.0) -> Obj:
    """The first reply in ``parent``'s thread whose text holds ``words``, once there is one."""

    def found() -> Obj | None:
        return next((m for m in world.slack.thread(CHANNEL, parent["ts"]) if words in str(m.get("text"))), None)

    return dict(wait(found, what, timeout))


def offered(world: E2E, name: str, parent: Obj) -> Obj:
    """The app's fleet line, once it offers the system-level rule's Open PR."""
    return dict(wait(lambda: fleet_line(world, parent), f"{name}'s fleet line with the system rule", 90))


def live_cm(stack: ArgoCDStack) -> dict[str, str]:
    return dict(json.loads(stack.kubectl("-n", "argocd", "get", "configmap", "argocd-cm", "-o", "json"))["data"])


def test_a_system_rule_merged_into_argocd_cm_makes_every_covered_app_synced_and_each_thread_says_so(
    fleet: E2E,
) -> None:
    world = fleet
    spaces = {}
    for name in APPS:
        spaces[name] = namespace_for(name)
        world.stack.kube.create_namespace(spaces[name])
        world.add_files({f"apps/{name}/deployment.yaml": deployment(name, replicas=2)}, f"add {name}")
        world.create_app(name, f"apps/{name}", spaces[name], project=PROJECT)
    for name in APPS:
        world.sync(name)
    world.past_grace(APPS[-1])

    def operator_scales(name: str) -> None:  # server-side apply, with the operator's own field manager
        world.cluster.server_side_apply({**ref(deployment(name), spaces[name]), "spec": {"replicas": 4}}, WRITER)

    for name in FIRST:
        operator_scales(name)
    parents = {name: world.wait_parents(name, f"the alert for {name}", timeout=90)[0] for name in FIRST}
    lines = {name: offered(world, name, parents[name]) for name in FIRST}
    line = lines[FIRST[0]]
    text = json.dumps(line)
    assert "managedFieldsManagers" in text and WRITER in text and KEY in text, text
    assert "for 3 apps" in text and "hides nothing else in the" in text, text
    operator_scales(LATE)  # joins the drift after the offer: offered the rule too, and covered by the PR
    parents[LATE] = world.wait_parents(LATE, f"the alert for {LATE}", timeout=90)[0]
    late = offered(world, LATE, parents[LATE])
    assert "The same in 3 other apps" in late["text"], late["text"]

    # carol may approve this project's app fixes, never a rule that changes every app: she is told who may
    click(world, line, "open_pr", CAROL, block_id=SYSTEM_BLOCK)
    told = ephemeral_to(world, CAROL, "system-level rule")
    assert f"<@{ALICE}>, <@{BOB}> may approve it (two of them)" in told, told  # the message
    assert f"only {ALICE}, {BOB} may approve it" in told, told  # and its notification's text
    reply(world, parents[FIRST[0]], f"{CAROL} clicked Open PR: system-level rule, but may not approve system-level",
          "the thread saying carol's click did nothing")  # fmt: skip
    assert world.github.pulls(PLATFORM) == []

    click(world, line, "open_pr", ALICE, block_id=SYSTEM_BLOCK)
    approval = reply(world, parents[FIRST[0]], "Approved 1 of 2", "alice's approval")
    assert world.github.pulls(PLATFORM) == []
    click(world, approval, "approve", BOB)
    [pr] = wait(lambda: world.github.pulls(PLATFORM), "the pull request to argocd-cm", 60)

    # the body lists exactly the apps that have the drift as it opens, and the entry as the block to paste
    assert pr.title.endswith(f"written by {WRITER} (4 apps)"), pr.title
    covered = pr.body.split(PR_SYSTEM_APPS + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert covered == [f"- [argocd/{name}](" + covered[i].split("](", 1)[1] for i, name in enumerate(APPS)], pr.body
    assert all(f"/archives/{CHANNEL}/p" in c for c in covered), covered  # a link to each covered thread
    assert f"```yaml\n{KEY}: |\n  managedFieldsManagers:\n  - {WRITER}\n```" in pr.body, pr.body
    edited = world.github.repo(PLATFORM).read(pr.head, CM_PATH)
    assert edited is not None
    data = yaml.safe_load(edited)["data"]
    assert yaml.safe_load(data[KEY]) == {"managedFieldsManagers": [WRITER]}
    assert {k: v for k, v in data.items() if k != KEY} == live_cm(world.stack)  # lines added, nothing else

    world.github.merge_pr(PLATFORM, pr.number)
    world.refresh(CONFIG_APP)  # Argo CD reads the merge; the automated sync applies argocd-cm
    wait(lambda: KEY in live_cm(world.stack), "argocd-cm in the cluster with the merged rule", 90)

    for name in APPS:  # told at once; Synced only once Argo CD compares the app again
        reply(world, parents[name], "argo-why will say when", f"{name}'s thread saying the rule was merged")
    # Argo CD drops its cluster cache when argocd-cm changes but compares each app again only at its next
    # reconciliation (timeout.reconciliation: 120 s and a jitter; 2 to 2.5 min here): a refresh, as a person clicks
    # Refresh, asks for that comparison now
    for name in APPS:
        world.app(name, refresh="normal")
    for name in APPS:
        app = world.wait_app(name, lambda a: a["status"]["sync"]["status"] == "Synced", "Synced with the system rule",
                             timeout=60)  # fmt: skip
        assert not app["spec"].get("ignoreDifferences"), app["spec"]  # argocd-cm's rule, not the app's
        assert app["status"]["resources"][0]["status"] == "Synced"
    for name in APPS:
        resolved = str(reply(world, parents[name], "is Synced again", f"{name}'s thread saying it is resolved")["text"])
        said = [str(m.get("text")) for m in world.slack.thread(CHANNEL, parents[name]["ts"])]
        assert f"#{pr.number}" in resolved and KEY in resolved and f"argocd/{name}" in resolved, resolved
        assert sum("argo-why will say when" in t for t in said) == 1 and sum("Synced again" in t for t in said) == 1
        wait(lambda n=name: "is Synced again" in world.parents(n)[0]["text"], f"{name}'s parent turned green", 30)  # type: ignore[misc]
    assert world.github.pulls(PLATFORM)[0].state == "merged" and len(world.github.pulls(PLATFORM)) == 1
