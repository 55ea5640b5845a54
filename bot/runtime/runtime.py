"""The workers and the scheduler of one replica, started and stopped with the ASGI lifespan (:mod:`bot.app`).

Scheduled jobs run on one replica at a time (:mod:`bot.runtime.scheduler`), through a worker of their own, so that a
replica with no queue workers still takes its turn: the digest flush every ``tick_s``; the end of mutes and the
reminders every six ticks; the pull-request follow-up every ``PR_POLL_SECONDS``; the sweep of Argo CD every
``SWEEP_SECONDS``; the retry of dead letters every ``DEAD_LETTER_RETRY_SECONDS``; the daily summary at
``DAILY_SUMMARY_AT``.

Stopping (SIGTERM: uvicorn stops taking requests, then the lifespan ends), all within ``SHUTDOWN_GRACE_SECONDS``:
the workers take no new job and the scheduler starts no job; the jobs in hand (queue jobs and a scheduled run, such
as a digest flush) get until the end of the grace period to finish, then are cancelled, their entries handed back
at once (another replica claims them without waiting ``claim_idle_ms``) and their locks released; only then does
the leader post what waits for the digest, alone (at least one second; cut short, the digest stays in the store and
its lock is released, so the next leader posts it); last, the scheduler gives up its lease.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid

from bot.runtime.digest import Digest
from bot.runtime.followup import PRFollowUp
from bot.runtime.reminders import Reminders
from bot.runtime.scheduler import Scheduled, Scheduler
from bot.runtime.services import Services
from bot.runtime.sweep import DeadLetters, Sweep
from bot.runtime.worker import Worker

log = logging.getLogger("argo_why.runtime")
TICK_S = 5.0
HOUSEKEEPING_TICKS = 6


class Runtime:
    def __init__(self, services: Services, *, workers: int | None = None, claim_idle_ms: int = 60_000,
                 tick_s: float = TICK_S, lock_lease_s: int = 30) -> None:  # fmt: skip
        self.s = services
        self.replica = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        count = workers if workers is not None else services.settings.runtime.workers
        self.workers = [Worker(services, f"{self.replica}-{i}", claim_idle_ms=claim_idle_ms, lock_lease_s=lock_lease_s)
                        for i in range(count)]  # fmt: skip
        scheduled = Worker(services, f"{self.replica}-scheduled", lock_lease_s=lock_lease_s)
        self.digest = Digest(services, scheduled.alerts, self.replica)
        self.scheduler = Scheduler(services.store, self.replica, self._jobs(scheduled, tick_s), tick_s=tick_s)
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []

    def _jobs(self, scheduled: Worker, tick_s: float) -> list[Scheduled]:
        rt, s = self.s.settings.runtime, self.s
        reminders = Reminders(s)
        followup = PRFollowUp(s, scheduled.fixes, scheduled.alerts.settle)
        housekeeping = tick_s * HOUSEKEEPING_TICKS
        jobs = [
            Scheduled("digest", tick_s, self.digest.flush),
            Scheduled("pr-follow-up", s.settings.git.pr_poll_s, followup.run),
            Scheduled("mute-expiry", housekeeping, reminders.mutes_ended),
        ]
        if rt.remind_after_h > 0:
            jobs.append(Scheduled("reminders", housekeeping, reminders.remind))
        if rt.sweep_s > 0:
            jobs.append(Scheduled("sweep", rt.sweep_s, Sweep(s).run))
        if rt.dead_letter_retry_s > 0:
            jobs.append(Scheduled("dead-letters", rt.dead_letter_retry_s, DeadLetters(s).retry))
        if rt.daily_summary_at:
            jobs.append(Scheduled("daily-summary", 0, reminders.summary, at=rt.daily_summary_at))
        return jobs

    async def start(self) -> None:
        self.stop.clear()
        self.tasks = [asyncio.create_task(w.run(self.stop), name=w.consumer) for w in self.workers]
        await self.scheduler.start()

    async def close(self) -> None:
        """Stop as the module says: no new job; finish or hand back the jobs in hand (scheduled ones too), flush the
        digest, give up the lease."""
        deadline = time.monotonic() + self.s.settings.runtime.shutdown_grace_s
        self.stop.set()
        await asyncio.gather(self.scheduler.halt(deadline), self._workers_done(deadline))
        if self.scheduler.leader:
            try:
                await asyncio.wait_for(self.digest.flush(), timeout=max(1.0, deadline - time.monotonic()))
            except Exception as e:  # the buffer stays in the store: the next leader posts it
                log.warning("digest not flushed on the way out, left for the next leader: %s",
                            str(e) or type(e).__name__)  # fmt: skip
        await self.scheduler.stop()

    async def _workers_done(self, deadline: float) -> None:
        if self.tasks:
            _, late = await asyncio.wait(self.tasks, timeout=max(0.0, deadline - time.monotonic()))
            for t in late:
                t.cancel()  # the worker hands its entry back as it stops
            if late:
                log.warning("jobs still running after the grace period, handed back to the other replicas: %d",
                            len(late))  # fmt: skip
            await asyncio.gather(*self.tasks, return_exceptions=True)
