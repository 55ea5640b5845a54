"""``POST /webhooks/argocd``: the Argo CD notifications webhook.

Authenticates (``Authorization: Bearer WEBHOOK_TOKEN``, compared in constant
time), bounds the body (1 MiB), validates the JSON body of DESIGN.md section 4
(extra fields ignored), deduplicates on the idempotency key (app, revision, sync
status, operation finish time) because the notifications controller retries,
enqueues durably and answers 202 in milliseconds. Outcomes:

* 401 wrong or missing token; 413 body over 1 MiB; 400 not JSON or not the contract
  (the reason in the body); nothing is enqueued for any of them;
* 200 ``duplicate`` for an alert already accepted;
* 202 ``queued`` with the stream entry id;
* 503 when Redis is unavailable: the notifications controller retries, and the
  dedupe mark is removed so that the retry is not mistaken for a duplicate.
"""

from __future__ import annotations

import contextlib
import hmac
import time

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from bot.intake import Intake
from bot.jobs import WebhookBody, WebhookJob
from bot.store import StoreUnavailable

MAX_BODY = 1024 * 1024
DEDUPE_TTL_S = 7 * 24 * 3600


def _error(status: int, reason: str) -> JSONResponse:
    return JSONResponse({"error": reason}, status_code=status)


def _authorized(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


async def _read_bounded(request: Request) -> bytes | None:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_BODY:
            return None
    return bytes(body)


def _reason(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "body"
    return f"{where}: {err.get('msg', 'invalid')}"


async def argocd_webhook(request: Request, services: Intake) -> JSONResponse:
    m = services.metrics.webhooks
    token = services.settings.runtime.webhook_token
    if token is None or not _authorized(request, token.get_secret_value()):
        m.labels(outcome="unauthorized").inc()
        return _error(401, "missing or wrong bearer token")
    raw = await _read_bounded(request)
    if raw is None:
        m.labels(outcome="too_large").inc()
        return _error(413, f"body over {MAX_BODY} bytes")
    try:
        body = WebhookBody.model_validate_json(raw)
    except ValidationError as e:
        m.labels(outcome="invalid").inc()
        if e.errors()[0].get("type") == "json_invalid":
            return _error(400, "body is not valid JSON")
        return _error(400, _reason(e))
    key = body.idempotency_key()
    try:
        if not await services.store.first_seen(key, DEDUPE_TTL_S):
            m.labels(outcome="duplicate").inc()
            return JSONResponse({"status": "duplicate"}, status_code=200)
        job = WebhookJob(body=body, received=time.time(), key=key)
        entry = await services.queue.enqueue(job.payload())
    except StoreUnavailable:
        m.labels(outcome="unavailable").inc()
        # the mark must not outlive a failed enqueue, or Argo CD's retry would be taken for a duplicate
        with contextlib.suppress(StoreUnavailable):
            await services.store.forget(key)
        return _error(503, "state store unavailable; retry")
    m.labels(outcome="accepted").inc()
    return JSONResponse({"status": "queued", "id": entry}, status_code=202)
