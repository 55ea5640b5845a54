"""Git ahead of the cluster in Slack (issue 30, item 1): one calm message, never a drift alert.

The report is what ``why`` gives for the casebook's rollback scenario once the Application says Git moved on since
the sync (tests/test_git_ahead.py); the parent is its only message: a calm icon, which revision was synced and which
Git is at, why the sync has not run, the fields that will change; no thread, no Show diff, no Open PR.
"""

from __future__ import annotations

from bot.model import Report
from bot.slack.render import Alert, parent_message, thread_messages
from bot.slack.render.fixes import FixButtons
from bot.slack.render.inputs import Buttons
from bot.why import application_facts, git_ahead_note
from bot.wording import slack as wording
from tests.conftest import CASEBOOK, explain_case
from tests.fakes.argocd import build_application
from tests.test_slack_render import check_golden

NEW = "c0ffee0000000000000000000000000000000001"


def _report() -> Report:
    report = explain_case(CASEBOOK / "cases" / "unknown-argocd-owned-rollback", "pricing")
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
