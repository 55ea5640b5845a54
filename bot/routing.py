"""Which Slack channel an app's alerts go to, and who may approve its fixes: pure rules, no I/O.

Many teams share one bot; each team owns its Applications through their AppProject, as Argo CD itself scopes them.

* :func:`choose_channel` picks an app's channel, first found wins: the ``argo-why.io/channel`` annotation of the
  Application, the same annotation on its AppProject, the recipient of the app's (then the project's) Argo CD
  notifications subscription to the ``argo-why`` webhook service when that recipient names a channel
  (``notifications.argoproj.io/subscribe.<trigger>.argo-why: "#team-a"``), the ``CHANNEL_ROUTES`` entry whose
  AppProject glob matches first, and ``SLACK_CHANNEL``. A value that is not a channel (a typo, a stray word) is
  skipped and said in :attr:`Route.problems`, never dropped silently.
* :func:`approvers_for` picks who may approve: the first ``APPROVER_ROUTES`` glob matching the project, else the
  global ``APPROVERS``.
* :func:`parse_channel_routes` and :func:`parse_approver_routes` read the settings; a malformed map raises
  :class:`RouteError` naming the bad entry (the settings object adds the variable's name).

Route map format (both settings): a JSON object (``{"team-a-*": "#team-a"}``) or ``pattern=value`` entries
separated by ``;`` or new lines (``CHANNEL_ROUTES`` also takes ``,``). Patterns are AppProject names with shell
globs (``*``, ``?``, ``[...]``), tried in the order written. A channel is an ID (``C…``/``G…``) or a ``#name``;
approvers are user (``U…``/``W…``) and user-group (``S…``) IDs separated by spaces or commas (in JSON: a list).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal

CHANNEL_ANNOTATION = "argo-why.io/channel"
SUBSCRIBE_PREFIX = "notifications.argoproj.io/subscribe."
SERVICE = "argo-why"
"""The name of the notifications webhook service in ``deploy/argocd-notifications`` (``service.webhook.argo-why``)."""

_CHANNEL_ID = re.compile(r"[CG][A-Z0-9]{2,}")
_CHANNEL_NAME = re.compile(r"#?[a-z0-9][a-z0-9_-]{0,79}")
_USER_ID = re.compile(r"[UWS][A-Z0-9]{2,}")
_PATTERN = re.compile(r"[a-z0-9.*?\[\]!-]{1,253}")

Source = Literal["app-annotation", "project-annotation", "subscription", "channel-routes", "default"]


class RouteError(ValueError):
    """A route map or a channel that cannot be read; the message names the entry."""


def is_channel_id(value: str) -> bool:
    return _CHANNEL_ID.fullmatch(value) is not None


def channel_ref(value: str) -> str:
    """``value`` as a channel reference: an ID unchanged, a name as ``#name``; :class:`RouteError` otherwise."""
    v = value.strip()
    if is_channel_id(v):
        return v
    if _CHANNEL_NAME.fullmatch(v):
        return "#" + v.lstrip("#")
    shown = v if len(v) <= 80 else v[:77] + "..."
    raise RouteError(f"{shown!r} is neither a channel ID (C0123456789) nor a channel name (#team-a: lower-case "
                     "letters, digits, - and _, at most 80)")  # fmt: skip


def _pattern(raw: str) -> str:
    p = raw.strip()
    if not _PATTERN.fullmatch(p):
        raise RouteError(f"{raw.strip()[:80]!r} is not an AppProject name or glob (lower-case letters, digits, "
                         "'-', '.', and the globs * ? [...])")  # fmt: skip
    return p


def _entries(raw: str, separators: str) -> list[tuple[str, str]]:
    out = []
    for part in filter(None, (p.strip() for p in re.split(f"[{separators}\n]", raw))):
        pattern, sep, value = part.partition("=")
        if not sep or not pattern.strip():
            raise RouteError(f"entry {part[:80]!r} is not pattern=value")
        out.append((pattern, value))
    return out


def _as_map(raw: object, separators: str) -> list[tuple[str, Any]]:
    if isinstance(raw, Mapping):
        return [(str(k), v) for k, v in raw.items()]
    if not isinstance(raw, str):
        raise RouteError(f"expected a JSON object or pattern=value entries, got {type(raw).__name__}")
    text = raw.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise RouteError(f"not valid JSON ({e.msg} at character {e.pos})") from None
        if not isinstance(data, dict):
            raise RouteError("the JSON must be an object of pattern: value")
        return [(str(k), v) for k, v in data.items()]
    return _entries(text, separators) if text else []


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pattern, value in pairs:
        if pattern in out:
            raise RouteError(f"pattern {pattern!r} is given twice")
        out[pattern] = value
    return out


def parse_channel_routes(raw: object) -> dict[str, str]:
    """``CHANNEL_ROUTES``: AppProject glob -> channel (ID, or ``#name``), in the order written."""
    pairs = []
    for pattern, value in _as_map(raw, ";,"):
        p = _pattern(pattern)
        if not isinstance(value, str):
            raise RouteError(f"entry {p!r}: the channel must be a string, got {type(value).__name__}")
        try:
            pairs.append((p, channel_ref(value)))
        except RouteError as e:
            raise RouteError(f"entry {p!r}: {e}") from None
    return _unique(pairs)


