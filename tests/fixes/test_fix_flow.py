"""Fixes from chat end to end: Slack clicks on the real bot open a PR on a fake GitHub.

The flow the README documents in "Fixes from chat: Open PR".

Real HTTP (uvicorn, Bolt, signed requests), real Redis, the worker; fake Slack, Argo CD, cluster and GitHub, the
last one backed by a real bare git repository, so that every assertion on the change is made with ``git``.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from bot.config import GitSettings, Settings
from bot.demo import EXAMPLES
from bot.demo.fake_argocd import app_from_case
from bot.demo.fake_kube import context_from_case
from bot.demo.gitops import REPO, gitops_files, root_application, tracked_by
from bot.demo.runner import webhook_body
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.git import FakeGitHub, FakeGitLab
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, block_action_body
from tests.harness.service_kit import CHANNEL, Bot, running, service_settings, until

CASE = EXAMPLES / "checkout-hpa-and-hotfix"
GIT_TOKEN = "ghp_" + "s3cr3t" * 6
ALICE, BOB, CAROL, MALLORY = "U0ALICE", "U0BOB", "U0CAROL", "U0MALLORY"


@pytest.fixture(scope="module")
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(web_url="https://github.com") as fake:
        yield fake


@pytest.fixture
def world(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, github: FakeGitHub, redis_url: str,
          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Settings, dict[str, Any]]:  # fmt: skip
    """The checkout app, tracked by an app of apps whose repository holds its commented manifest."""
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    github.reset()
    github.token = GIT_TOKEN
    app, resources, renders = app_from_case(CASE)
    app = tracked_by(app)
    argocd.add_app(app, resources, renders)
    argocd.add_app(root_application(), [], [[]])
    kube.add(*context_from_case(CASE))
    github.add_repo(REPO, gitops_files([app]))
    settings.git = GitSettings(provider="github", token=SecretStr(GIT_TOKEN), api_url=github.api_url,
                               approvers=[ALICE, BOB, "S0PLATFORM"], approvals_required=1, pr_poll_s=1)  # fmt: skip
    slack.set_usergroup("S0PLATFORM", [CAROL])
    return settings, app


def button(message: dict[str, Any], action_id: str, block_prefix: str = "") -> tuple[str, str]:
    """(value, block_id) of the button ``action_id`` in ``message`` (the first whose block id starts so)."""
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("action_id") == action_id and str(block.get("block_id", "")).startswith(block_prefix):
                return str(element["value"]), str(block["block_id"])
    raise LookupError(f"no {action_id} button in {message.get('text')!r}")


def click(slack: FakeSlack, message: dict[str, Any], action_id: str, user: str, *, block_prefix: str = "",
          action_ts: str | None = None) -> bytes:  # fmt: skip
    value, block_id = button(message, action_id, block_prefix)
    return block_action_body(action_id, value, user_id=user, channel_id=CHANNEL, message_ts=message["ts"],
                             block_id=block_id, action_ts=action_ts, response_url=slack, message=message)  # fmt: skip


async def alert(bot: Bot, slack: FakeSlack, app: dict[str, Any]) -> dict[str, Any]:
    await bot.webhook(webhook_body(app))
    await bot.settle()
    [parent] = slack.messages(CHANNEL)
    return parent


async def clicked(bot: Bot, slack: FakeSlack, app: dict[str, Any], user: str) -> dict[str, Any]:
    """The alert of ``app``, then ``user``'s click on the parent's Open PR, handled; the parent."""
    parent = await alert(bot, slack, app)
    await bot.slack_post(click(slack, parent, "open_pr", user))
    await bot.settle()
    return parent


def git(github: FakeGitHub, *args: str) -> str:
    return subprocess.run(["git", "-C", str(github.repo(REPO).path), *args], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip


def branches(github: FakeGitHub) -> list[str]:
    return git(github, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def ephemerals(slack: FakeSlack, user: str) -> list[str]:
    return [str(c.params.get("text")) for c in slack.calls_to("chat.postEphemeral") if c.params.get("user") == user]


def replies(slack: FakeSlack, parent: dict[str, Any]) -> list[dict[str, Any]]:
    return slack.thread(CHANNEL, parent["ts"])


async def test_the_parent_and_each_finding_with_a_rule_carry_open_pr_with_a_confirm_dialog(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack
) -> None:
    settings, app = world
    async with running(settings) as bot:
        parent = await alert(bot, slack, app)
    value, block_id = button(parent, "open_pr")
    assert block_id == "argo-why-fix-all" and value.startswith("fix:")
    element = next(e for b in parent["blocks"] for e in b.get("elements") or [] if e.get("action_id") == "open_pr")
    assert "/spec/replicas of Deployment checkout/checkout-api" in element["confirm"]["text"]["text"]
    in_thread = [b["block_id"] for m in replies(slack, parent) for b in m["blocks"] if "fix-" in b.get("block_id", "")]
    # the HPA finding has a rule; the manual image edit has none (no button); the app's source is Helm: no source fix
    assert in_thread == ["argo-why-fix-finding-0"]


async def test_without_a_git_provider_there_is_no_open_pr_button(world: tuple[Settings, dict[str, Any]],
                                                                 slack: FakeSlack) -> None:  # fmt: skip
    settings, app = world
    settings.git = GitSettings(provider=None, approvers=[ALICE])
    async with running(settings) as bot:
        parent = await alert(bot, slack, app)
    with pytest.raises(LookupError):
        button(parent, "open_pr")
    assert "open_pr" not in str([replies(slack, parent)])


async def test_a_click_by_someone_not_allowed_is_refused_and_changes_nothing(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub
) -> None:
    settings, app = world
    async with running(settings) as bot:
        parent = await alert(bot, slack, app)
        assert (await bot.slack_post(click(slack, parent, "open_pr", MALLORY))).status_code == 200
        await bot.settle()
        audit = await bot.services.store.read_audit()
    [answer] = ephemerals(slack, MALLORY)
    assert "<@U0ALICE>" in str(slack.calls_to("chat.postEphemeral")[-1].params) and "nothing was done" in answer
    assert "<!subteam^S0PLATFORM>" in str(slack.calls_to("chat.postEphemeral")[-1].params)
    assert any("may not approve" in m["text"] for m in replies(slack, parent))
    assert [(a["user"], a["decision"], a["reason"]) for a in audit] == [(MALLORY, "refused", "not an approver")]
    assert branches(github) == ["main"] and github.pulls(REPO) == []


async def test_nobody_may_approve_when_approvers_is_unset(world: tuple[Settings, dict[str, Any]],
                                                          slack: FakeSlack, github: FakeGitHub) -> None:  # fmt: skip
    settings, app = world
    settings.git.approvers = []
    async with running(settings) as bot:
        await clicked(bot, slack, app, ALICE)
    assert any("set APPROVERS" in t for t in ephemerals(slack, ALICE))
    assert github.pulls(REPO) == []


async def test_two_approvals_open_one_pr_that_only_adds_lines(world: tuple[Settings, dict[str, Any]],
                                                              slack: FakeSlack, github: FakeGitHub,
                                                              argocd: FakeArgoCD) -> None:  # fmt: skip
    settings, app = world
    settings.git.approvals_required = 2
    before = git(github, "show", "main:apps/checkout.yaml")
    async with running(settings) as bot:
        parent = await clicked(bot, slack, app, ALICE)
        approval = replies(slack, parent)[-1]
        assert "Approved 1 of 2 by <@U0ALICE>" in approval["blocks"][0]["text"]["text"]
        await bot.slack_post(click(slack, approval, "approve", ALICE))  # the same person again counts once
        await bot.settle()
        assert github.pulls(REPO) == [] and "still counts once" in replies(slack, parent)[-1]["text"]
        await bot.slack_post(click(slack, approval, "approve", CAROL))  # an approver through the user group
        await bot.settle()
        audit = await bot.services.store.read_audit()

    [pr] = github.pulls(REPO)
    assert pr.head.startswith("argo-why/checkout/") and pr.base == "main"
    assert pr.title == "argo-why: ignore /spec/replicas of Deployment/checkout-api rewritten by " \
                       "HorizontalPodAutoscaler checkout/checkout-api"  # fmt: skip
    for point in ("Which controller changes the field", "Why it is the intended owner", "Why ignoring it is safe",
                  "What real drift will still be detected", "slack.com/archives/"):  # fmt: skip
        assert point in pr.body, point
    # the change: lines added, nothing else; a rule that covers the field, scoped to the object
    numstat = git(github, "diff", "--numstat", f"main...{pr.head}").split()
    assert numstat[1] == "0" and numstat[2] == "apps/checkout.yaml" and int(numstat[0]) > 0
    after = git(github, "show", f"{pr.head}:apps/checkout.yaml")
    assert all(line in after.splitlines() for line in before.splitlines())
    spec = yaml.safe_load(after)["spec"]
    assert spec["ignoreDifferences"] == [{"group": "apps", "kind": "Deployment", "name": "checkout-api",
                                          "namespace": "checkout", "jsonPointers": ["/spec/replicas"]}]  # fmt: skip
    assert "RespectIgnoreDifferences=true" in spec["syncPolicy"]["syncOptions"]
    # Slack: the parent's button and the Approve button became the PR's link; the thread says what was proposed
    [parent] = slack.messages(CHANNEL)
    link = next(b for b in parent["blocks"] if b.get("block_id") == "argo-why-fix-all")
    assert link["type"] == "context" and f"/pull/{pr.number}|#{pr.number}>" in link["elements"][0]["text"]
    assert "opened by <@U0CAROL>" in link["elements"][0]["text"]
    thread = replies(slack, parent)
    assert any("PR <https://github.com/acme/gitops/pull/" in str(m["blocks"]) for m in thread)
    # every button of this fix became the link: the finding's own in the thread, the Approve button
    assert "'open_pr'" not in str(thread) and "'approve'" not in str(thread)
    assert str(thread).count(f"/pull/{pr.number}|#{pr.number}> opened by <@U0CAROL>") >= 3
    assert any("jsonPointers" in str(m["blocks"]) and "apps/checkout.yaml" in str(m["blocks"]) for m in thread)
    decisions = [(a["user"], a["decision"]) for a in audit]
    assert decisions == [(ALICE, "approved"), (ALICE, "refused"), (CAROL, "approved"), (CAROL, "opened")]
    # read-only towards Argo CD, and no token anywhere people can see
    assert {c.method for c in argocd.calls} == {"GET"}
    assert GIT_TOKEN not in str([slack.messages(CHANNEL, include_replies=True), pr.title, pr.body])


async def test_the_pr_names_approvers_by_the_name_slack_gave_and_their_slack_mention(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub
) -> None:
    settings, app = world
    slack.add_user(ALICE, "alice", real_name="Alice Liddell", display_name="Alice L.")
    async with running(settings) as bot:
        await clicked(bot, slack, app, ALICE)
    [pr] = github.pulls(REPO)
    assert "Approved in Slack by Alice L. (`<@U0ALICE>` in Slack)." in pr.body
    assert "@alice" not in pr.body.lower() and "@user-" not in pr.body  # an @ would mention someone on GitHub


async def test_the_pr_for_all_findings_says_which_rules_are_fallbacks_and_the_fix_in_git(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub, argocd: FakeArgoCD,
    tmp_path: Path,
) -> None:  # fmt: skip
    settings, _ = world
    case = tmp_path / "case"
    shutil.copytree(CASE, case)
    desired = case / "desired.yaml"
    lines = desired.read_text().splitlines(keepends=True)
    lines[171] = lines[171].replace("memory: 1Gi", "memory: 1024Mi")  # checkout-api's request: 1Gi, written otherwise
    # and a key the Container type does not have: Argo CD then compares the object as written (argoproj/argo-cd#16400)
    # and shows the notation (without it, its Go-type round trip makes 1024Mi and 1Gi the same)
    assert lines[168].strip() == "resources:"
    lines.insert(168, "          resource: {}\n")
    desired.write_text("".join(lines))
    app, resources, renders = app_from_case(case)
    argocd.add_app(tracked_by(app), resources, renders)
    async with running(settings) as bot:
        await clicked(bot, slack, app, ALICE)
    [pr] = github.pulls(REPO)
    memory = "/spec/template/spec/containers/0/resources/requests/memory"
    assert f". `{memory}` of Deployment `checkout/checkout-api` (fallback rule)\n" in pr.body
    assert "#### 1. `/spec/replicas` of Deployment `checkout/checkout-api`\n" in pr.body  # the HPA's rule is the fix
    said = pr.body.split("**Fallback rules, not the fix:**", 1)[1].split("###", 1)[0]
    assert f"- `{memory}` of Deployment `checkout/checkout-api` (normalization): " in said
    assert "/spec/replicas" not in said


async def test_double_clicks_and_two_replicas_open_one_pr(world: tuple[Settings, dict[str, Any]], slack: FakeSlack,
                                                          github: FakeGitHub) -> None:  # fmt: skip
    settings, app = world
    async with running(settings, workers=2) as one, running(settings, workers=2) as two:
        parent = await alert(one, slack, app)
        bodies = [click(slack, parent, "open_pr", user, action_ts=f"1764500000.{i}")
                  for i, user in enumerate([ALICE, ALICE, BOB, ALICE])]  # fmt: skip
        same = click(slack, parent, "open_pr", BOB, action_ts="1764500009.9")
        await asyncio.gather(*(bot.slack_post(b) for bot, b in zip([one, two, one, two], bodies, strict=True)),
                             one.slack_post(same), two.slack_post(same))  # fmt: skip
        await one.settle(30)
        await two.settle(30)
    assert len(github.pulls(REPO)) == 1
    assert len([b for b in branches(github) if b.startswith("argo-why/")]) == 1


async def test_the_annotation_names_the_file(world: tuple[Settings, dict[str, Any]], slack: FakeSlack,
                                             github: FakeGitHub, argocd: FakeArgoCD) -> None:  # fmt: skip
    settings, app = world
    github.advance(REPO, {"teams/payments/checkout-app.yaml": git(github, "show", "main:apps/checkout.yaml"),
                          "apps/checkout.yaml": None})  # fmt: skip
    annotated = {
        **app,
        "metadata": {
            **app["metadata"],
            "annotations": {
                "argo-why.io/definition": "https://github.com/acme/gitops/blob/main/teams/payments/checkout-app.yaml"
            },
        },
    }
    _, resources, renders = app_from_case(CASE)
    argocd.add_app(annotated, resources, renders)
    async with running(settings) as bot:
        await clicked(bot, slack, annotated, BOB)
    [pr] = github.pulls(REPO)
    assert git(github, "diff", "--name-only", f"main...{pr.head}").split() == ["teams/payments/checkout-app.yaml"]


async def test_a_branch_with_a_slash_in_the_annotations_link_is_found(world: tuple[Settings, dict[str, Any]],
                                                                      slack: FakeSlack, github: FakeGitHub,
                                                                      argocd: FakeArgoCD) -> None:  # fmt: skip
    """The browser shows ``blob/release/1.2/apps/...`` for the branch ``release/1.2``: the PR targets that branch."""
    settings, app = world
    git(github, "branch", "release/1.2", "main")
    url = f"https://github.com/{REPO}/blob/release/1.2/apps/checkout.yaml"
    annotated = {**app, "metadata": {**app["metadata"], "annotations": {"argo-why.io/definition": url}}}
    _, resources, renders = app_from_case(CASE)
    argocd.add_app(annotated, resources, renders)
    async with running(settings) as bot:
        await clicked(bot, slack, annotated, BOB)
    [pr] = github.pulls(REPO)
    assert pr.base == "release/1.2"
    assert git(github, "diff", "--name-only", f"release/1.2...{pr.head}").split() == ["apps/checkout.yaml"]


async def test_with_github_enterprise_a_github_com_repository_is_refused_in_words_not_queried(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub
) -> None:
    """GIT_API_URL names a GitHub Enterprise Server (``/api/v3``); the app of apps lives on github.com."""
    settings, app = world
    settings.git = settings.git.model_copy(update={"api_url": "https://ghe.example.com/api/v3"})
    calls = len(github.calls)
    async with running(settings) as bot:
        parent = await clicked(bot, slack, app, BOB)
    assert github.pulls(REPO) == [] and len(github.calls) == calls  # nothing asked of any API for that repository
    last = replies(slack, parent)[-1]
    assert last["text"].startswith("No pull request:")
    words = str(last["blocks"])
    assert "github.com" in words and "GitHub Enterprise (ghe.example.com)" in words


@pytest.mark.parametrize("url", [
    "https://github.com/acme/gitops/blob/main/../../etc/passwd",
    "https://evil.example.com/acme/gitops/blob/main/apps/checkout.yaml",
    "https://github.com/acme/gitops/blob/main/%2e%2e/secrets.yaml",
])  # fmt: skip
async def test_a_definition_outside_the_repository_or_the_host_is_refused(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub, argocd: FakeArgoCD, url: str
) -> None:
    settings, app = world
    annotated = {**app, "metadata": {**app["metadata"], "annotations": {"argo-why.io/definition": url}}}
    _, resources, renders = app_from_case(CASE)
    argocd.add_app(annotated, resources, renders)
    async with running(settings) as bot:
        parent = await clicked(bot, slack, annotated, BOB)
    assert github.pulls(REPO) == []
    last = replies(slack, parent)[-1]
    assert last["text"].startswith("No pull request:") and "jsonPointers" in str(last["blocks"])


async def test_an_applicationset_gets_the_rule_in_its_template(world: tuple[Settings, dict[str, Any]],
                                                               slack: FakeSlack, github: FakeGitHub,
                                                               argocd: FakeArgoCD) -> None:  # fmt: skip
    settings, app = world
    appset_yaml = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: storefront
  namespace: argocd
spec:
  generators:
    - list:
        elements:
          - name: checkout  # the only one so far
  template:
    metadata:
      name: '{{name}}'
    spec:
      project: default
      source:
        repoURL: https://git.example.com/platform/deploy.git
        path: 'apps/{{name}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{name}}'
"""
    github.advance(REPO, {"apps/storefront.yaml": appset_yaml, "apps/checkout.yaml": None})
    owned = {**app, "metadata": {**{k: v for k, v in app["metadata"].items() if k != "annotations"},
                                 "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
                                                      "name": "storefront", "uid": "1"}]}}  # fmt: skip
    _, resources, renders = app_from_case(CASE)
    argocd.add_app(owned, resources, renders)
    argocd.add_appset(tracked_by(yaml.safe_load(appset_yaml)))
    async with running(settings) as bot:
        await clicked(bot, slack, owned, BOB)
    [pr] = github.pulls(REPO)
    template = yaml.safe_load(git(github, "show", f"{pr.head}:apps/storefront.yaml"))["spec"]["template"]["spec"]
    assert template["ignoreDifferences"][0]["name"] == "checkout-api"
    assert "every Application it generates gets the rule" in pr.body


