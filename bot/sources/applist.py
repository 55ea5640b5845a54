"""Argo CD's list of applications read one Application at a time, each cut down to what the bot reads of it.

``GET /api/v1/applications`` answers every Application whole (~4-20 KB each: history, the last sync's result per
resource, conditions...); decoded at once, 1,000 of them are 20-100 MB of dicts in a replica for the few fields a
sweep or a fleet check reads. :func:`list_items` decodes the body one item at a time (``json.JSONDecoder.raw_decode``
on the text: the text and one decoded Application at a time, never the decoded list) and hands each to ``keep``;
:func:`lean_application` keeps :data:`LEAN` of it (the sweep's alert body and its settled-after-sync test, the fleet
index's stamp, the names and projects of :class:`bot.sources.argocd.AppList`). A caller that needs more of each
Application (``cmfile``: its source and destination) asks for whole ones.

Argo CD's own ``fields=`` parameter of the list cannot do this: in Argo CD 3.x it selects only from a fixed set
(``metadata.name``, ``spec``, ``status.sync.status``, ...; ``server/application/forwarder_overwrite.go``), which lacks
the sync revision the alert's idempotency key is made of.

Pure: text in, dicts out; malformed JSON raises :class:`ValueError` (the client says it in words).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

Obj = dict[str, Any]
Shape = dict[str, "Shape | None"]

_RESOURCE: Shape = {k: None for k in ("group", "version", "kind", "namespace", "name", "status")}
LEAN: Shape = {
    "metadata": {"name": None, "namespace": None},
    "spec": {"project": None},
    "status": {
        "sync": {"status": None, "revision": None, "revisions": None},
        "health": {"status": None},
        "reconciledAt": None,
        "operationState": {
            "phase": None,
            "startedAt": None,
            "finishedAt": None,
            "syncResult": {"revision": None, "revisions": None},
        },
        "resources": {"[]": _RESOURCE},
    },
}
"""What is kept of each listed Application: ``None`` keeps the whole value, a dict keeps those keys of a dict value,
``{"[]": shape}`` keeps the shape of each item of a list value."""

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


def _project(value: Any, shape: Shape | None) -> Any:
    if shape is None:
        return value
    if "[]" in shape:
        return [_project(v, shape["[]"]) for v in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    return {k: _project(value[k], sub) for k, sub in shape.items() if k in value}


def lean_application(app: Obj) -> Obj:
    """``app`` with only :data:`LEAN` of it (a key the Application lacks stays absent)."""
    return _project(app, LEAN)  # type: ignore[no-any-return]


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _expect(text: str, at: int, char: str) -> int:
    at = _skip(text, at)
    if text[at : at + 1] != char:
        raise ValueError(f"expected {char!r} at {at}")
    return at + 1


def list_items(text: str, keep: Callable[[Obj], Obj] | None = None) -> Iterator[Obj]:
    """The objects of the ``items`` list of a JSON object (``null`` or absent: none), decoded one at a time and
    passed through ``keep``; a non-object item is left out. :class:`ValueError` if ``text`` is not such JSON."""
    at = _expect(text, 0, "{")
    at = _skip(text, at)
    if text[at : at + 1] == "}":
        at += 1
    else:
        while True:
            key, at = _DECODER.raw_decode(text, _skip(text, at))
            if not isinstance(key, str):
                raise ValueError(f"expected a key before {at}")
            at = _expect(text, at, ":")
            at = _skip(text, at)
            if key == "items" and text[at : at + 1] == "[":
                at = _skip(text, at + 1)
                if text[at : at + 1] == "]":
                    at += 1
                else:
                    while True:
                        item, at = _DECODER.raw_decode(text, _skip(text, at))
                        if isinstance(item, dict):
                            yield keep(item) if keep is not None else item
                        del item
                        at = _skip(text, at)
                        if text[at : at + 1] == "]":
                            at += 1
                            break
                        at = _expect(text, at, ",")
            else:
                _, at = _DECODER.raw_decode(text, at)  # another key (metadata), or items: null
            at = _skip(text, at)
            if text[at : at + 1] == "}":
                at += 1
                break
            at = _expect(text, at, ",")
    if _skip(text, at) != len(text):
        raise ValueError(f"extra data at {at}")
