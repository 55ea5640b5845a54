"""The system-level rule end to end: the fleet's threads offer it, two different approvers open the PR to argocd-cm
(in both file forms, found both ways), and when it merges every covered thread is told.

The real bot (uvicorn, Bolt, the worker, real Redis) against the fake Argo CD, Slack and GitHub (a real bare git
repository): three apps share the HPA's replicas drift, a fourth has a kubectl edit of its own.
"""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from bot.config import GitSettings, Settings
from bot.demo.fake_argocd.applications import build_application
from bot.demo.runner import webhook_body
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.git import FakeGitHub
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, block_action_body
from tests.harness.fleet_kit import HPA_MANAGER, edited_objects, hpa_objects, serve
from tests.harness.service_kit import CHANNEL, Bot, running, service_settings, until

PLATFORM = "acme/platform"
GIT_TOKEN = "ghp_" + "fl33t" * 7
ALICE, BOB = "U0ALICE", "U0BOB"
SHARED = ["team-a", "team-b", "team-c"]
KEY = "resource.customizations.ignoreDifferences.apps_Deployment"
CONFIGMAP = """# Argo CD's settings: changes go through a PR
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  url: https://argocd.example.com
"""
VALUES = """# argo-helm values
configs:
  cm:
    exec.enabled: false
    resource.customizations.ignoreDifferences.apps_Deployment: |
      jsonPointers:
      - /spec/template/metadata/annotations
"""


@pytest.fixture(scope="module")
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(web_url="https://github.com") as fake:
        yield fake


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, github: FakeGitHub, redis_url: str,
             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    github.reset()
    github.token = GIT_TOKEN
    settings.git = GitSettings(provider="github", token=SecretStr(GIT_TOKEN), api_url=github.api_url,
                               approvers=[ALICE, BOB], approvals_required=1, pr_poll_s=1)  # fmt: skip
    return settings


def fleet(argocd: FakeArgoCD) -> list[dict[str, Any]]:
    apps = [serve(argocd, name, *hpa_objects(name)) for name in SHARED]
    return [*apps, serve(argocd, "team-d", *edited_objects("team-d"))]


def self_managed_argocd(argocd: FakeArgoCD) -> None:
    """The Application that manages Argo CD itself: the argo-helm chart with values in the platform repository."""
    app = build_application("argocd", "argocd", [])
    app["spec"]["source"] = {"repoURL": f"https://github.com/{PLATFORM}.git", "path": "argocd",
                             "targetRevision": "main", "helm": {"valueFiles": ["values.yaml"]}}  # fmt: skip
    argocd.add_app(app, [], [[]])


async def alerted(bot: Bot, apps: list[dict[str, Any]]) -> None:
    for app in apps:
        assert (await bot.webhook(webhook_body(app))).status_code == 202
        await bot.settle()


