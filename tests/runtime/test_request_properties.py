"""Property: whatever reaches ``/slack/events`` or ``/webhooks/argocd``, the answer is one the contract names, never a
5xx, and nothing is logged with a traceback (real uvicorn, Redis, Bolt; hypothesis draws the requests).

* Slack (events, interactivity, slash commands): unsigned or wrongly signed is 401 whatever its bytes (Unicode
  digits or 400 digits in the timestamp, a stale one, another secret); signed but malformed is 400 (not UTF-8,
  nested too deep, a lone surrogate escape, two ``payload`` fields, a field of the wrong type or missing where
  Bolt indexes it); signed and well formed is 200 (an event this app does not subscribe to: Bolt's 404);
* the webhook: a wrong or missing token is 401 whatever the body; a body that is not the contract is 400; the
  contract is 202 (or 200 ``duplicate``);
* a Mute click whose ``response_url`` refuses connections is answered 200, logged once, and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Settings, required
from bot.intake.jobs import ActionId
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, block_action_body
from tests.harness.redis_server import free_port
from tests.harness.service_kit import running, service_settings

REFUSED = f"http://127.0.0.1:{free_port()}/hooks/refused"  # nothing listens there: connections are refused
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def bot_settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


@contextlib.contextmanager
def served(s: Settings) -> Iterator[str]:
    """The real bot (no worker) served from a thread of its own, so that hypothesis' synchronous tests can call it."""
    ready = threading.Event()
    url: list[str] = []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        async with running(s, workers=0) as bot:
            url.append(bot.url)
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    thread.start()
    try:
        assert ready.wait(30), "the bot did not start"
        yield url[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        loop.close()


@dataclass
class Case:
    path: str
    body: bytes
    headers: dict[str, bytes]
    expected: set[int]
    note: str = field(default="")


def sign(secret: str, body: bytes, timestamp: bytes) -> bytes:
    return b"v0=" + hmac.new(secret.encode(), b"v0:" + timestamp + b":" + body, hashlib.sha256).hexdigest().encode()


def now() -> bytes:
    return str(int(time.time())).encode()


# --- Slack bodies -------------------------------------------------------------------------------------------------

texts = st.text(max_size=30)
ids = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=11)


@st.composite
def slash_commands(draw: st.DrawFn) -> dict[str, str]:
    sub = draw(st.sampled_from(["help", "why", "diff", "mute", "frobnicate", ""]))
    words = [sub, *draw(st.lists(st.sampled_from(["shop", "argocd/shop", "2h", "Bad Name", "1d12h", "x" * 300]),
                                 max_size=2))]  # fmt: skip
    return {"command": "/argo", "text": " ".join(words) + draw(st.sampled_from(["", " ", draw(texts)])),
            "user_id": "U" + draw(ids), "channel_id": "C" + draw(ids), "response_url": REFUSED}  # fmt: skip


@st.composite
def block_actions(draw: st.DrawFn) -> dict[str, Any]:
    action_id = draw(st.sampled_from([a.value for a in ActionId]))
    value = draw(st.sampled_from(["report:" + "A" * 16, "fix:" + "B" * 16, "", draw(texts)]))
    return {
        "type": "block_actions", "user": {"id": "U" + draw(ids), "name": draw(texts)}, "team": {"id": "T1"},
        "container": {"type": "message", "channel_id": "C" + draw(ids), "message_ts": "1764500000.000100"},
        "channel": {"id": "C1"}, "message": {"ts": "1764500000.000100", "text": draw(texts), "blocks": []},
        "actions": [{"action_id": action_id, "block_id": "argo-why-actions", "value": value, "type": "button",
                     "action_ts": draw(st.sampled_from(["1764500000.1", draw(texts)]))}],
        "response_url": REFUSED, "trigger_id": "1.2.3",
    }  # fmt: skip


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    event = {"type": draw(st.sampled_from(["app_mention", "message", "reaction_added"])), "user": "U1",
             "channel": "C" + draw(ids), "text": draw(texts), "ts": "1764500000.000100"}  # fmt: skip
    return {"type": "event_callback", "team_id": "T1", "api_app_id": "A1", "event": event, "event_id": "Ev" + draw(ids),
            "event_time": 1764500000}  # fmt: skip


