"""The fleet index's objects: what the bot last read of each app's resources, for the system-level rule's check.

The check of a system-level rule (:func:`bot.analysis.systemrule.system_rule`) needs the desired and live object of
every resource of the group's kind in every app Argo CD lists. Reading every app's ``managed-resources`` for each
check cost Argo CD one request per app per check (2,000 in a storm of 1,000 apps); instead, every analysis keeps
here the (desired, live) pairs it has just read (it reads them anyway), and the check reads Argo CD only for an app
it finds nothing current for. An app's objects are stored by group/kind (the check reads only the kind of its group),
each compressed, with the **stamp** of the Application they were read with (:func:`stamp_of`: its sync revision(s),
sync status, and the start and end of its last operation; not ``reconciledAt``, which Argo CD moves on every
refresh). Stored objects whose stamp differs from the Application's now are not used: a sync, a new revision or a
change of sync status makes the check read the app again. What changes live without any of those (a field Git does
not set) is seen at the app's next analysis, or after :data:`OBJECTS_TTL_S`.

The store is in Redis (not per replica) because the check runs on whichever replica takes the alert that makes a
drift fleet-wide, and the objects were read by the replicas that analysed each app.

Redis keys (``<p>`` is the store's prefix):

=================================  =======================================================  ======================
key                                value                                                    lifetime
=================================  =======================================================  ======================
``<p>fleet:objects:<app_key>``     hash: ``_stamp`` -> the Application's stamp;             :data:`OBJECTS_TTL_S`
                                   ``<group>/<kind>`` -> base64 of the zlib-compressed      (a day) after the last
                                   JSON list of ``[desired, live]`` pairs (either may be    write
                                   ``null``)
=================================  =======================================================  ======================
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, overload

import redis.asyncio

Guard = Callable[[str], AbstractContextManager[None]]
Pair = tuple[dict[str, Any] | None, dict[str, Any] | None]

OBJECTS_TTL_S = 24 * 3600
STAMP = "_stamp"


def stamp_of(app: dict[str, Any]) -> str:
    """What the stored objects of an app are valid for: its sync revision(s) and status, its last operation."""
    status = app.get("status") or {}
    sync = status.get("sync") or {}
    op = status.get("operationState") or {}
    parts = [sync.get("revision"), sync.get("revisions"), sync.get("status"), op.get("startedAt"), op.get("finishedAt")]
    return json.dumps(parts, separators=(",", ":"), sort_keys=True)


def kind_field(group: str, kind: str) -> str:
    return f"{group}/{kind}"


def _kind_of(obj: dict[str, Any] | None) -> str | None:
    if obj is None:
        return None
    api = str(obj.get("apiVersion") or "")
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    return kind_field(group, str(obj.get("kind") or ""))


def by_kind(pairs: Iterable[Pair]) -> dict[str, str]:
    """The pairs grouped by ``group/kind`` (the live object's, else the desired one's), each group compressed (and
    base64: the store's client decodes replies as text)."""
    grouped: dict[str, list[Pair]] = {}
    for desired, live in pairs:
        field = _kind_of(live) or _kind_of(desired)
        if field is not None:
            grouped.setdefault(field, []).append((desired, live))
    return {k: base64.b64encode(zlib.compress(json.dumps(v, separators=(",", ":")).encode(), 6)).decode("ascii")
            for k, v in grouped.items()}  # fmt: skip


def _pairs(raw: str | bytes | None) -> list[Pair]:
    if raw is None:
        return []
    try:
        value = json.loads(zlib.decompress(base64.b64decode(raw)))
    except (zlib.error, ValueError):
        return []
    return [(p[0], p[1]) for p in value if isinstance(p, list) and len(p) == 2] if isinstance(value, list) else []


class StoredPairs(Sequence[Pair]):
    """One app's pairs of one kind as kept (compressed), decoded again at each use and never held decoded: the check
    of a system-level rule walks every app of the fleet (twice), and 1,000 apps' Deployments decoded at once are
    ~100 MB of dicts, where the compressed values are ~5 MB; walked one app at a time, it holds one app's objects."""

    __slots__ = ("_raw",)

    def __init__(self, raw: str | bytes | None) -> None:
        self._raw = raw

    def _decoded(self) -> list[Pair]:
        return _pairs(self._raw)

    def __iter__(self) -> Iterator[Pair]:
        return iter(self._decoded())

    def __len__(self) -> int:
        return len(self._decoded())

    @overload
    def __getitem__(self, index: int) -> Pair: ...
    @overload
    def __getitem__(self, index: slice) -> list[Pair]: ...
    def __getitem__(self, index: int | slice) -> Pair | list[Pair]:
        return self._decoded()[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return self._decoded() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a sequence compared by value

    def __repr__(self) -> str:
        return f"StoredPairs({self._decoded()!r})"


@dataclass(frozen=True)
class Stored:
    """What is kept of one app for one kind: the stamp it was read with and its pairs of that kind (decoded on use)."""

    stamp: str
    pairs: StoredPairs


class FleetObjects(Protocol):
    async def put(self, app_key: str, stamp: str, pairs: Iterable[Pair]) -> None:
        """Replace what is kept of the app with these pairs, read with an Application of this stamp."""
        ...

    async def of_kind(self, app_keys: Sequence[str], group: str, kind: str) -> dict[str, Stored]:
        """The stored pairs of that kind of each app that has a stored stamp (an app without objects of the kind:
        an empty list), by app key."""
        ...

    async def drop(self, app_key: str) -> None: ...


class RedisFleetObjects:
    def __init__(self, client: redis.asyncio.Redis, prefix: str, guard: Guard) -> None:
        self._r = client
        self._key = f"{prefix}fleet:objects:"
        self._guard = guard

    async def put(self, app_key: str, stamp: str, pairs: Iterable[Pair]) -> None:
        key = f"{self._key}{app_key}"
        fields: dict[str, str] = {STAMP: stamp, **by_kind(pairs)}
        with self._guard("fleet_objects_put"):
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.delete(key)
                pipe.hset(key, mapping=fields)  # type: ignore[arg-type]  # redis' stubs want a dict of its own types
                pipe.expire(key, OBJECTS_TTL_S)
                await pipe.execute()

    async def of_kind(self, app_keys: Sequence[str], group: str, kind: str) -> dict[str, Stored]:
        if not app_keys:
            return {}
        field = kind_field(group, kind)
        with self._guard("fleet_objects_read"):
            async with self._r.pipeline(transaction=False) as pipe:
                for k in app_keys:
                    pipe.hmget(f"{self._key}{k}", [STAMP, field])
                rows = await pipe.execute()
        out = {}
        for k, (stamp, raw) in zip(app_keys, rows, strict=True):
            if stamp is not None:
                out[k] = Stored(stamp.decode() if isinstance(stamp, bytes) else str(stamp), StoredPairs(raw))
        return out

    async def drop(self, app_key: str) -> None:
        with self._guard("fleet_objects_drop"):
            await self._r.delete(f"{self._key}{app_key}")


class MemoryFleetObjects:
    """The same in this process (the in-memory store: one replica; no expiry)."""

    def __init__(self) -> None:
        self._apps: dict[str, dict[str, str]] = {}

    async def put(self, app_key: str, stamp: str, pairs: Iterable[Pair]) -> None:
        self._apps[app_key] = {STAMP: stamp, **by_kind(pairs)}

    async def of_kind(self, app_keys: Sequence[str], group: str, kind: str) -> dict[str, Stored]:
        out = {}
        for k in app_keys:
            kept = self._apps.get(k)
            if kept is not None:
                out[k] = Stored(kept[STAMP], StoredPairs(kept.get(kind_field(group, kind))))
        return out

    async def drop(self, app_key: str) -> None:
        self._apps.pop(app_key, None)
