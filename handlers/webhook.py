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
"""

from __future__ import annotations

import hmac
import time

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.intake import Intake
from bot.intake.jobs import DEDUPE_TTL_S, WebhookBody, WebhookJob
from bot.queue import JobJSON
from bot.store import StoreUnavailable

MAX_BODY = 1024 * 1024
DRAIN_LIMIT = 8 * 1024 * 1024
_DUPLICATE = b'{"status":"duplicate"}'


def _error(status: int, reason: str) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


def _authorized(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


async def _read_bounded(request: Request) -> bytes | None:
    """The body, or ``None`` when it is over :data:`MAX_BODY`; the rest of an oversized body is read and dropped
    (up to :data:`DRAIN_LIMIT`) so that the client gets to read the answer."""
    declared = request.headers.get("content-length")
    size = int(declared) if declared is not None and declared.isascii() and declared.isdigit() else 0
    if size > DRAIN_LIMIT:
        return None  # not worth reading: the client may see the connection reset
    body = bytearray()
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > DRAIN_LIMIT:
            break
        if seen <= MAX_BODY and size <= MAX_BODY:
            body.extend(chunk)
    return bytes(body) if seen <= MAX_BODY and size <= MAX_BODY else None


def _reason(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "body"
    return f"{where}: {err.get('msg', 'invalid')}"


async def argocd_webhook(request: Request, services: Intake) -> Response:
    count = services.metrics.webhook
    token = services.settings.runtime.webhook_token
    if token is None or not _authorized(request, token.get_secret_value()):
        count("unauthorized")
        return _error(401, "missing or wrong bearer token")
    raw = await _read_bounded(request)
    if raw is None:
        count("too_large")
        response = _error(413, f"body over {MAX_BODY} bytes")
        response.headers["Connection"] = "close"
        return response
    try:
        body = WebhookBody.model_validate_json(raw)
    except ValidationError as e:
        count("invalid")
        if e.errors()[0].get("type") == "json_invalid":
            return _error(400, "body is not valid JSON")
        return _error(400, _reason(e))
    key = body.idempotency_key()
    # serialized once, and the text the queue stores is the one checked for what cannot be stored (the job's
    # other fields come from the body)
    try:
        job = JobJSON(WebhookJob(body=body, received=time.time(), key=key).payload_json())
        job.encode()
    except (UnicodeEncodeError, PydanticSerializationError):
        count("invalid")
        return _error(400, "body: text with a lone surrogate escape")
    try:
        entry = await services.queue.enqueue_once(key, DEDUPE_TTL_S, job)
    except StoreUnavailable:
        count("unavailable")
        return _error(503, "state store unavailable; retry")
    if entry is None:
        count("duplicate")
        return Response(_DUPLICATE, 200, media_type="application/json")
    count("accepted")
    # JSONResponse's bytes, written directly (a stream entry id is digits and a dash: nothing to escape)
    return Response(b'{"status":"queued","id":"' + entry.encode() + b'"}', 202, media_type="application/json")