def thread_of(slack: FakeSlack, app: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parent = next(m for m in slack.messages(CHANNEL) if app in m["text"])
    return parent, slack.thread(CHANNEL, parent["ts"])


def system_button(message: dict[str, Any], action_id: str) -> tuple[str, str]:
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            system = action_id != "open_pr" or block.get("block_id") == "argo-why-fix-system"
            if element.get("action_id") == action_id and system:
                return str(element["value"]), str(block["block_id"])
    raise LookupError(f"no {action_id} in {message.get('text')!r}")


async def click(bot: Bot, slack: FakeSlack, message: dict[str, Any], action_id: str, user: str) -> None:
    value, block_id = system_button(message, action_id)
    body = block_action_body(action_id, value, user_id=user, channel_id=CHANNEL, message_ts=message["ts"],
                             block_id=block_id, response_url=slack, message=message)  # fmt: skip
    assert (await bot.slack_post(body)).status_code == 200
    await bot.settle()


def merged_said(slack: FakeSlack, app: str) -> bool:
    return any("was merged" in m["text"] for m in thread_of(slack, app)[1])


def synced_said(slack: FakeSlack, app: str) -> bool:
    return any("is Synced again" in m["text"] for m in thread_of(slack, app)[1])


def synced(argocd: FakeArgoCD, app: dict[str, Any]) -> None:
    """Argo CD compared the app again with the merged argocd-cm: Synced, nothing differs."""
    again = copy.deepcopy(app)
    again["status"]["sync"]["status"] = "Synced"
    argocd.add_app(again, [], [[]])


def branch_file(github: FakeGitHub, branch: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(github.repo(PLATFORM).path), "show", f"{branch}:{path}"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip


@pytest.mark.parametrize("form", ["configmap", "helm"])
async def test_two_approvers_open_one_pr_to_argocd_cm_and_the_merge_is_told_in_every_covered_thread(
    form: str, settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, github: FakeGitHub
) -> None:
    if form == "configmap":  # found through ARGOCD_CM_DEFINITION
        github.add_repo(PLATFORM, {"argocd/argocd-cm.yaml": CONFIGMAP})
        settings.git.argocd_cm_definition = f"https://github.com/{PLATFORM}/blob/main/argocd/argocd-cm.yaml"
        path = "argocd/argocd-cm.yaml"
    else:  # found through the Application that manages the Argo CD namespace
        github.add_repo(PLATFORM, {"argocd/Chart.yaml": "apiVersion: v2\nname: argocd\nversion: 1.0.0\n",
                                   "argocd/values.yaml": VALUES})  # fmt: skip
        self_managed_argocd(argocd)
        path = "argocd/values.yaml"
    apps = fleet(argocd)
    async with running(settings) as bot:
        await alerted(bot, apps)
        lines = {}
        for name in [*SHARED, "team-d"]:
            _, replies = thread_of(slack, name)
            lines[name] = [m for m in replies if "The same in" in m["text"]]
        assert not lines["team-d"] and all(len(lines[n]) == 1 for n in SHARED)
        line = lines["team-a"][0]
        text = str(line["blocks"])
        assert "managedFieldsManagers" in text and HPA_MANAGER in text and KEY in text
        assert "hides nothing else in the" in text  # its blast radius: nothing beyond the drift
        value, block_id = system_button(line, "open_pr")
        assert value.startswith("sysfix:") and block_id == "argo-why-fix-system"
        for name in [*SHARED, "team-d"]:  # each parent of the group offers it beside the app rule; team-d's not
            parent, _ = thread_of(slack, name)
            ids = [b.get("block_id") for b in parent["blocks"] if b["type"] == "actions"]
            beside = {"argo-why-fix-all", "argo-why-fix-system"}  # the app rule's Open PR and the system rule's
            assert (beside <= set(ids)) if name != "team-d" else "argo-why-fix-system" not in ids, (name, ids)
        parent_a, _ = thread_of(slack, "team-a")
        clicked = line if form == "configmap" else parent_a  # from the thread's line, or from the parent

        await click(bot, slack, clicked, "open_pr", ALICE)  # APPROVALS_REQUIRED=1, yet two are needed
        assert github.pulls(PLATFORM) == []
        _, replies = thread_of(slack, "team-a")
        [approval] = [m for m in replies if "Approved 1 of 2" in m["text"]]
        await click(bot, slack, approval, "approve", ALICE)  # the same person twice: still one
        assert github.pulls(PLATFORM) == []
        await click(bot, slack, approval, "approve", BOB)
        [pr] = github.pulls(PLATFORM)
        edited = branch_file(github, pr.head, path)
        original = CONFIGMAP if form == "configmap" else VALUES
        assert all(line in edited.splitlines() for line in original.splitlines())  # lines only added
        data = yaml.safe_load(edited)
        cm = data["data"] if form == "configmap" else data["configs"]["cm"]
        rules = yaml.safe_load(cm[KEY])
        assert rules["managedFieldsManagers"] == [HPA_MANAGER]
        if form == "helm":
            assert rules["jsonPointers"] == ["/spec/template/metadata/annotations"]  # merged into the existing key
        for name in SHARED:
            assert f"argocd/{name}" in pr.body
        assert "team-d" not in pr.body and pr.body.count("](") >= 3  # a link to each covered thread
        _, replies = thread_of(slack, "team-a")
        assert any(f"#{pr.number}" in m["text"] for m in replies)

        github.merge_pr(PLATFORM, pr.number)
        for name in SHARED:
            await until(lambda n=name: merged_said(slack, n))  # type: ignore[misc]
        assert not any("was merged" in m["text"] for m in thread_of(slack, "team-d")[1])
        # Argo CD's trigger sends nothing when an app is Synced again: the follow-up waits for each covered app
        assert not any(synced_said(slack, n) for n in SHARED) and not await _no_prs(bot)
        for app in apps[:2]:
            synced(argocd, app)
        for name in SHARED[:2]:
            await until(lambda n=name: synced_said(slack, n))  # type: ignore[misc]
            # the parent turns green right after
            await until(lambda n=name: "Synced again" in thread_of(slack, n)[0]["text"])  # type: ignore[misc]
        await bot.settle()
        assert not synced_said(slack, "team-c") and not await _no_prs(bot)
        synced(argocd, apps[2])
        await until(lambda: synced_said(slack, "team-c"))
        await until(lambda: _no_prs(bot))
        assert sum("is Synced again" in m["text"] for n in SHARED for m in thread_of(slack, n)[1]) == 3  # once each


async def _no_prs(bot: Bot) -> bool:
    return await bot.services.store.list_prs() == {}
