"""The system-level rule covers the fleet as it is when the PR opens (issue 29, found from outside with 21 apps).

* the check takes each app's objects from the fleet index (what its analysis read), never from Argo CD again;
* an app that joins the drift after the rule was first offered is offered it too, is listed in the PR, and is told
  when it merges; the PR names the apps the check could not read, and its YAML is the block a person pastes;
* a click by someone who may not approve a system-level rule is answered ephemerally with who may;
* a refusal is one phrase with the right plural.

The real bot (uvicorn, Bolt, the worker, real Redis) against the fake Argo CD, Slack and GitHub, on the stand-in
fleet of ``tests/harness/fleet_kit.py`` and the harness of ``tests/fleet/test_fleet_pr.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from bot.analysis.fleet import AppObjects, FleetGroup
from bot.analysis.systemrule import system_rule
from bot.config import GitSettings, Settings
from bot.runtime import systemfix
from bot.runtime.systemfix import cm_snippet
from bot.slack.render.fleet import fleet_line_message
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.git import FakeGitHub
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.fleet.test_fleet_pr import (  # noqa: F401  (github: a fixture)
    ALICE,
    BOB,
    CONFIGMAP,
    GIT_TOKEN,
    KEY,
    PLATFORM,
    alerted,
    click,
    github,
    merged_said,
    system_button,
    thread_of,
)
from tests.harness.fleet_kit import HPA_MANAGER, edited_objects, hpa_objects, serve
from tests.harness.service_kit import running, service_settings, until

CAROL = "U0CAROL"  # may approve the project's app fixes (APPROVER_ROUTES), not a system-level rule
LATE = ["team-e", "team-f"]


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, github: FakeGitHub, redis_url: str,  # noqa: F811
             tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    github.reset()
    github.token = GIT_TOKEN
    settings.git = GitSettings(provider="github", token=SecretStr(GIT_TOKEN), api_url=github.api_url,
                               approvers=[ALICE, BOB], approver_routes={"*": [CAROL]}, approvals_required=1,
                               pr_poll_s=1)  # fmt: skip
    github.add_repo(PLATFORM, {"argocd/argocd-cm.yaml": CONFIGMAP})
    settings.git.argocd_cm_definition = f"https://github.com/{PLATFORM}/blob/main/argocd/argocd-cm.yaml"
    return settings


def managed_resources_calls(argocd: FakeArgoCD) -> list[str]:
    return [c.path.split("/")[4] for c in argocd.calls if c.path.endswith("/managed-resources")]


def test_the_snippet_is_the_block_a_person_pastes() -> None:
    text = cm_snippet(KEY, {"managedFieldsManagers": [HPA_MANAGER]})
    assert text == f"{KEY}: |\n  managedFieldsManagers:\n  - {HPA_MANAGER}\n"
    assert yaml.safe_load(yaml.safe_load(text)[KEY]) == {"managedFieldsManagers": [HPA_MANAGER]}


def test_a_refusal_is_one_phrase_with_the_right_plural() -> None:
    shared = ("team-a", "team-b", "team-c")
    group = FleetGroup("apps", "Deployment", "/spec/replicas", "some-operator", "operator", shared,
                       tuple((a, f"{a}/web") for a in shared), True)  # fmt: skip
    known = {a: AppObjects([hpa_objects(a)]) for a in shared}
    known["team-d"] = AppObjects([edited_objects("team-d")])
    rule = system_rule(group, known)
    text = str(fleet_line_message(group, "team-a", rule, None).blocks)
    assert "No system-level rule is offered: it would also hide 1 Git-managed field in other objects" in text
    assert "no system-level rule:" not in text.lower().replace("no system-level rule is offered:", "")


async def test_the_rule_covers_the_apps_that_drift_when_the_pr_opens(
    settings: Settings,
    slack: FakeSlack,
    argocd: FakeArgoCD,
    github: FakeGitHub,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(systemfix, "READ_BATCH", 3)  # the check reads the kept objects 3 apps at a time: 4 batches
    first = [serve(argocd, n, *hpa_objects(n)) for n in ("team-a", "team-b", "team-c")]
    late = [serve(argocd, n, *hpa_objects(n)) for n in LATE]
    others = [f"team-{c}" for c in "dghij"]  # drifts of their own (a kubectl edit)
    for name in others:
        serve(argocd, name, *edited_objects(name))
    serve(argocd, "team-x", *edited_objects("team-x"))
    argocd.lose_resources("team-x")  # listed, but its managed-resources cannot be read: 1 app in 11
    async with running(settings) as bot:
        await alerted(bot, first)
        analysed = managed_resources_calls(argocd)
        # the analyses read team-a..c, the check read only the apps no analysis had read yet (a few: read now)
        # (team-x's 500 is retried, as every 5xx is)
        assert sorted(a for a in analysed if a != "team-x") == sorted(["team-a", "team-b", "team-c", *others, *LATE])
        assert "team-x" in analysed
        await alerted(bot, late)  # they join the drift after the rule was offered
        for name in LATE:
            parent, replies = thread_of(slack, name)
            assert any("The same in" in m["text"] for m in replies), name
            system_button(parent, "open_pr")  # offered beside their app rule too
        assert managed_resources_calls(argocd).count("team-d") == 1  # kept: not read again

        parent_e, _ = thread_of(slack, "team-e")
        await click(bot, slack, parent_e, "open_pr", CAROL)  # may approve the project's app fixes only
        answers = [str(c.params.get("blocks")) for c in slack.calls_to("chat.postEphemeral")
                   if c.params.get("user") == CAROL]  # fmt: skip
        assert any("system-level rule" in t and ALICE in t and BOB in t for t in answers), answers
        _, replies = thread_of(slack, "team-e")  # the thread says what was refused: she may approve app fixes
        assert any(f"{CAROL} clicked Open PR: system-level rule, but may not approve system-level rules" in m["text"]
                   for m in replies), [m["text"] for m in replies]  # fmt: skip

        await click(bot, slack, parent_e, "open_pr", ALICE)
        _, replies = thread_of(slack, "team-e")
        [approval] = [m for m in replies if "Approved 1 of 2" in m["text"]]
        await click(bot, slack, approval, "approve", BOB)
        [pr] = github.pulls(PLATFORM)
        for name in ["team-a", "team-b", "team-c", *LATE]:
            assert f"argocd/{name}" in pr.body, name
        assert "5 apps" in pr.title and "argocd/team-d" not in pr.body
        assert "Not checked" in pr.body and "argocd/team-x" in pr.body  # named as not checked
        assert f"{KEY}: |\n  managedFieldsManagers:\n  - {HPA_MANAGER}" in pr.body  # the block, not a string
        github.merge_pr(PLATFORM, pr.number)
        for name in ["team-a", "team-b", "team-c", *LATE]:
            await until(lambda n=name: merged_said(slack, n))  # type: ignore[misc]
