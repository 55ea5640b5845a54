"""The digest of a burst: one message for many apps drifting (or failing) at once, posted by the scheduler.

Durable: an alert the worker put in the digest buffer stays in the store until Slack accepted a digest that lists
it (:meth:`Store.peek_digest`, post or update, save, then :meth:`Store.take_from_digest`), so a bot stopped or killed
at any point loses nothing: the next flush, on whichever replica leads, lists it. The digest message is posted once
(the outbox key ``parent:__digest__``); until ``DIGEST_WINDOW_SECONDS`` have passed without a new app (the window
slides with the burst, as the count of alerts that sends apps to the digest does) the same message is updated with
every new app, however long the burst lasts; the apps it lists are kept with it (:class:`DigestState`), so any replica
continues it. What is kept of each app is a summary of its report (:class:`DigestRow`), made once when it joins: a
flush reads, renders and writes the state of every app listed (a storm's thousand), never a thousand reports. Every
drifting app the digest lists gets a thread record pointing at the digest message (``ThreadRef.in_digest``) unless it
has a parent of its own, so that the sweep, the reminders and the daily summary see it like any other drifting app.
When its window has passed, a digest too long for one line per app gets the full list of its apps as a CSV file in
its thread (once) and says so.

One digest per channel: every buffered alert carries its app's channel (:mod:`bot.runtime.routes`), and each channel
has a digest message of its own (thread-map key ``__digest__`` for ``SLACK_CHANNEL``, ``__digest__:<channel ID>`` for
the others; outbox key ``parent:`` and the same), so a storm in one team's channel never buries another team's alerts.
An alert listed in ``SLACK_CHANNEL``'s digest because its own channel could not be used gets a reply in the digest's
thread saying why (outbox key ``route-note:<app_key>:<digest ts>``).
The window of a channel's digest is closed by the flush that finds it passed: this replica looks at every channel it
has posted a digest in, any replica at the channel of a new burst.
One flush at a time across replicas, under the lock ``lock:digest`` held with a lease of ``LEASE_S`` renewed while
the flush runs (:func:`bot.runtime.serial.leased`): a replica that dies mid-flush holds the digest back for at most
``LEASE_S``, and one that stops releases the lock however its flush ended.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from datetime import UTC, datetime

from bot.model import DigestSummary, report_from_dict
from bot.runtime.alerts import Alerts
from bot.runtime.serial import leased
from bot.runtime.services import Services
from bot.slack.render import Message, digest_message
from bot.slack.render.blocks import MAX_BLOCKS
from bot.slack.render.digest import DigestEntry, digest_list, digest_summary, lines_fit
from bot.store import ThreadRef, drift_start, json_object
from bot.store.state import DigestItem, DigestRow, DigestState
from bot.wording import slack as wording
from bot.wording.report import plural

log = logging.getLogger("argo_why.digest")
DIGEST_KEY = "__digest__"
"""Thread-map key of the current digest message (not a valid Application name, so it cannot clash)."""
DIGEST_POST = f"parent:{DIGEST_KEY}"
STATE_TTL_S = 24 * 3600  # the apps of a digest, until its window has closed and its list was attached
DIGEST_LOCK = "digest"
LEASE_S = 15


def digest_key(channel: str, default: str) -> str:
    """The thread-map key of a channel's digest message."""
    return DIGEST_KEY if channel == default else f"{DIGEST_KEY}:{channel}"


def _summary(row: DigestRow) -> DigestSummary:
    """The row's summary; a row kept before summaries were has its report instead."""
    if row.summary is not None:
        return row.summary
    return digest_summary(row.alert, report_from_dict(row.report) if row.report is not None else None)


def _summarized(row: DigestRow) -> DigestRow:
    """The row with its summary (a row kept before summaries were keeps its report, never written back, for its
    "Show details" button)."""
    return row if row.summary is not None else row.model_copy(update={"summary": _summary(row)})


def _entries(rows: dict[str, DigestRow]) -> tuple[list[DigestEntry], dict[str, str]]:
    entries: list[DigestEntry] = []
    reasons: dict[str, str] = {}
    for _, r in sorted(rows.items()):
        entries.append((r.alert, _summary(r)))
        if r.reason:
            reasons[r.alert.app] = r.reason
    return entries, reasons


