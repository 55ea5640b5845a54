"""The drift overview: ``/argo drift [page]`` (to the person who asked, in their channel) and the App Home tab.

The overview is built from the fleet index (:mod:`bot.store.fleet`), never from reports: the apps whose alert
channel is the asking channel (the channel an app's alerts go to, recorded with its entry when it was analysed:
the per-team routing of :mod:`bot.runtime.routes` decides it), grouped by cause and writer, with their drift age,
mutes and open PRs. So an app is never shown in a channel its alerts are not routed to. The App Home tab shows the
apps of the main alert channel (``SLACK_CHANNEL``) to whoever opens it; the sweep publishes it again for everyone
who opened it, so it stays current.
"""

from __future__ import annotations

import logging
import time

from bot.analysis.fleet import FleetGroup, group_findings
from bot.errors import ArgoWhyError
from bot.intake.jobs import CommandJob, HomeJob
from bot.runtime.services import Services
from bot.slack.render.overview import AppFacts, home_view, overview_message

log = logging.getLogger("argo_why.overview")


class DriftOverview:
    def __init__(self, services: Services) -> None:
        self.s = services

    async def data(self, channel: str) -> tuple[list[FleetGroup], dict[str, AppFacts]]:
        """The groups and per-app facts of the apps whose alerts go to ``channel``."""
        now = time.time()
        entries = {k: e for k, e in (await self.s.store.fleet.entries(now)).items() if e.channel == channel}
        groups = group_findings({k: e.findings for k, e in entries.items()}, self.s.settings.runtime.fleet_min_apps)
        with_pr: set[str] = set()
        for record in (await self.s.store.list_prs()).values():
            with_pr.add(str(record.get("app_key") or ""))
            with_pr.update(str(k) for k in (record.get("threads") or {}))  # a system-level rule covers them all
        facts = {}
        for key, e in entries.items():
            name = key.rsplit("/", 1)[-1]
            muted = bool(await self.s.store.mute_until(key, now) or await self.s.store.mute_until(name, now))
            facts[key] = AppFacts(drifting_s=max(0.0, now - e.since), muted=muted, pr_open=key in with_pr)
        return groups, facts

    async def command(self, job: CommandJob) -> None:
        groups, facts = await self.data(job.channel)
        await self.s.outbox.ephemeral(job.channel, job.user, overview_message(groups, facts, job.page))

    async def home(self, job: HomeJob) -> None:
        await self.s.store.fleet.add_home_user(job.user)
        await self._publish(job.user)

    async def _publish(self, user: str) -> None:
        groups, facts = await self.data(self.s.channel)
        await self.s.poster.call("views.publish", user_id=user, view=home_view(groups, facts))

    async def refresh_homes(self) -> int:
        """Publish the App Home again for everyone who opened it (the sweep's call); how many."""
        done = 0
        for user in sorted(await self.s.store.fleet.home_users()):
            try:
                await self._publish(user)
                done += 1
            except ArgoWhyError as e:
                log.info("App Home of %s not refreshed: %s", user, e)
        return done
