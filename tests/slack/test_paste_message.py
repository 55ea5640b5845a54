"""``paste_message``: when no pull request can be opened, the thread names what the YAML is pasted into: the
Application for an app-level rule, the ConfigMap argocd-cm for a system-level rule (never "the Application
argocd-cm", which does not exist)."""

from __future__ import annotations

import json

from bot.slack.render.fixes import paste_message
from bot.wording import slack as wording


def test_an_app_rule_is_pasted_into_its_application() -> None:
    msg = paste_message("checkout", "no file defines it.", "ignoreDifferences: []")
    assert msg.text == "No pull request: no file defines it. Add this to the Application checkout by hand:"
    assert "ignoreDifferences: []" in json.dumps(msg.blocks)


def test_a_system_rule_is_pasted_into_the_configmap_argocd_cm() -> None:
    msg = paste_message("argocd-cm", "no file holds argocd-cm.", "resource.customizations: |",
                        template=wording.SLACK_PR_PASTE_CM)  # fmt: skip
    assert msg.text == (
        "No pull request: no file holds argocd-cm. Add this to the ConfigMap argocd-cm in Argo CD's namespace by hand:"
    )
    assert "Application" not in json.dumps(msg.blocks)
    assert "resource.customizations: |" in json.dumps(msg.blocks)


def test_nothing_to_paste_says_only_why() -> None:
    assert paste_message("checkout", "the file is a template.", "").text == "No pull request: the file is a template."
