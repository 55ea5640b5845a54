"""Shared state of the bot: dedupe marks, the Slack thread map, button state, mutes, alert rate, digest and locks.

One interface, :class:`Store`, two implementations:

* :class:`RedisStore` -- what every multi-replica install uses. All replicas see the same state; every write
  is a single Redis command, a MULTI/EXEC transaction or a Lua script, so two replicas racing on the same key
  cannot both win (dedupe, locks) and a digest drain cannot lose or duplicate an entry.
* :class:`MemoryStore` -- used when ``REDIS_URL`` is unset: the same behaviour inside one process, lost on
  restart, and therefore only correct with exactly one replica. Its clock is injectable so that tests (and
  only tests) can move time.

Guarantees common to both:

* every key has a bounded lifetime (the table below), so the store never grows without limit;
* values are JSON: what comes back from :meth:`Store.get_state` or :meth:`Store.get_thread` is a copy, never
  the caller's object, and a payload that is not JSON-serialisable is refused (``TypeError``) by both;
* state ids handed to Slack are opaque (``<kind>:<16 random url-safe chars>``, at most 49 characters) and an id
  that does not have that shape is answered with ``None`` without touching Redis, because button values come
  back from the outside world;
* a Redis connection failure or timeout surfaces as :class:`StoreUnavailable` (never a raw ``redis`` error);
  its message names the Redis host and port but never the password.

Redis keys (``<p>`` is the prefix, ``argo-why:`` by default):

=====================================  ======================================================  ======================
key                                    value                                                    lifetime
=====================================  ======================================================  ======================
``<p>seen:<key>``                      ``"1"`` -- dedupe mark; ``forget`` deletes it           ``ttl_s`` of the call
``<p>thread:<app_key>``                JSON :class:`ThreadRef` (Slack thread of the app)       30 days, reset on save
``<p>state:<kind>:<token>``            JSON payload behind a button value                      ``ttl_s`` of the call
``<p>mute:<app_key>``                  JSON ``{"until": epoch s, "by": user id}``              expires at ``until``
``<p>alerts``                          sorted set: app_key scored by its last alert time       ``window_s`` of the last
                                                                                                call, trimmed each call
``<p>digest``                          hash app_key -> JSON payload waiting for the digest     7 days after the last
                                                                                                add
``<p>lock:<name>``                     owner id of a scheduled-job lock                        ``ttl_s``, PX precision
=====================================  ======================================================  ======================
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, Protocol

import redis.asyncio
import redis.exceptions
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from bot.errors import ArgoWhyError
from bot.state import ThreadRef

log = logging.getLogger(__name__)

THREAD_TTL_S = 30 * 24 * 3600
# The digest job runs every few hours; a buffer nobody drained for a week is about a bot that was down.
DIGEST_TTL_S = 7 * 24 * 3600

_KIND = re.compile(r"[a-z][a-z0-9_-]{0,31}")
# token_urlsafe(12) is exactly 16 characters of the url-safe base64 alphabet.
_STATE_ID = re.compile(r"[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_-]{16}")

# What "Redis is down" looks like from redis-py. ReadOnlyError is what a client gets from a replica that has
# just been demoted during a failover: for the bot that is the same as unavailable, and just as transient.
# OSError / TimeoutError cover the rare socket errors redis-py lets through unwrapped.
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.ReadOnlyError,
    TimeoutError,
    OSError,
)


class StoreUnavailable(ArgoWhyError):
    """Redis is down, unreachable or read-only; the operation did not happen (or its outcome is unknown)."""

    def __init__(self, message: str, *, where: str, op: str) -> None:
        self.where = where
        self.op = op
        super().__init__(message)


class Store(Protocol):
    async def ping(self) -> None: ...

    async def first_seen(self, key: str, ttl_s: int) -> bool:
        """True exactly once per ``key`` within ``ttl_s`` seconds, across all replicas."""
        ...

    async def forget(self, key: str) -> None:
        """Undo :meth:`first_seen` for ``key``: the next first_seen is True again (the enqueue after it failed)."""
        ...

    async def get_thread(self, app_key: str) -> ThreadRef | None: ...

    async def save_thread(self, ref: ThreadRef, app_key: str) -> None: ...

    async def put_state(self, kind: str, payload: dict[str, Any], ttl_s: int) -> str: ...

    async def get_state(self, state_id: str) -> dict[str, Any] | None: ...

    async def set_mute(self, app_key: str, until: float, by: str) -> None: ...

    async def mute_until(self, app_key: str, now: float) -> float | None: ...

    async def note_alert(self, app_key: str, now: float, window_s: int) -> int:
        """Record an alert for ``app_key``; return how many distinct apps alerted in the last ``window_s``."""
        ...

    async def add_to_digest(self, app_key: str, payload: dict[str, Any]) -> None:
        """Buffer ``payload`` for the next digest; a later add for the same app replaces the earlier one."""
        ...

    async def drain_digest(self) -> list[dict[str, Any]]:
        """Take every buffered payload (sorted by app key); each one is returned by exactly one drain."""
        ...

    async def acquire_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        """Take the lock if nobody holds it. Not re-entrant: the holder itself gets False (use refresh_lock)."""
        ...

    async def refresh_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        """Extend the lock to ``ttl_s`` from now if ``owner`` still holds it; False if it was lost."""
        ...

    async def release_lock(self, name: str, owner: str) -> None:
        """Release the lock if ``owner`` holds it; a lock that passed to someone else is left alone."""
        ...

    async def close(self) -> None: ...


# --- helpers shared with bot.queue -------------------------------------------------------------------------


def connect(url: str) -> redis.asyncio.Redis:
    """A client for ``url`` tuned for the bot: fail fast when Redis is gone, ride out a short blip.

    redis-py's default retries (10, up to 1 s apart) would hold a webhook for seconds while Redis is down; the
    webhook must answer in milliseconds, so two quick retries, then :class:`StoreUnavailable`. The socket
    timeout must stay above the longest ``block_ms`` a queue read uses (``bot.queue`` checks this).
    """
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        url,
        # A burst of webhooks waits up to 2 s for a free connection instead of failing at once
        # (the default pool raises MaxConnectionsError the moment its 100 connections are busy).
        max_connections=64,
        timeout=2,
        decode_responses=True,
        socket_connect_timeout=2,
        socket_timeout=10,
        health_check_interval=30,
        retry=Retry(ExponentialWithJitterBackoff(cap=0.2, base=0.01), retries=2),
    )
    return redis.asyncio.Redis.from_pool(pool)


class RedisGuard:
    """Turns transient redis-py failures into :class:`StoreUnavailable` naming the server, never its password."""

    def __init__(self, client: redis.asyncio.Redis) -> None:
        kw = client.connection_pool.connection_kwargs
        if kw.get("path"):
            self.where = f"unix:{kw['path']}"
        else:
            self.where = f"{kw.get('host', 'localhost')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"
        password = kw.get("password")
        self._secret = password if isinstance(password, str) and password else None

    @contextmanager
    def __call__(self, op: str) -> Iterator[None]:
        try:
            yield
        except _UNAVAILABLE as e:
            detail = f"{type(e).__name__}: {e}"
            if self._secret:
                # redis-py does not put the password in its messages today; make sure it never will here.
                detail = detail.replace(self._secret, "***")
            raise StoreUnavailable(
                f"Redis at {self.where} is unavailable ({op}): {detail}", where=self.where, op=op
            ) from e


def text(value: bytes | str) -> str:
    """A Redis reply as str, whether or not the client was built with ``decode_responses``."""
    return value.decode() if isinstance(value, bytes) else value


def _check_kind(kind: str) -> None:
    if not _KIND.fullmatch(kind):
        raise ValueError(f"state kind must match {_KIND.pattern}, got {kind!r}")


def _new_state_id(kind: str) -> str:
    _check_kind(kind)
    return f"{kind}:{secrets.token_urlsafe(12)}"


def _thread_from_json(raw: str, app_key: str) -> ThreadRef | None:
    data = json_object(raw)
    if data is None:
        log.warning("unreadable thread map entry for %s; starting a new thread", app_key)
        return None
    return ThreadRef.from_json_dict(data, app_key)


def json_object(raw: str | bytes | None) -> dict[str, Any] | None:
    """``raw`` parsed as a JSON object; ``None`` when absent, unparsable or not an object."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# --- Redis ---------------------------------------------------------------------------------------------------

