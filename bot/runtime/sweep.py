"""Scheduled jobs that read Argo CD: the sweep of apps that drift without a webhook, and the retry of dead letters.

:class:`Sweep` lists the applications (one call) and raises the alerts Argo CD's notifications do not send:

* an app OutOfSync after a successful sync (the last operation Succeeded, of the revision Git is at, and compared
  since it finished) that no thread shows as drifting gets the alert its webhook would have carried, queued with
  the webhook's own idempotency key, so a webhook that did come (or comes later) is the same alert, once (an app
  whose alert went to a digest has no thread, and is not alerted again). A drift with no sync in between after
  its thread turned green (someone edited the cluster; the trigger fires once per sync) reuses a key already
  seen: it is queued under a key of its own, once per state of the app's thread;
* an app Synced again whose thread still shows drift gets a "Synced" alert: its parent turns green;
* the fleet index (:mod:`bot.store.fleet`) keeps only apps Argo CD lists as OutOfSync: the others are dropped;
  the time since the last sweep is counted for each of them by cause (the weekly report's chart), and the App
  Home tab is published again for everyone who opened it.

Muted apps are left alone (the mute-expiry job looks at them when the mute ends). The queue's dedupe marks make a
sweep that runs twice, on two replicas or after a crash, queue nothing twice.

:class:`DeadLetters` queues again, once Argo CD answers (``GET /api/version``), the analyses that were dead-lettered
because Argo CD was down or overloaded, each at most :data:`MAX_REVIVALS` times.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from typing import Any

from bot.intake.jobs import DEDUPE_TTL_S, WebhookBody, WebhookJob
from bot.runtime.overview import DriftOverview
from bot.runtime.services import Services
from bot.runtime.weekly import WeeklyReport
from bot.sources.applist import LEAN
from bot.sources.argocd import ArgoCDError
from bot.store import drift_start

log = logging.getLogger("argo_why.sweep")
MAX_REVIVALS = 3
DEAD_SCAN = 1000


def _time(raw: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")) if raw else None
    except ValueError:
        return None


SETTLE_S = 5.0
"""How long after a sync its comparison may still be stale: the shipped trigger's wait (deploy/argocd-notifications)."""


def settled_after_sync(app: dict[str, Any], now: float | None = None) -> bool:
    """The last operation succeeded, Argo CD compared the app since it finished (not the stale pre-sync state:
    Argo CD writes ``operationState`` before its post-sync comparison moves ``reconciledAt`` past ``finishedAt``), and
    :data:`SETTLE_S` have passed since (the comparison Argo CD starts as a sync finishes can read the cluster from
    before the sync's own writes): what the notifications trigger in deploy/argocd-notifications/ waits for too. An
    alert queued on a stale comparison would take the idempotency key of the sync's real alert."""
    status = app.get("status") or {}
    op = status.get("operationState") or {}
    if op.get("phase") != "Succeeded" or not synced_git_revision(app):
        return False
    finished, reconciled = _time(op.get("finishedAt")), _time(status.get("reconciledAt"))
    if finished is not None and (time.time() if now is None else now) - finished.timestamp() < SETTLE_S:
        return False
    return finished is None or reconciled is None or reconciled >= finished


def synced_git_revision(app: dict[str, Any]) -> bool:
    """The last sync applied the revision Git is at (``revisions``, one per source, for a multi-source app), as the
    trigger asks: Git ahead of the cluster is not drift and is left to Argo CD (README, "The report", ``git_ahead``).
    True when Argo CD kept no sync result to compare."""
    status = app.get("status") or {}
    result = (status.get("operationState") or {}).get("syncResult")
    if not isinstance(result, dict):
        return True
    sync = status.get("sync") or {}
    return result.get("revision") == sync.get("revision") and result.get("revisions") == sync.get("revisions")


class Sweep:
    def __init__(self, services: Services) -> None:
        self.s = services

    async def run(self) -> int:
        """Queue the alerts Argo CD did not send; how many were queued."""
        async with self.s.argocd() as argocd:
            apps = await argocd.applications(keep=LEAN)
        queued = 0
        now = time.time()
        out_of_sync: set[str] = set()
        for app in apps:
            body = WebhookBody.of_application(app)
            if body is None:
                continue
            key = body.app_key
            if body.sync.status == "OutOfSync":
                out_of_sync.add(key)
            ref = await self.s.store.get_thread(key)
            drifting = ref is not None and ref.status == "drift"
            if body.sync.status == "Synced" and drifting and ref is not None:
                marks = [f"sweep-synced:{key}:{ref.ts}:{drift_start(ref):.6f}"]
            elif body.sync.status == "OutOfSync" and not drifting and settled_after_sync(app, now):
                if await self.s.store.mute_until(key, now) or await self.s.store.mute_until(body.app.name, now):
                    continue
                marks = [body.idempotency_key()]
                if ref is not None:  # the thread says Synced, the app drifts again: once per state of the thread
                    marks.append(f"sweep:{body.idempotency_key()}:{ref.ts}:{ref.updated:.6f}")
            else:
                continue
            job = WebhookJob(body=body, received=now, key=body.idempotency_key()).payload()
            for mark in marks:
                if await self.s.queue.enqueue_once(mark, DEDUPE_TTL_S, job) is not None:
                    queued += 1
                    break
        await self._prune_fleet(out_of_sync)
        await WeeklyReport(self.s).record_hours(time.time(), cap_s=max(2 * self.s.settings.runtime.sweep_s, 60.0))
        await DriftOverview(self.s).refresh_homes()
        if queued:
            log.info("sweep: alerts Argo CD did not send: %d", queued)
        return queued

    async def _prune_fleet(self, out_of_sync: set[str]) -> None:
        """Drop from the fleet index every app that is not OutOfSync any more, or that Argo CD no longer lists."""
        gone = await self.s.store.fleet.app_keys() - out_of_sync
        for key in sorted(gone):
            await self.s.store.fleet.drop(key)
        if gone:
            log.info("sweep: %d apps Synced or gone left the fleet index", len(gone))


class DeadLetters:
    def __init__(self, services: Services) -> None:
        self.s = services

    async def retry(self) -> int:
        """Queue again the dead letters worth retrying, if Argo CD answers; how many."""
        dead = [d for d in await self.s.queue.dead_letters(DEAD_SCAN) if d["retry"] and isinstance(d["job"], dict)
                and int(d["job"].get("revived") or 0) < MAX_REVIVALS]  # fmt: skip
        if not dead:
            return 0
        try:
            async with self.s.argocd() as argocd:
                await argocd.version()
        except ArgoCDError as e:
            log.info("dead letters waiting for Argo CD: %d (%s)", len(dead), e)
            return 0
        for d in dead:
            job: dict[str, Any] = d["job"]
            await self.s.queue.revive(d["dead_id"], {**job, "revived": int(job.get("revived") or 0) + 1})
        log.info("Argo CD answers again: %d dead-lettered analyses queued again", len(dead))
        return len(dead)