@pytest.mark.parametrize(("inject", "words"), [
    ("protect", "protect"),
    ("401", "GIT_TOKEN"),
    ("403", "permission"),
])  # fmt: skip
async def test_git_host_errors_are_said_in_words(world: tuple[Settings, dict[str, Any]], slack: FakeSlack,
                                                 github: FakeGitHub, inject: str, words: str) -> None:  # fmt: skip
    settings, app = world
    if inject == "protect":
        github.protect(REPO, "argo-why/*")
    else:
        github.fail("POST", "/git/refs", int(inject), times=None)
    async with running(settings) as bot:
        parent = await clicked(bot, slack, app, BOB)
        audit = await bot.services.store.read_audit()
    last = replies(slack, parent)[-1]
    assert last["text"].startswith("The pull request could not be opened:") and words in last["text"], last["text"]
    assert GIT_TOKEN not in last["text"]
    assert audit[-1]["decision"] == "failed"


async def test_a_helm_templated_file_is_never_half_edited(world: tuple[Settings, dict[str, Any]], slack: FakeSlack,
                                                          github: FakeGitHub) -> None:  # fmt: skip
    settings, app = world
    text = git(github, "show", "main:apps/checkout.yaml").replace("namespace: checkout", "namespace: {{ .Values.ns }}")
    github.advance(REPO, {"apps/checkout.yaml": text})
    async with running(settings) as bot:
        parent = await clicked(bot, slack, app, BOB)
    assert github.pulls(REPO) == [] and branches(github) == ["main"]
    last = replies(slack, parent)[-1]
    assert "No pull request:" in last["text"] and "template" in last["text"].lower()
    assert "jsonPointers" in str(last["blocks"])


