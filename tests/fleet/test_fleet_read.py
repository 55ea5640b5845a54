"""Reading the fleet index back by the thousand: what was written, whatever odd value sits beside it.

:func:`bot.store.fleetentry.read_entries` decodes each value with orjson (``object_of``), and with ``json.loads``
when orjson refuses it; both are compared on each kind of odd value (not JSON, not UTF-8, NaN, a finding that is
not six strings, a time written as a string or missing, a channel that is no string, whitespace around the JSON,
two values in one). On a real redis-server the index is read undecoded (the
client would decode each value with a Python call) and gives the in-memory store's entries.
"""

from __future__ import annotations

import json

import pytest

from bot.analysis.fleet import FleetFinding, group_findings
from bot.store import MemoryStore, RedisStore
from bot.store.fleetentry import FLEET_STALE_S, FleetEntry, json_object, object_of, read_entries

NOW = 1_800_000_000.0


def fleet(apps: int) -> dict[str, FleetEntry]:
    out = {}
    for i in range(apps):
        own = [f"/spec/template/spec/containers/*/env/{n}/value" for n in range(i % 4)]
        findings = tuple(FleetFinding("apps", "Deployment", p, f"writer-{n % 3}", "manual-edit", f"ns/app-{i}")
                         for n, p in enumerate(own))  # fmt: skip
        findings += (FleetFinding("", "Service", "/spec/clusterIP", "kube-apiserver", "api-defaulting", f"ns/s{i}"),)
        out[f"team-{i % 4}/app-{i:03d}"] = FleetEntry(findings, at=NOW - i, since=NOW - 3600, channel=f"C{i % 2}",
                                                      thread_ts="" if i % 5 else f"{i}.1")  # fmt: skip
    return out


def stored(entries: dict[str, FleetEntry]) -> list[tuple[bytes, bytes]]:
    return [(k.encode(), e.to_json().encode()) for k, e in entries.items()]


def test_a_whole_fleet_is_read_back_as_written() -> None:
    entries = fleet(200)
    pairs: list[tuple[str | bytes, str | bytes]] = list(stored(entries))
    read = read_entries(pairs, NOW)
    assert read == entries
    assert all(type(f) is FleetFinding for e in read.values() for f in e.findings)
    assert all(type(k) is str for k in read)
    as_text = [(k.decode(), v.decode()) for k, v in stored(entries)]  # the in-memory store keeps str
    assert read_entries(as_text, NOW) == entries
    assert read_entries(pairs, NOW + FLEET_STALE_S - 100) == {k: e for k, e in entries.items() if e.at > NOW - 100}
    assert read_entries([], NOW) == {} and read_entries([("a", None)], NOW) == {}


def _odd(value: object) -> str:
    return json.dumps(value)


good = {"f": [["apps", "Deployment", "/spec/replicas", "hpa", "autoscaler", "shop/web"]], "s": [], "at": NOW,
        "since": 1.0, "ch": "C1", "ts": "1.2"}  # fmt: skip
ODD: dict[str, str | bytes] = {
    "not JSON": "{not json",
    "a list, not an object": _odd([1, 2]),
    "no findings": _odd({**good, "f": None}),
    "findings as a string": _odd({**good, "f": "abcdef"}),
    "findings as an object": _odd({**good, "f": {"apps": 1}}),
    "a finding of five strings": _odd({**good, "f": [good["f"][0][:5], good["f"][0]]}),  # type: ignore[index]
    "a finding with a number": _odd({**good, "f": [[*good["f"][0][:5], 7]]}),  # type: ignore[index]
    "a finding as a string of six": _odd({**good, "f": ["abcdef"]}),
    "the time as a string": _odd({**good, "at": str(NOW)}),
    "the time as text": _odd({**good, "at": "yesterday"}),
    "no time": _odd({k: v for k, v in good.items() if k != "at"}),
    "no thread": _odd({k: v for k, v in good.items() if k != "ts"}),
    "a channel that is a number": _odd({**good, "ch": 5}),
    "whitespace around it": " " + _odd(good) + "\n",
    "two values": _odd(good) + _odd(good),
    "not UTF-8": b'{"f": [], "ch": "\xff"}',
    "a time as NaN": _odd({**good, "at": float("nan")}),  # json.loads reads NaN, orjson refuses it
    "a lone surrogate": _odd({**good, "ch": "\ud800"}),
}


@pytest.mark.parametrize("odd", list(ODD), ids=list(ODD))
def test_an_odd_value_is_decoded_as_json_loads_decodes_it_and_hides_no_other(odd: str) -> None:
    raw = ODD[odd]
    for value in (raw, raw.encode()) if isinstance(raw, str) else (raw,):
        assert object_of(value) == json_object(value)
    entries = fleet(20)
    pairs: list[tuple[str | bytes, str | bytes]] = [*stored(entries), (b"odd/app", ODD[odd])]
    read = read_entries(pairs, NOW)
    assert {k: e for k, e in read.items() if k != "odd/app"} == entries  # the others are all read
    alone = FleetEntry.from_json(ODD[odd])
    assert read.get("odd/app") == (alone if alone is not None and NOW - alone.at < FLEET_STALE_S else None)


async def test_the_index_read_back_and_grouped_is_what_was_written(store: RedisStore | MemoryStore) -> None:
    entries = fleet(60)
    for app, entry in entries.items():
        await store.fleet.put(app, entry)
    read = await store.fleet.entries(NOW)
    assert read == entries and all(type(k) is str and type(e.channel) is str for k, e in read.items())
    assert await store.fleet.get(["team-1/app-001", "nobody"], NOW) == {"team-1/app-001": entries["team-1/app-001"]}
    groups = group_findings({a: e.findings for a, e in read.items()}, 3)
    assert groups == group_findings({a: e.findings for a, e in entries.items()}, 3)
    assert groups[0].signature == ("", "Service", "/spec/clusterIP", "kube-apiserver") and len(groups[0].apps) == 60
