"""Scheduled jobs with APScheduler, run on exactly one replica at a time (README, "The Slack bot: `argo-why serve`").

Every replica runs an ``AsyncIOScheduler``; one job, the lease, takes or refreshes the store lock
``lock:scheduler-leader`` every ``tick_s`` seconds (the lock lives ``lease_s``, a few ticks, so a leader that dies
is replaced within ``lease_s``). The other jobs run only while this replica holds the lease, each at its own
interval (or daily at ``HH:MM`` UTC), never two runs of one job at once (``max_instances=1``, missed runs
coalesced). A job that fails is
logged and runs again at its next interval; it never stops the scheduler.

Stopping is two steps. :meth:`Scheduler.halt`: no job starts any more (the lease is still renewed), and the runs
in progress get until a deadline to finish; one still running then is cancelled and awaited, so that what it held
(the digest lock...) is released before the replica goes. :meth:`Scheduler.stop`: the lease is released at once,
so another replica takes over without waiting for it to expire (a renewal in flight gets two ticks, at least a
second, to finish; one still waiting on the store then is cut short quietly and the lock released all the same).
In between, the leader may do a last run of its own (the final digest flush of :mod:`bot.runtime`), with no
scheduled run beside it.

Store key: ``<p>lock:scheduler-leader`` (see :mod:`bot.store`), lifetime ``lease_s``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from bot.store import Store, StoreUnavailable

log = logging.getLogger("argo_why.scheduler")
LEADER_LOCK = "scheduler-leader"


@dataclass(frozen=True)
class Scheduled:
    name: str
    every_s: float
    run: Callable[[], Awaitable[object]]
    at: str | None = None
    """``HH:MM`` (UTC): daily at that time instead of every ``every_s``."""
    day: str | None = None
    """With ``at``: only on that day of the week (``mon`` … ``sun``): weekly."""


class Scheduler:
    def __init__(self, store: Store, replica: str, jobs: list[Scheduled], *, tick_s: float = 5.0,
                 lease_s: int = 15) -> None:  # fmt: skip
        self.store = store
        self.replica = replica
        self.jobs = jobs
        self.tick_s = tick_s
        self.lease_s = max(lease_s, int(tick_s * 3) + 1)
        self.leader = False
        self._sched: AsyncIOScheduler | None = None
        self._halted = False
        self._running: set[asyncio.Task[object]] = set()
        self._leasing: set[asyncio.Task[object]] = set()
        self._stopping = False

    async def start(self) -> None:
        """Start in the running event loop; the lease is tried at once, the jobs run from their first interval."""
        sched = AsyncIOScheduler()
        now = datetime.now()
        sched.add_job(self._lease, "interval", seconds=self.tick_s, id="lease", next_run_time=now,
                      max_instances=1, coalesce=True)  # fmt: skip
        for job in self.jobs:
            if job.at is not None:
                hour, _, minute = job.at.partition(":")
                trigger = CronTrigger(day_of_week=job.day or "*", hour=int(hour), minute=int(minute), timezone=UTC)
            else:
                trigger = IntervalTrigger(seconds=job.every_s)
            sched.add_job(self._guarded(job), trigger, id=job.name, max_instances=1, coalesce=True,
                          misfire_grace_time=None)  # fmt: skip
        sched.start()
        self._sched = sched
        self._halted = self._stopping = False

    async def halt(self, deadline: float) -> None:
        """No job starts any more; wait until ``deadline`` (``time.monotonic()``) for the runs in progress, then
        cancel those still running and wait for them to clean up. The lease job goes on."""
        first, self._halted = not self._halted, True
        if self._sched is not None and first:
            for job in self.jobs:
                self._sched.remove_job(job.name)  # a run in progress goes on; no new one starts
        running = set(self._running)
        if running:
            _, late = await asyncio.wait(running, timeout=max(0.0, deadline - time.monotonic()))
            for task in late:
                task.cancel()
            if late:
                log.warning("scheduled jobs still running at the end of the grace period, cut short: %d",
                            len(late))  # fmt: skip
                await asyncio.gather(*late, return_exceptions=True)

    async def stop(self) -> None:
        cut_short = False
        if self._sched is not None:
            # a lease refresh in flight is let finish for a while; one still waiting on the store then (a slow
            # connect, a paused server) is cancelled by APScheduler's shutdown, quietly (see _lease)
            self._stopping = True
            self._sched.remove_job("lease")
            if self._leasing:
                _, late = await asyncio.wait(set(self._leasing), timeout=max(self.tick_s * 2, 1.0))
                cut_short = bool(late)
            self._sched.shutdown(wait=False)
            self._sched = None
        if self.leader or cut_short:
            # a lease cut short may have been taken on the server all the same: the release only deletes the
            # lock while this replica owns it, so it is safe either way
            self.leader = False
            try:
                await self.store.release_lock(LEADER_LOCK, self.replica)
            except StoreUnavailable as e:
                log.warning("could not release the scheduler lease (it expires by itself): %s", e)

    async def _lease(self) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._leasing.add(task)
            task.add_done_callback(self._leasing.discard)
        try:
            if self.leader:
                self.leader = await self.store.refresh_lock(LEADER_LOCK, self.replica, self.lease_s)
            else:
                self.leader = await self.store.acquire_lock(LEADER_LOCK, self.replica, self.lease_s)
        except StoreUnavailable as e:
            # without the store nobody can prove to hold the lease: stop running jobs until it is back
            self.leader = False
            log.warning("scheduler lease not renewed, store unavailable: %s", e)
        except asyncio.CancelledError:
            if not self._stopping:
                raise
            # cut short by stop(), which releases the lock itself; APScheduler would log the cancellation as an error
            self.leader = False

    def _guarded(self, job: Scheduled) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            task = asyncio.current_task()
            if not self.leader or self._halted or task is None:
                return
            self._running.add(task)
            try:
                await job.run()
            except Exception as e:  # the next interval tries again
                log.warning("scheduled job %s failed: %s", job.name, e)
            except asyncio.CancelledError:
                if not self._halted:
                    raise
                # cut short by halt(): said there once; APScheduler would log the cancellation as a traceback
            finally:
                self._running.discard(task)

        run.__name__ = f"scheduled_{job.name.replace('-', '_')}"
        return run
