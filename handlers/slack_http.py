"""``POST /slack/events`` in front of Bolt: what reaches Bolt is signed, fresh, new, UTF-8 and shaped like Slack's.

Bolt parses the body before it checks the signature and indexes fields it assumes to be objects, so garbage
(unsigned or not) made it answer 500 with a traceback in the log. Here, in this order, without a traceback:

* Socket Mode: 404 (Slack talks to the bot over the socket; an HTTP request here is not from Slack);
* a body over 1 MiB: 413;
* no, a non-numeric (ASCII digits only: ``¹²³`` passes ``isdigit()``), an absurdly long or a stale timestamp (more
  than 5 minutes off), or a signature that does not match (HMAC-SHA256 of ``v0:<timestamp>:<raw body>`` with the
  signing secret, compared in constant time): 401 ``invalid request``, as Bolt answers it, whatever the body;
* not UTF-8, JSON nested deeper than :data:`MAX_DEPTH`, a lone surrogate escape (``"\ud800"``, which no store
  or HTTP client can encode) anywhere, a form field given twice (two ``payload`` fields: this guard would check
  one and Bolt read the other), a ``payload`` that is not a JSON object, a JSON body that is not an object, or
  fields of the wrong type or missing where Bolt indexes them (``user``, ``channel``, ``container``, ``actions``
  and each action's ``action_id``, ``event`` and what it holds, ``view.type``, ``workflow_step``...): 400.
  The body is parsed as Bolt parses it (JSON when the content type says so or it starts with ``{``);
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
_STRINGS = ("type", "action_id", "block_id", "value", "action_ts", "callback_id", "trigger_id", "response_url", "id",
            "channel_id", "message_ts", "thread_ts", "ts", "team_id", "user_id", "api_app_id", "event_id")  # fmt: skip
MAX_DEPTH = 64  # Slack's deepest payloads (rich text in a view's state) are a few dozen levels
_TIMESTAMP_DIGITS = 12  # seconds since 1970 stay under 12 digits until the year 33658


def _answer(status: int, error: str) -> Response:
    return JSONResponse({"error": error}, status_code=status)


def _digits(value: str, most: int) -> bool:
    """ASCII digits only, at most ``most`` of them: ``int()`` takes them and the result fits a float."""
    return 0 < len(value) <= most and value.isascii() and value.isdigit()


def _signed(secret: str, body: bytes, timestamp: str, signature: str) -> bool:
    if not _digits(timestamp, _TIMESTAMP_DIGITS) or abs(time.time() - int(timestamp)) > WINDOW_S:
        return False
    expected = "v0=" + hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode())


def _payload(text: str, content_type: str) -> dict[str, Any] | None:
    """The request as Bolt will parse it (``slack_bolt.request.internals.parse_body``), or ``None`` when Bolt could
    not, or would read something else than this guard checked."""
    if content_type.split(";")[0].strip() == "application/json" or text.startswith("{"):
        data = json.loads(text)
        return data if isinstance(data, dict) and _encodable(data) else None
    form = parse_qs(text, keep_blank_values=True)
    if any(len(v) > 1 for v in form.values()):
        return None  # Slack never repeats a field; Bolt keeps the last one, parse_qs the first
    if "payload" in form:
        data = json.loads(form["payload"][0])
        return data if isinstance(data, dict) and _encodable(data) else None
    return {k: v[0] for k, v in form.items()}


def _encodable(data: dict[str, Any]) -> bool:
    """No deeper than :data:`MAX_DEPTH`, and every text (keys too) encodable as UTF-8 (no lone surrogate). A loop,
    not a recursion: the depth is what is being checked."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(value, dict):
            items: list[Any] = [*value.keys(), *value.values()]
        elif isinstance(value, list):
            items = value
        else:
            items = [value]
        for item in items:
            if isinstance(item, str):
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return False
            elif isinstance(item, dict | list):
                stack.append((item, depth + 1))
    return True


def _strings(data: dict[str, Any]) -> bool:
    return not any(data.get(k) is not None and not isinstance(data[k], str) for k in _STRINGS)


def _inner(data: dict[str, Any], depth: int = 0) -> bool:
    """Inside an event, a message, an item...: a string or an object where Slack sends either (``event.channel`` is
    an id, ``channel_created``'s is an object), strings where it sends strings, and the same inside those objects."""
    if not _strings(data):
        return False
    if depth > 4:
        return True
    for k in _OBJECTS:
        value = data.get(k)
        if value is not None and not isinstance(value, str | dict):
            return False
        if isinstance(value, dict) and not _inner(value, depth + 1):
            return False
    return True


def _needs(data: dict[str, Any], *path: str) -> bool:
    """``data[path[0]][path[1]]...`` is there and the last one is an object."""
    value: Any = data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return isinstance(value, dict)


def _shaped(data: dict[str, Any]) -> bool:
    """Objects where Slack sends objects, lists of objects where it sends lists, strings where it sends strings
    (at the top, in each action, and inside the objects: what Bolt and the listeners index), and the fields Bolt
    takes for granted in the payload types that have them."""
    if not _strings(data) or any(data.get(k) is not None and not isinstance(data[k], dict) for k in _OBJECTS):
        return False
    if not all(_inner(data[k]) for k in _OBJECTS if isinstance(data.get(k), dict)):
        return False
    for k in _LISTS:
        items = data.get(k)
        if items is not None and not (isinstance(items, list) and all(isinstance(i, dict) and _strings(i)
                                                                       for i in items)):  # fmt: skip
            return False
    kind = data.get("type")
    if kind == "block_actions" and not all(isinstance(a.get("action_id"), str) for a in data.get("actions") or []):
        return False
    if kind in ("view_submission", "view_closed") and not (_needs(data, "view")
                                                           and isinstance(data["view"].get("type"), str)):  # fmt: skip
        return False
    steps = kind == "workflow_step_edit" or (kind == "view_submission" and data["view"]["type"] == "workflow_step")
    if steps and not _needs(data, "workflow_step"):
        return False
    event = data.get("event")
    return not (isinstance(event, dict) and event.get("type") == "workflow_step_execute"
                and not _needs(event, "workflow_step"))  # fmt: skip


async def slack_events(request: Request, services: Intake, bolt: AsyncSlackRequestHandler) -> Response:
    settings = services.settings.slack
    secret = settings.signing_secret
    if settings.socket_mode or secret is None:
        return _answer(404, "not found")
    declared = request.headers.get("content-length", "")
    if _digits(declared, 18) and int(declared) > MAX_BODY:
        return _answer(413, "body too large")
    body = await request.body()  # Starlette keeps it: Bolt reads the same bytes
    if len(body) > MAX_BODY:
        return _answer(413, "body too large")
    signature = request.headers.get("x-slack-signature", "")
    if not _signed(secret.get_secret_value(), body, request.headers.get("x-slack-request-timestamp", ""), signature):
        return _answer(401, "invalid request")
    try:
        payload = _payload(body.decode("utf-8"), request.headers.get("content-type", ""))
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: JSON nested too deep for json.loads
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
