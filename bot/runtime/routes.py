"""Where an app's alerts go, who may approve its fixes, and where it may be talked about: the rules of
:mod:`bot.routing` applied to what Argo CD says now.

* :meth:`Router.route` reads the Application and its AppProject from Argo CD (``GET /api/v1/applications/{name}``,
  ``GET /api/v1/projects/{name}``, the project cached :data:`PROJECT_CACHE_S` seconds and read by one caller at a
  time), chooses the channel and resolves a name to its ID (:class:`bot.slack.channels.Channels`). It never loses
  an alert: an app or project Argo CD does not show is routed by what is known (the webhook's project,
  ``CHANNEL_ROUTES``, ``SLACK_CHANNEL``); a channel that is not one, or a name Slack does not know, sends the alert
  to ``SLACK_CHANNEL`` with :attr:`Routed.note` saying why (the caller posts it with the alert).
* :meth:`Router.approvers` is ``APPROVER_ROUTES`` for the project, else ``APPROVERS``; the fix flow asks it with the
  project read from Argo CD at click time.
* :meth:`Router.visible`: an app is talked about only in a channel it is routed to, or in a direct message with
  someone who may approve for its project.
* :func:`check_channel_routes` (``argo-why serve``, before it serves): every channel name of ``CHANNEL_ROUTES`` (and
  ``SLACK_CHANNEL``) is known to Slack, else :class:`RoutesUnresolved` naming the entry; a Slack outage at that
  moment is logged and the names are resolved at alert time instead.

Nothing here is kept in the store.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from bot.errors import ArgoWhyError
from bot.routing import Route, approvers_for, choose_channel
from bot.runtime.services import Services
from bot.slack.channels import UnknownChannel
from bot.slack.poster import SlackUnavailable
from bot.sources.argocd import ArgoCDError
from bot.why import Reads
from bot.wording import slack as wording

log = logging.getLogger("argo_why.routes")
PROJECT_CACHE_S = 30.0


@dataclass(frozen=True)
class Routed:
    """An app's channel (an ID), the project it belongs to (``None``: unknown), and a note when the alert could not
    go where its route says (the line that says why, posted with the alert)."""

    channel: str
    project: str | None
    route: Route
    note: str | None = None


class RoutesUnresolved(ArgoWhyError):
    """A channel of ``CHANNEL_ROUTES`` that Slack does not know (a start-up error, in words)."""

    exit_code = 2


async def check_channel_routes(services: Services) -> None:
    """Resolve every channel name of ``CHANNEL_ROUTES`` once (module docstring)."""
    try:
        for pattern, channel in services.settings.slack.channel_routes.items():
            try:
                await services.channels.resolve(channel)
            except UnknownChannel as e:
                raise RoutesUnresolved(f"CHANNEL_ROUTES: entry {pattern}={channel}: {e}") from None
    except SlackUnavailable as e:
        log.warning("channel names of CHANNEL_ROUTES not checked at start-up (%s): resolved at alert time", e)


class Router:
    def __init__(self, services: Services) -> None:
        self.s = services
        self._projects: dict[str, tuple[dict[str, Any] | None, float]] = {}
        self._reading: dict[str, asyncio.Lock] = {}

    async def _project(self, name: str | None) -> dict[str, Any] | None:
        if not name:
            return None
        hit = self._projects.get(name)
        if hit is not None and hit[1] > time.monotonic():
            return hit[0]
        # one read per project at a time: in a storm every worker of the replica misses the cache at once when it
        # expires, and would each read the same AppProject (issue 29: Argo CD requests per alert)
        async with self._reading.setdefault(name, asyncio.Lock()):
            hit = self._projects.get(name)
            if hit is not None and hit[1] > time.monotonic():
                return hit[0]
            try:
                async with self.s.argocd() as argocd:
                    project: dict[str, Any] | None = await argocd.project(name)
            except ArgoCDError as e:  # no `projects, get` for the account, or the project is gone: route without it
                log.info("AppProject %s not readable (%s): routed without its annotations", name, e)
                project = None
            self._projects[name] = (project, time.monotonic() + PROJECT_CACHE_S)
            return project

    async def application(self, name: str, namespace: str | None) -> dict[str, Any] | None:
        """The Application as Argo CD shows it now; ``None`` when it does not (gone, hidden, Argo CD down)."""
        try:
            async with self.s.argocd() as argocd:
                return await argocd.application(name, namespace or self.s.settings.argocd.app_namespace)
        except ArgoCDError as e:
            log.info("Application %s not readable for routing (%s)", name, e)
            return None

    async def route(self, name: str, namespace: str | None, project: str | None = None) -> Routed:
        """The channel of an app now; ``project`` is what the webhook said (used when Argo CD does not answer)."""
        return await self.route_of(name, await self.application(name, namespace), project)

    async def route_read(self, name: str, namespace: str | None, project: str | None, reads: Reads | None) -> Routed:
        """:meth:`route`, with the Application an analysis of this job already read (``reads``), if it did."""
        if reads is not None and reads.app_read:
            return await self.route_of(name, reads.app, project)
        return await self.route(name, namespace, project)

    async def route_of(self, name: str, app: dict[str, Any] | None, project: str | None = None) -> Routed:
        """The channel of ``app`` as already read (``None``: Argo CD did not show it)."""
        if app is not None:
            project = str((app.get("spec") or {}).get("project") or "") or project
        route = choose_channel(app, await self._project(project), project, routes=self.s.settings.slack.channel_routes,
                               default=self.s.channel)  # fmt: skip
        notes = list(route.problems)
        try:
            channel = await self.s.channels.resolve(route.channel)
        except UnknownChannel as e:
            notes.append(f"{route.channel} ({wording.ROUTE_SOURCES[route.source]}): {e}")
            channel = self.s.channel
        note = wording.ROUTE_FALLBACK.format(app=name, reasons="; ".join(notes)) if notes else None
        if note:
            log.warning("alerts of %s: %s", name, note)
        return Routed(channel, project, route, note)

    def approvers(self, project: str | None) -> list[str]:
        git = self.s.settings.git
        return approvers_for(project, git.approver_routes, git.approvers)

    async def visible(self, channel: str, user: str, name: str, namespace: str | None) -> bool:
        """Whether ``name`` may be talked about in ``channel`` (module docstring)."""
        app = await self.application(name, namespace)
        routed = await self.route_of(name, app)
        if channel == routed.channel:
            return True
        if channel.startswith("D") and app is not None:
            try:
                return await self.s.directory.may_approve(user, self.approvers(routed.project))
            except ArgoWhyError:
                return False
        return False