async def test_the_follow_up_says_merged_and_synced_or_brings_the_button_back(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub, argocd: FakeArgoCD
) -> None:
    settings, app = world
    async with running(settings) as bot:
        parent = await clicked(bot, slack, app, BOB)
        [pr] = github.pulls(REPO)
        github.close_pr(REPO, pr.number)
        await until(lambda: any("closed without merging" in m["text"] for m in replies(slack, parent)))
        [parent] = slack.messages(CHANNEL)
        assert button(parent, "open_pr")[1] == "argo-why-fix-all"  # the button is back

        await bot.slack_post(click(slack, parent, "open_pr", ALICE))
        await bot.settle()
        second = github.pulls(REPO)[-1]
        assert second.number != pr.number and second.state == "open"
        github.merge_pr(REPO, second.number)
        await until(lambda: any("argo-why will say when" in m["text"] for m in replies(slack, parent)))
        synced, resources, renders = app_from_case(CASE)
        synced = tracked_by(synced)
        synced["status"]["sync"]["status"] = "Synced"
        argocd.add_app(synced, resources, renders)
        await until(lambda: any("is Synced again" in m["text"] for m in replies(slack, parent)))
        await until(lambda: "Synced again" in slack.messages(CHANNEL)[0]["text"])

        async def forgotten() -> bool:  # the job forgets the PR right after it turned the parent green
            return await bot.services.store.list_prs() == {}

        await until(forgotten)


