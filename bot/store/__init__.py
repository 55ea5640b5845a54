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
* values are JSON: what comes back from :meth:`Store.get_thread` is a copy, never the caller's object, and a
  payload that is not JSON-serialisable is refused (``TypeError``) by both; a button's state is kept as the JSON
  text its model wrote (:class:`bot.store.state.StateModel`) and given back as that text;
* state ids handed to Slack are opaque (``<kind>:<16 random url-safe chars>``, at most 49 characters) and an id
  that does not have that shape is answered with ``None`` without touching Redis, because button values come
  back from the outside world;
* a Redis connection failure or timeout surfaces as :class:`StoreUnavailable` (never a raw ``redis`` error);
  its message names the Redis host and port but never the password.

Redis keys (``<p>`` is the prefix, ``argo-why:`` by default):

=====================================  ======================================================  ======================
key                                    value                                                    lifetime
=====================================  ======================================================  ======================
``<p>seen:<key>``                      ``"1"`` -- dedupe mark of a Slack click or signed       ``ttl_s`` of the call
                                       request; ``forget`` deletes it
``<p>thread:<app_key>``                JSON :class:`ThreadRef` (Slack thread of the app, in    30 days, reset on save
                                       the channel it was routed to); ``__digest__`` and
                                       ``__digest__:<channel>``: each channel's digest message
``<p>state:<kind>:<token>``            JSON payload behind a button value                      ``ttl_s`` of the call
``<p>mute:<app_key>``                  JSON ``{"until": epoch s, "by": user id}``              expires at ``until``
``<p>muted``                           hash app_key -> the same JSON: every mute, kept after   31 days after the last
                                       it ends until the mute-expiry job has handled it         mute
``<p>alerts``, ``<p>alerts:<channel>`` sorted set: app_key scored by its last alert time, one   ``window_s`` of the last
                                       per alert channel (bursts are counted per channel)       call, trimmed each call
``<p>digest``                          hash app_key -> JSON payload waiting for the digest     7 days after the last
                                       (its ``channel`` says which channel's digest); removed   add
                                       only once Slack accepted the digest listing it
``<p>drifting``                        sorted set: app_key of every thread in status ``drift``  30 days after the last
                                       scored by the start of its episode (reminders, the       thread save
                                       daily summary); names starting with ``__`` (the digest)
                                       are not apps and are left out
``<p>post:<key>``                      JSON record of :class:`bot.slack.outbox.Outbox`: the     ``ttl_s`` of the call
                                       intent ``{"marker", "at"}`` before a post, then the      (7 days)
                                       message ``{"channel", "ts"}`` Slack accepted
``<p>lock:<name>``                     owner id of a lock: scheduler leader, one digest flush  a lease renewed by its
                                       (``digest``), one PR per fix, one job at a time per     holder (15 s leader and
                                       app (``app:<app_key>``); released only in its owner's   digest, 30 s PR and
                                       name                                                    app), PX precision
``<p>approvals:<fix_id>``              hash user id -> JSON ``{"at": epoch s, ...}``: who      ``ttl_s`` of the last
                                       approved a fix (the first time of each user is kept)    add (24 h)
``<p>prs``                             hash fix_id -> JSON record of a pull request the bot     90 days after the last
                                       opened, until it is merged or closed                    write
``<p>audit``                           stream: every approval decision (who, when, what,       no TTL; capped at
                                       allowed or refused), fields as given                    ~100 000 entries
``<p>message:<channel>:<ts>``          JSON text and blocks of a message with fix buttons, so   ``ttl_s`` of the call
                                       a button block can be replaced (PR link) later          (14 days)
``<p>buttons:<fix_id>``                hash ``channel:ts:block_id`` -> JSON place of an Open   ``ttl_s`` of the last
                                       PR button for that fix (all become the PR's link)       add (14 days)
=====================================  ======================================================  ======================

The fleet index's keys (``<p>fleet:apps``, ``<p>fleet:sig:<sig_id>``) are listed in :mod:`bot.store.fleet`, its
objects' (``<p>fleet:objects:<app_key>``) in :mod:`bot.store.fleetobjects`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.store.base import (
    AUDIT_MAXLEN,
    DIGEST_TTL_S,
    MUTED_TTL_S,
    PR_TTL_S,
    THREAD_TTL_S,
    Store,
    StoreUnavailable,
    drift_start,
    text,
)
from bot.store.connection import RedisGuard, connect
from bot.store.fleetentry import json_object
from bot.store.in_memory import MemoryStore
from bot.store.on_redis import RedisStore
from bot.store.records import ThreadRef

__all__ = [
    "AUDIT_MAXLEN",
    "DIGEST_TTL_S",
    "MUTED_TTL_S",
    "PR_TTL_S",
    "THREAD_TTL_S",
    "MemoryStore",
    "RedisGuard",
    "RedisStore",
    "Store",
    "StoreUnavailable",
    "ThreadRef",
    "connect",
    "drift_start",
    "json_object",
    "text",
]

if TYPE_CHECKING:
    # mypy proves here that both implementations satisfy the protocol.
    def _conforms(r: RedisStore, m: MemoryStore) -> tuple[Store, Store]:
        return r, m