def as_form(payload: dict[str, Any]) -> bytes:
    return b"payload=" + quote(json.dumps(payload)).encode()


@st.composite
def well_formed(draw: st.DrawFn) -> tuple[bytes, str, set[int]]:
    """A signed request Slack could send: body, content type, the answer it gets."""
    kind = draw(st.sampled_from(["command", "action", "event", "url_verification"]))
    if kind == "command":
        return urlencode(draw(slash_commands())).encode(), FORM, {200}
    if kind == "action":
        return as_form(draw(block_actions())), FORM, {200}
    if kind == "event":  # this app subscribes to no event: Bolt says so
        return json.dumps(draw(events())).encode(), "application/json", {404}
    challenge = json.dumps({"type": "url_verification", "token": "t", "challenge": draw(ids)})
    return challenge.encode(), "application/json", {200}


# Where a signed payload can be wrong for Bolt or the listeners: (payload kind, path, the wrong value or DELETE).
DELETE = object()
BREAKS: list[tuple[str, tuple[Any, ...], Any]] = [
    ("event", ("event", "channel"), True),
    ("event", ("event", "channel"), 7),
    ("event", ("event", "user"), ["U1"]),
    ("event", ("event", "type"), 3),
    ("event", ("event",), "app_mention"),
    ("action", ("actions", 0, "action_id"), DELETE),
    ("action", ("actions", 0, "action_id"), 12),
    ("action", ("actions", 0), "show_diff"),
    ("action", ("actions",), "show_diff"),
    ("action", ("user",), "U1"),
    ("action", ("user", "id"), {"id": "U1"}),
    ("action", ("container",), 5),
    ("action", ("channel",), "C1"),
    ("action", ("message",), []),
    ("action", ("actions", 0, "action_ts"), 1.5),
    ("workflow_step_edit", ("workflow_step",), DELETE),
    ("view_submission", ("view", "type"), DELETE),
    ("view_submission", ("view",), "modal"),
    ("workflow_step_save", ("workflow_step",), DELETE),
]


def _payload_of(kind: str, draw: st.DrawFn) -> dict[str, Any]:
    if kind == "event":
        return draw(events())
    if kind == "action":
        return draw(block_actions())
    base = {"user": {"id": "U1"}, "team": {"id": "T1"}, "trigger_id": "1.2.3", "callback_id": "step"}
    if kind == "workflow_step_edit":
        return {**base, "type": "workflow_step_edit", "workflow_step": {"workflow_step_edit_id": "1"}}
    view_type = "workflow_step" if kind == "workflow_step_save" else "modal"
    return {**base, "type": "view_submission", "view": {"id": "V1", "type": view_type, "state": {"values": {}}},
            "workflow_step": {"workflow_step_edit_id": "1"}}  # fmt: skip


def _broken(payload: dict[str, Any], path: tuple[Any, ...], wrong: Any) -> dict[str, Any]:
    out = copy.deepcopy(payload)
    target: Any = out
    for key in path[:-1]:
        target = target[key]
    if wrong is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = wrong
    return out


def _nested(depth: int) -> str:
    return '{"type": "block_actions", "x": ' + "[" * depth + "]" * depth + "}"