# Compare-and-act in one server-side step: a GET followed by PEXPIRE/DEL from the client could act on a lock
# that expired and was taken by another replica in between.
_REFRESH = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisStore:
    """:class:`Store` on Redis. Closing it closes the client only if the store created it (:meth:`from_url`)."""

    def __init__(self, client: redis.asyncio.Redis, prefix: str = "argo-why:") -> None:
        self._r = client
        self._p = prefix
        self._guard = RedisGuard(client)
        self._owns_client = False
        self._refresh = client.register_script(_REFRESH)
        self._release = client.register_script(_RELEASE)

    @classmethod
    def from_url(cls, url: str, prefix: str = "argo-why:") -> RedisStore:
        store = cls(connect(url), prefix)
        store._owns_client = True
        return store

    @property
    def client(self) -> redis.asyncio.Redis:
        """The underlying client, so a :class:`bot.queue.RedisQueue` can share its connection pool."""
        return self._r

    @property
    def where(self) -> str:
        return self._guard.where

    async def ping(self) -> None:
        with self._guard("ping"):
            await self._r.ping()

    async def first_seen(self, key: str, ttl_s: int) -> bool:
        with self._guard("first_seen"):
            return bool(await self._r.set(f"{self._p}seen:{key}", "1", nx=True, ex=ttl_s))

    async def forget(self, key: str) -> None:
        with self._guard("forget"):
            await self._r.delete(f"{self._p}seen:{key}")

    async def get_thread(self, app_key: str) -> ThreadRef | None:
        with self._guard("get_thread"):
            raw = await self._r.get(f"{self._p}thread:{app_key}")
        return None if raw is None else _thread_from_json(text(raw), app_key)

    async def save_thread(self, ref: ThreadRef, app_key: str) -> None:
        with self._guard("save_thread"):
            await self._r.set(f"{self._p}thread:{app_key}", json.dumps(asdict(ref)), ex=THREAD_TTL_S)

    async def put_state(self, kind: str, payload: dict[str, Any], ttl_s: int) -> str:
        state_id = _new_state_id(kind)
        value = json.dumps(payload)  # before the guard: an unserialisable payload is a bug, not an outage
        with self._guard("put_state"):
            await self._r.set(f"{self._p}state:{state_id}", value, ex=ttl_s)
        return state_id

    async def get_state(self, state_id: str) -> dict[str, Any] | None:
        if not _STATE_ID.fullmatch(state_id):
            return None
        with self._guard("get_state"):
            raw = await self._r.get(f"{self._p}state:{state_id}")
        return json_object(raw)

    async def set_mute(self, app_key: str, until: float, by: str) -> None:
        with self._guard("set_mute"):
            # PXAT in the past is accepted by Redis and simply leaves no key: a mute that already ended.
            await self._r.set(
                f"{self._p}mute:{app_key}", json.dumps({"until": until, "by": by}), pxat=max(1, int(until * 1000))
            )

    async def mute_until(self, app_key: str, now: float) -> float | None:
        with self._guard("mute_until"):
            raw = await self._r.get(f"{self._p}mute:{app_key}")
        data = json_object(raw)
        if data is None or not isinstance(data.get("until"), int | float):
            return None
        until = float(data["until"])
        # Also compare with the caller's clock: Redis expires on its own clock, which may lag this replica's.
        return until if until > now else None

    async def note_alert(self, app_key: str, now: float, window_s: int) -> int:
        key = f"{self._p}alerts"
        with self._guard("note_alert"):
            async with self._r.pipeline(transaction=True) as pipe:
                # GT: a replica reporting late with an older `now` must not move an app back in time.
                pipe.zadd(key, {app_key: now}, gt=True)
                pipe.zremrangebyscore(key, "-inf", now - window_s)
                pipe.zcard(key)
                pipe.expire(key, window_s)
                results = await pipe.execute()
        return int(results[2])

    async def add_to_digest(self, app_key: str, payload: dict[str, Any]) -> None:
        key = f"{self._p}digest"
        value = json.dumps(payload)
        with self._guard("add_to_digest"):
            async with self._r.pipeline(transaction=True) as pipe:
                # A hash, not a list: the digest says where each app stands now, once, however often it fired.
                pipe.hset(key, app_key, value)
                pipe.expire(key, DIGEST_TTL_S)
                await pipe.execute()

    async def drain_digest(self) -> list[dict[str, Any]]:
        key = f"{self._p}digest"
        with self._guard("drain_digest"):
            # HGETALL + DEL in one MULTI: nothing can be added between them, so nothing is lost or read twice.
            async with self._r.pipeline(transaction=True) as pipe:
                pipe.hgetall(key)
                pipe.delete(key)
                raw, _ = await pipe.execute()
        items = sorted((text(k), v) for k, v in raw.items())
        return [p for _, v in items if (p := json_object(v)) is not None]

    async def acquire_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        with self._guard("acquire_lock"):
            return bool(await self._r.set(f"{self._p}lock:{name}", owner, nx=True, px=ttl_s * 1000))

    async def refresh_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        with self._guard("refresh_lock"):
            return bool(await self._refresh(keys=[f"{self._p}lock:{name}"], args=[owner, ttl_s * 1000]))

    async def release_lock(self, name: str, owner: str) -> None:
        with self._guard("release_lock"):
            await self._release(keys=[f"{self._p}lock:{name}"], args=[owner])

    async def close(self) -> None:
        if self._owns_client:
            await self._r.aclose()


