"""What the bot says about an app: the analysis, then the parent message and its thread, for the worker's jobs.

Threads: one parent message per drift episode, kept in the store by app (not in memory), so a restart or another
replica keeps threading. A new alert for the same episode updates the parent (and adds replies only when the
findings changed); an app that became Synced turns its parent green; the next drift re-uses the same thread.
More than ``digest_threshold`` apps drifting within ``digest_window_s`` go to the digest (:mod:`bot.runtime.digest`)
instead of a parent each, and so do the failures of a burst or of an Argo CD outage.

Channels: every alert goes to the app's channel as :class:`bot.runtime.routes.Router` reads it from Argo CD at that
moment (annotations, subscription, ``CHANNEL_ROUTES``, ``SLACK_CHANNEL``); bursts are counted per channel. An app
whose channel changed while it has a thread gets a new thread in the new channel, and its old thread says where it
went; an alert that could not go to its channel (a name Slack does not know, a channel the bot may not post in) goes
to ``SLACK_CHANNEL`` with a reply saying why.

Exactly once: an alert is handled under its app's lock (:mod:`bot.runtime.serial`), so two alerts for one app never both
find "no thread"; every post goes through the outbox (:mod:`bot.slack.outbox`): the parent under the key
``parent:<channel>:<app_key>`` (whichever job posts it), the replies under keys of their thread, episode and findings,
the move and routing notes under ``moved:`` and ``route-note:`` keys of their thread, everything else under the keys
of its queue entry. A job done again posts nothing twice.

Links to Argo CD come from the configuration (``ARGOCD_PUBLIC_URL``, else ``ARGOCD_URL``), never from the
webhook; failure messages name the public URL, never the internal one.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass, replace
from typing import Literal

from bot.errors import ArgoWhyError
from bot.intake.jobs import ButtonJob, CommandJob, WebhookJob, app_key
from bot.model import Report
from bot.runtime.fixflow import FixFlow
from bot.runtime.fleet import FleetLines
from bot.runtime.routes import Routed
from bot.runtime.serial import AppLocks
from bot.runtime.services import Services
from bot.slack.poster import SlackRefused
from bot.slack.render import Alert, Buttons, Message, diff_message, error_message, parent_message, thread_messages
from bot.slack.render.fixes import FixButtons
from bot.slack.render.fleet import with_system_offer
from bot.sources.argocd import ArgoCDError
from bot.store import ThreadRef, drift_start
from bot.store.fleetobjects import stamp_of
from bot.store.records import COUNTED_KEYS
from bot.store.state import DigestItem, ReportState
from bot.web.view import hours, save_page
from bot.why import Reads, investigate
from bot.wording import slack as wording

log = logging.getLogger("argo_why.alerts")
STATE_TTL_S = 14 * 24 * 3600
_TRANSIENT = (None, 429, 500, 502, 503, 504)  # no answer at all, or Argo CD overloaded or down
# chat.postMessage's answers for a channel the bot cannot post in: the alert goes to SLACK_CHANNEL instead
_CHANNEL_REFUSALS = ("channel_not_found", "not_in_channel", "is_archived", "restricted_action")


def fingerprint(report: Report) -> str:
    """Identity of an episode's findings: the same fields with the same causes (and the same resources only one side
    has, with their reasons; an OutOfSync with nothing that differs)."""
    items = sorted(f"{f.resource.group}/{f.resource.kind}/{f.resource.namespace}/{f.resource.name}"
                   f"{f.pointer}={f.cause}" for f in report.findings)  # fmt: skip
    items += sorted(f"{r.resource.group}/{r.resource.kind}/{r.resource.namespace}/{r.resource.name}"
                    f" {r.state}={r.reason}" for r in report.resources)  # fmt: skip
    items += ["nothing-differs"] if report.nothing_differs is not None else []
    return hashlib.sha256("\n".join(items).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Controls:
    """The buttons of one alert: the report's (Show diff, Mute, Re-check) and the Open PR ones, by message."""

    buttons: Buttons
    parent_fixes: FixButtons | None
    thread_fixes: FixButtons | None
    state: str
    """The report state behind the buttons (kept in the thread map, so the parent can be rendered again)."""


