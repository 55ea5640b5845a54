"""Settings said in argo-why's own words: every malformed value, `serve --help`, and Slack out of reach (issue 28,
items 11 and 13).

A malformed variable stops start-up with a line naming it and saying what it takes, in the project's wording
(bot/wording/cli.py), with its bounds in its unit ("at most 30 days"), never pydantic's "Input should be...". The
table below names a bad value for every variable the settings read, so a new variable fails here until it is said
in words too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.config import ConfigError, Settings, load_settings
from bot.wording import cli as wording
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.redis_server import free_port
from tests.harness.service_kit import BotProcess, service_settings, until


def _every_variable() -> set[str]:
    return {str(f.validation_alias) for group in Settings.model_fields.values()
            for f in group.annotation.model_fields.values()}  # type: ignore[union-attr]  # fmt: skip


BAD: dict[str, list[str]] = {
    "ARGOCD_URL": ["argocd.example.com"], "ARGOCD_PUBLIC_URL": ["argocd.example.com"],
    "ARGOCD_INSECURE": ["maybe"], "ARGOCD_TIMEOUT": ["x", "0", "-1", "inf"], "ARGOCD_RETRIES": ["x", "11", "2.5"],
    "ARGOCD_CLUSTER_CONTEXTS": ["prod"],
    "SLACK_CHANNEL": ["alerts"], "SLACK_API_URL": ["slack.com/api"], "SLACK_CHANNEL_INTERVAL": ["x", "61", "nan"],
    "CHANNEL_ROUTES": ["team-a"], "REDIS_URL": ["redis:6379"],
    "GIT_PROVIDER": ["bitbucket"], "GIT_API_URL": ["gitlab.example.com"], "APPROVERS": ["alice"],
    "APPROVALS_REQUIRED": ["3"], "APPROVER_ROUTES": ["team-a"], "PR_POLL_SECONDS": ["0", "x"],
    "ARGOCD_CM_DEFINITION": ["github.com/acme/gitops/blob/main/argocd-cm.yaml"],
    "PORT": ["http", "0", "70000"], "METRICS_PORT": ["x", "0"], "WORKERS": ["0", "x", "65"],
    "ANALYSIS_ATTEMPTS": ["0", "11"], "DIGEST_THRESHOLD": ["0", "ten"], "DIGEST_WINDOW_SECONDS": ["1", "1m"],
    "SHUTDOWN_GRACE_SECONDS": ["601", "x"], "SWEEP_SECONDS": ["-1", "inf"], "DEAD_LETTER_RETRY_SECONDS": ["x"],
    "REMIND_AFTER_HOURS": ["-1", "1d"], "DAILY_SUMMARY_AT": ["25:00"], "WEEKLY_REPORT_AT": ["mon"],
    "FLEET_MIN_APPS": ["1", "x"],
    "VIEW_LINK_KEY": ["too-short"], "VIEW_LINK_TTL": ["31d", "10", "x"], "VIEW_BASE_URL": ["bot.example.com"],
}  # fmt: skip
ANY_TEXT = {
    # secrets, paths and names: any text is a value (a wrong one fails where it is used, and says so there)
    "ARGOCD_TOKEN", "ARGOCD_CA_FILE", "ARGOCD_APP_NAMESPACE", "KUBECONFIG", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN", "GIT_TOKEN", "WEBHOOK_TOKEN",
}  # fmt: skip
PYDANTIC = re.compile(r"Input should|valid (integer|number|boolean)|unable to|Value error|pydantic|greater than|"
                      r"less than|type=|For further information")  # fmt: skip
ROUTE_MAPS = {"CHANNEL_ROUTES", "APPROVER_ROUTES"}  # said by bot/routing.py, which parses the maps


def _templates() -> list[re.Pattern[str]]:
    """Every SETTING_* sentence of the wording as a pattern (its placeholders match anything)."""
    out = []
    for name, value in vars(wording).items():
        if name.startswith("SETTING_") and isinstance(value, str):
            parts = re.split(r"\{[^}]*\}", value)
            out.append(re.compile(".*".join(map(re.escape, parts)) + "$"))
    return out


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    names = _every_variable()
    for name in list(os.environ):
        if name in names:
            monkeypatch.delenv(name)
    return monkeypatch


def test_every_variable_has_a_bad_value_in_this_table_or_takes_any_text() -> None:
    assert set(BAD) | ANY_TEXT == _every_variable(), (set(BAD) | ANY_TEXT) ^ _every_variable()


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, values in BAD.items() for v in values])
def test_a_malformed_value_is_said_in_the_projects_words(clean_env: pytest.MonkeyPatch, name: str,
                                                         value: str) -> None:  # fmt: skip
    clean_env.setenv(name, value)
    if name == "VIEW_LINK_KEY":
        clean_env.setenv("VIEW_BASE_URL", "https://bot.example.com")
    with pytest.raises(ConfigError) as e:
        load_settings()
    line = str(e.value)
    assert "\n" not in line and line.startswith(f"{name}: "), line
    assert not PYDANTIC.search(line), line
    said = line.removeprefix(f"{name}: ")
    if name not in ROUTE_MAPS:
        assert any(t.match(said) for t in _templates()), said


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("PORT", "http", "PORT: must be a whole number from 1 to 65535, not 'http'"),
        ("PORT", "70000", "PORT: must be at most 65535"),
        ("VIEW_LINK_TTL", "31d", "VIEW_LINK_TTL: must be at most 30 days (2592000 seconds)"),
        ("VIEW_LINK_TTL", "10", "VIEW_LINK_TTL: must be at least 1 minute (60 seconds)"),
        ("SHUTDOWN_GRACE_SECONDS", "601", "SHUTDOWN_GRACE_SECONDS: must be at most 10 minutes (600 seconds)"),
        ("ARGOCD_TIMEOUT", "0", "ARGOCD_TIMEOUT: must be more than 0 seconds"),
        ("REMIND_AFTER_HOURS", "-1", "REMIND_AFTER_HOURS: must be at least 0 hours"),
        ("ARGOCD_INSECURE", "maybe", "ARGOCD_INSECURE: must be true or false, not 'maybe'"),
        ("GIT_PROVIDER", "bitbucket", "GIT_PROVIDER: must be github or gitlab, not 'bitbucket'"),
        ("SWEEP_SECONDS", "inf", "SWEEP_SECONDS: must be a number of at least 0 seconds, not 'inf'"),
    ],
)
def test_bounds_are_said_in_the_settings_unit_as_the_readme_says(clean_env: pytest.MonkeyPatch, name: str,
                                                                 value: str, said: str) -> None:  # fmt: skip
    clean_env.setenv(name, value)
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(e.value) == said


def test_serve_help_lists_every_variable_the_settings_read() -> None:
    """Generated from the settings object: VIEW_LINK_KEY, VIEW_BASE_URL and VIEW_LINK_TTL were left out once."""
    proc = subprocess.run([sys.executable, "-m", "bot", "serve", "--help"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    environment = proc.stdout.partition("\nexit status:\n")[0]
    listed = set(re.findall(r"\b[A-Z][A-Z_]{2,}\b", environment))
    assert _every_variable() <= listed, _every_variable() - listed


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


async def test_serve_with_slack_out_of_reach_never_says_the_token_is_refused(settings: Settings) -> None:
    settings.slack.api_url = f"http://127.0.0.1:{free_port()}/api/"  # a closed port: nothing answers
    settings.slack.bot_token = SecretStr("xoxb-fine")
    process = BotProcess(settings, serve=True)
    try:
        await process.ready()
        await until(lambda: "cannot reach Slack" in process.stderr(), 30)
        log = process.stderr()
    finally:
        process.close()
    assert "cannot reach Slack to check SLACK_BOT_TOKEN" in log and "the token itself was not refused" in log, log
    assert "does not accept" not in log and "set a valid bot token" not in log, log
