"""The notification text of an ephemeral answer that names who may approve: the people and groups it mentions stay
in it (as their IDs), not only in its blocks. A refusal's fallback used to read "only , may approve it"."""

from __future__ import annotations

from bot.slack.render.fixes import approvers_text, ephemeral_notice
from bot.wording import slack as wording


def test_the_fallback_text_of_who_may_approve_a_system_rule_names_them() -> None:
    notice = ephemeral_notice(wording.SLACK_SYSTEM_ONLY, approvers=approvers_text(["U0ALICE", "S0PLATFORM"]))
    assert "only U0ALICE, S0PLATFORM may approve it" in notice.text, notice.text
    assert "<@U0ALICE>" in str(notice.blocks) and "<!subteam^S0PLATFORM>" in str(notice.blocks)


def test_the_fallback_text_of_who_may_approve_an_app_fix_names_them_and_drops_other_markup() -> None:
    notice = ephemeral_notice(wording.SLACK_PR_ONLY_PROJECT, approvers=approvers_text(["U0CAROL"]),
                              project="`<https://argocd.example.com/projects/team|team>`")  # fmt: skip
    assert "U0CAROL" in notice.text and "<" not in notice.text, notice.text
