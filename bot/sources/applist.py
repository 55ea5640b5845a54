"""Argo CD's list of applications read one Application at a time, each cut down to what the bot reads of it.

``GET /api/v1/applications`` answers every Application whole (~4-20 KB each: history, the last sync's result per
resource, conditions...); decoded at once, 1,000 of them are 20-100 MB of dicts in a replica for the few fields a
sweep or a fleet check reads. :class:`ItemReader` decodes the body one item at a time while it arrives
(``json.JSONDecoder.raw_decode`` on the text not yet decoded: never the whole body, nor the decoded list) and hands
each to ``keep``; :class:`Keep` keeps :data:`LEAN` of it (the sweep's alert body and its settled-after-sync test) or
:data:`BRIEF` (the names and projects of :class:`bot.sources.argocd.AppList`, the fleet check's stamps, the
follow-up's sync status), with the strings it keeps shared. A caller that needs more of each Application
(``cmfile``: its source and destination) asks for whole ones.

Argo CD's own ``fields=`` parameter of the list cannot do this: in Argo CD 3.x it selects only from a fixed set
(``metadata.name``, ``spec``, ``status.sync.status``, ...; ``server/application/forwarder_overwrite.go``), which lacks
the sync revision the alert's idempotency key is made of.

Pure: pieces of text in, dicts out; malformed JSON raises :class:`ValueError` (the client says it in words).
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
"""What the sweep keeps of each listed Application (its alert body and its settled-after-sync test): ``None`` keeps
the whole value, a dict keeps those keys of a dict value, ``{"[]": shape}`` keeps the shape of each item of a list
value."""
BRIEF: Shape = {
    "metadata": {"name": None, "namespace": None},
    "spec": {"project": None},
    "status": {
        "sync": {"status": None, "revision": None, "revisions": None},
        "operationState": {"startedAt": None, "finishedAt": None},
    },
}
"""What the other readers of the list keep: the names, namespace and project, the sync status, and the fleet index's
stamp (:func:`bot.store.fleetobjects.stamp_of`); not the resources, most of a lean Application."""


class Keep:
    """The projection of each Application of one list to ``shape`` (a key the Application lacks stays absent), with
    the strings it keeps shared: a list repeats its namespaces, statuses, kinds and revisions in every item, and
    each item decoded on its own has its own copy of them."""

    def __init__(self, shape: Shape) -> None:
        self.shape = shape
        self._strings: dict[str, str] = {}

    def __call__(self, app: Obj) -> Obj:
        return self._project(app, self.shape)  # type: ignore[no-any-return]

    def _project(self, value: Any, shape: Shape | None) -> Any:
        if shape is None:
            return self._strings.setdefault(value, value) if isinstance(value, str) else value
        if "[]" in shape:
            return [self._project(v, shape["[]"]) for v in value] if isinstance(value, list) else value
        if not isinstance(value, dict):
            return value
        return {k: self._project(value[k], sub) for k, sub in shape.items() if k in value}


_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"

# Where the reader stands in ``{"key": value, "items": [item, ...], ...}``; each state names what comes next.
_OPEN, _KEY_OR_CLOSE, _KEY, _COLON, _VALUE, _ITEM_OR_CLOSE, _ITEM, _AFTER_ITEM, _AFTER_VALUE, _DONE = range(10)
_PUNCTUATION = {
    (_OPEN, "{"): _KEY_OR_CLOSE,
    (_KEY_OR_CLOSE, "}"): _DONE,
    (_COLON, ":"): _VALUE,
    (_ITEM_OR_CLOSE, "]"): _AFTER_VALUE,
    (_AFTER_ITEM, ","): _ITEM,
    (_AFTER_ITEM, "]"): _AFTER_VALUE,
    (_AFTER_VALUE, ","): _KEY,
    (_AFTER_VALUE, "}"): _DONE,
}
"""The state after a punctuation mark in a state."""
_PUNCTUATION_ONLY = {_OPEN, _COLON, _AFTER_ITEM, _AFTER_VALUE}
"""The states where only a punctuation mark may come."""


class ItemReader:
    """The objects of the ``items`` list of a JSON object, decoded while its text arrives piece by piece.

    :meth:`feed` takes the next piece of the text and answers the items complete so far (each passed through
    ``keep``; a non-object item is left out); :meth:`close` says the text has ended and answers the last ones.
    Only the text not yet decoded is held (about one item and a piece), never the whole body nor the decoded list.
    A value that does not decode yet is tried again once the text held has doubled, so a long item (or a malformed
    one, said at the end) costs a bounded number of tries. :class:`ValueError` if the text is not such JSON
    (``items`` ``null`` or absent: no items), at the latest by :meth:`close`.
    """

    def __init__(self, keep: Callable[[Obj], Obj] | None = None) -> None:
        self._keep = keep
        self._text = ""
        self._at = 0
        self._state = _OPEN
        self._key: str | None = None
        self._wait_for = 0  # how much text must be held before the next try of a value that did not decode

    def feed(self, piece: str) -> list[Obj]:
        self._text = self._text[self._at :] + piece
        self._at = 0
        return self._read(final=False) if len(self._text) >= self._wait_for else []

    def close(self) -> list[Obj]:
        items = self._read(final=True)
        if self._state != _DONE:
            raise ValueError("the text ends before the object does")
        return items

    def _read(self, *, final: bool) -> list[Obj]:
        items: list[Obj] = []
        text = self._text
        while True:
            at = self._at
            while at < len(text) and text[at] in _SPACE:
                at += 1
            self._at = at
            if at == len(text):
                return items
            char, state = text[at], self._state
            if state == _DONE:
                raise ValueError(f"extra data at {at}")
            after = _PUNCTUATION.get((state, char))
            if after is not None:
                self._state, self._at = after, at + 1
                continue
            if state in _PUNCTUATION_ONLY:
                raise ValueError(f"unexpected {char!r} at {at}")
            if state == _VALUE and self._key == "items" and char == "[":
                self._state, self._at = _ITEM_OR_CLOSE, at + 1
                continue
            try:
                value, end = _DECODER.raw_decode(text, at)
            except ValueError:
                if final:
                    raise
                self._wait_for = 2 * (len(text) - at)  # the value goes on in the next pieces (or is malformed)
                return items
            if not final and isinstance(value, (int, float)) and text[end : end + 1] in ("", ".", "e", "E"):
                self._wait_for = len(text) - at + 1  # a number may go on in the next piece ("1" of "12", "0." of "0.5")
                return items
            self._at, self._wait_for = end, 0
            if state in (_KEY_OR_CLOSE, _KEY):
                if not isinstance(value, str):
                    raise ValueError(f"expected a key at {at}")
                self._key, self._state = value, _COLON
            elif state == _VALUE:
                self._state = _AFTER_VALUE  # another key (metadata), or items: null
            else:  # an item
                if isinstance(value, dict):
                    items.append(self._keep(value) if self._keep is not None else value)
                self._state = _AFTER_ITEM
