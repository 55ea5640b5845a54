"""The thread's one-line notices about fixes (``bot.slack.render.fixes.fix_notice``): the icon is said once, where
the template puts it, or in front when the template does not place it (the real Argo CD e2e run showed
":large_green_circle: :large_green_circle: PR #1 was merged and ... is Synced again")."""

from __future__ import annotations

import pytest

from bot.slack.render.fixes import PRLink, fix_notice
from bot.wording import slack as wording

PR = PRLink(7, "https://github.com/acme/gitops/pull/7", "U0ALICE")


def section_text(template: str, icon: str) -> str:
    message = fix_notice(template, app="shop", icon=icon, pr=PR, reason="the branch is protected")
    [block] = message.blocks
    return str(block["text"]["text"])


@pytest.mark.parametrize("template", [wording.SLACK_PR_MERGED, wording.SLACK_PR_FAILED, wording.SLACK_PR_CLOSED])
def test_the_icon_is_said_once_at_the_start(template: str) -> None:
    text = section_text(template, wording.SLACK_ICON_SYNCED)
    assert text.startswith(f"{wording.SLACK_ICON_SYNCED} "), text
    assert text.count(wording.SLACK_ICON_SYNCED) == 1, text


def test_the_merged_notice_reads_as_one_sentence_without_an_icon_in_the_plain_text() -> None:
    message = fix_notice(wording.SLACK_PR_MERGED, app="shop", icon=wording.SLACK_ICON_SYNCED, pr=PR)
    assert message.text == "PR #7 was merged and shop is Synced again."
    assert (
        section_text(wording.SLACK_PR_MERGED, "")
        == "PR <https://github.com/acme/gitops/pull/7|#7> was merged and `shop` is Synced again."
    )
