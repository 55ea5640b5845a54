"""Signed, expiring links to the drift page (bot/web/viewlinks.py) and their settings (VIEW_* in bot/config.py).

The page served through such a link, by a running bot, in a real browser, is tests/report/test_browser.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import redis.asyncio as redis
from hypothesis import given
from hypothesis import strategies as st

from bot.config import ConfigError, load_settings
from bot.intake.jobs import webhook_body_of
from bot.web import viewlinks
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.cases import serve_case
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings

KEY = b"k" * 32
STATE = "view:AbCdEfGhIjKlMnOp"
NOW = 1_800_000_000


def test_a_signed_link_names_its_state_until_it_expires() -> None:
    token = viewlinks.sign(KEY, STATE, NOW + 60)
    assert viewlinks.verify(KEY, token, NOW) == STATE
    assert viewlinks.verify(KEY, token, NOW + 59.9) == STATE
    assert viewlinks.verify(KEY, token, NOW + 60) is None  # expired
    assert viewlinks.link("https://argo-why.example.com/", token) == f"https://argo-why.example.com/view/{token}"


def _altered(token: str, part: int) -> str:
    parts = token.split(".")
    chars = list(parts[part])
    chars[0] = "A" if chars[0] != "A" else "B"
    parts[part] = "".join(chars)
    return ".".join(parts)


@pytest.mark.parametrize("part", [0, 1, 2], ids=["state-id", "expiry", "signature"])
def test_an_altered_link_is_refused(part: int) -> None:
    token = viewlinks.sign(KEY, STATE, NOW + 3600)
    assert viewlinks.verify(KEY, _altered(token, part), NOW) is None


def test_a_later_expiry_cannot_be_written_into_a_link() -> None:
    ident, expires, sig = viewlinks.sign(KEY, STATE, NOW + 60).split(".")
    assert viewlinks.verify(KEY, f"{ident}.{int(expires) + 86400}.{sig}", NOW + 120) is None


def test_a_link_signed_with_another_key_is_refused() -> None:
    assert viewlinks.verify(KEY, viewlinks.sign(b"x" * 32, STATE, NOW + 60), NOW) is None


@pytest.mark.parametrize(
    "token",
    ["", "AbCdEfGhIjKlMnOp", "AbCdEfGhIjKlMnOp.1800000060", "../../etc/passwd", "view:AbCdEfGhIjKlMnOp",
     "AbCdEfGhIjKlMnOp.1800000060." + "A" * 42, "AbCdEfGhIjKlMnOp.-1." + "A" * 43, "a" * 5000],
)  # fmt: skip
def test_malformed_tokens_are_refused(token: str) -> None:
    assert viewlinks.verify(KEY, token, NOW) is None


@given(st.text(max_size=200))
def test_verify_never_raises(token: str) -> None:
    assert viewlinks.verify(KEY, token, NOW) is None


def test_only_view_state_ids_are_signed() -> None:
    with pytest.raises(ValueError, match="not a view state id"):
        viewlinks.sign(KEY, "report:AbCdEfGhIjKlMnOp", NOW)


# --- settings ---------------------------------------------------------------------------------------------------------


def test_view_links_are_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("VIEW_LINK_KEY", "VIEW_LINK_TTL", "VIEW_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    view = load_settings().view
    assert not view.enabled and view.link_ttl_s == 86400


@pytest.mark.parametrize(("value", "seconds"), [("3600", 3600), ("24h", 86400), ("90m", 5400), ("7d", 604800)])
def test_view_link_ttl_takes_seconds_or_a_unit(monkeypatch: pytest.MonkeyPatch, value: str, seconds: int) -> None:
    monkeypatch.setenv("VIEW_LINK_TTL", value)
    assert load_settings().view.link_ttl_s == seconds


def test_view_links_are_on_with_a_key_and_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIEW_LINK_KEY", "s" * 32)
    monkeypatch.setenv("VIEW_BASE_URL", "https://argo-why.example.com/")
    view = load_settings().view
    assert view.enabled and view.base_url == "https://argo-why.example.com"
    assert "s" * 32 not in repr(view)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"VIEW_LINK_KEY": "short", "VIEW_BASE_URL": "https://a.example"}, "^VIEW_LINK_KEY: .*32 characters"),
        ({"VIEW_LINK_KEY": "s" * 32}, "^VIEW_LINK_KEY is set but VIEW_BASE_URL is not"),
        ({"VIEW_BASE_URL": "argo-why.example.com"}, "^VIEW_BASE_URL: .*http"),
        ({"VIEW_LINK_TTL": "tomorrow"}, "^VIEW_LINK_TTL: .*24h"),
        ({"VIEW_LINK_TTL": "10"}, "^VIEW_LINK_TTL: "),
        ({"VIEW_LINK_TTL": "90d"}, "^VIEW_LINK_TTL: "),
    ],
)
def test_malformed_view_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                                   message: str) -> None:  # fmt: skip
    for var in ("VIEW_LINK_KEY", "VIEW_LINK_TTL", "VIEW_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        load_settings()


# --- the bot without view links ---------------------------------------------------------------------------------------


async def test_without_view_links_there_is_no_route_no_link_and_nothing_kept(
    slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    assert not settings.view.enabled
    app = serve_case(argocd, kube, "hpa-replicas-ssa")
    token = viewlinks.sign(KEY, STATE, int(time.time()) + 60)
    async with running(settings) as bot:
        assert (await bot.webhook(webhook_body_of(app))).status_code == 202
        await bot.settle()
        assert (await bot.http.get(f"/view/{token}")).status_code == 404
    [parent] = slack.messages(CHANNEL)
    thread = slack.thread(CHANNEL, parent["ts"])
    assert thread and "/view/" not in json.dumps(thread) and "Full diff" not in json.dumps(thread)
    client = redis.Redis.from_url(redis_url)
    try:
        assert not await client.keys("*state:view:*")
    finally:
        await client.aclose()