@st.composite
def malformed(draw: st.DrawFn) -> tuple[bytes, str]:
    """A signed request that is not what Slack sends: body, content type (all answered 400)."""
    kind = draw(st.sampled_from(["break", "nested", "surrogate", "two-payloads", "not-utf8", "not-object"]))
    if kind == "break":
        what, path, wrong = draw(st.sampled_from(BREAKS))
        broken = _broken(_payload_of(what, draw), path, wrong)
        if what == "event":
            return json.dumps(broken).encode(), "application/json"
        return as_form(broken), FORM
    if kind == "nested":
        text = _nested(draw(st.integers(65, 50_000)))
        return (text.encode(), "application/json") if draw(st.booleans()) else (b"payload=" + quote(text).encode(),
                                                                                FORM)  # fmt: skip
    if kind == "surrogate":
        payload = draw(block_actions())
        spot = draw(st.sampled_from(["action_ts", "user", "value", "key"]))
        raw = json.dumps(payload)
        if spot == "action_ts":
            raw = json.dumps(_broken(payload, ("actions", 0, "action_ts"), "\ud800"))
        elif spot == "user":
            raw = json.dumps(_broken(payload, ("user", "id"), "U\udfff"))
        elif spot == "value":
            raw = json.dumps(_broken(payload, ("actions", 0, "value"), "report:\ud83d"))
        else:
            raw = raw[:-1] + ', "\\udc00": 1}'
        return b"payload=" + quote(raw).encode(), FORM
    if kind == "two-payloads":
        good = as_form(draw(block_actions()))
        other = as_form(_broken(draw(block_actions()), ("actions",), [1]))
        return (good + b"&" + other) if draw(st.booleans()) else (other + b"&" + good), FORM
    if kind == "not-utf8":
        return b"payload=\xff" + draw(st.binary(max_size=20)), FORM
    return (b"payload=" + quote(json.dumps(draw(st.sampled_from([[1], "x", 3, None])))).encode()), FORM


odd_timestamps: list[bytes | str] = [b"\xb9\xb2\xb3", "9" * 400, b"", b"abc", b"-5", b"1e9", b"0", b"17 64",
                                     b"\xd9\xa3\xd9\xa4"]  # fmt: skip
forged_timestamps = st.sampled_from(odd_timestamps) | st.integers(0, 2**40).map(lambda n: str(n).encode())


@st.composite
def slack_cases(draw: st.DrawFn, secret: str) -> Case:
    outcome = draw(st.sampled_from(["forged", "well-formed", "malformed"]))
    if outcome == "well-formed":
        body, content_type, expected = draw(well_formed())
    elif outcome == "malformed":
        body, content_type = draw(malformed())
        expected = {400}
    else:  # forged: whatever the body
        body, content_type = draw(malformed()) if draw(st.booleans()) else draw(well_formed())[:2]
        expected = {401}
    headers = {"content-type": content_type.encode()}
    if outcome == "forged":
        how = draw(st.sampled_from(["timestamp", "secret", "stale", "none", "signature"]))
        ts = draw(forged_timestamps) if how == "timestamp" else now()
        if isinstance(ts, str):
            ts = ts.encode()
        if how == "stale":
            ts = str(int(time.time()) - draw(st.integers(301, 10**12))).encode()
        key = secret if how in ("timestamp", "stale") else "another-secret"
        signature = draw(st.binary(max_size=80).map(lambda b: b.hex().encode())) if how == "signature" else sign(
            key, body, ts)  # fmt: skip
        if how != "none":
            headers |= {"x-slack-request-timestamp": ts, "x-slack-signature": signature}
        return Case("/slack/events", body, headers, expected, how)
    ts = now()
    headers |= {"x-slack-request-timestamp": ts, "x-slack-signature": sign(secret, body, ts)}
    return Case("/slack/events", body, headers, expected, outcome)


# --- webhook bodies -----------------------------------------------------------------------------------------------

names = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?\Z")