def parse_approvers(raw: object, where: str = "") -> list[str]:
    """User and user-group IDs from ``"U1 S2"``, ``"U1,S2"`` or ``["U1", "S2"]``."""
    if isinstance(raw, str):
        ids = [p for p in re.split(r"[\s,]+", raw.strip()) if p]
    elif isinstance(raw, list | tuple) and all(isinstance(i, str) for i in raw):
        ids = [i.strip() for i in raw if i.strip()]
    else:
        raise RouteError(f"{where}approvers must be a string or a list of IDs, got {type(raw).__name__}")
    bad = [i[:40] for i in ids if not _USER_ID.fullmatch(i)]
    if bad:
        raise RouteError(f"{where}expected Slack user (U...) or user-group (S...) IDs, got {', '.join(bad)}")
    return list(dict.fromkeys(ids))


def parse_approver_routes(raw: object) -> dict[str, list[str]]:
    """``APPROVER_ROUTES``: AppProject glob -> user and user-group IDs (empty: nobody may approve there)."""
    pairs = []
    for pattern, value in _as_map(raw, ";"):
        p = _pattern(pattern)
        pairs.append((p, parse_approvers(value, f"entry {p!r}: ")))
    return _unique(pairs)


def first_match(project: str | None, routes: Mapping[str, Any]) -> str | None:
    """The first pattern of ``routes`` matching ``project`` (``None``: no project, or no pattern matches)."""
    if not project:
        return None
    return next((p for p in routes if fnmatchcase(project, p)), None)


@dataclass(frozen=True)
class Route:
    """Where an app's alerts go: a channel reference (ID or ``#name``), the rule that chose it, and what was
    skipped on the way (a value that is not a channel), for the line that says why."""

    channel: str
    source: Source
    problems: tuple[str, ...] = field(default=())


def _annotations(obj: Mapping[str, Any] | None) -> dict[str, str]:
    meta = (obj or {}).get("metadata") or {}
    raw = meta.get("annotations") if isinstance(meta, Mapping) else None
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def subscription_recipients(annotations: Mapping[str, str], service: str = SERVICE) -> list[str]:
    """The recipients of the subscriptions to ``service``: ``subscribe.<trigger>.<service>`` and
    ``subscribe.<service>`` (every default trigger); Argo CD separates recipients with ``;`` (and ``,``)."""
    out: list[str] = []
    for key, value in sorted(annotations.items()):
        if not key.startswith(SUBSCRIBE_PREFIX):
            continue
        rest = key[len(SUBSCRIBE_PREFIX) :]
        if rest == service or rest.endswith("." + service):
            out += [r.strip() for r in re.split(r"[;,]", value) if r.strip()]
    return out


def _names_channel(recipient: str) -> bool:
    return recipient.startswith("#") or is_channel_id(recipient)


def choose_channel(app: Mapping[str, Any] | None, project: Mapping[str, Any] | None, project_name: str | None, *,
                   routes: Mapping[str, str], default: str, service: str = SERVICE) -> Route:  # fmt: skip
    """The channel of an app (module docstring: the order); ``app`` and ``project`` as Argo CD's API returns them
    (``None`` when they could not be read)."""
    problems: list[str] = []
    app_ann, project_ann = _annotations(app), _annotations(project)
    candidates: list[tuple[Source, str, str]] = []
    if CHANNEL_ANNOTATION in app_ann:
        candidates.append(("app-annotation", app_ann[CHANNEL_ANNOTATION], f"annotation {CHANNEL_ANNOTATION} of "
                                                                         "the Application"))  # fmt: skip
    if CHANNEL_ANNOTATION in project_ann:
        candidates.append(("project-annotation", project_ann[CHANNEL_ANNOTATION],
                           f"annotation {CHANNEL_ANNOTATION} of AppProject {project_name}"))  # fmt: skip
    for ann, what in ((app_ann, "the Application"), (project_ann, f"AppProject {project_name}")):
        for r in subscription_recipients(ann, service):
            if _names_channel(r):
                candidates.append(("subscription", r, f"the {service} notifications subscription of {what}"))
    for source, value, what in candidates:
        try:
            return Route(channel_ref(value), source, tuple(problems))
        except RouteError as e:
            problems.append(f"{what}: {e}")
    pattern = first_match(project_name, routes)
    if pattern is not None:
        return Route(routes[pattern], "channel-routes", tuple(problems))
    return Route(default, "default", tuple(problems))


def approvers_for(project: str | None, routes: Mapping[str, Sequence[str]], default: Sequence[str]) -> list[str]:
    """Who may approve a fix of an app of ``project``: its ``APPROVER_ROUTES`` entry, else ``APPROVERS``."""
    pattern = first_match(project, routes)
    return list(routes[pattern]) if pattern is not None else list(default)
