"""One app's entry in the fleet index, as stored (JSON) and as read back by the thousand.

:class:`FleetEntry` is what :mod:`bot.store.fleet` keeps per app. :func:`read_entries` decodes many stored entries at
once (the whole index for ``/argo drift``, the App Home, the reminders and the weekly chart): the common case, every
value as this module writes it, is checked and decoded with the interpreter's C routines over all entries together,
instead of a Python loop over every field of every finding; anything else (a value that is not JSON, a finding that
is not six strings, a field of another type) is read entry by entry and finding by finding as before, so one odd
value never hides the others. Guarantees: both paths give the same entries for the same values (tested), an
unreadable entry is left out, never raised, and the stored format is unchanged (older replicas read what this one
writes, and the other way round).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from itertools import chain, repeat
from typing import Any, NamedTuple

from bot.analysis.fleet import FleetFinding, collector_paused

FLEET_STALE_S = 7 * 24 * 3600

# json.loads without its Python wrappers (decode, raw_decode, two whitespace matches): the C scanner itself that
# json.JSONDecoder builds (json.scanner.make_scanner); a fifth of decoding the whole index (bench/fleet.py)
_scan: Any = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009  (typeshed does not declare it)
_finding: Any = functools.partial(tuple.__new__, FleetFinding)  # FleetFinding._make without its Python frame
_get: Any = dict.get
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
        data = json_object(raw)
        if data is None or not isinstance(data.get("f"), list):
            return None
        cache = interned if interned is not None else {}
        found: list[FleetFinding] = []
        for r in data["f"]:
            # FleetFinding.from_list, inlined: read defensively, a finding that is not six strings is left out
            if type(r) is not list or len(r) != 6:
                continue
            g, k, p, w, c, o = r
            if type(g) is str and type(k) is str and type(p) is str and type(w) is str and type(c) is str \
                    and type(o) is str:  # fmt: skip
                rec = _finding(r)
                found.append(cache.setdefault(rec, rec))  # a FleetFinding is the tuple it is equal to: its own key
        try:
            return cls(findings=tuple(found), at=float(data.get("at") or 0), since=float(data.get("since") or 0),
                       channel=str(data.get("ch") or ""), thread_ts=str(data.get("ts") or ""))  # fmt: skip
        except (TypeError, ValueError):
            return None


_entry: Any = functools.partial(tuple.__new__, FleetEntry)  # FleetEntry._make without its Python frame


def as_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def json_object(raw: str | bytes | None) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def read_entries(raw: Iterable[tuple[str | bytes, str | bytes | None]], now: float) -> dict[str, FleetEntry]:
    """The entries among ``(app key, stored value)`` pairs analysed less than :data:`FLEET_STALE_S` before ``now``
    (a ``None`` value, an app without an entry, is left out), by app key; equal findings shared between entries."""
    pairs = [(k, v) for k, v in raw if v is not None]
    with collector_paused():
        fast = _read_common(pairs, now)
        return fast if fast is not None else _read_each(pairs, now)


def _read_each(pairs: list[tuple[str | bytes, str | bytes]], now: float) -> dict[str, FleetEntry]:
    out = {}
    interned: dict[FleetFinding, FleetFinding] = {}
    for k, v in pairs:
        entry = FleetEntry.from_json(v, interned)
        if entry is not None and now - entry.at < FLEET_STALE_S:
            out[as_text(k)] = entry
    return out


def _read_common(pairs: list[tuple[str | bytes, str | bytes]], now: float) -> dict[str, FleetEntry] | None:
    """:func:`_read_each`'s result when every value is as :meth:`FleetEntry.to_json` writes it, else ``None``.

    Each check is a C routine over all values at once that raises on anything else: ``dict.get`` on a value that
    is not an object, ``list.__len__`` on a finding that is not a list, ``str.join`` on a field that is not a
    string, ``float`` on a time that is not a number (or on a string that is not one, as :meth:`from_json`)."""
    if not pairs:
        return {}
    keys, values = zip(*pairs, strict=True)
    try:
        texts = list(map(bytes.decode if set(map(type, values)) == {bytes} else as_text, values))
        docs, ends = zip(*map(_scan, texts, repeat(0)), strict=True)  # StopIteration, ValueError: not JSON
        if list(ends) != list(map(len, texts)):
            return None  # something after the value (json.loads accepts whitespace there: each on its own)
        fs = list(map(_get, docs, repeat("f")))
        rows = list(_chain(fs))
        if rows and set(map(list.__len__, rows)) != {6}:
            return None
        "".join(_chain(rows))
        ats, sinces, channels, threads = (list(map(_get, docs, repeat(k))) for k in ("at", "since", "ch", "ts"))
        ats, sinces = list(map(float, ats)), list(map(float, sinces))
        "".join(chain(channels, threads))
    except (StopIteration, ValueError, TypeError):
        return None
    findings = [tuple(map(_finding, f)) for f in fs]
    entries = map(_entry, zip(findings, ats, sinces, channels, threads, strict=True))
    return {as_text(k): e for k, e in zip(keys, entries, strict=True) if now - e.at < FLEET_STALE_S}