@st.composite
def webhook_cases(draw: st.DrawFn, token: str) -> Case:
    good = {"app": {"name": draw(names), "namespace": draw(st.none() | names)},
            "sync": {"status": draw(st.sampled_from(["Synced", "OutOfSync", "Unknown"])),
                     "revision": draw(st.none() | texts)},
            "operationState": {"phase": "Succeeded", "finishedAt": draw(texts)}}  # fmt: skip
    kind = draw(st.sampled_from(["good", "surrogate", "nested", "garbage", "types", "unauthorized"]))
    expected = {400}
    if kind in ("good", "unauthorized"):
        body = json.dumps(good).encode()
        expected = {200, 202}
    elif kind == "surrogate":
        body = json.dumps(_broken(good, ("sync", "revision"), "\ud800")).encode()
    elif kind == "nested":
        depth = draw(st.integers(200, 50_000))
        body = ('{"app": ' + "[" * depth + "]" * depth + "}").encode()
    elif kind == "garbage":
        body = draw(st.binary(max_size=200))
    else:
        path, wrong = draw(st.sampled_from([(("app",), "shop"), (("app", "name"), 7), (("sync", "status"), "Gone"),
                                            (("sync",), DELETE), (("app", "name"), "Bad Name")]))  # fmt: skip
        body = json.dumps(_broken(good, path, wrong)).encode()
    headers = {"content-type": b"application/json", "authorization": f"Bearer {token}".encode()}
    if kind == "unauthorized":
        expected = {401}
        headers["authorization"] = draw(st.sampled_from([b"Bearer wrong", b"", b"Basic x", b"Bearer \xb9\xb2\xb3",
                                                         f"Bearer {token}x".encode()]))  # fmt: skip
        body = draw(st.sampled_from([body, b"\xff\xfe", ("[" * 10_000).encode(), b'{"app": "\\ud800"}']))
    return Case("/webhooks/argocd", body, headers, expected, kind)


# --- the properties -----------------------------------------------------------------------------------------------


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR or "Traceback" in r.getMessage()]
    assert not bad, [f"{r.name}: {r.getMessage()[:300]}" for r in bad]


def test_every_slack_request_and_webhook_gets_its_answer_and_no_traceback(
    bot_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    secret = required(bot_settings.slack.signing_secret, "SLACK_SIGNING_SECRET").get_secret_value()
    token = required(bot_settings.runtime.webhook_token, "WEBHOOK_TOKEN").get_secret_value()
    caplog.set_level(logging.INFO)
    with served(bot_settings) as url, httpx.Client(base_url=url, timeout=30) as http:

        @given(case=slack_cases(secret) | webhook_cases(token))
        @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.data_too_large])  # fmt: skip
        def answered(case: Case) -> None:
            r = http.post(case.path, content=case.body, headers={k.encode(): v for k, v in case.headers.items()})
            assert r.status_code < 500, (case.note, case.body[:300], r.status_code, r.text[:200])
            assert r.status_code in case.expected, (case.note, case.body[:300], r.status_code, r.text[:200])

        answered()
    no_traceback(caplog)


def test_a_mute_click_whose_response_url_refuses_is_logged_once_and_changes_nothing(
    bot_settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    secret = required(bot_settings.slack.signing_secret, "SLACK_SIGNING_SECRET").get_secret_value()
    body = block_action_body(ActionId.MUTE.value, "report:" + "Z" * 16, response_url=REFUSED)  # no such report
    with served(bot_settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        ts = now()
        headers = {b"content-type": FORM.encode(), b"x-slack-request-timestamp": ts,
                   b"x-slack-signature": sign(secret, body, ts)}  # fmt: skip
        r = http.post("/slack/events", content=body, headers=headers)
        keys = [k for k in _redis_keys(bot_settings) if k.startswith(b"argo-why:mute")]
    assert r.status_code == 200 and r.text == ""
    # Since per-team visibility, the click is queued and the worker decides (it answers with chat.postEphemeral, not
    # through the response_url); whatever path still uses the response_url says its failure once, as a warning.
    said = [rec for rec in caplog.records if "response_url" in rec.getMessage()]
    assert len(said) <= 1 and all(rec.levelno == logging.WARNING for rec in said), [rec.getMessage() for rec in said]
    assert keys == []
    no_traceback(caplog)


def _redis_keys(s: Settings) -> list[bytes]:
    import redis

    with redis.Redis.from_url(required(s.redis.url, "REDIS_URL")) as client:
        return list(client.keys("*"))
