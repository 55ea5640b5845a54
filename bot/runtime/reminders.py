"""Scheduled jobs that speak in Slack on their own: the end of a mute, reminders of unresolved drift, the daily
summary of the apps drifting longest.

* :meth:`Reminders.mutes_ended`: mutes expire by themselves in the store; when one has ended and the app is still
  OutOfSync, its thread says so and the app is analysed again (an alert queued once per mute). An app Synced by
  then, or gone, is just forgotten; Argo CD not answering leaves the mute for the next run.
* :meth:`Reminders.remind`: an episode still drifting ``REMIND_AFTER_HOURS`` after it began gets a reminder in its
  thread, then one more every ``REMIND_AFTER_HOURS``; muted apps get none.
* :meth:`Reminders.summary`: once a day (``DAILY_SUMMARY_AT``, UTC), one message in each channel that has drifting
  apps, listing that channel's apps drifting longest (nothing where nothing drifts): a team reads about its own apps.

Every message has a key of its own in the outbox (``unmuted:``, ``remind:``, ``summary:``), so a job that runs
twice, on two replicas or again after a crash, says nothing twice.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from bot.analysis.fleet import group_findings
from bot.intake.jobs import DEDUPE_TTL_S, WebhookBody, WebhookJob
from bot.model import Alert
from bot.runtime.services import Services
from bot.slack.render.schedule import SUMMARY_SIZE, mute_ended_message, reminder_message, summary_message
from bot.sources.argocd import ArgoCDError
from bot.store import ThreadRef, drift_start, json_object
from bot.store.state import ReportState

log = logging.getLogger("argo_why.reminders")
SCAN = 500


class Reminders:
    def __init__(self, services: Services) -> None:
        self.s = services

    async def _alert(self, key: str, ref: ThreadRef) -> Alert:
        """The app's alert as its parent last showed it (name, namespace, link)."""
        state = await ReportState.load(self.s.store, ref.report_state) if ref.report_state else None
        if state is not None:
            return state.alert
        namespace, _, name = key.rpartition("/")
        return Alert(app=name, app_namespace=namespace or None, argocd_url=self.s.settings.argocd.link_url)

    async def _muted(self, key: str, now: float) -> bool:
        name = key.rpartition("/")[2]
        return bool(await self.s.store.mute_until(key, now) or await self.s.store.mute_until(name, now))

    async def mutes_ended(self) -> int:
        """Say in the thread that a mute ended while the app still drifts, and analyse it again; how many."""
        now = time.time()
        ended = await self.s.store.ended_mutes(now)
        handled: dict[str, str] = {}
        said = 0
        for key, raw in ended.items():
            data = json_object(raw) or {}
            namespace, _, name = key.rpartition("/")
            try:
                async with self.s.argocd() as argocd:
                    app = await argocd.application(name, namespace or None)
            except ArgoCDError as e:
                if e.status in (403, 404):
                    handled[key] = raw  # the app is gone (or hidden): nothing to say
                continue
            body = WebhookBody.of_application(app)
            if body is not None and body.sync.status == "OutOfSync" and not await self._muted(body.app_key, now):
                mark = f"unmuted:{key}:{data.get('until')}"
                ref = await self.s.store.get_thread(body.app_key)
                if ref is not None:
                    message = mute_ended_message(await self._alert(body.app_key, ref), data.get("by"))
                    await self.s.outbox.post(ref.channel, message, thread_ts=ref.ts, key=mark)
                job = WebhookJob(body=body, received=now, key=body.idempotency_key())
                await self.s.queue.enqueue_once(mark, DEDUPE_TTL_S, job.payload())
                said += 1
            handled[key] = raw
        await self.s.store.forget_mutes(handled)
        return said

    async def remind(self) -> int:
        """Remind every thread whose drift has lasted ``REMIND_AFTER_HOURS`` (again each period); how many."""
        every = self.s.settings.runtime.remind_after_h * 3600
        if every <= 0:
            return 0
        now = time.time()
        reminded = 0
        for key, since in await self.s.store.drifting(SCAN):
            if now - since < every:
                break  # oldest first: the rest are younger
            ref = await self.s.store.get_thread(key)
            if ref is None or ref.status != "drift":
                await self.s.store.forget_drifting(key)  # the thread expired
                continue
            if await self._muted(key, now):
                continue
            period = int((now - since) // every)
            message = reminder_message(await self._alert(key, ref), now - since, ref.unsettled_syncs)
            await self.s.outbox.post(ref.channel, message, thread_ts=ref.ts, key=f"remind:{key}:{since:.6f}:{period}")
            reminded += 1
        return reminded

    async def summary(self) -> int:
        """The daily messages on the apps drifting longest, one per channel (by the channel of each app's thread);
        how many apps they list."""
        now = time.time()
        rows: dict[str, list[tuple[Alert, float, int]]] = {}
        for key, _ in await self.s.store.drifting(SCAN):
            ref = await self.s.store.get_thread(key)
            if ref is not None and ref.status == "drift" and len(rows.setdefault(ref.channel, [])) < SUMMARY_SIZE:
                rows[ref.channel].append((await self._alert(key, ref), now - drift_start(ref), ref.unsettled_syncs))
        day = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")
        listed = 0
        entries = await self.s.store.fleet.entries(now)
        for channel, found in sorted(rows.items()):
            if found:
                # one line per fleet-wide finding among the apps routed to this channel
                mine = {k: e.findings for k, e in entries.items() if e.channel == channel}
                fleet = group_findings(mine, self.s.settings.runtime.fleet_min_apps)
                mark = f"summary:{day}" if channel == self.s.channel else f"summary:{day}:{channel}"
                await self.s.outbox.post(channel, summary_message(found, fleet), key=mark)
                listed += len(found)
        return listed
