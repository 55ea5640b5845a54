"""One app's entry in the fleet index, as stored (JSON) and as read back by the thousand.

:class:`FleetEntry` is what :mod:`bot.store.fleet` keeps per app; :func:`read_entries` reads many stored values back
(the whole index for ``/argo drift``, the App Home, the reminders and the weekly chart). Each value is decoded by
orjson from the bytes Redis returns (the client would decode every value with a Python call of its own; orjson
takes a value in 60 % of the time of JSON's own C scanner). Guarantees: read defensively (a value that is not an
object, a finding that is not six strings, is left out, never raised; a value orjson refuses is read by
``json.loads``, as before), and the stored format is unchanged (older replicas read what this one writes, and the
other way round).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from itertools import chain
from typing import Any, NamedTuple

import orjson

from bot.analysis.fleet import FleetFinding

FLEET_STALE_S = 7 * 24 * 3600

_finding: Any = functools.partial(tuple.__new__, FleetFinding)  # FleetFinding._make without its Python frame
_chain = chain.from_iterable


class FleetEntry(NamedTuple):
    """One OutOfSync app in the fleet index (a tuple: read back by the thousand, built without a Python call)."""

    findings: tuple[FleetFinding, ...]
    at: float
    """When the findings were analysed."""
    since: float
    """When the app's drift episode began."""
    channel: str
    """The channel the app's alerts go to (who may see it in the overview)."""
    thread_ts: str = ""
    """The app's alert thread in ``channel`` (empty: listed in a digest, no thread)."""

    def to_json(self) -> str:
        sigs = sorted({f.sig_id for f in self.findings})
        return json.dumps({"f": [f.to_list() for f in self.findings], "s": sigs, "at": self.at, "since": self.since,
                           "ch": self.channel, "ts": self.thread_ts}, separators=(",", ":"))  # fmt: skip

    @classmethod
    def from_json(cls, raw: str | bytes | None, interned: dict[FleetFinding, FleetFinding] | None = None
                  ) -> FleetEntry | None:  # fmt: skip
        """The entry, or ``None`` when unreadable; ``interned`` shares equal findings between entries (most of a
        fleet's findings are the same few signatures on objects of the same names)."""
        data = object_of(raw)
        rows = data.get("f") if data is not None else None
        if data is None or type(rows) is not list:
            return None
        findings = _six_strings(rows) if interned is None else None
        if findings is None:
            found: list[FleetFinding] = []
            for r in rows:
                # FleetFinding.from_list, inlined: read defensively, a finding that is not six strings is left out
                if type(r) is not list or len(r) != 6:
                    continue
                g, k, p, w, c, o = r
                if type(g) is str and type(k) is str and type(p) is str and type(w) is str and type(c) is str \
                        and type(o) is str:  # fmt: skip
                    rec = _finding(r)
                    # a FleetFinding is the tuple it is equal to: its own key
                    found.append(interned.setdefault(rec, rec) if interned is not None else rec)
            findings = tuple(found)
        try:
            times = float(data.get("at") or 0), float(data.get("since") or 0)
        except (TypeError, ValueError):
            return None
        entry: FleetEntry = _entry((findings, *times, str(data.get("ch") or ""), str(data.get("ts") or "")))
        return entry


def _six_strings(rows: list[Any]) -> tuple[FleetFinding, ...] | None:
    """The findings when every row is a list of six strings (every entry this module writes), checked by C routines
    over the whole entry (``list.__len__`` refuses what is not a list, ``str.join`` what is not a string); else
    ``None``, and the caller reads row by row."""
    try:
        if rows and set(map(list.__len__, rows)) != {6}:
            return None
        "".join(_chain(rows))  # for its TypeError only
    except TypeError:
        return None
    return tuple(map(_finding, rows))


_entry: Any = functools.partial(tuple.__new__, FleetEntry)  # FleetEntry._make without its Python frame


def as_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def object_of(raw: str | bytes | None) -> dict[str, Any] | None:
    """:func:`json_object` of a stored value, by orjson when it takes the value (every value this module writes)."""
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:  # not UTF-8, NaN, a lone surrogate: as json.loads says
        return json_object(raw)
    return value if type(value) is dict else None


def json_object(raw: str | bytes | None) -> dict[str, Any] | None:
    """``raw`` parsed as a JSON object; ``None`` when absent, unparsable or not an object."""
    try:
        value = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def read_entries(raw: Iterable[tuple[str | bytes, str | bytes | None]], now: float) -> dict[str, FleetEntry]:
    """The entries among ``(app key, stored value)`` pairs analysed less than :data:`FLEET_STALE_S` before ``now``
    (a ``None`` value, an app without an entry, is left out), by app key."""
    out = {}
    for k, v in raw:
        entry = FleetEntry.from_json(v) if v is not None else None
        if entry is not None and now - entry.at < FLEET_STALE_S:
            out[as_text(k)] = entry
    return out