async def test_a_later_alert_keeps_the_pr_link_not_a_fresh_button(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub
) -> None:
    settings, app = world
    async with running(settings) as bot:
        parent = await clicked(bot, slack, app, BOB)
        later = webhook_body(app)
        later["operationState"] = {**later["operationState"], "finishedAt": "2026-12-01T10:00:00Z"}
        await bot.webhook(later)
        await bot.settle()
    [parent] = slack.messages(CHANNEL)
    assert parent["updated"] >= 2
    with pytest.raises(LookupError):
        button(parent, "open_pr")
    assert "opened by <@U0BOB>" in str(parent["blocks"])


async def test_the_better_fix_in_the_source_drops_the_autoscaled_replicas(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub, argocd: FakeArgoCD
) -> None:
    settings, app = world
    docs = list(yaml.safe_load_all(CASE.joinpath("desired.yaml").read_text()))
    api = next(d for d in docs if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "checkout-api")
    manifest = "# The API; replicas are the HPA's from 4.31 on.\n" + yaml.safe_dump(api, sort_keys=False)
    github.add_repo("acme/checkout", {"deploy/api.yaml": manifest, "deploy/README.md": "plain manifests\n"})
    plain = {**app, "spec": {**app["spec"], "source": {"repoURL": "https://github.com/acme/checkout.git",
                                                       "path": "deploy", "targetRevision": "main"}},
             "status": {**app["status"], "sourceType": "Directory"}}  # fmt: skip
    _, resources, renders = app_from_case(CASE)
    argocd.add_app(plain, resources, renders)
    async with running(settings) as bot:
        parent = await alert(bot, slack, plain)
        finding = next(m for m in replies(slack, parent) if "argo-why-fix-source-0" in str(m["blocks"]))
        await bot.slack_post(click(slack, finding, "open_pr", BOB, block_prefix="argo-why-fix-source"))
        await bot.settle()
    [pr] = github.pulls("acme/checkout")
    assert pr.title.startswith("argo-why: drop /spec/replicas of Deployment/checkout-api from Git")
    diff = github.repo("acme/checkout").diff(pr.base, pr.head)
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ["-  replicas: 3"]
    assert github.pulls(REPO) == []  # the Application's own definition is untouched


