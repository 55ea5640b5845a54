"""Settings as a user sets them: from the environment, grouped, validated with one line naming the variable."""

from __future__ import annotations

import pytest

from bot.config import ConfigError, Settings, load_settings, required

_PREFIXES = ("SLACK_", "ARGOCD_", "WEBHOOK_", "REDIS_", "GIT_", "APPROV", "PORT", "WORKERS", "DIGEST_", "KUBECONFIG")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(_PREFIXES):
            monkeypatch.delenv(name)


def test_variables_land_in_their_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGOCD_URL", "https://argocd.example.com/")
    monkeypatch.setenv("ARGOCD_TOKEN", "t0ken")
    monkeypatch.setenv("ARGOCD_CLUSTER_CONTEXTS", "https://prod.example.com=prod,staging=stg")
    monkeypatch.setenv("SLACK_CHANNEL", "C0ALERTS")
    monkeypatch.setenv("REDIS_URL", "redis://redis:6379/0")
    monkeypatch.setenv("GIT_PROVIDER", "GitHub")
    monkeypatch.setenv("APPROVERS", "U0ALICE, S0PLATFORM")
    monkeypatch.setenv("PORT", "9090")
    s = load_settings()
    assert s.argocd.url == "https://argocd.example.com"
    assert s.argocd.token is not None and s.argocd.token.get_secret_value() == "t0ken"
    assert s.argocd.cluster_contexts == {"https://prod.example.com": "prod", "staging": "stg"}
    assert s.slack.channel == "C0ALERTS" and not s.slack.socket_mode
    assert s.redis.url == "redis://redis:6379/0"
    assert s.git.provider == "github" and s.git.approvers == ["U0ALICE", "S0PLATFORM"]
    assert s.runtime.port == 9090
    assert "t0ken" not in repr(s)


@pytest.mark.parametrize(("value", "expected"), [("1", 1), ("2", 2), (" 2 ", 2)])
def test_approvals_required_from_the_environment(monkeypatch: pytest.MonkeyPatch, value: str, expected: int) -> None:
    monkeypatch.setenv("APPROVALS_REQUIRED", value)
    assert load_settings().git.approvals_required == expected


@pytest.mark.parametrize("value", ["0", "3", "two", ""])
def test_approvals_required_other_values_are_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("APPROVALS_REQUIRED", value)
    with pytest.raises(ConfigError, match=r"^APPROVALS_REQUIRED: "):
        load_settings()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SLACK_CHANNEL", "alerts", "SLACK_CHANNEL: .*channel ID"),
        ("APPROVERS", "alice", "APPROVERS: .*alice"),
        ("ARGOCD_URL", "argocd.example.com", "ARGOCD_URL: .*http"),
        ("GIT_PROVIDER", "bitbucket", "GIT_PROVIDER: "),
        ("PORT", "http", "PORT: "),
        ("ARGOCD_CLUSTER_CONTEXTS", "prod", "ARGOCD_CLUSTER_CONTEXTS: .*cluster=context"),
        ("WEEKLY_REPORT_AT", "mon", "WEEKLY_REPORT_AT: must be DAY HH:MM"),
        ("WEEKLY_REPORT_AT", "mon off", "WEEKLY_REPORT_AT: must be DAY HH:MM"),
        ("WEEKLY_REPORT_AT", "mon 9am", "WEEKLY_REPORT_AT: must be DAY HH:MM"),
        ("WEEKLY_REPORT_AT", "09:00", "WEEKLY_REPORT_AT: must be DAY HH:MM"),
        ("DAILY_SUMMARY_AT", "24:00", "DAILY_SUMMARY_AT: must be HH:MM"),
    ],
)
def test_malformed_values_name_the_variable(monkeypatch: pytest.MonkeyPatch, name: str, value: str,
                                            message: str) -> None:  # fmt: skip
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        load_settings()


@pytest.mark.parametrize(
    ("value", "expected"), [("mon 09:00", "mon 09:00"), (" Fri 7:5 ", "fri 07:05"), ("off", None), ("", None)]
)
def test_the_weekly_report_time_is_a_day_and_a_time_or_off(monkeypatch: pytest.MonkeyPatch, value: str,
                                                           expected: str | None) -> None:  # fmt: skip
    monkeypatch.setenv("WEEKLY_REPORT_AT", value)
    assert load_settings().runtime.weekly_report_at == expected


def test_serve_requirements_are_checked_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="^6 settings need fixing") as all_missing:
        Settings().check_serve()
    assert "\n  SLACK_BOT_TOKEN is not set: the bot token" in str(all_missing.value)
    for name, value in [("SLACK_BOT_TOKEN", "xoxb-1"), ("SLACK_CHANNEL", "C1"), ("ARGOCD_URL", "https://a"),
                        ("ARGOCD_TOKEN", "t"), ("WEBHOOK_TOKEN", "w")]:  # fmt: skip
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match="^SLACK_SIGNING_SECRET is not set"):
        load_settings().check_serve()
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")  # Socket Mode needs no signing secret
    load_settings().check_serve()
    monkeypatch.setenv("GIT_PROVIDER", "gitlab")
    with pytest.raises(ConfigError, match="^2 settings need fixing.*\n  GIT_TOKEN is not set.*\n  GIT_API_URL"):
        load_settings().check_serve()
    monkeypatch.setenv("GIT_TOKEN", "glpat-1")
    with pytest.raises(ConfigError, match="^GIT_API_URL is not set"):
        load_settings().check_serve()


def test_every_missing_and_malformed_setting_is_reported_at_once_one_line_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SLACK_CHANNEL", "alerts")  # malformed: a name, not an ID (said once, not also "not set")
    monkeypatch.setenv("PORT", "http")
    monkeypatch.setenv("ARGOCD_URL", "argocd.example.com")
    monkeypatch.setenv("ARGOCD_TOKEN", "t")
    monkeypatch.setenv("GIT_PROVIDER", "gitlab")
    with pytest.raises(ConfigError) as e:
        load_settings(serve=True)
    first, *lines = str(e.value).splitlines()
    assert first == "8 settings need fixing before argo-why can start:"
    named = sorted(line.strip().split(" ")[0].rstrip(":") for line in lines)
    assert named == ["ARGOCD_URL", "GIT_API_URL", "GIT_TOKEN", "PORT", "SLACK_BOT_TOKEN", "SLACK_CHANNEL",
                     "SLACK_SIGNING_SECRET", "WEBHOOK_TOKEN"]  # fmt: skip
    monkeypatch.setenv("PORT", "8080")
    with pytest.raises(ConfigError) as e:
        load_settings()  # without serve, only the malformed ones count
    assert str(e.value).startswith("2 settings need fixing") and "GIT_TOKEN" not in str(e.value)


def test_required_returns_the_value_or_names_the_variable() -> None:
    assert required("x", "ARGOCD_URL") == "x"
    with pytest.raises(ConfigError, match="^ARGOCD_URL is not set: the Argo CD API server URL"):
        required(None, "ARGOCD_URL")
    with pytest.raises(ConfigError, match="^PORT is not set$"):
        required("", "PORT")
