"""The worker: takes jobs from the durable queue, analyses, posts to Slack, then acknowledges.

An entry is acknowledged only after Slack accepted every message of the job, so
a crash or a Slack outage leaves it pending; another worker (or replica) claims
it after ``claim_idle_ms`` (XAUTOCLAIM) and does the job again. An analysis that
keeps failing (Argo CD down, an unknown error) is retried with backoff
``analysis_attempts`` times; then a message in the app's thread says that the
analysis failed and why, and the entry goes to the dead-letter stream.

Threads: one parent message per drift episode, kept in the store by app (not in
memory), so a restart or another replica keeps threading. A new alert for the
same episode updates the parent (and adds replies only when the findings
changed); an app that became Synced turns its parent green; the next drift
re-uses the same thread. More than ``digest_threshold`` apps drifting within
``digest_window_s`` are collapsed into one digest message (``flush_digest``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from dataclasses import dataclass, replace

from bot import wording
from bot.config import required
from bot.errors import ArgoWhyError
from bot.fixflow import FixFlow
from bot.jobs import ButtonJob, CommandJob, FixJob, Job, JobRejected, NoteJob, WebhookJob, app_key, parse_job
from bot.model import Report
from bot.queue import Entry
from bot.services import Services
from bot.slack.poster import SlackUnavailable
from bot.slack.render import (
    Alert,
    Buttons,
    Message,
    analysis_failed_message,
    diff_message,
    digest_message,
    error_message,
    parent_message,
    thread_messages,
)
from bot.slack.render.fixes import FixButtons
from bot.sources.argocd import ArgoCDError
from bot.state import DigestItem, DigestState, ReportState, ThreadRef
from bot.store import StoreUnavailable
from bot.why import investigate

log = logging.getLogger("argo_why.worker")
STATE_TTL_S = 14 * 24 * 3600
DIGEST_KEY = "__digest__"
"""Thread-map key of the current digest message (not a valid Application name, so it cannot clash)."""
MAX_DELIVERIES = 100  # a job Slack keeps refusing for this long is dead-lettered rather than retried forever


def fingerprint(report: Report) -> str:
    """Identity of an episode's findings: the same fields with the same causes."""
    items = sorted(f"{f.resource.group}/{f.resource.kind}/{f.resource.namespace}/{f.resource.name}"
                   f"{f.pointer}={f.cause}" for f in report.findings)  # fmt: skip
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


