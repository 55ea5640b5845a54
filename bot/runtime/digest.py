"""The digest of a burst: one message for many apps drifting (or failing) at once, posted by the scheduler.

Durable: an alert the worker put in the digest buffer stays in the store until Slack accepted a digest that lists
it (:meth:`Store.peek_digest`, post or update, save, then :meth:`Store.take_from_digest`), so a bot stopped or killed
at any point loses nothing: the next flush, on whichever replica leads, lists it. The digest message is posted once
(the outbox key ``parent:__digest__``); within one window (``DIGEST_WINDOW_SECONDS`` from its first post) the same
message is updated with every new app; the apps it lists are kept with it (:class:`DigestState`), so any replica
continues it. When the window has passed, a digest too long for one line per app gets the full list of its apps
as a CSV file in its thread (once) and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from datetime import UTC, datetime

from bot.runtime.alerts import Alerts
from bot.runtime.services import Services
from bot.slack.render import Alert, Buttons, digest_message
from bot.slack.render.blocks import MAX_BLOCKS
from bot.slack.render.digest import DigestEntry, digest_list, lines_fit
from bot.slack.render.escaping import plural
from bot.state import DigestItem, DigestState
from bot.store import StoreUnavailable, ThreadRef, drift_start, json_object
from bot.wording import slack as wording

log = logging.getLogger("argo_why.digest")
DIGEST_KEY = "__digest__"
"""Thread-map key of the current digest message (not a valid Application name, so it cannot clash)."""
DIGEST_POST = f"parent:{DIGEST_KEY}"
STATE_TTL_S = 24 * 3600  # the apps of a digest, until its window has closed and its list was attached
DIGEST_LOCK = "digest"
LOCK_TTL_S = 120


def _entries(items: dict[str, DigestItem]) -> tuple[list[DigestEntry], dict[str, str]]:
    entries: list[DigestEntry] = []
    reasons: dict[str, str] = {}
    for _, i in sorted(items.items()):
        entries.append((i.alert, i.parsed_report()))
        if i.reason:
            reasons[i.alert.app] = i.reason
    return entries, reasons


class Digest:
    def __init__(self, services: Services, alerts: Alerts, owner: str) -> None:
        self.s = services
        self.alerts = alerts
        self.owner = owner
        self._running = asyncio.Lock()

    async def flush(self) -> int:
        """Post what the burst collected, close a digest whose window has passed; how many apps were added.

        One flush at a time, in this process and across replicas (``lock:digest``): two at once could both post
        a new digest message. A flush that finds the lock taken does nothing (the other one posts)."""
        async with self._running:
            if not await self.s.store.acquire_lock(DIGEST_LOCK, self.owner, LOCK_TTL_S):
                return 0
            try:
                return await self._flush()
            finally:
                with contextlib.suppress(StoreUnavailable):
                    await self.s.store.release_lock(DIGEST_LOCK, self.owner)

    async def _flush(self) -> int:
        window = self.s.settings.runtime.digest_window_s
        now = time.time()
        ref = await self.s.store.get_thread(DIGEST_KEY)
        current = ref is not None and now - drift_start(ref) < window
        if ref is not None and not current and ref.status == "drift":
            await self._close(ref)
        raw = await self.s.store.peek_digest()
        if not raw:
            return 0
        new: dict[str, DigestItem] = {}
        for key, value in raw.items():
            data = json_object(value)
            if data is not None:
                new[key] = DigestItem.model_validate(data)
            else:  # it would be peeked at forever
                log.warning("unreadable digest entry for %s dropped", key)
        listed: dict[str, DigestItem] = {}
        if current and ref is not None:
            previous = await DigestState.load(self.s.store, ref.fingerprint)
            listed = dict(previous.items) if previous else {}
        listed.update(new)
        entries, reasons = _entries(listed)
        buttons = await self._buttons(listed) if len(listed) <= MAX_BLOCKS else None
        message = digest_message(entries, buttons, reasons=reasons)
        grouped = not lines_fit(entries, buttons, reasons)
        if current and ref is not None:
            await self.s.outbox.update(ref.channel, ref.ts, message)
            channel, ts, started = ref.channel, ref.ts, drift_start(ref)
        else:
            target = self.s.channel
            (channel, ts), started = await self.s.outbox.post(target, message, key=DIGEST_POST), now
        state = await DigestState(items=listed, grouped=grouped).save(self.s.store, max(STATE_TTL_S, 2 * window))
        await self.s.store.save_thread(ThreadRef(app=DIGEST_KEY, channel=channel, ts=ts, fingerprint=state,
                                                 status="drift", updated=now, since=started), DIGEST_KEY)  # fmt: skip
        if not current:
            await self.s.outbox.forget(DIGEST_POST)
        await self.s.store.take_from_digest(raw)
        return len(new)

    async def _buttons(self, listed: dict[str, DigestItem]) -> dict[str, Buttons]:
        """ "Show details" for every app, when the digest may show one line per app."""
        out: dict[str, Buttons] = {}
        for key, i in sorted(listed.items()):
            a: Alert = i.alert
            out[a.app] = await self.alerts.controls(key, a.app, a.app_namespace, a, i.parsed_report())
        return out

    async def _close(self, ref: ThreadRef) -> None:
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
        await self.s.store.save_thread(replace(ref, status="synced"), DIGEST_KEY)
