"""The worker: takes jobs from the durable queue, does them (:mod:`bot.runtime.alerts`,
:mod:`bot.runtime.fixflow`), then acknowledges.

An entry is acknowledged only after Slack accepted every message of the job, so a crash or a Slack outage leaves it
pending; another worker (or replica) claims it after ``claim_idle_ms`` (XAUTOCLAIM) and does the job again, and
the outbox (:mod:`bot.slack.outbox`) makes sure that nothing the first attempt posted is posted twice. While a job
runs, its entry is touched every third of ``claim_idle_ms``, so a slow job is not taken over while it is alive. A
worker that is cancelled mid-job (shutdown past its grace period) hands its entry back at once.

An analysis that keeps failing (Argo CD down, an unknown error) is retried with backoff ``analysis_attempts``
times; then the failure is said (in the app's thread; for an app without one, in the digest when Argo CD is down or
many apps fail at once, else in the channel) and the entry goes to the dead-letter stream, marked for a retry when
Argo CD was unavailable (the scheduler's dead-letter job revives it once Argo CD answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from bot.intake.jobs import ButtonJob, CommandJob, FixJob, HomeJob, Job, JobRejected, NoteJob, WebhookJob, parse_job
from bot.queue import Entry
from bot.runtime.alerts import Alerts, AnalysisFailed
from bot.runtime.fixflow import FixFlow
from bot.runtime.overview import DriftOverview
from bot.runtime.serial import AppBusy, AppLocks
from bot.runtime.services import Services
from bot.slack.poster import SlackUnavailable
from bot.slack.render import Message, analysis_failed_message
from bot.store import StoreUnavailable
from bot.store.state import SystemFixState

log = logging.getLogger("argo_why.worker")
MAX_DELIVERIES = 100  # a job Slack keeps refusing for this long is dead-lettered rather than retried forever


class Worker:
    def __init__(self, services: Services, consumer: str, *, claim_idle_ms: int = 60_000, backoff_s: float = 0.5,
                 lock_lease_s: int = 30) -> None:  # fmt: skip
        self.s = services
        self.consumer = consumer
        self.claim_idle_ms = claim_idle_ms
        self.locks = AppLocks(services.store, consumer, lease_s=lock_lease_s)
        self.fixes = FixFlow(services, services.directory, services.git, consumer)
        self.alerts = Alerts(services, self.fixes, self.locks, backoff_s=backoff_s)
        self.overview = DriftOverview(services)

    # --- the loop -------------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Take and do jobs until ``stop`` is set; the job in hand is finished first."""
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
        beat = asyncio.create_task(self._keep(entry.id), name=f"keep {entry.id}")
        try:
            with self.s.outbox.scope(f"job:{entry.id}"):
                await self._handle(entry)
        except asyncio.CancelledError:
            # stopping past the grace period: whoever claims next takes it now, not after claim_idle_ms
            with contextlib.suppress(StoreUnavailable):
                await self.s.queue.release(self.consumer, entry.id)
            raise
        finally:
            beat.cancel()

    async def _keep(self, entry_id: str) -> None:
        """Touch the entry while the job runs, so that no other consumer takes over a job that is alive."""
        every = max(self.claim_idle_ms / 3000, 0.05)
        while True:
            await asyncio.sleep(every)
            with contextlib.suppress(StoreUnavailable):
                if not await self.s.queue.touch(self.consumer, entry_id):
                    log.warning("entry %s was claimed by another consumer while this one worked on it", entry_id)
                    return

    async def _handle(self, entry: Entry) -> None:
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
            await self._give_up(entry, job, e)
            return
        except (StoreUnavailable, AppBusy) as e:
            log.warning("job %s (%s) interrupted, left pending: %s", entry.id, job_type, e)
            return
        except Exception as e:  # a bug must not stop this worker: the job is parked with its reason
            log.exception("job %s (%s) failed", entry.id, job_type)
            await self.s.queue.dead_letter(entry, f"internal error ({type(e).__name__}: {str(e)[:200]})")
            self.s.metrics.dead_letters.inc()
            return
        self.s.metrics.analysis_seconds.observe(time.monotonic() - started)
        await self.s.queue.ack(entry.id)

    async def _give_up(self, entry: Entry, job: Job, failure: AnalysisFailed) -> None:
        self.s.metrics.analyses.labels(outcome="failed").inc()
        try:
            if not (isinstance(job, WebhookJob) and await self.alerts.failure_to_digest(job, failure)):
                channel, thread_ts = await self._failure_target(job, failure)
                if channel:
                    app = job.app if isinstance(job, WebhookJob | CommandJob) else "app"
                    message = analysis_failed_message(app, str(failure))
                    await self.s.outbox.post(channel, message, thread_ts=thread_ts)
        except SlackUnavailable as e:
            log.warning("job %s: analysis failed and Slack is unavailable, left pending: %s", entry.id, e)
            return
        await self.s.queue.dead_letter(entry, str(failure), retry=failure.retryable and isinstance(job, WebhookJob))
        self.s.metrics.dead_letters.inc()

    async def _failure_target(self, job: Job, failure: AnalysisFailed) -> tuple[str | None, str | None]:
        if isinstance(job, WebhookJob):
            ref = await self.s.store.get_thread(job.body.app_key)
            if ref is not None:
                return ref.channel, ref.ts
            routed = await self.alerts.router.route_read(job.app, job.body.app.namespace, job.body.app.project,
                                                         failure.reads)  # fmt: skip
            return routed.channel, None
        if isinstance(job, CommandJob):
            return job.channel, None
        if isinstance(job, HomeJob):
            return None, None
        return job.channel, job.thread_ts

    # --- jobs -----------------------------------------------------------------------------------
    async def process(self, job: Job) -> None:
        match job:
            case WebhookJob():
                await self.alerts.webhook(job)
            case CommandJob() if job.command == "drift":
                await self.overview.command(job)
            case CommandJob():
                await self.alerts.command(job)
            case HomeJob():
                await self.overview.home(job)
            case ButtonJob():
                await self.alerts.button(job)
            case FixJob() if job.state.startswith(f"{SystemFixState.KIND}:"):
                await self.alerts.fleet.system.click(job)
            case FixJob():
                await self.fixes.click(job)
            case NoteJob():
                await self.s.outbox.post(job.channel, Message(text=job.text, blocks=[]), thread_ts=job.thread_ts)