class Worker:
    def __init__(self, services: Services, consumer: str, *, claim_idle_ms: int = 60_000,
                 backoff_s: float = 0.5) -> None:  # fmt: skip
        self.s = services
        self.consumer = consumer
        self.claim_idle_ms = claim_idle_ms
        self.backoff_s = backoff_s
        self.fixes = FixFlow(services, services.directory, services.git, consumer)

    # --- the loop -------------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        await self.s.queue.ensure()
        while not stop.is_set():
            try:
                entries = await self.s.queue.claim_stale(self.consumer, self.claim_idle_ms, count=1)
                if not entries:
                    entries = await self.s.queue.read(self.consumer, count=1, block_ms=500)
            except StoreUnavailable as e:
                log.warning("queue unavailable: %s", e)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=2.0)
                continue
            for entry in entries:
                await self.handle(entry)

    async def handle(self, entry: Entry) -> None:
        started = time.monotonic()
        job_type = str(entry.job.get("type"))
        try:
            job = parse_job(entry.job)
        except JobRejected as e:
            # another version's job, or not a job at all: parked with the reason, never a crashed worker
            log.error("job %s dead-lettered: %s", entry.id, e)
            await self.s.queue.dead_letter(entry, str(e))
            self.s.metrics.dead_letters.inc()
            return
        try:
            await self.process(job)
        except SlackUnavailable as e:
            # leave it pending: it is claimed again once idle, and delivered when Slack is back
            self.s.metrics.analyses.labels(outcome="slack_unavailable").inc()
            log.warning("job %s (%s) not delivered, left pending: %s", entry.id, job_type, e)
            if entry.deliveries >= MAX_DELIVERIES:
                await self.s.queue.dead_letter(entry, f"Slack refused it {entry.deliveries} times: {e}")
                self.s.metrics.dead_letters.inc()
            return
        except AnalysisFailed as e:
            await self._give_up(entry, job, str(e))
            return
        except StoreUnavailable as e:
            log.warning("job %s (%s) interrupted, store unavailable: %s", entry.id, job_type, e)
            return
        self.s.metrics.analysis_seconds.observe(time.monotonic() - started)
        await self.s.queue.ack(entry.id)

    async def _give_up(self, entry: Entry, job: Job, reason: str) -> None:
        self.s.metrics.analyses.labels(outcome="failed").inc()
        try:
            channel, thread_ts = await self._failure_target(job)
            if channel:
                app = job.app if isinstance(job, WebhookJob | CommandJob) else "app"
                await self.s.poster.post(channel, analysis_failed_message(app, reason), thread_ts=thread_ts)
        except SlackUnavailable as e:
            log.warning("job %s: analysis failed and Slack is unavailable, left pending: %s", entry.id, e)
            return
        await self.s.queue.dead_letter(entry, reason)
        self.s.metrics.dead_letters.inc()

    async def _failure_target(self, job: Job) -> tuple[str | None, str | None]:
        if isinstance(job, WebhookJob):
            ref = await self.s.store.get_thread(job.body.app_key)
            return (ref.channel, ref.ts) if ref else (self.s.settings.slack.channel, None)
        if isinstance(job, CommandJob):
            return job.channel, None
        return job.channel, job.thread_ts

    # --- jobs -----------------------------------------------------------------------------------
    async def process(self, job: Job) -> None:
        match job:
            case WebhookJob():
                await self._webhook(job)
            case CommandJob():
                await self._command(job)
            case ButtonJob():
                await self._button(job)
            case FixJob():
                await self.fixes.click(job)
            case NoteJob():
                await self.s.poster.post(job.channel, Message(text=job.text, blocks=[]), thread_ts=job.thread_ts)

    async def analyse(self, name: str, namespace: str | None) -> Report:
        """The analysis, retried with backoff; :class:`AnalysisFailed` after the last attempt."""
        attempts = self.s.settings.runtime.analysis_attempts
        delay = self.backoff_s
        last = ""
        for attempt in range(attempts):
            try:
                async with self.s.argocd() as argocd:
                    report = await investigate(name, app_namespace=namespace or self.s.settings.argocd.app_namespace,
                                               argocd=argocd, cluster=self.s.cluster)  # fmt: skip
                self.s.metrics.analyses.labels(outcome="drift" if report.findings else "clean").inc()
                return report
            except ArgoCDError as e:
                last = str(e)
                if e.status in (401, 403, 404):
                    break  # no retry fixes a token, a permission or a missing app
            except ArgoWhyError as e:
                last = str(e)
            except Exception as e:  # a bug must not kill the worker; it is reported, never a traceback in Slack
                log.exception("analysis of %s failed", name)
                last = f"internal error ({type(e).__name__})"
            if attempt + 1 < attempts:
                await asyncio.sleep(delay)
                delay *= 2
        raise AnalysisFailed(last)

    async def _webhook(self, job: WebhookJob) -> None:
        body = job.body
        name, ns = body.app.name, body.app.namespace
        key = body.app_key
        alert = Alert(app=name, app_namespace=ns, project=body.app.project, revision=body.sync.revision,
                      argocd_url=body.argocdUrl)  # fmt: skip
        ref = await self.s.store.get_thread(key)
        if body.sync.status == "Synced":
            await self.turn_green(ref, alert, key)
            return
        # `/argo mute shop 2h` names the app without its namespace: it mutes every app of that name
        muted = await self.s.store.mute_until(key, time.time()) or await self.s.store.mute_until(name, time.time())
        if muted:
            self.s.metrics.analyses.labels(outcome="muted").inc()
            return
        report = await self.analyse(name, ns)
        if not report.findings:
            await self.turn_green(ref, alert, key)
            return
        runtime = self.s.settings.runtime
        if ref is None:
            busy = await self.s.store.note_alert(key, time.time(), runtime.digest_window_s)
            if busy > runtime.digest_threshold:
                item = DigestItem(alert=alert, report=report.to_dict())
                await self.s.store.add_to_digest(key, item.model_dump(mode="json"))
                return
        controls = await self._controls(key, name, ns, alert, report)
        fp = fingerprint(report)
        if ref is None:
            channel = required(self.s.settings.slack.channel, "SLACK_CHANNEL")
            alert = replace(alert, unsettled_syncs=1)
            ch, ts = await self._parent(channel, None, report, alert, controls)
            ref = ThreadRef(app=key, channel=ch, ts=ts, fingerprint="", status="drift", unsettled_syncs=1,
                            updated=time.time(), last_alert=job.key, report_state=controls.state)  # fmt: skip
            await self.s.store.save_thread(ref, key)  # before the replies: a retry re-uses this thread
            replies = True
        else:
            same_episode = ref.status == "drift"
            redelivered = bool(job.key) and job.key == ref.last_alert
            unsettled = (ref.unsettled_syncs + (0 if redelivered else 1)) if same_episode else 1
            alert = replace(alert, unsettled_syncs=unsettled)
            await self._parent(ref.channel, ref.ts, report, alert, controls)
            replies = fp != ref.fingerprint or not same_episode
            ref = replace(ref, status="drift", unsettled_syncs=unsettled, updated=time.time(), last_alert=job.key,
                          report_state=controls.state)  # fmt: skip
            await self.s.store.save_thread(ref, key)
        if replies:
            await self._thread(ref.channel, ref.ts, report, alert, controls)
            await self.s.store.save_thread(replace(ref, fingerprint=fp), key)

    async def turn_green(self, ref: ThreadRef | None, alert: Alert, key: str) -> None:
        """The parent says the app is Synced again (no buttons), once; the next drift re-uses the thread."""
        if ref is None or ref.status == "synced":
            return
        await self.s.poster.update(
            ref.channel, ref.ts, parent_message(Report(app=alert.app), replace(alert, status="synced"), None)
        )
        await self.s.store.save_thread(replace(ref, status="synced", fingerprint="", updated=time.time()), key)

    async def _controls(self, key: str, name: str, ns: str | None, alert: Alert, report: Report, *,
                        fixes: bool = True) -> Controls:  # fmt: skip
        """The buttons of an alert: Show diff, Mute and Re-check (one state), and the Open PR buttons."""
        state = ReportState(app_key=key, app=name, app_namespace=ns, alert=alert, report=report.to_dict())
        state_id = await state.save(self.s.store, STATE_TTL_S)
        parent, thread = await self.fixes.buttons(key, name, ns, alert, report) if fixes else (None, None)
        return Controls(Buttons(show_diff=state_id, mute=state_id, recheck=state_id), parent, thread, state_id)

    async def _parent(self, channel: str, ts: str | None, report: Report, alert: Alert,
                      controls: Controls) -> tuple[str, str]:  # fmt: skip
        """Post the parent (``ts`` None) or update it; a parent with Open PR buttons is remembered."""
        message = parent_message(report, alert, controls.buttons, controls.parent_fixes)
        if ts is None:
            channel, ts = await self.s.poster.post(channel, message)
        else:
            await self.s.poster.update(channel, ts, message)
        if controls.parent_fixes is not None:
            await self.fixes.remember(channel, ts, message, controls.parent_fixes)
        return channel, ts

    async def _thread(self, channel: str, thread_ts: str | None, report: Report, alert: Alert,
                      controls: Controls | None) -> None:  # fmt: skip
        fixes = controls.thread_fixes if controls is not None else None
        for m in thread_messages(report, alert, fixes):
            _, ts = await self.s.poster.post(channel, m, thread_ts=thread_ts)
            if fixes is not None:
                await self.fixes.remember(channel, ts, m, fixes)

    async def _command(self, job: CommandJob) -> None:
        name, ns, channel = job.app, job.app_namespace, job.channel
        try:
            report = await self.analyse(name, ns)
        except AnalysisFailed as e:
            await self.s.poster.ephemeral(channel, job.user, error_message(str(e)))
            return
        alert = Alert(app=name, app_namespace=ns, revision=(report.application or {}).get("revision"),
                      argocd_url=self.s.settings.argocd.url,
                      status="drift" if report.findings else "synced")  # fmt: skip
        if job.command == "diff":
            msg, full = diff_message(report, alert)
            _, ts = await self.s.poster.post(channel, msg)
            if full:
                await self.s.poster.upload(channel, ts, f"{name}.diff", full, f"Diff of {name}")
            return
        if not report.findings:
            await self.s.poster.post(channel, parent_message(report, alert, None))
            return
        controls = await self._controls(app_key(name, ns), name, ns, alert, report)
        ch, ts = await self._parent(channel, None, report, alert, controls)
        await self._thread(ch, ts, report, alert, controls)

    async def _button(self, job: ButtonJob) -> None:
        state = await ReportState.load(self.s.store, job.state)
        channel, thread_ts = job.channel, job.thread_ts
        if state is None:
            await self.s.poster.ephemeral(channel, job.user, error_message(wording.STATE_EXPIRED))
            return
        alert = state.alert
        if job.type == "show_diff":
            msg, full = diff_message(state.parsed_report(), alert)
            await self.s.poster.post(channel, msg, thread_ts=thread_ts)
            if full:
                await self.s.poster.upload(channel, thread_ts, f"{alert.app}.diff", full, f"Diff of {alert.app}")
            return
        report = await self.analyse(state.app, state.app_namespace)
        key = state.app_key
        ref = await self.s.store.get_thread(key)
        controls = await self._controls(key, state.app, state.app_namespace, alert, report) if report.findings else None
        if ref is not None and ref.ts == thread_ts:
            if controls is not None:
                await self._parent(ref.channel, ref.ts, report, alert, controls)
                await self.s.store.save_thread(replace(ref, report_state=controls.state), key)
            else:
                await self.turn_green(ref, alert, key)
        if controls is not None:
            await self._thread(channel, thread_ts, report, alert, controls)
        else:
            await self.s.poster.post(channel, Message(text=wording.SYNCED_NOW.format(app=alert.app), blocks=[]),
                                     thread_ts=thread_ts)  # fmt: skip

    # --- digest ---------------------------------------------------------------------------------
    async def flush_digest(self) -> int:
        """Post what the burst collected; within one window, the same digest message is updated, not re-posted.

        Returns how many apps the flush added. The digest message and the apps it lists are kept in the store
        (the thread map under ``DIGEST_KEY``, the apps as state), so any replica's scheduler can continue it.
        """
        raw_items = await self.s.store.drain_digest()
        if not raw_items:
            return 0
        items = [DigestItem.model_validate(i) for i in raw_items]
        window = self.s.settings.runtime.digest_window_s
        now = time.time()
        ref = await self.s.store.get_thread(DIGEST_KEY)
        current = ref is not None and now - ref.updated < window
        listed: dict[str, DigestItem] = {}
        if current and ref is not None:
            previous = await DigestState.load(self.s.store, ref.fingerprint)
            listed = dict(previous.items) if previous else {}
        for i in items:
            listed[app_key(i.alert.app, i.alert.app_namespace)] = i
        entries: list[tuple[Alert, Report | None]] = []
        buttons: dict[str, Buttons] = {}
        for key, i in sorted(listed.items()):
            report = i.parsed_report()
            entries.append((i.alert, report))
            controls = await self._controls(key, i.alert.app, i.alert.app_namespace, i.alert, report, fixes=False)
            buttons[i.alert.app] = controls.buttons
        message = digest_message(entries, buttons)
        try:
            if current and ref is not None:
                await self.s.poster.update(ref.channel, ref.ts, message)
                channel, ts = ref.channel, ref.ts
            else:
                channel, ts = await self.s.poster.post(required(self.s.settings.slack.channel, "SLACK_CHANNEL"),
                                                       message)  # fmt: skip
        except SlackUnavailable:
            for i in items:  # put them back: a digest is never dropped
                await self.s.store.add_to_digest(app_key(i.alert.app, i.alert.app_namespace),
                                                 i.model_dump(mode="json"))  # fmt: skip
            raise
        state = await DigestState(items=listed).save(self.s.store, 2 * window)
        started = ref.updated if current and ref is not None else now
        await self.s.store.save_thread(
            ThreadRef(app=DIGEST_KEY, channel=channel, ts=ts, fingerprint=state, status="drift", updated=started),
            DIGEST_KEY,
        )
        return len(items)
