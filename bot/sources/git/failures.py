"""What a Git host's answer says when it is not a success, read the same way for GitHub and GitLab: what the request
was for (``Op``), a rate limit (``RateLimit``, ``wait_seconds``, ``reset_when``), the host's own words
(``error_detail``) and the kind of failure a bare status means (``default_kind``).

Guarantees: everything here is a pure function of the answer (no request, no token: ``HTTPGitHost`` scrubs the
token from what it raises); ``wait_seconds`` prefers ``Retry-After`` (seconds or an HTTP date) to an epoch reset
header and never returns a negative wait; ``error_detail`` is one line of at most 240 characters, taken from every
message an error body holds (GitHub's and GitLab's shapes, OAuth's ``error_description``), else from a short plain
text body, else the reason phrase.
"""

from __future__ import annotations

import email.utils
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from bot.sources.git.base import ErrorKind, RepoRef
from bot.wording import cli as wording

_DETAIL_LIMIT = 240


@dataclass(frozen=True)
class Op:
    """What a request was for: fills the sentences of ``wording.GIT_*``."""

    name: str  # a key of wording.GIT_ACTIONS
    repo: RepoRef
    path: str = ""
    ref: str = ""
    branch: str = ""
    number: int | None = None

    def action(self) -> str:
        return wording.GIT_ACTIONS[self.name].format(
            path=self.path or "/", ref=self.ref, branch=self.branch, number=self.number
        )


@dataclass(frozen=True)
class RateLimit:
    """A rate-limited answer: ``wait`` is how many seconds until the host takes requests again (None: unknown)."""

    wait: float | None


def wait_seconds(resp: httpx.Response, reset_header: str) -> float | None:
    """Seconds to wait from ``Retry-After`` (seconds or an HTTP date), else from an epoch ``reset_header``."""
    retry_after = resp.headers.get("retry-after")
    if retry_after:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            try:
                return max(0.0, email.utils.parsedate_to_datetime(retry_after).timestamp() - time.time())
            except (TypeError, ValueError):
                pass
    reset = resp.headers.get(reset_header)
    if reset:
        try:
            return max(0.0, float(reset) - time.time())
        except ValueError:
            return None
    return None


def reset_when(wait: float | None) -> str:
    """When a rate limit resets, for ``wording.GIT_RATE_LIMITED``: the time of day and the seconds left, or unknown."""
    if wait is None:
        return wording.GIT_RATE_RESET_UNKNOWN
    at = datetime.fromtimestamp(time.time() + wait, tz=UTC)
    return wording.GIT_RATE_RESET_AT.format(time=at.strftime("%H:%M:%S"), seconds=round(wait))


def error_detail(resp: httpx.Response) -> str:
    """The host's own words about a failure, on one line and cut short (not yet scrubbed of the token)."""
    try:
        body = resp.json()
    except ValueError:
        text = resp.text.strip() if len(resp.text) < 300 and "<" not in resp.text else ""
        return _one_line(text or resp.reason_phrase or f"HTTP {resp.status_code}")
    parts = _messages(body)
    text = "; ".join(parts) if parts else resp.reason_phrase or f"HTTP {resp.status_code}"
    # GitLab repeats the status in its messages ("404 File Not Found"); the sentences already say it.
    return _one_line(text.removeprefix(f"{resp.status_code} "))


def default_kind(status: int) -> ErrorKind:
    if status == 401:
        return "auth"
    if status == 403:
        return "permission"
    if status == 404:
        return "not-found"
    if status >= 500:
        return "unavailable"
    return "rejected"


def _messages(body: Any) -> list[str]:
    """Every human-readable message in an error body: GitHub's ``message`` and ``errors[].message``, GitLab's
    ``message`` (a string, a list, or a map of field to messages) and OAuth's ``error_description``."""
    out: list[str] = []
    if isinstance(body, str):
        out.append(body)
    elif isinstance(body, list):
        for item in body:
            out.extend(_messages(item))
    elif isinstance(body, dict):
        for key in ("message", "error_description", "error"):
            value = body.get(key)
            if isinstance(value, dict):
                out.extend(f"{k} {'; '.join(_messages(v))}" for k, v in value.items())
            elif value:
                out.extend(_messages(value))
                if key == "message":
                    break
        for item in body.get("errors") or []:
            if isinstance(item, dict) and item.get("message"):
                out.append(str(item["message"]))
            elif isinstance(item, dict) and item.get("code"):
                out.append(f"{item.get('field', item.get('resource', ''))} {item['code']}".strip())
            elif isinstance(item, str):
                out.append(item)
    return [m for m in (str(x).strip() for x in out) if m]


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def json_shape(value: Any) -> str:
    """What an unexpected JSON value is, for a message: ``null``, the start of a scalar, or the container type."""
    if value is None or isinstance(value, (str, int, float)):
        return json.dumps(value)[:40]
    return type(value).__name__


def transport_reason(err: httpx.TransportError) -> str:
    cause = err.__cause__ or err.__context__
    text = str(cause or err) or type(err).__name__
    return f"{type(err).__name__}: {text.splitlines()[0][:200]}"