async def test_a_hotfix_set_by_hand_can_be_committed_to_git_and_the_thread_says_what_a_sync_would_undo(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, github: FakeGitHub, argocd: FakeArgoCD
) -> None:
    settings, app = world
    docs = list(yaml.safe_load_all(CASE.joinpath("desired.yaml").read_text()))
    worker = next(d for d in docs if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "checkout-worker")
    released = r"(image: registry.shopfloor.io/checkout/worker:4.31.0)\n"
    manifest = "# The worker.\n" + re.sub(released, r"\1  # release\n", yaml.safe_dump(worker, sort_keys=False))
    github.add_repo("acme/checkout", {"deploy/worker.yaml": manifest})
    plain = {**app, "spec": {**app["spec"], "source": {"repoURL": "https://github.com/acme/checkout.git",
                                                       "path": "deploy", "targetRevision": "main"}},
             "status": {**app["status"], "sourceType": "Directory"}}  # fmt: skip
    _, resources, renders = app_from_case(CASE)
    argocd.add_app(plain, resources, renders)
    hotfix = "registry.shopfloor.io/checkout/worker:4.31.1-hotfix.1"
    async with running(settings) as bot:
        parent = await alert(bot, slack, plain)
        finding = next(m for m in replies(slack, parent) if "argo-why-fix-commit-" in str(m["blocks"]))
        said = str(finding["blocks"])
        # first the decision, then what each choice does: a sync rolls the hotfix back
        assert "First decide which value is right" in said
        back = f"sets `spec.template.spec.containers[name=worker].image` back from `{hotfix}` to `{hotfix[:-11]}.0`"
        assert back in said and "a hotfix would be rolled back" in said
        assert "Open PR: commit the live value to Git" in said
        await bot.slack_post(click(slack, finding, "open_pr", BOB, block_prefix="argo-why-fix-commit"))
        await bot.settle()
    [pr] = github.pulls("acme/checkout")
    assert pr.title.startswith("argo-why: commit the live /spec/template/spec/containers/0/image of "
                               "Deployment/checkout-worker to Git")  # fmt: skip
    diff = github.repo("acme/checkout").diff(pr.base, pr.head)
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert [line[0] + line[1:].strip() for line in changed] == [
        "-image: registry.shopfloor.io/checkout/worker:4.31.0  # release",
        f"+image: {hotfix}  # release",
    ]  # one line: the value changed, its comment kept
    assert "the next sync keeps it instead of rolling it back" in pr.body
    assert "to the live value." in str(replies(slack, parent)[-1]["blocks"])
    assert github.pulls(REPO) == []  # the Application's own definition is untouched


async def test_gitlab_opens_a_merge_request_in_a_nested_group(
    world: tuple[Settings, dict[str, Any]], slack: FakeSlack, argocd: FakeArgoCD
) -> None:
    settings, app = world
    with FakeGitLab() as gitlab:
        gitlab.token = GIT_TOKEN
        path = "acme/platform/gitops"
        gitlab.add_repo(path, gitops_files([app]))
        argocd.add_app(root_application(repo_url=f"{gitlab.web_url}/{path}.git"), [], [[]])
        settings.git = GitSettings(provider="gitlab", token=SecretStr(GIT_TOKEN), api_url=gitlab.api_url,
                                   approvers=[BOB])  # fmt: skip
        async with running(settings) as bot:
            await clicked(bot, slack, app, BOB)
        [mr] = gitlab.pulls(path)
        diff = gitlab.repo(path).diff(mr.base, mr.head)
    assert [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")] == []
    assert "+    - /spec/replicas" in diff or "+    jsonPointers:" in diff
    assert f"{gitlab.web_url}/{path}/-/merge_requests/{mr.number}" in str(slack.messages(CHANNEL))