class Digest:
    def __init__(self, services: Services, alerts: Alerts, owner: str) -> None:
        self.s = services
        self.alerts = alerts
        self.owner = owner
        self._running = asyncio.Lock()
        self._open: set[str] = set()  # channels this replica posted a digest in: their windows are closed here too

    async def flush(self) -> int:
        """Post what the burst collected, close a digest whose window has passed; how many apps were added.

        One flush at a time, in this process and across replicas (``lock:digest``): two at once could both post
        a new digest message. A flush that finds the lock taken does nothing (the other one posts)."""
        async with self._running, leased(self.s.store, DIGEST_LOCK, self.owner, LEASE_S) as held:
            return await self._flush() if held else 0

    async def _flush(self) -> int:
        default = self.s.channel
        raw = await self.s.store.peek_digest()
        new: dict[str, dict[str, DigestItem]] = {}
        taken: dict[str, dict[str, str]] = {}
        for key, value in raw.items():
            data = json_object(value)
            item = DigestItem.model_validate(data) if data is not None else None
            channel = (item.channel if item is not None else None) or default
            taken.setdefault(channel, {})[key] = value
            if item is not None:
                new.setdefault(channel, {})[key] = item
            else:  # it would be peeked at forever
                log.warning("unreadable digest entry for %s dropped", key)
        added = 0
        for channel in sorted({default, *self._open, *taken}):
            added += await self._flush_channel(channel, new.get(channel, {}), taken.get(channel, {}))
        return added

    async def _flush_channel(self, target: str, new: dict[str, DigestItem], raw: dict[str, str]) -> int:
        window = self.s.settings.runtime.digest_window_s
        now = time.time()
        key = digest_key(target, self.s.channel)
        ref = await self.s.store.get_thread(key)
        # the window slides with the burst (as the count that sends alerts here does): a digest closes a window after
        # the last app joined it, so a burst longer than a window, or analysed late, is still one message
        current = ref is not None and now - ref.updated < window
        if ref is not None and not current and ref.status == "drift":
            await self._close(ref, key)
            self._open.discard(target)
        if not new:
            if raw:
                await self.s.store.take_from_digest(raw)
            return 0
        listed: dict[str, DigestRow] = {}
        if current and ref is not None:
            previous = await DigestState.load(self.s.store, ref.fingerprint)
            # every row is written back with its summary (a row kept before summaries were loses its report then)
            listed = {k: _summarized(r) for k, r in previous.items.items()} if previous else {}
        few = len(listed.keys() | new.keys()) <= MAX_BLOCKS  # one line per app: each with its "Show details"
        for app_key, item in sorted(new.items()):
            listed[app_key] = await self._row(app_key, item, few)
        if few:  # a row kept before summaries were has no "Show details" yet: made from its report
            for app_key, r in sorted(listed.items()):
                if r.buttons is None and r.report is not None:
                    old = DigestItem(alert=r.alert, report=r.report, reason=r.reason)
                    listed[app_key] = await self._row(app_key, old, True)
        entries, reasons = _entries(listed)
        buttons = {r.alert.app: r.buttons for r in listed.values() if r.buttons is not None} if few else None
        message = digest_message(entries, buttons, reasons=reasons)
        grouped = not lines_fit(entries, buttons, reasons)
        if current and ref is not None:
            await self.s.outbox.update(ref.channel, ref.ts, message)
            channel, ts, started = ref.channel, ref.ts, drift_start(ref)
        else:
            (channel, ts), started = await self.s.outbox.post(target, message, key=f"parent:{key}"), now
        state = await DigestState(items=listed, grouped=grouped).save(self.s.store, max(STATE_TTL_S, 2 * window))
        await self.s.store.save_thread(ThreadRef(app=key, channel=channel, ts=ts, fingerprint=state,
                                                 status="drift", updated=now, since=started), key)  # fmt: skip
        self._open.add(target)
        if not current:
            await self.s.outbox.forget(f"parent:{key}")
        for app_key, item in sorted(new.items()):  # an alert that is here instead of its own channel says why
            if item.route_note:
                await self.s.outbox.post(channel, Message(text=item.route_note, blocks=[]), thread_ts=ts,
                                         key=f"route-note:{app_key}:{ts}")  # fmt: skip
        await self._threads(new, channel, ts, now)
        await self.s.store.take_from_digest(raw)
        return len(new)

    async def _threads(self, items: dict[str, DigestItem], channel: str, ts: str, now: float) -> None:
        """A thread record for each drifting app the digest lists and that has no parent of its own."""
        for key, item in items.items():
            if item.alert.status == "failed":
                continue  # not analysed: nothing is known to drift
            ref = await self.s.store.get_thread(key)
            if ref is not None and not ref.in_digest and ref.status == "drift":
                continue  # a parent of its own (posted since): that is its thread
            since = drift_start(ref) if ref is not None and ref.status == "drift" else now
            await self.s.store.save_thread(ThreadRef(app=key, channel=channel, ts=ts, fingerprint="", status="drift",
                                                     updated=now, since=since, in_digest=True), key)  # fmt: skip

    async def _row(self, key: str, item: DigestItem, buttons: bool) -> DigestRow:
        """What the digest keeps of an app joining it: its summary, and the state behind its "Show details" button
        (``buttons``: when the digest may show one line per app)."""
        a, report = item.alert, item.parsed_report()
        ids = await self.alerts.controls(key, a.app, a.app_namespace, a, report) if buttons else None
        return DigestRow(alert=a, summary=digest_summary(a, report), reason=item.reason, buttons=ids)

    async def _close(self, ref: ThreadRef, key: str) -> None:
        """The window has passed: a grouped digest gets the full list of its apps in its thread, once."""
        state = await DigestState.load(self.s.store, ref.fingerprint)
        if state is not None and state.grouped:
            entries, reasons = _entries(state.items)
            apps = plural(wording.SLACK_APPS, len(entries))
            day = datetime.fromtimestamp(drift_start(ref), UTC).strftime("%Y-%m-%d-%H%M")
            await self.s.outbox.upload(ref.channel, ref.ts, wording.SLACK_DIGEST_LIST_FILE.format(date=day),
                                       digest_list(entries, reasons), wording.SLACK_DIGEST_LIST_TITLE.format(apps=apps),
                                       key=f"digest-list:{ref.channel}:{ref.ts}")  # fmt: skip
            await self.s.outbox.update(ref.channel, ref.ts, digest_message(entries, None, reasons=reasons,
                                                                             listed="attached"))  # fmt: skip
        await self.s.store.save_thread(replace(ref, status="synced"), key)
