"""Git ahead of the cluster in Slack (issue 30, item 1): one calm message, never a drift alert.

The report is what ``why`` gives for the casebook's rollback scenario once the Application says Git moved on since
the sync (tests/analysis/test_git_ahead.py);
the parent is its only message: a calm icon, which revision was synced and which
Git is at, why the sync has not run, the fields that will change; no thread, no Show diff, no Open PR.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.config import Settings
from bot.demo.runner import webhook_body
from bot.model import Report
from bot.slack.render import Alert, parent_message, thread_messages
from bot.slack.render.fixes import FixButtons
from bot.slack.render.inputs import Buttons
from bot.why import application_facts, git_ahead_note
from bot.wording import slack as wording
from tests.builders import explain_case
from tests.fakes.argocd import FakeArgoCD, app_from_case, build_application
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings
from tests.paths import CASEBOOK
from tests.slack.test_slack_render import check_golden

NEW = "c0ffee0000000000000000000000000000000001"
ROLLBACK = CASEBOOK / "cases" / "unknown-argocd-owned-rollback"


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


def _report() -> Report:
    report = explain_case(ROLLBACK, "pricing")
    app = build_application("pricing", "pricing", [], git_at=NEW)
    report.application = application_facts(app)
    report.git_ahead = git_ahead_note(app, report.application)
    assert report.git_ahead is not None
    report.notes.insert(0, report.git_ahead["text"])
    return report


def test_git_ahead_is_one_calm_message() -> None:
    report = _report()
    alert = Alert(app="pricing", app_namespace="argocd", revision=NEW, argocd_url="https://argocd.example.com")
    buttons = Buttons(show_diff="s1", mute="s1", recheck="s1")
    parent = parent_message(report, alert, buttons, FixButtons(states={"all": "s2"})).to_dict()
    assert thread_messages(report, alert) == []
    text = str(parent)
    assert wording.SLACK_ICON_GIT_AHEAD in text and wording.SLACK_ICON_DRIFT not in text
    assert wording.SLACK_ICON_WARNING not in text and "open_pr" not in text and "show_diff" not in text
    assert report.git_ahead is not None and report.git_ahead["synced"][0][:7] in text
    assert NEW[:7] in text and "Auto-sync is off" in text
    check_golden("git-ahead", {"parent": parent})


async def test_the_running_bot_posts_one_calm_message_for_a_git_ahead_app(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    """A Git-ahead app that reaches the bot anyway (a trigger of its own, the sweep): the parent, nothing in its
    thread, no Open PR."""
    app, resources, renders = app_from_case(ROLLBACK)
    app = build_application(app["metadata"]["name"], "pricing", resources, git_at=NEW)
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(ROLLBACK))
    async with running(settings) as bot:
        assert (await bot.webhook(webhook_body(app))).status_code == 202
        await bot.settle()
    [parent] = slack.messages(CHANNEL)
    blocks = json.dumps(parent["blocks"])
    assert wording.SLACK_ICON_GIT_AHEAD in blocks and wording.SLACK_ICON_DRIFT not in blocks
    actions = [e["action_id"] for b in parent["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert actions == ["mute", "recheck"]
    assert slack.thread(CHANNEL, parent["ts"]) == []


async def test_the_sweep_leaves_git_ahead_to_argocd_as_the_trigger_does(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    """An app OutOfSync after a successful sync of another revision than Git's sends no webhook (the trigger leaves
    it out) and the sweep queues nothing for it either; the same app synced at Git's revision is queued."""
    from bot.runtime.sweep import Sweep

    app, resources, renders = app_from_case(ROLLBACK)
    ahead = build_application(app["metadata"]["name"], "pricing", resources, git_at=NEW)
    argocd.add_app(ahead, resources, renders)
    settings.runtime.sweep_s = 0
    async with running(settings, workers=0) as bot:
        assert await Sweep(bot.services).run() == 0
        argocd.add_app(build_application(app["metadata"]["name"], "pricing", resources), resources, renders)
        assert await Sweep(bot.services).run() == 1
