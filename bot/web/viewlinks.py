"""Signed, expiring links to the drift page the bot serves: ``<VIEW_BASE_URL>/view/<token>``.

A token is ``<id>.<expires>.<signature>``: ``id`` the random part of the page's state id in the store
(``view:<id>``, :class:`bot.store.state.ViewState`), ``expires`` the Unix time after which the link is refused, and
``signature`` HMAC-SHA256 over both, under ``VIEW_LINK_KEY`` (base64url, unpadded). Whoever holds the link can
open the page until it expires; nobody can make a link to another page, or make one live longer, without the key.

Guarantees: pure (the clock is the caller's ``now``); :func:`verify` answers the state id only for a token that is
well formed, signed with this key (constant-time comparison) and not expired, else ``None``, never an exception,
whatever the input; a token is URL-safe as it is (no escaping needed in a path or in Slack's ``<url|text>``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

KIND = "view"
_TOKEN = re.compile(r"(?P<id>[A-Za-z0-9_-]{16})\.(?P<expires>[0-9]{1,12})\.(?P<sig>[A-Za-z0-9_-]{43})")
_DOMAIN = b"argo-why view link v1\x00"  # a signature made for this use cannot be taken for another


def _signature(key: bytes, ident: str, expires: int) -> str:
    mac = hmac.new(key, _DOMAIN + f"{ident}.{expires}".encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode("ascii").rstrip("=")


def sign(key: bytes, state_id: str, expires: int) -> str:
    """The token for the page saved under ``state_id`` (``view:<16 chars>``), valid until ``expires``."""
    kind, _, ident = state_id.partition(":")
    if kind != KIND or not re.fullmatch(r"[A-Za-z0-9_-]{16}", ident):
        raise ValueError(f"not a view state id: {state_id!r}")
    return f"{ident}.{expires}.{_signature(key, ident, expires)}"


def verify(key: bytes, token: str, now: float) -> str | None:
    """The state id a valid, unexpired token names; ``None`` for anything else."""
    match = _TOKEN.fullmatch(token)
    if match is None:
        return None
    ident, expires = match["id"], int(match["expires"])
    if not hmac.compare_digest(_signature(key, ident, expires), match["sig"]):
        return None
    if now >= expires:
        return None
    return f"{KIND}:{ident}"


def link(base_url: str, token: str) -> str:
    """The URL people open: ``base_url`` (the bot as browsers reach it) and ``/view/<token>``."""
    return f"{base_url.rstrip('/')}/view/{token}"
