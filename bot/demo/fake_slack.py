"""A fake Slack Web API: a real HTTP server on 127.0.0.1 that answers the calls argo-why makes, plus builders for the
signed requests Slack sends to the bot.

It exists so that the bot's real ``slack_sdk`` ``AsyncWebClient`` (aiohttp, which httpx mocks cannot intercept) and
Bolt's ``respond()`` talk to something that speaks Slack's wire format, in the offline ``make demo`` and in the tests
(../shared/notes/slack.md §11). Nothing in production imports it. What only tests need (failure injection, channel,
user and user-group set-up, ``wait_for``, the other request builders) is added in ``tests/fakes/slack.py``.

What the fake guarantees (the parts of Slack's wire format it reproduces):

* Routing: ``<url>`` is ``http://127.0.0.1:PORT/api/`` (pass it as ``AsyncWebClient(base_url=...)``); a method is the
  last path segment (``/api/chat.postMessage``), GET or POST. The server root works as a base URL too.
* Parameters: query string, ``application/x-www-form-urlencoded`` bodies (values are strings; ``blocks``,
  ``attachments`` and ``files`` are JSON strings, as the SDK sends them) and ``application/json`` bodies (values keep
  their JSON types), merged as Slack does. A body that cannot be parsed answers ``invalid_json`` /
  ``invalid_form_data``.
* Authentication on every API method: ``Authorization: Bearer <token>``, or a ``token`` field in a form or query
  string (never in a JSON body, as on Slack); anything else answers HTTP 200 ``{"ok": false, "error":
  "invalid_auth"}``. (Real Slack says ``not_authed`` when no token is sent at all; the fake says ``invalid_auth`` in
  both cases, so tests need one check.) The upload and ``response_url`` endpoints need no token, as on Slack.
* Errors are HTTP 200 ``{"ok": false, "error": ...}`` like Slack's (transport failures are only injected, by the
  tests' subclass).
* Messages: ``chat.postMessage`` returns the channel **ID** (a ``#name`` is mapped to a stable ``C…`` ID, a user ID to a
  ``D…`` DM ID) and a unique, strictly increasing ``ts`` (``1764500000.000100``). ``chat.update`` follows Slack's block
  rules: given ``blocks`` replace the whole list (``[]`` removes them), omitted ``blocks`` are kept (notes §7); an
  unknown ``ts`` answers ``message_not_found``. A message without ``text``, ``blocks`` and ``attachments`` answers
  ``no_text``; more than 50 blocks answers ``invalid_blocks`` (notes §8).
* Reading back: ``conversations.history`` (top-level messages, newest first) and ``conversations.replies`` (the
  parent, then its replies), with ``oldest``/``latest``, ``limit`` and ``cursor``; the ``metadata`` a message was
  posted with is returned only with ``include_all_metadata``, as on Slack.
* Files: ``files_upload_v2``'s three steps (notes §10): ``files.getUploadURLExternal`` returns an ``upload_url`` on this
  server; the POST of the bytes answers ``200 text/plain "OK - <length>"`` like files.slack.com (the SDK reads it as
  text); ``files.completeUploadExternal`` shares the uploaded bytes (``uploads``) and answers ``files: [{id, title}]``.
* ``response_url``: ``POST /response/<n>`` takes Bolt's ``respond()`` JSON and answers ``200 "ok"``; like Slack it
  refuses an empty message (400 ``no_text``) and more than 5 posts to one URL (404 ``used_url``, our approximation of
  Slack's limit of 5 responses per URL, notes §7).
* Every request, failed or not, is recorded in ``calls`` (``SlackCall``) before it is answered, so a test can count
  retries.

Not reproduced: rate limits (only injected), scopes, channel membership, OAuth, multipart bodies (the retired
``files.upload``), files appearing as messages in the channel, Events API delivery from Slack to the bot (use the
body builders at the bottom, and those of ``tests/fakes/slack.py``, with ``signed_headers``).
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, NamedTuple, cast
from urllib.parse import parse_qsl, urlencode, urlsplit

from slack_sdk.signature import SignatureVerifier

from bot.demo.serving import BackgroundServer, QuietHTTPServer

__all__ = [
    "APP_ID",
    "BOT_ID",
    "BOT_NAME",
    "BOT_USER_ID",
    "MAX_BLOCKS",
    "RESPONSE_URL",
    "RESPONSE_URL_LIMIT",
    "TEAM",
    "TEAM_ID",
    "TEAM_URL",
    "UPLOAD",
    "FakeSlack",
    "SlackCall",
    "Upload",
    "block_action_body",
    "signed_headers",
]

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

MAX_BLOCKS = 50  # blocks per message (Slack docs "Blocks", notes §8)
RESPONSE_URL_LIMIT = 5  # responses per response_url (Slack docs "slash commands", notes §7)

DEFAULT_RESPONSE_URL = f"https://hooks.slack.com/commands/{TEAM_ID}/1000000000001/fakefakefakefakefake"

# Conversation and user IDs are upper-case letters and digits behind a type letter (channel names are lower-case).
_ID = re.compile(r"^[CDGUW][A-Z0-9]+$")
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


class _HTTPServer(QuietHTTPServer):
    def __init__(self, address: tuple[str, int], fake: FakeSlack) -> None:
        self.fake = fake
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive like slack.com, so aiohttp's connection reuse is exercised too.
    protocol_version = "HTTP/1.1"

    def _serve(self) -> None:
        body = self._read_body()
        headers = {name.lower(): value for name, value in self.headers.items()}
        answer = cast(_HTTPServer, self.server).fake._handle(self.command, self.path, headers, body)
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    do_GET = do_POST = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test and demo output clean; every request is in FakeSlack.calls


class FakeSlack(BackgroundServer):
    """The fake Slack Web API server; starts on construction, stops with ``stop()`` or at the end of a ``with``.

    ``url`` is the base URL for ``AsyncWebClient(base_url=...)``, ``token`` the only bot token it accepts."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        # Shaped like a real bot token (xoxb-<team>-<bot>-<secret>), random so a test cannot pass by accident.
        self.token = token or f"xoxb-{secrets.randbelow(10**12):012d}-{secrets.randbelow(10**13):013d}-" + (
            secrets.token_hex(12)
        )
        self.calls: list[SlackCall] = []
        self.errors: list[str] = []  # tracebacks of exceptions inside the fake itself (a bug, not an API error)
        self.uploads: list[Upload] = []
        self.ephemerals: list[JSON] = []  # chat.postEphemeral messages: channel, user, text, blocks, thread_ts, ts
        self.responses: list[JSON] = []  # JSON bodies posted to response URLs, with "response_url" added
        self._lock = threading.RLock()
        self._messages: dict[str, list[JSON]] = {}
        self._channel_ids: dict[str, str] = {}  # name -> ID
        self._channel_names: dict[str, str] = {}  # ID -> name
        self._users: dict[str, JSON] = {}
        self._usergroups: dict[str, list[str]] = {}
        self._files: dict[str, JSON] = {}
        self._response_posts: dict[str, int] = {}
        self._last_ts_us = 0
        self._counter = 0
        self._methods: dict[str, Callable[[JSON], JSON]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.getPermalink": self._get_permalink,
            "conversations.info": self._conversations_info,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
            "users.info": self._users_info,
            "usergroups.users.list": self._usergroup_users,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
        }
        httpd = _HTTPServer((host, port), self)
        self.root = f"http://{host}:{httpd.server_address[1]}/"
        self.url = f"{self.root}api/"
        self._serve(httpd, "FakeSlack")

    # -- configuration ----------------------------------------------------------------------------------------------

    def new_response_url(self) -> str:
        """A fresh ``response_url`` on this server, for the request body builders."""
        with self._lock:
            self._counter += 1
            return f"{self.root}response/{self._counter}"

    # -- inspection -------------------------------------------------------------------------------------------------

    def messages(self, channel: str, *, include_replies: bool = False) -> list[JSON]:
        """The channel's messages in ``ts`` order, as ``conversations.history`` lists them: top-level messages and
        broadcast replies; with ``include_replies`` every thread reply too. Each is a copy with ``channel``, ``ts``,
        ``thread_ts`` (None at top level), ``text``, ``blocks``, ``attachments``, ``updated`` (how many
        ``chat.update`` calls it got), ``reply_broadcast``, ``user`` and ``bot_id``."""
        with self._lock:
            records = self._messages.get(self._resolve_channel(channel), [])
            return [
                copy.deepcopy(record)
                for record in records
                if include_replies or record["thread_ts"] is None or record["reply_broadcast"]
            ]

    def thread(self, channel: str, ts: str) -> list[JSON]:
        """The replies in the thread of the message ``ts`` (the parent itself excluded), oldest first."""
        with self._lock:
            records = self._messages.get(self._resolve_channel(channel), [])
            return [copy.deepcopy(record) for record in records if record["thread_ts"] == ts and record["ts"] != ts]

    # -- request handling -------------------------------------------------------------------------------------------

    def _handle(self, verb: str, raw_path: str, headers: dict[str, str], body: bytes) -> _Answer:
        split = urlsplit(raw_path)
        path = split.path.lstrip("/")
        path = path.removeprefix("api/")  # the upload and response URLs work under the API base URL too
        kind, _, rest = path.partition("/")
        if kind == "upload" and rest:
            method = UPLOAD
        elif kind == "response" and rest:
            method = RESPONSE_URL
        else:
            method = path
        params: JSON = {}
        with self._lock:
            try:
                params, answer = self._answer(method, rest, split.query, headers, body)
            except Exception:
                self.errors.append(traceback.format_exc())
                answer = _Answer.data(_error("internal_error"), status=500)
            # Recorded before the answer leaves, so a client that got its answer always finds its call in .calls.
            self.calls.append(
                SlackCall(method, params, headers, time.time(), split.path, body, answer.status, answer.parsed)
            )
        return answer

    def _answer(self, method: str, rest: str, query: str, headers: dict[str, str], body: bytes) -> tuple[JSON, _Answer]:
        params: JSON = dict(parse_qsl(query, keep_blank_values=True))
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        is_json = content_type == "application/json"
        bad_body: str | None = None
        if method != UPLOAD:
            try:
                params.update(self._parse_body(body, content_type))
            except _BadBody as exc:
                bad_body = exc.error
        injected = self._injected(method)
        if injected is not None:
            return params, injected
        if method == UPLOAD:
            params = {"file_id": rest}
            return params, self._upload(rest, body)
        if method == RESPONSE_URL:
            return params, self._respond(rest, params, bad_body)
        if not method or "/" in method:
            return params, _Answer.plain("Not Found", status=404)
        if bad_body:
            return params, _Answer.data(_error(bad_body))
        if not self._authorized(headers, params, is_json):
            return params, _Answer.data(_error("invalid_auth"))
        handler = self._methods.get(method)
        try:
            result = handler(params) if handler else {"ok": True}
        except _BadBody as exc:
            result = _error(exc.error)
        # Slack tags every answer with a request id; harmless, and it makes the fake's answers look like Slack's.
        return params, _Answer.data(result, headers={"X-Slack-Req-Id": secrets.token_hex(16)})

    def _injected(self, method: str) -> _Answer | None:
        """A failure to answer instead of handling a call to ``method`` (after the body is parsed, before
        authentication); None here: the tests' subclass overrides it to inject failures."""
        return None

    @staticmethod
    def _parse_body(body: bytes, content_type: str) -> JSON:
        if not body:
            return {}
        if content_type == "application/json" or (not content_type and body.lstrip().startswith(b"{")):
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise _BadBody("invalid_json") from exc
            if not isinstance(data, dict):
                raise _BadBody("invalid_json")
            return data
        try:
            return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False))
        except (UnicodeDecodeError, ValueError) as exc:
            raise _BadBody("invalid_form_data") from exc

    def _authorized(self, headers: dict[str, str], params: JSON, is_json: bool) -> bool:
        auth = headers.get("authorization", "")
        token: Any = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        if token is None and not is_json:
            token = params.get("token")  # Slack accepts the token as a form or query field, but not inside JSON
        return bool(token) and secrets.compare_digest(str(token), self.token)

    # -- model helpers ----------------------------------------------------------------------------------------------

    def _next_ts(self) -> str:
        # Wall-clock based like Slack's, but strictly increasing so two posts in the same microsecond differ.
        self._last_ts_us = max(time.time_ns() // 1000, self._last_ts_us + 1)
        return f"{self._last_ts_us // 1_000_000}.{self._last_ts_us % 1_000_000:06d}"

    def _resolve_channel(self, value: str) -> str:
        value = value.strip()
        if _ID.match(value):
            # Posting to a user ID posts to the DM with that user; Slack answers with the D… ID.
            return "D" + value[1:] if value[0] in "UW" else value
        name = value.lstrip("#")
        if name not in self._channel_ids:
            channel_id = f"C{len(self._channel_ids) + 1:08d}"
            self._channel_ids[name] = channel_id
            self._channel_names[channel_id] = name
        return self._channel_ids[name]

    def _find(self, channel_id: str, ts: str) -> JSON | None:
        for record in self._messages.get(channel_id, []):
            if record["ts"] == ts:
                return record
        return None

    @staticmethod
    def _content(params: JSON) -> tuple[str | None, list[Any] | None, list[Any] | None]:
        text = _str_or_none(params.get("text"))
        blocks = _json_field(params.get("blocks"), "invalid_blocks_format")
        attachments = _json_field(params.get("attachments"), "invalid_attachments")
        if blocks is not None and not isinstance(blocks, list):
            raise _BadBody("invalid_blocks_format")
        if attachments is not None and not isinstance(attachments, list):
            raise _BadBody("invalid_attachments")
        return text, blocks, attachments

    @staticmethod
    def _wire(record: JSON) -> JSON:
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

    def _listing(self, params: JSON, records: list[JSON]) -> JSON:
        """A page of ``records`` as conversations.history/replies answer it: ``oldest``/``latest`` bounds (exclusive
        unless ``inclusive``), ``limit`` (default 100), ``cursor``; metadata only with ``include_all_metadata``."""
        inclusive = _truthy(params.get("inclusive"))
        oldest, latest = float(params.get("oldest") or 0), float(params.get("latest") or 9e12)
        chosen = [r for r in records if (oldest <= float(r["ts"]) if inclusive else oldest < float(r["ts"]))
                  and float(r["ts"]) < latest]  # fmt: skip
        start = int(params.get("cursor") or 0)
        limit = int(params.get("limit") or 100)
        page = chosen[start : start + limit]
        messages = []
        for r in page:
            m = self._wire(r)
            if r.get("metadata") and _truthy(params.get("include_all_metadata")):
                m["metadata"] = copy.deepcopy(r["metadata"])
            messages.append(m)
        more = start + limit < len(chosen)
        return {"ok": True, "messages": messages, "has_more": more,
                "response_metadata": {"next_cursor": str(start + limit) if more else ""}}  # fmt: skip

    # -- Web API methods --------------------------------------------------------------------------------------------

    @staticmethod
    def _auth_test(params: JSON) -> JSON:
        return {
            "ok": True,
            "url": TEAM_URL,
            "team": TEAM,
            "user": BOT_NAME,
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _post_message(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        text, blocks, attachments = self._content(params)
        if text is None and not blocks and not attachments:
            return _error("no_text")
        if blocks is not None and len(blocks) > MAX_BLOCKS:
            return _error("invalid_blocks", errors=[f"must provide at most {MAX_BLOCKS} items [json-pointer:/blocks]"])
        channel_id = self._resolve_channel(channel)
        thread_ts = _str_or_none(params.get("thread_ts"))
        metadata = _json_field(params.get("metadata"), "invalid_metadata")
        record: JSON = {
            "metadata": metadata if isinstance(metadata, dict) else None,
            "channel": channel_id,
            "ts": self._next_ts(),
            "thread_ts": thread_ts,
            "text": text or "",
            "blocks": blocks or [],
            "attachments": attachments or [],
            "updated": 0,
            "edited_ts": None,
            "reply_broadcast": thread_ts is not None and _truthy(params.get("reply_broadcast")),
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
        }
        self._messages.setdefault(channel_id, []).append(record)
        return {"ok": True, "channel": channel_id, "ts": record["ts"], "message": self._wire(record)}

    def _update(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        ts = _str_or_none(params.get("ts"))
        if channel is None:
            return _error("channel_not_found")
        record = self._find(self._resolve_channel(channel), ts) if ts else None
        if record is None:
            return _error("message_not_found")
        text, blocks, attachments = self._content(params)
        if text is None and blocks is None and attachments is None:
            return _error("no_text")
        if blocks is not None and len(blocks) > MAX_BLOCKS:
            return _error("invalid_blocks", errors=[f"must provide at most {MAX_BLOCKS} items [json-pointer:/blocks]"])
        # Slack's rules (notes §7): what is given replaces, what is omitted stays; blocks=[] removes the blocks.
        if text is not None:
            record["text"] = text
        if blocks is not None:
            record["blocks"] = blocks
        if attachments is not None:
            record["attachments"] = attachments
        record["updated"] += 1
        record["edited_ts"] = self._next_ts()
        return {
            "ok": True,
            "channel": record["channel"],
            "ts": record["ts"],
            "text": record["text"],
            "message": self._wire(record),
        }

    def _post_ephemeral(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        user = _str_or_none(params.get("user"))
        if channel is None:
            return _error("channel_not_found")
        if user is None:
            return _error("user_not_in_channel")
        text, blocks, attachments = self._content(params)
        if text is None and not blocks and not attachments:
            return _error("no_text")
        ts = self._next_ts()
        self.ephemerals.append(
            {
                "channel": self._resolve_channel(channel),
                "user": user,
                "text": text or "",
                "blocks": blocks or [],
                "thread_ts": _str_or_none(params.get("thread_ts")),
                "ts": ts,
            }
        )
        return {"ok": True, "message_ts": ts}

    def _get_permalink(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        ts = _str_or_none(params.get("message_ts"))
        if channel is None:
            return _error("channel_not_found")
        channel_id = self._resolve_channel(channel)
        record = self._find(channel_id, ts) if ts else None
        if record is None:
            return _error("message_not_found")
        permalink = f"{TEAM_URL}archives/{channel_id}/p{record['ts'].replace('.', '')}"
        if record["thread_ts"] is not None:
            permalink += f"?thread_ts={record['thread_ts']}&cid={channel_id}"
        return {"ok": True, "channel": channel_id, "permalink": permalink}

    def _history(self, params: JSON) -> JSON:
        """Top-level messages (and broadcast replies), newest first, like Slack."""
        channel = _str_or_none(params.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        records = self._messages.get(self._resolve_channel(channel), [])
        top = [r for r in records if r["thread_ts"] is None or r["reply_broadcast"]]
        return self._listing(params, list(reversed(top)))

    def _replies(self, params: JSON) -> JSON:
        """The thread of ``ts``: its parent first, then the replies, oldest first, like Slack."""
        channel, ts = _str_or_none(params.get("channel")), _str_or_none(params.get("ts"))
        if channel is None:
            return _error("channel_not_found")
        records = self._messages.get(self._resolve_channel(channel), [])
        thread = [r for r in records if r["ts"] == ts or r["thread_ts"] == ts]
        if not thread:
            return _error("thread_not_found")
        return self._listing(params, thread)

    def _conversations_info(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        channel_id = self._resolve_channel(channel)
        name = self._channel_names.get(channel_id, f"channel-{channel_id.lower()}")
        return {
            "ok": True,
            "channel": {
                "id": channel_id,
                "name": name,
                "name_normalized": name,
                "is_channel": channel_id.startswith("C"),
                "is_group": False,
                "is_im": channel_id.startswith("D"),
                "is_private": channel_id.startswith("G"),
                "is_archived": False,
                "is_general": False,
                "is_member": True,
                "created": 1700000000,
                "context_team_id": TEAM_ID,
            },
        }

    @staticmethod
    def _user_object(user_id: str, name: str, real_name: str, display_name: str) -> JSON:
        return {
            "id": user_id,
            "team_id": TEAM_ID,
            "name": name,
            "deleted": False,
            "real_name": real_name,
            "tz": "Etc/UTC",
            "tz_offset": 0,
            "is_admin": False,
            "is_bot": user_id == BOT_USER_ID,
            "profile": {
                "real_name": real_name,
                "real_name_normalized": real_name,
                "display_name": display_name,
                "display_name_normalized": display_name,
            },
        }

    def _users_info(self, params: JSON) -> JSON:
        user_id = _str_or_none(params.get("user"))
        if user_id is None:
            return _error("user_not_found")
        user = self._users.get(user_id)
        if user is None:
            name = BOT_NAME if user_id == BOT_USER_ID else f"user-{user_id.lower()}"
            user = self._user_object(user_id, name, name if user_id == BOT_USER_ID else f"User {user_id}", name)
        return {"ok": True, "user": copy.deepcopy(user)}

    def _usergroup_users(self, params: JSON) -> JSON:
        group = _str_or_none(params.get("usergroup"))
        if group is None or group not in self._usergroups:
            return _error("no_such_subteam")
        return {"ok": True, "users": list(self._usergroups[group])}

    def _get_upload_url(self, params: JSON) -> JSON:
        filename = _str_or_none(params.get("filename"))
        length = str(params.get("length", ""))
        if filename is None or not length.isdigit():
            return _error("invalid_arguments")
        self._counter += 1
        file_id = f"F{self._counter:09d}"
        self._files[file_id] = {"filename": filename, "length": int(length), "content": None}
        return {"ok": True, "upload_url": f"{self.root}upload/{file_id}", "file_id": file_id}

    def _upload(self, file_id: str, body: bytes) -> _Answer:
        entry = self._files.get(file_id)
        if entry is None:
            return _Answer.plain("Not Found", status=404)
        entry["content"] = body
        return _Answer.plain(f"OK - {len(body)}")

    def _complete_upload(self, params: JSON) -> JSON:
        files = _json_field(params.get("files"), "invalid_arguments")
        if not isinstance(files, list) or not files or not all(isinstance(f, dict) and "id" in f for f in files):
            return _error("invalid_arguments")
        entries = [self._files.get(str(f["id"])) for f in files]
        if any(entry is None or entry["content"] is None for entry in entries):
            return _error("file_not_found")  # never issued, or its bytes never arrived
        channel = _str_or_none(params.get("channel_id"))
        channels = [channel] if channel else [c for c in str(params.get("channels") or "").split(",") if c]
        targets: list[str | None] = [self._resolve_channel(c) for c in channels] or [None]
        thread_ts = _str_or_none(params.get("thread_ts"))
        answered: list[JSON] = []
        for spec, entry in zip(files, entries, strict=True):
            assert entry is not None
            title = str(spec.get("title") or entry["filename"])
            for target in targets:
                self.uploads.append(Upload(entry["filename"], entry["content"], target, thread_ts))
            size = len(entry["content"])
            answered.append({"id": spec["id"], "title": title, "name": entry["filename"], "size": size})
        return {"ok": True, "files": answered}

    def _respond(self, response_id: str, params: JSON, bad_body: str | None) -> _Answer:
        # Incoming-webhook style: plain-text answers and real HTTP statuses, unlike the Web API.
        if bad_body:
            return _Answer.plain("invalid_payload", status=400)
        posts = self._response_posts.get(response_id, 0) + 1
        self._response_posts[response_id] = posts
        if posts > RESPONSE_URL_LIMIT:
            return _Answer.plain("used_url", status=404)
        if not any(params.get(key) for key in ("text", "blocks", "attachments", "delete_original")):
            return _Answer.plain("no_text", status=400)
        self.responses.append({**copy.deepcopy(params), "response_url": f"{self.root}response/{response_id}"})
        return _Answer.plain("ok")


# -- requests from Slack to the bot ----------------------------------------------------------------------------------


def signed_headers(secret: str, body: bytes, *, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends with ``body``: ``x-slack-request-timestamp`` (now unless given), ``x-slack-signature``
    (``v0=`` HMAC-SHA256 of ``v0:{timestamp}:{body}``, computed by slack_sdk's own ``SignatureVerifier``, notes §5) and
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
