"""What the fake Slack puts on the wire and keeps of it: the identity of the fake workspace and bot, the record of a
call (``SlackCall``), a shared file (``Upload``), and the shapes of its answers and of a message as Slack returns it.

Guarantees: a Web API answer is JSON with Slack's content type, and a Web API error is HTTP 200 ``{"ok": false,
"error": ...}`` (``_error``); the upload and ``response_url`` answers are ``text/plain``, which the SDK reads as text;
a field that must hold JSON (``blocks``, ``attachments``, ``files``, ``metadata``) and does not raises ``_BadBody``
with Slack's error code for it; form values count as true as Slack reads them (``"1"``, ``"true"``, ``"yes"``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

JSON = dict[str, Any]

# The identity of the fake workspace and bot, as auth.test reports it (Bolt caches it on the first request).
TEAM_ID = "T0DEMO"
TEAM = "Demo"
TEAM_URL = "https://argo-why-demo.slack.com/"
BOT_NAME = "argo-why"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
APP_ID = "A0DEMO"

#: ``SlackCall.method`` of the POST of a file's bytes to an ``upload_url``, and of a POST to a ``response_url``; both
#: also work as the ``method`` of the failure injections.
UPLOAD = "upload"
RESPONSE_URL = "response_url"

MAX_BLOCKS = 50  # blocks per message (Slack docs "Blocks")
RESPONSE_URL_LIMIT = 5  # responses per response_url (Slack docs "slash commands")

_JSON_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True)
class SlackCall:
    """One request as the fake saw it.

    ``method`` is the Web API method (``"chat.postMessage"``), or ``UPLOAD`` / ``RESPONSE_URL``. ``params`` merges the
    query string and the parsed body (form values are strings, JSON values keep their types; for ``UPLOAD`` it holds
    ``file_id``). ``headers`` has lower-cased names. ``time`` is ``time.time()`` on arrival. ``status`` and
    ``response`` are what the fake answered (the parsed JSON, or the text for the non-JSON endpoints)."""

    method: str
    params: JSON
    headers: dict[str, str]
    time: float
    path: str = ""
    body: bytes = b""
    status: int = 200
    response: Any = None


class Upload(NamedTuple):
    """A file shared by ``files.completeUploadExternal``: what it was called, its bytes, and where it went (``channel``
    is None for a file uploaded without sharing it)."""

    filename: str
    content: bytes
    channel: str | None
    thread_ts: str | None


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    headers: dict[str, str]
    parsed: Any

    @classmethod
    def data(cls, data: JSON, status: int = 200, headers: Mapping[str, str] | None = None) -> _Answer:
        return cls(status, json.dumps(data).encode(), {"Content-Type": _JSON_TYPE, **(headers or {})}, data)

    @classmethod
    def plain(cls, text: str, status: int = 200) -> _Answer:
        # text/plain matters: the SDK reads the upload answer as text only with that content type.
        return cls(status, text.encode(), {"Content-Type": "text/plain; charset=utf-8"}, text)


class _BadBody(ValueError):
    """A request body Slack could not parse; ``error`` is Slack's error code for it."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def _error(error: str, **extra: Any) -> JSON:
    return {"ok": False, "error": error, **extra}


def _truthy(value: Any) -> bool:
    # Form fields arrive as strings ("true", "1"), JSON fields as booleans.
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes"}
    return bool(value)


def _str_or_none(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _json_field(value: Any, error: str) -> Any:
    """``blocks``/``attachments``/``files``: a JSON string in a form body, already decoded in a JSON body."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise _BadBody(error) from exc
    return value


def _wire_message(record: JSON) -> JSON:
    """A stored message the way Slack returns it in ``message``."""
    message: JSON = {
        "type": "message",
        "user": record["user"],
        "bot_id": record["bot_id"],
        "app_id": APP_ID,
        "team": TEAM_ID,
        "text": record["text"],
        "ts": record["ts"],
    }
    if record["blocks"]:
        message["blocks"] = copy.deepcopy(record["blocks"])
    if record["attachments"]:
        message["attachments"] = copy.deepcopy(record["attachments"])
    if record["thread_ts"] is not None:
        message["thread_ts"] = record["thread_ts"]
        if record["reply_broadcast"]:
            message["subtype"] = "thread_broadcast"
    if record["updated"]:
        message["edited"] = {"user": record["user"], "ts": record["edited_ts"]}
    return message
