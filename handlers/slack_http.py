"""``POST /slack/events`` in front of Bolt: what reaches Bolt is signed, fresh, new, UTF-8 and shaped like Slack's.

Bolt parses the body before it checks the signature and indexes fields it assumes to be objects, so garbage
(unsigned or not) made it answer 500 with a traceback in the log. Here, in this order, without a traceback:

* Socket Mode: 404 (Slack talks to the bot over the socket; an HTTP request here is not from Slack);
* a body over 1 MiB: 413;
* no, a non-numeric or a stale timestamp (more than 5 minutes off), or a signature that does not match (HMAC-SHA256
  of ``v0:<timestamp>:<raw body>`` with the signing secret, compared in constant time): 401 ``invalid request``,
  as Bolt answers it;
* not UTF-8, a ``payload`` that is not a JSON object, a JSON body that is not an object, or fields of the wrong
  type where Slack sends objects and lists (``user``, ``channel``, ``container``, ``actions``...): 400;
* a signed request seen before (the same signature, so the same timestamp and body: a replay within the 5-minute
  window): 200 and nothing else, so a replayed slash command runs once (store unavailable: let through, the
  listeners answer that the store is down).

Then Bolt handles it (and checks the signature again).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.intake import Intake
from bot.store import StoreUnavailable

log = logging.getLogger("argo_why.slack")
MAX_BODY = 1024 * 1024
WINDOW_S = 300
REPLAY_TTL_S = 2 * WINDOW_S + 60  # a signature is valid 5 minutes either side of its timestamp
_OBJECTS = ("user", "team", "channel", "container", "message", "enterprise", "view", "state", "event", "item",
            "previous_message", "assistant_thread", "function_data")  # fmt: skip
_LISTS = ("actions", "authorizations")
_STRINGS = ("type", "action_id", "block_id", "value", "action_ts", "callback_id", "trigger_id", "response_url")


def _answer(status: int, error: str) -> Response:
    return JSONResponse({"error": error}, status_code=status)


def _signed(secret: str, body: bytes, timestamp: str, signature: str) -> bool:
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > WINDOW_S:
        return False
    expected = "v0=" + hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode())


def _payload(text: str, content_type: str) -> dict[str, Any] | None:
    """The request as Bolt will parse it, or ``None`` when Bolt could not."""
    if content_type.startswith("application/json") or text.lstrip().startswith("{"):
        data = json.loads(text)
        return data if isinstance(data, dict) else None
    form = parse_qs(text, keep_blank_values=True)
    if "payload" in form:
        data = json.loads(form["payload"][0])
        return data if isinstance(data, dict) else None
    return {k: v[0] for k, v in form.items()}


def _strings(data: dict[str, Any]) -> bool:
    return not any(data.get(k) is not None and not isinstance(data[k], str) for k in _STRINGS)


def _shaped(data: dict[str, Any]) -> bool:
    """Objects where Slack sends objects, lists of objects where it sends lists, strings where it sends strings
    (at the top, and in each action: what Bolt and the listeners index)."""
    if not _strings(data) or any(data.get(k) is not None and not isinstance(data[k], dict) for k in _OBJECTS):
        return False
    for k in _LISTS:
        items = data.get(k)
        if items is not None and not (isinstance(items, list) and all(isinstance(i, dict) and _strings(i)
                                                                       for i in items)):  # fmt: skip
            return False
    return True


async def slack_events(request: Request, services: Intake, bolt: AsyncSlackRequestHandler) -> Response:
    settings = services.settings.slack
    secret = settings.signing_secret
    if settings.socket_mode or secret is None:
        return _answer(404, "not found")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return _answer(413, "body too large")
    body = await request.body()  # Starlette keeps it: Bolt reads the same bytes
    if len(body) > MAX_BODY:
        return _answer(413, "body too large")
    signature = request.headers.get("x-slack-signature", "")
    if not _signed(secret.get_secret_value(), body, request.headers.get("x-slack-request-timestamp", ""), signature):
        return _answer(401, "invalid request")
    try:
        payload = _payload(body.decode("utf-8"), request.headers.get("content-type", ""))
    except (UnicodeDecodeError, ValueError):
        payload = None
    if payload is None or not _shaped(payload):
        log.info("signed Slack request refused: not a payload Slack sends")
        return _answer(400, "malformed request")
    try:
        if not await services.store.first_seen(f"slack:{hashlib.sha256(signature.encode()).hexdigest()}",
                                               REPLAY_TTL_S):  # fmt: skip
            log.info("signed Slack request replayed; ignored")
            return Response(status_code=200)
    except StoreUnavailable:
        pass
    return await bolt.handle(request)
