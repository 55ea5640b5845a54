"""A replica loads the editors of Open PR (bot.fixes' opener and argocd-cm editor, ruamel.yaml) with the first PR it
opens, not at start (issue 29: memory per replica; a storm's replicas analyse and post, and rarely open a PR)."""

from __future__ import annotations

from tests.runtime.test_replica_imports import loaded_after


def test_starting_the_bot_loads_no_pr_editor() -> None:
    probe = "import bot.app, bot.cli, bot.runtime, bot.web.view\nimport sys\nprint(sorted(m for m in sys.modules))"
    loaded = loaded_after(probe)
    assert "ruamel" not in loaded


def test_the_pr_editors_still_load_when_a_pr_is_opened() -> None:
    loaded = loaded_after("import bot.app\nfrom bot.fixes.opener import open_fix\nfrom bot.fixes.cmedit import Form")
    assert "ruamel" in loaded
