"""The requests Slack sends to the bot that the demo sends too: the signature headers and a button click.

Guarantees: ``signed_headers`` signs a body exactly as Slack does (computed by slack_sdk's own
``SignatureVerifier``), so the bot's real verification accepts it; ``block_action_body`` is shaped like Slack's
``block_actions`` payload, and every body gets a fresh ``trigger_id``; a ``response_url`` may be a ``FakeSlack``,
which then issues a fresh response URL on itself, so that ``respond()`` reaches the fake. The other builders (slash
commands, Events API deliveries) are test-only and live in ``tests/fakes/slack.py``.
"""

from __future__ import annotations

import json
import secrets
import time
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

from bot.demo.fake_slack.server import FakeSlack
from bot.demo.fake_slack.wire import APP_ID, BOT_ID, BOT_USER_ID, JSON, TEAM_ID

DEFAULT_RESPONSE_URL = f"https://hooks.slack.com/commands/{TEAM_ID}/1000000000001/fakefakefakefakefake"


def signed_headers(secret: str, body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends with ``body``: ``x-slack-request-timestamp`` (now unless given), ``x-slack-signature``
    (``v0=`` HMAC-SHA256 of ``v0:{timestamp}:{body}``, computed by slack_sdk's own ``SignatureVerifier``; Slack docs
    "Verifying requests from Slack") and
    the ``content-type`` Slack uses for that kind of body (JSON for events, form-encoded otherwise)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    assert signature is not None  # only None without a timestamp
    content_type = "application/json" if body.lstrip().startswith(b"{") else "application/x-www-form-urlencoded"
    return {"content-type": content_type, "x-slack-request-timestamp": ts, "x-slack-signature": signature}


def _response_url(response_url: str | FakeSlack | None) -> str:
    if isinstance(response_url, FakeSlack):
        return response_url.new_response_url()
    return response_url or DEFAULT_RESPONSE_URL


def _trigger_id() -> str:
    return f"{int(time.time())}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}"


def block_action_body(
    action_id: str,
    value: str,
    *,
    user_id: str = "U1",
    channel_id: str = "C1",
    message_ts: str = "1764500000.000100",
    action_ts: str | None = None,
    block_id: str = "argo-why-actions",
    response_url: str | FakeSlack | None = None,
    team_id: str = TEAM_ID,
    user_name: str = "demo-user",
    channel_name: str = "deploys",
    message: JSON | None = None,
) -> bytes:
    """A button click as Slack POSTs it: form-encoded ``payload=<JSON>`` of type ``block_actions``, shaped like
    Bolt's own tests (BP tests/scenario_tests_async/test_block_actions.py). ``action_ts`` defaults to now, so two
    bodies are two clicks; pass the same one twice to simulate a double click. ``message`` is the clicked message
    (a minimal bot message by default)."""
    payload: JSON = {
        "type": "block_actions",
        "user": {"id": user_id, "username": user_name, "name": user_name, "team_id": team_id},
        "api_app_id": APP_ID,
        "token": "verification_token",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel_id, "is_ephemeral": False},
        "trigger_id": _trigger_id(),
        "team": {"id": team_id, "domain": "argo-why-demo"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": channel_name},
        "message": message
        or {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "text": "argo-why", "ts": message_ts},
        "state": {"values": {}},
        "response_url": _response_url(response_url),
        "actions": [
            {
                "action_id": action_id,
                "block_id": block_id,
                "text": {"type": "plain_text", "text": action_id, "emoji": True},
                "value": value,
                "type": "button",
                "action_ts": action_ts or f"{time.time():.6f}",
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)}).encode()
