"""The drift page served by the bot: saving a report for its "Full diff" link, and ``GET /view/<token>``.

Enabled by ``VIEW_LINK_KEY`` and ``VIEW_BASE_URL`` (:class:`bot.config.ViewSettings`); otherwise nothing is saved,
no link is shown and the route does not exist. A link names a :class:`bot.store.state.ViewState` kept for
``VIEW_LINK_TTL`` and is signed with the key (:mod:`bot.web.viewlinks`).

What ``GET /view/<token>`` guarantees: the page only for a token signed with this key and not expired, whose
state is still in the store; anything else (no signature, another key, an altered id or expiry, an expired link, a
state gone) is the same bare ``404``, so that an answer tells nothing about which part was wrong; a store that does
not answer is ``503``. Every answer carries a strict Content-Security-Policy (the page's inline style and script by
hash, ``frame-ancestors 'none'``), ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer``,
``X-Content-Type-Options: nosniff`` and ``Cache-Control: no-store``, and never a cookie.
"""

from __future__ import annotations

import logging
import time

from starlette.requests import Request
from starlette.responses import Response

from bot.config import ViewSettings
from bot.model import Alert, Report
from bot.report.html import MEDIA_TYPE, content_security_policy, render_html
from bot.store import Store, StoreUnavailable
from bot.store.state import ViewState
from bot.web import viewlinks

log = logging.getLogger("argo_why.view")


def headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": content_security_policy(frame_ancestors=True),
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
    }


def hours(view: ViewSettings) -> int:
    """How long a link works, in whole hours (at least 1), as the thread says it."""
    return max(1, round(view.link_ttl_s / 3600))


async def save_page(store: Store, view: ViewSettings, alert: Alert, report: Report,
                    now: float | None = None) -> str | None:  # fmt: skip
    """The signed link to this report's page, saved for the link's lifetime; ``None`` when links are disabled."""
    if not view.enabled or view.link_key is None or view.base_url is None:
        return None
    state_id = await ViewState.of(alert, report).save(store, view.link_ttl_s)
    expires = int(now if now is not None else time.time()) + view.link_ttl_s
    token = viewlinks.sign(view.link_key.get_secret_value().encode(), state_id, expires)
    return viewlinks.link(view.base_url, token)


def _not_found() -> Response:
    return Response("not found\n", status_code=404, media_type="text/plain; charset=utf-8", headers=headers())


async def view_page(request: Request, store: Store, view: ViewSettings) -> Response:
    """``GET /view/<token>``: the page, or 404 (see the module docstring)."""
    if view.link_key is None:
        return _not_found()
    token = str(request.path_params.get("token", ""))
    state_id = viewlinks.verify(view.link_key.get_secret_value().encode(), token, time.time())
    if state_id is None:
        return _not_found()
    try:
        state = await ViewState.load(store, state_id)
    except StoreUnavailable:
        log.warning("the store did not answer for a view link; 503")
        return Response("the store is unavailable, try again\n", status_code=503,
                        media_type="text/plain; charset=utf-8", headers=headers())  # fmt: skip
    if state is None:
        return _not_found()
    return Response(render_html(state.parsed_report(), state.alert), media_type=MEDIA_TYPE, headers=headers())
