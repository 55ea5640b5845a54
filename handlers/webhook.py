"""``POST /webhooks/argocd``: the Argo CD notifications webhook.

Authenticates (``Authorization: Bearer WEBHOOK_TOKEN``, compared in constant
time), bounds the body (1 MiB), validates the JSON body (the contract in the
README, "The Slack bot: `argo-why serve`"; extra fields ignored), deduplicates
on the idempotency key (app, revision, sync status, operation finish time)
because the notifications controller retries, enqueues durably and answers 202
in milliseconds. Outcomes:

* 401 wrong or missing token, whatever the body; 413 body over 1 MiB; 400 not JSON (nested too
  deep included), not the contract, or text with a lone surrogate escape (``"\ud800"``, which
  cannot be stored) (the reason in the body); nothing is enqueued for any of them. An oversized body is
  read (and thrown away) up to 8 MiB before the 413 is sent, and the connection is
  closed after it: a client still sending would otherwise see a reset, not the 413;
* 200 ``duplicate`` for an alert already accepted;
* 202 ``queued`` with the stream entry id;
* 503 when Redis is unavailable: the notifications controller retries. The dedupe
  mark and the entry are written together (:meth:`WorkQueue.enqueue_once`), so an
  alert answered 503 is never taken for a duplicate when it comes again, and one
  answered "duplicate" is always in the queue.

Every answer is ``application/json`` with a ``Content-Length``. A client that disconnects before its body is read
gets no answer and nothing is enqueued.

:class:`ArgoCDWebhook` is a plain ASGI app, no ``Request``/``Response`` objects (``bot.app`` hands it the requests
at its edge middleware, past Starlette's routing): every alert of a storm comes through here, and Starlette's
request and response wrappers and routing cost more per request than the validation does (README, "Development",
the benchmarks).
"""

from __future__ import annotations

import hmac
import json
import time

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError
from starlette.types import Receive, Scope, Send

from bot.intake import Intake
from bot.intake.jobs import DEDUPE_TTL_S, WebhookBody, WebhookJob
from bot.queue import JobJSON
from bot.store import StoreUnavailable

MAX_BODY = 1024 * 1024
DRAIN_LIMIT = 8 * 1024 * 1024
_DUPLICATE = b'{"status":"duplicate"}'
_JSON = (b"content-type", b"application/json")
_CLOSE = (b"connection", b"close")


class _Disconnected(Exception):
    """The client went away before its body was read: there is no one to answer."""


def _error(reason: str) -> bytes:
    # the bytes Starlette's JSONResponse renders for {"error": reason}
    return json.dumps({"error": reason}, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of header ``name`` (lower case, as ASGI servers give header names)."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _authorized(header: bytes | None, token: str) -> bool:
    # latin-1 text, as HTTP header values are read (and as Starlette's Headers decode them)
    scheme, _, given = (header or b"").decode("latin-1").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


async def _read_bounded(declared: bytes | None, receive: Receive) -> bytes | None:
    """The body, or ``None`` when it is over :data:`MAX_BODY`; the rest of an oversized body is read and dropped
    (up to :data:`DRAIN_LIMIT`) so that the client gets to read the answer."""
    size = int(declared) if declared is not None and declared.isascii() and declared.isdigit() else 0
    if size > DRAIN_LIMIT:
        return None  # not worth reading: the client may see the connection reset
    chunks: list[bytes] = []
    seen = 0
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        if message["type"] != "http.request":
            continue
        chunk = message.get("body", b"")
        more = message.get("more_body", False)
        seen += len(chunk)
        if seen > DRAIN_LIMIT:
            break
        if seen <= MAX_BODY and size <= MAX_BODY:
            chunks.append(chunk)
    if seen > MAX_BODY or size > MAX_BODY:
        return None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _reason(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "body"
    return f"{where}: {err.get('msg', 'invalid')}"


class ArgoCDWebhook:
    """The endpoint as an ASGI app: ``POST /webhooks/argocd`` (the route takes no other method)."""

    def __init__(self, services: Intake) -> None:
        self.services = services

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            status, body = await self.answer(scope, receive)
        except _Disconnected:
            return
        headers = [(b"content-length", b"%d" % len(body)), _JSON]
        if status == 413:
            headers.append(_CLOSE)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def answer(self, scope: Scope, receive: Receive) -> tuple[int, bytes]:
        """The status and the JSON body of the answer to one request."""
        services = self.services
        count = services.metrics.webhook
        token = services.settings.runtime.webhook_token
        if token is None or not _authorized(_header(scope, b"authorization"), token.get_secret_value()):
            count("unauthorized")
            return 401, _error("missing or wrong bearer token")
        raw = await _read_bounded(_header(scope, b"content-length"), receive)
        if raw is None:
            count("too_large")
            return 413, _error(f"body over {MAX_BODY} bytes")
        try:
            body = WebhookBody.model_validate_json(raw)
        except ValidationError as e:
            count("invalid")
            if e.errors()[0].get("type") == "json_invalid":
                return 400, _error("body is not valid JSON")
            return 400, _error(_reason(e))
        key = body.idempotency_key()
        # serialized once, and the text the queue stores is the one checked for what cannot be stored (the job's
        # other fields come from the body)
        try:
            job = JobJSON(WebhookJob(body=body, received=time.time(), key=key).payload_json())
            job.encode()
        except (UnicodeEncodeError, PydanticSerializationError):
            count("invalid")
            return 400, _error("body: text with a lone surrogate escape")
        try:
            entry = await services.queue.enqueue_once(key, DEDUPE_TTL_S, job)
        except StoreUnavailable:
            count("unavailable")
            return 503, _error("state store unavailable; retry")
        if entry is None:
            count("duplicate")
            return 200, _DUPLICATE
        count("accepted")
        # a stream entry id is digits and a dash: nothing to escape
        return 202, b'{"status":"queued","id":"' + entry.encode() + b'"}'
