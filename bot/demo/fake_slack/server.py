"""The fake Slack Web API server: a real HTTP server on 127.0.0.1 that routes each call to a method of ``WebApi``.

What it guarantees (the parts of Slack's wire format it reproduces):

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
* Every request, failed or not, is recorded in ``calls`` (``SlackCall``) before it is answered, so a test can count
  retries.
"""

from __future__ import annotations

import copy
import json
import secrets
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

from bot.demo.fake_slack.web_api import WebApi
from bot.demo.fake_slack.wire import JSON, RESPONSE_URL, UPLOAD, SlackCall, _Answer, _BadBody, _error
from bot.demo.serving import BackgroundServer, QuietHTTPServer


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


class FakeSlack(WebApi, BackgroundServer):
    """The fake Slack Web API server; starts on construction, stops with ``stop()`` or at the end of a ``with``.

    ``url`` is the base URL for ``AsyncWebClient(base_url=...)``, ``token`` the only bot token it accepts."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        # Shaped like a real bot token (xoxb-<team>-<bot>-<secret>), random so a test cannot pass by accident.
        self.token = token or f"xoxb-{secrets.randbelow(10**12):012d}-{secrets.randbelow(10**13):013d}-" + (
            secrets.token_hex(12)
        )
        self.calls: list[SlackCall] = []
        self.errors: list[str] = []  # tracebacks of exceptions inside the fake itself (a bug, not an API error)
        self._lock = threading.RLock()
        super().__init__()
        httpd = _HTTPServer((host, port), self)
        self.root = f"http://{host}:{httpd.server_address[1]}/"
        self.url = f"{self.root}api/"
        self._serve(httpd, "FakeSlack")

    # -- configuration ----------------------------------------------------------------------------------------------

    def add_channel(self, channel_id: str, name: str) -> None:
        """Name a channel: ``conversations.info`` and ``conversations.list`` report it and ``#name`` posts resolve to
        ``channel_id``."""
        with self._lock:
            self._channel_ids[name.lstrip("#")] = channel_id
            self._channel_names[channel_id] = name.lstrip("#")

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