# --- memory --------------------------------------------------------------------------------------------------


class MemoryStore:
    """:class:`Store` in this process: one replica only, nothing survives a restart.

    Expiry is checked against ``clock`` on every read; expired entries are also swept every few hundred writes
    so that dedupe marks that are never read again do not pile up.
    """

    _SWEEP_EVERY = 512

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        # key -> (value, expires at); one dict per kind of key keeps the sweep trivial.
        self._seen: dict[str, float] = {}
        self._threads: dict[str, tuple[str, float]] = {}
        self._states: dict[str, tuple[str, float]] = {}
        self._mutes: dict[str, tuple[float, str]] = {}
        self._alerts: dict[str, float] = {}
        self._digest: dict[str, str] = {}
        self._digest_expires = 0.0
        self._locks: dict[str, tuple[str, float]] = {}
        self._writes = 0

    def _wrote(self) -> None:
        self._writes += 1
        if self._writes % self._SWEEP_EVERY == 0:
            now = self._clock()
            self._seen = {k: exp for k, exp in self._seen.items() if exp > now}
            self._threads = {k: v for k, v in self._threads.items() if v[1] > now}
            self._states = {k: v for k, v in self._states.items() if v[1] > now}
            self._mutes = {k: v for k, v in self._mutes.items() if v[0] > now}
            self._locks = {k: v for k, v in self._locks.items() if v[1] > now}

    async def ping(self) -> None:
        return None

    async def first_seen(self, key: str, ttl_s: int) -> bool:
        now = self._clock()
        if self._seen.get(key, 0.0) > now:
            return False
        self._seen[key] = now + ttl_s
        self._wrote()
        return True

    async def forget(self, key: str) -> None:
        self._seen.pop(key, None)

    async def get_thread(self, app_key: str) -> ThreadRef | None:
        hit = self._threads.get(app_key)
        if hit is None or hit[1] <= self._clock():
            return None
        return _thread_from_json(hit[0], app_key)

    async def save_thread(self, ref: ThreadRef, app_key: str) -> None:
        self._threads[app_key] = (json.dumps(asdict(ref)), self._clock() + THREAD_TTL_S)
        self._wrote()

    async def put_state(self, kind: str, payload: dict[str, Any], ttl_s: int) -> str:
        state_id = _new_state_id(kind)
        # Stored as JSON, like Redis: same refusal of unserialisable payloads, and no aliasing with the caller.
        self._states[state_id] = (json.dumps(payload), self._clock() + ttl_s)
        self._wrote()
        return state_id

    async def get_state(self, state_id: str) -> dict[str, Any] | None:
        if not _STATE_ID.fullmatch(state_id):
            return None
        hit = self._states.get(state_id)
        if hit is None or hit[1] <= self._clock():
            return None
        return json_object(hit[0])

    async def set_mute(self, app_key: str, until: float, by: str) -> None:
        self._mutes[app_key] = (until, by)
        self._wrote()

    async def mute_until(self, app_key: str, now: float) -> float | None:
        hit = self._mutes.get(app_key)
        if hit is None or hit[0] <= self._clock():
            return None
        return hit[0] if hit[0] > now else None

    async def note_alert(self, app_key: str, now: float, window_s: int) -> int:
        self._alerts[app_key] = max(now, self._alerts.get(app_key, now))
        cutoff = now - window_s
        self._alerts = {k: t for k, t in self._alerts.items() if t > cutoff}
        return len(self._alerts)

    async def add_to_digest(self, app_key: str, payload: dict[str, Any]) -> None:
        now = self._clock()
        if self._digest_expires <= now:
            self._digest.clear()
        self._digest[app_key] = json.dumps(payload)
        self._digest_expires = now + DIGEST_TTL_S

    async def drain_digest(self) -> list[dict[str, Any]]:
        # No await in here: nothing else in this process can run between the read and the clear.
        live = self._digest_expires > self._clock()
        items = sorted(self._digest.items()) if live else []
        self._digest = {}
        return [p for _, v in items if (p := json_object(v)) is not None]

    async def acquire_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        now = self._clock()
        held = self._locks.get(name)
        if held is not None and held[1] > now:
            return False
        self._locks[name] = (owner, now + ttl_s)
        self._wrote()
        return True

    async def refresh_lock(self, name: str, owner: str, ttl_s: int) -> bool:
        now = self._clock()
        held = self._locks.get(name)
        if held is None or held[1] <= now or held[0] != owner:
            return False
        self._locks[name] = (owner, now + ttl_s)
        return True

    async def release_lock(self, name: str, owner: str) -> None:
        held = self._locks.get(name)
        if held is not None and held[0] == owner and held[1] > self._clock():
            del self._locks[name]

    async def close(self) -> None:
        return None


if TYPE_CHECKING:
    # mypy proves here that both implementations satisfy the protocol.
    def _conforms(r: RedisStore, m: MemoryStore) -> tuple[Store, Store]:
        return r, m
