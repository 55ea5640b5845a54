"""Exactly-once Slack output: every message the bot posts while doing a job is posted once, however often the job
runs (a redelivery after a crash, a replica killed mid-job, Redis gone between the post and the save).

A post has a key. Named keys say what the message is (``parent:<app>``: the parent of an app's thread, whichever
job posts it); inside :meth:`Outbox.scope` (one queue entry) a post without a key gets ``<scope>:<n>``, the n-th
unnamed post of that entry, so the same entry done again makes the same posts in the same order and skips those
already made. For a key, in the store (``post:<key>``, see :mod:`bot.store`):

1. the message Slack accepted (``channel``, ``ts``) is there: nothing is posted, its ts is returned;
2. only the intent (``marker``, ``at``) is there: an earlier attempt may have reached Slack and died before it
   could say so; the channel (or thread) is searched for the marker, which every post carries in its message
   metadata; found, that message is adopted; not found, it is posted (with the same marker);
3. nothing: the intent is written, then the message is posted, then its ts is recorded. A store that fails at that
   last step is retried for ``record_wait_s`` (Redis restarting) before the job is left to its redelivery, which
   then finds the intent (case 2).

Without the history scopes (``channels:history``, ``groups:history``) case 2 cannot search: it posts again and
logs why (at least once instead of exactly once). Updates (``chat.update``) are idempotent and pass through;
ephemeral messages and file uploads are recorded after Slack accepted them (no marker exists for them).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bot.slack.poster import SlackPoster, SlackRefused
from bot.slack.render import Message
from bot.store import Store, StoreUnavailable

log = logging.getLogger("argo_why.outbox")
OUTBOX_TTL_S = 7 * 24 * 3600
# Slack's clock and ours differ a little; the marker search starts this much before the intent was written.
_CLOCK_SLACK_S = 60.0


@dataclass
class _Scope:
    name: str
    posts: int = 0


_scope: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("outbox_scope", default=None)


class Outbox:
    def __init__(self, poster: SlackPoster, store: Store, *, ttl_s: int = OUTBOX_TTL_S,
                 record_wait_s: float = 30.0) -> None:  # fmt: skip
        self.poster = poster
        self.store = store
        self.ttl_s = ttl_s
        self.record_wait_s = record_wait_s

    @contextlib.contextmanager
    def scope(self, name: str) -> Iterator[None]:
        """Number the unnamed posts made in this block (one asyncio task: the context is the task's) as ``name``'s.

        The posts of one scope must be made one after the other, in an order the job decides the same way each
        time it runs."""
        token = _scope.set(_Scope(name))
        try:
            yield
        finally:
            _scope.reset(token)

    def _key(self, key: str | None) -> str | None:
        if key is not None:
            return key
        current = _scope.get()
        if current is None:
            return None
        current.posts += 1
        return f"{current.name}:{current.posts}"

    async def post(self, channel: str, message: Message, *, thread_ts: str | None = None,
                   key: str | None = None) -> tuple[str, str]:  # fmt: skip
        """Post once per key (see the module); returns the channel ID and the message's ts."""
        key = self._key(key)
        if key is None:
            return await self.poster.post(channel, message, thread_ts=thread_ts)
        record = await self.store.outbox_get(key)
        if record is not None and record.get("ts"):
            return str(record["channel"]), str(record["ts"])
        marker = str(record.get("marker")) if record and record.get("marker") else None
        if marker is not None and record is not None:
            found = await self._search(channel, marker, float(record.get("at") or 0), thread_ts)
            if found is not None:
                await self._record(key, {"channel": channel, "ts": found})
                return channel, found
        else:
            marker = secrets.token_urlsafe(12)
            await self.store.outbox_put(key, {"marker": marker, "at": time.time()}, self.ttl_s)
        ch, ts = await self.poster.post(channel, message, thread_ts=thread_ts, marker=marker)
        await self._record(key, {"channel": ch, "ts": ts})
        return ch, ts

    async def _search(self, channel: str, marker: str, at: float, thread_ts: str | None) -> str | None:
        try:
            return await self.poster.find_marked(channel, marker, since=at - _CLOCK_SLACK_S, thread_ts=thread_ts)
        except SlackRefused as e:
            log.warning("cannot look for a post that may have reached Slack (%s; the app needs the channels:history "
                        "and groups:history scopes): posting it again", e.error)  # fmt: skip
            return None

    async def _record(self, key: str, record: dict[str, Any]) -> None:
        deadline = time.monotonic() + self.record_wait_s
        delay = 0.1
        while True:
            try:
                await self.store.outbox_put(key, record, self.ttl_s)
                return
            except StoreUnavailable:
                if time.monotonic() + delay > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    async def update(self, channel: str, ts: str, message: Message) -> None:
        await self.poster.update(channel, ts, message)

    async def ephemeral(self, channel: str, user: str, message: Message, *, key: str | None = None) -> None:
        key = self._key(key)
        if key is not None and await self.store.outbox_get(key) is not None:
            return
        await self.poster.ephemeral(channel, user, message)
        if key is not None:
            await self._record(key, {"channel": channel, "ephemeral": True})

    async def upload(self, channel: str, thread_ts: str | None, filename: str, content: str | bytes, title: str, *,
                     key: str | None = None) -> None:  # fmt: skip
        key = self._key(key)
        if key is not None and await self.store.outbox_get(key) is not None:
            return
        await self.poster.upload(channel, thread_ts, filename, content, title)
        if key is not None:
            await self._record(key, {"channel": channel, "file": filename})

    async def forget(self, key: str) -> None:
        """Drop a named key once what it stood for is saved elsewhere (a parent's ts in the thread map)."""
        await self.store.outbox_delete(key)