class AnalysisFailed(ArgoWhyError):
    """The analysis failed after every attempt; the message says why, for the thread."""

    def __init__(self, message: str, *, retryable: bool = False, reads: Reads | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        """Argo CD could not answer (down, overloaded): worth doing again once it answers."""
        self.reads = reads
        """What the analysis read before it failed (the Application, or that Argo CD did not show it)."""


class Alerts:
    def __init__(self, services: Services, fixes: FixFlow, locks: AppLocks, *, backoff_s: float = 0.5) -> None:
        self.s = services
        self.fleet = FleetLines(services, fixes, locks)
        self.fixes = fixes
        self.router = fixes.router
        self.locks = locks
        self.backoff_s = backoff_s

    def alert(self, name: str, namespace: str | None, *, project: str | None = None, revision: str | None = None,
              status: Literal["drift", "synced", "failed"] = "drift") -> Alert:  # fmt: skip
        """An app's alert, linked to Argo CD as configured (never as a webhook says)."""
        return Alert(app=name, app_namespace=namespace, project=project, revision=revision, status=status,
                     argocd_url=self.s.settings.argocd.link_url)  # fmt: skip

    async def analyse(self, name: str, namespace: str | None, reads: Reads | None = None) -> Report:
        """The analysis, retried with backoff; :class:`AnalysisFailed` after the last attempt. ``reads`` receives
        what the last attempt read from Argo CD (the alert routes with that Application instead of reading it
        again)."""
        reads = reads if reads is not None else Reads()
        attempts = self.s.settings.runtime.analysis_attempts
        delay = self.backoff_s
        last, retryable = "", False
        for attempt in range(attempts):
            try:
                async with self.s.argocd() as argocd:
                    report = await investigate(name, app_namespace=namespace or self.s.settings.argocd.app_namespace,
                                               argocd=argocd, cluster=self.s.cluster, reads=reads)  # fmt: skip
                self.s.metrics.analyses.labels(outcome="drift" if report.findings else "clean").inc()
                if reads.app is not None and reads.pairs is not None:
                    # the fleet index keeps what was just read: a system-level rule's check does not read it again
                    await self.s.store.fleet_objects.put(app_key(name, namespace), stamp_of(reads.app), reads.pairs)
                return report
            except ArgoCDError as e:
                last, retryable = str(e), e.status in _TRANSIENT
                if e.status in (401, 403, 404):
                    break  # no retry fixes a token, a permission or a missing app
            except ArgoWhyError as e:
                last, retryable = str(e), False
            except Exception as e:  # a bug must not kill the worker; it is reported, never a traceback in Slack
                log.exception("analysis of %s failed", name)
                last, retryable = f"internal error ({type(e).__name__})", False
            if attempt + 1 < attempts:
                await asyncio.sleep(delay)
                delay *= 2
        raise AnalysisFailed(self.s.settings.argocd.for_people(last), retryable=retryable, reads=reads)

    # --- an alert from Argo CD ------------------------------------------------------------------------
    async def webhook(self, job: WebhookJob) -> None:
        async with self.locks.hold(job.body.app_key):
            await self._webhook(job)

    async def _webhook(self, job: WebhookJob) -> None:
        body = job.body
        name, ns, key = body.app.name, body.app.namespace, body.app_key
        alert = self.alert(name, ns, project=body.app.project, revision=body.sync.revision)
        ref = await self.s.store.get_thread(key)
        if body.sync.status == "Synced":
            await self.turn_green(ref, alert, key)
            return
        listed = ref if ref is not None and ref.in_digest else None
        if listed is not None:  # only listed in a digest so far: this alert gets a parent of its own
            ref = None
        # `/argo mute shop 2h` names the app without its namespace: it mutes every app of that name
        muted = await self.s.store.mute_until(key, time.time()) or await self.s.store.mute_until(name, time.time())
        if muted:
            self.s.metrics.analyses.labels(outcome="muted").inc()
            return
        reads = Reads()
        report, analysed = await self._report(job, ref, reads)
        if report.clean:  # an object not compared, a resource to prune or missing is not "matches Git"
            await self.turn_green(ref if ref is not None else listed, alert, key)
            return
        routed = await self.router.route_read(name, ns, body.app.project, reads)
        moved_from = None
        if ref is not None and ref.channel != routed.channel:
            await self._moved(ref, routed, key)
            moved_from, ref = ref.channel, None
        if ref is None and await self._burst(key, routed.channel):
            item = DigestItem.of(alert, report, channel=routed.channel, route_note=routed.note)
            await self.s.store.add_to_digest(key, item.model_dump(mode="json"))
            # the fleet index records the channel the app is routed to: the overview shows it there only
            await self.fleet.index(key, report, routed.channel, "", time.time())
            return
        controls = await self._controls(key, name, ns, alert, report)
        fp = fingerprint(report)
        now = time.time()
        if ref is None:
            alert = replace(alert, unsettled_syncs=1)
            try:
                post_key = f"parent:{routed.channel}:{key}"
                ch, ts = await self._parent(routed.channel, None, report, alert, controls, key=post_key)
            except SlackRefused as e:  # the route names a channel the bot cannot post in: SLACK_CHANNEL says why
                if routed.channel == self.s.channel or e.error not in _CHANNEL_REFUSALS:
                    raise
                reason = wording.ROUTE_REFUSED.format(channel=routed.channel, error=e.error)
                routed = replace(routed, channel=self.s.channel,
                                 note=wording.ROUTE_FALLBACK.format(app=name, reasons=reason))  # fmt: skip
                post_key = f"parent:{routed.channel}:{key}"
                ch, ts = await self._parent(routed.channel, None, report, alert, controls, key=post_key)
            since = drift_start(listed) if listed is not None and listed.status == "drift" else now
            ref = ThreadRef(app=key, channel=ch, ts=ts, fingerprint="", status="drift", unsettled_syncs=1, updated=now,
                            last_alert=job.key, counted=[job.key], report_state=controls.state, since=since,
                            analysed=analysed)  # fmt: skip
            await self.s.store.save_thread(ref, key)  # before the replies: a retry re-uses this thread
            await self.s.outbox.forget(post_key)
            await self._notes(ref, routed, moved_from, name)
            replies = True
        else:
            same_episode = ref.status == "drift"
            counted = ref.counted if same_episode else []
            redelivered = bool(job.key) and (job.key == ref.last_alert or job.key in counted)
            unsettled = (ref.unsettled_syncs + (0 if redelivered else 1)) if same_episode else 1
            alert = replace(alert, unsettled_syncs=unsettled)
            await self._parent(ref.channel, ref.ts, report, alert, controls)
            replies = fp != ref.fingerprint or not same_episode
            counted = counted if redelivered else [*counted, job.key][-COUNTED_KEYS:]
            ref = replace(ref, status="drift", unsettled_syncs=unsettled, updated=now, last_alert=job.key,
                          counted=counted, report_state=controls.state, analysed=analysed,
                          since=drift_start(ref) if same_episode else now)  # fmt: skip
            await self.s.store.save_thread(ref, key)
        if replies:
            episode = f"reply:{key}:{ref.ts}:{drift_start(ref):.6f}:{fp}"  # ts: a thread in a new channel replies anew
            await self._thread(ref.channel, ref.ts, report, alert, controls, key=episode)
            await self.s.store.save_thread(replace(ref, fingerprint=fp), key)
        await self.fleet.index(key, report, ref.channel, ref.ts, drift_start(ref))

    async def _report(self, job: WebhookJob, ref: ThreadRef | None, reads: Reads) -> tuple[Report, float]:
        """The report for an alert, and when its analysis began. Alerts for one app come in bursts (every sync
        that did not settle it, on every replica): one whose parent shows an analysis begun after the alert arrived
        reuses it, and only counts its sync."""
        if ref is not None and ref.status == "drift" and ref.report_state and ref.analysed >= job.received:
            state = await ReportState.load(self.s.store, ref.report_state)
            if state is not None:
                self.s.metrics.analyses.labels(outcome="reused").inc()
                return state.parsed_report(), ref.analysed
        started = time.time()
        return await self.analyse(job.body.app.name, job.body.app.namespace, reads), started

    async def _burst(self, key: str, channel: str) -> bool:
        """Whether the alert of an app without a thread is part of a burst in its channel (and goes to the digest)."""
        runtime = self.s.settings.runtime
        busy = await self.s.store.note_alert(key, time.time(), runtime.digest_window_s, channel)
        return busy > runtime.digest_threshold

    async def _moved(self, ref: ThreadRef, routed: Routed, key: str) -> None:
        """The app's channel changed: its old thread says where its alerts go now (once per move)."""
        text = wording.ROUTE_MOVED_OLD.format(app=key, channel=routed.channel,
                                              source=wording.ROUTE_SOURCES[routed.route.source])  # fmt: skip
        await self.s.outbox.post(ref.channel, Message(text=text, blocks=[]), thread_ts=ref.ts,
                                 key=f"moved:{key}:{ref.ts}:{routed.channel}")  # fmt: skip

    async def _notes(self, ref: ThreadRef, routed: Routed, moved_from: str | None, name: str) -> None:
        """In a new thread: why it is not in the app's own channel, and where it was before a move."""
        if routed.note:
            await self.s.outbox.post(ref.channel, Message(text=routed.note, blocks=[]), thread_ts=ref.ts,
                                     key=f"route-note:{ref.app}:{ref.ts}")  # fmt: skip
        if moved_from:
            text = wording.ROUTE_MOVED_NEW.format(app=name, channel=moved_from)
            await self.s.outbox.post(ref.channel, Message(text=text, blocks=[]), thread_ts=ref.ts,
                                     key=f"moved-from:{ref.app}:{ref.ts}")  # fmt: skip

    async def failure_to_digest(self, job: WebhookJob, failure: AnalysisFailed) -> bool:
        """A failed alert of an app without a thread joins the digest when Argo CD is down or the failure is part
        of a burst (one message, not one per app); False when it should be said on its own."""
        key = job.body.app_key
        ref = await self.s.store.get_thread(key)
        if ref is not None and not ref.in_digest:
            return False
        routed = await self.router.route_read(job.app, job.body.app.namespace, job.body.app.project, failure.reads)
        if not await self._burst(key, routed.channel) and not failure.retryable:
            return False
        alert = self.alert(job.app, job.body.app.namespace, project=job.body.app.project,
                           revision=job.body.sync.revision, status="failed")  # fmt: skip
        item = DigestItem.of(alert, Report(app=job.app), reason=str(failure), channel=routed.channel,
                             route_note=routed.note)  # fmt: skip
        await self.s.store.add_to_digest(key, item.model_dump(mode="json"))
        return True

    async def settle(self, key: str, alert: Alert) -> None:
        """Turn an app's parent green from outside an alert (the PR follow-up): under the app's lock, like alerts."""
        async with self.locks.hold(key):
            await self.turn_green(await self.s.store.get_thread(key), alert, key)

    async def turn_green(self, ref: ThreadRef | None, alert: Alert, key: str) -> None:
        """The parent says the app is Synced again (no buttons), once; the next drift re-uses the thread. An app
        only listed in a digest has no parent to turn green (the digest's message lists others too): its record
        says Synced, so that reminders stop."""
        await self.s.store.fleet.drop(key)
        if ref is None or ref.status == "synced":
            return
        if ref.in_digest:
            await self.s.store.save_thread(replace(ref, status="synced", updated=time.time()), key)
            return
        await self.s.outbox.update(
            ref.channel, ref.ts, parent_message(Report(app=alert.app), replace(alert, status="synced"), None)
        )
        await self.s.store.save_thread(replace(ref, status="synced", fingerprint="", updated=time.time()), key)

    async def controls(self, key: str, name: str, ns: str | None, alert: Alert, report: Report) -> Buttons:
        """Show diff, Mute and Re-check for an app listed elsewhere (the digest): no Open PR buttons."""
        return (await self._controls(key, name, ns, alert, report, fixes=False)).buttons

    async def _controls(self, key: str, name: str, ns: str | None, alert: Alert, report: Report, *,
                        fixes: bool = True) -> Controls:  # fmt: skip
        state = ReportState(app_key=key, app=name, app_namespace=ns, alert=alert, report=report.to_dict())
        state_id = await state.save(self.s.store, STATE_TTL_S)
        parent, thread = await self.fixes.buttons(key, name, ns, alert, report) if fixes else (None, None)
        return Controls(Buttons(show_diff=state_id, mute=state_id, recheck=state_id), parent, thread, state_id)

    async def _parent(self, channel: str, ts: str | None, report: Report, alert: Alert, controls: Controls, *,
                      key: str | None = None) -> tuple[str, str]:  # fmt: skip
        """Post the parent (``ts`` None) or update it; a parent with Open PR buttons is remembered."""
        message = parent_message(report, alert, controls.buttons, controls.parent_fixes)
        if controls.parent_fixes is not None:  # the system-level rule of a fleet-wide finding, beside the app rule
            message = with_system_offer(message, await self.fleet.offer_for(report))
        if ts is None:
            channel, ts = await self.s.outbox.post(channel, message, key=key)
        else:
            await self.s.outbox.update(channel, ts, message)
        if controls.parent_fixes is not None:
            await self.fixes.remember(channel, ts, message, controls.parent_fixes)
        return channel, ts

    async def _thread(self, channel: str, thread_ts: str | None, report: Report, alert: Alert,
                      controls: Controls | None, *, key: str | None = None) -> None:  # fmt: skip
        fixes = controls.thread_fixes if controls is not None else None
        view = self.s.settings.view
        url = await save_page(self.s.store, view, alert, report) if report.findings else None
        for i, m in enumerate(thread_messages(report, alert, fixes, view_url=url, view_hours=hours(view))):
            _, ts = await self.s.outbox.post(channel, m, thread_ts=thread_ts, key=f"{key}:{i}" if key else None)
            if fixes is not None:
                await self.fixes.remember(channel, ts, m, fixes)

    # --- /argo why, /argo diff, /argo mute --------------------------------------------------------------
    async def _not_visible(self, channel: str, user: str, name: str, ns: str | None) -> bool:
        """Whether the app may not be talked about here; if so, the person is told so (ephemerally), with no word
        on whether it exists."""
        if await self.router.visible(channel, user, name, ns):
            return False
        await self.s.outbox.ephemeral(channel, user, error_message(wording.NOT_VISIBLE.format(app=app_key(name, ns))))
        return True

    async def command(self, job: CommandJob) -> None:
        name, ns, channel = job.app, job.app_namespace, job.channel
        if await self._not_visible(channel, job.user, name, ns):
            return
        if job.command == "mute":
            await self._mute(app_key(name, ns), job.mute_s or 0, job.duration or "", job.user, channel, None)
            return
        try:
            report = await self.analyse(name, ns)
        except AnalysisFailed as e:
            await self.s.outbox.ephemeral(channel, job.user, error_message(str(e)))
            return
        revision = (report.application or {}).get("revision")
        alert = self.alert(name, ns, revision=str(revision) if revision else None,
                           status="synced" if report.clean else "drift")  # fmt: skip
        if job.command == "diff":
            msg, full = diff_message(report, alert)
            _, ts = await self.s.outbox.post(channel, msg)
            if full:
                await self.s.outbox.upload(channel, ts, f"{name}.diff", full, f"Diff of {name}")
            return
        if not report.findings and not report.resources and report.nothing_differs is None:
            await self.s.outbox.post(channel, parent_message(report, alert, None))
            return
        controls = await self._controls(app_key(name, ns), name, ns, alert, report)
        ch, ts = await self._parent(channel, None, report, alert, controls)
        await self._thread(ch, ts, report, alert, controls)

    async def _mute(self, key: str, seconds: int, duration: str, user: str, channel: str,
                    thread_ts: str | None) -> None:  # fmt: skip
        # the mute is keyed by app, not channel: it follows an app that moves to another team's channel
        await self.s.store.set_mute(key, time.time() + seconds, user)
        text = wording.MUTED.format(user=user, app=key, duration=duration)
        await self.s.outbox.post(channel, Message(text=text, blocks=[]), thread_ts=thread_ts)

    # --- Show diff, Re-check, Mute 24h ----------------------------------------------------------------
    async def button(self, job: ButtonJob) -> None:
        state = await ReportState.load(self.s.store, job.state)
        channel, thread_ts = job.channel, job.thread_ts
        if state is None:
            await self.s.outbox.ephemeral(channel, job.user, error_message(wording.STATE_EXPIRED))
            return
        if await self._not_visible(channel, job.user, state.app, state.app_namespace):
            return
        alert = state.alert
        if job.type == "mute":
            await self._mute(state.app_key, 24 * 3600, "24h", job.user, channel, thread_ts)
            return
        if job.type == "show_diff":
            msg, full = diff_message(state.parsed_report(), alert)
            await self.s.outbox.post(channel, msg, thread_ts=thread_ts)
            if full:
                await self.s.outbox.upload(channel, thread_ts, f"{alert.app}.diff", full, f"Diff of {alert.app}")
            return
        report = await self.analyse(state.app, state.app_namespace)
        key = state.app_key
        async with self.locks.hold(key):
            ref = await self.s.store.get_thread(key)
            controls = (
                await self._controls(key, state.app, state.app_namespace, alert, report) if report.findings else None
            )
            if ref is not None and ref.ts == thread_ts and not ref.in_digest:
                if controls is not None:
                    await self._parent(ref.channel, ref.ts, report, alert, controls)
                    await self.s.store.save_thread(replace(ref, report_state=controls.state), key)
                    await self.fleet.index(key, report, ref.channel, ref.ts, drift_start(ref))
                else:
                    await self.turn_green(ref, alert, key)
            if controls is not None:
                await self._thread(channel, thread_ts, report, alert, controls)
            else:
                await self.s.outbox.post(channel, Message(text=wording.SYNCED_NOW.format(app=alert.app), blocks=[]),
                                         thread_ts=thread_ts)  # fmt: skip
