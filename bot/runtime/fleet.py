"""The fleet index kept current by the alerts, and the one line each thread of a fleet-wide drift gets.

After every analysis of an OutOfSync app, :meth:`FleetLines.index` replaces its entry in the fleet index
(:mod:`bot.store.fleet`) and, for each of its findings whose signature is now in at least ``FLEET_MIN_APPS`` apps,
posts in every thread of the group that has not said it yet "the same in N other apps: …" (through the outbox,
under a key per thread and signature: once, whichever replica or retry gets there), with the system-level rule
(:mod:`bot.runtime.systemfix`: checked against every app Argo CD lists, with the objects the fleet index keeps of
each app, then its Open PR button or why it is not offered; the check lists Argo CD's apps, so it runs at most once
per :data:`CHECK_EVERY_S` per signature, and a line said meanwhile carries the last check's rule, for the group as
it is now: an app that joins later is offered the rule, and the PR covers the apps that have the drift when it
opens). One alert at a time per signature
(a lock), and the first time a group is fleet-wide every thread of it is told, afterwards only the app that joins,
so an alert costs a few Redis calls whatever the size of the fleet. An offered rule's Open PR is also put on every
parent of the group, beside the app rule's, and :meth:`FleetLines.offer_for` gives it to the alerts that render a
parent again. Apps without a thread (listed in a digest) are counted, never posted to.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict

from bot.analysis.fleet import BlastRadius, FleetFinding, FleetGroup, SystemRule, group_findings, records_of
from bot.model import Report
from bot.runtime.fixflow import FixFlow
from bot.runtime.serial import AppLocks
from bot.runtime.services import Services
from bot.runtime.systemfix import SystemFix
from bot.slack.render import Message
from bot.slack.render.fleet import SystemOffer, fleet_line_message, rule_text, with_system_offer
from bot.store.fleet import FLEET_TTL_S, OFFER_TTL_S, FleetEntry

log = logging.getLogger("argo_why.fleet")
CHECK_EVERY_S = 30


class FleetLines:
    def __init__(self, services: Services, fixes: FixFlow, locks: AppLocks) -> None:
        self.s = services
        self.locks = locks
        self.system = SystemFix(services, fixes, fixes.owner)

    async def index(self, key: str, report: Report, channel: str, thread_ts: str, since: float) -> None:
        """Replace the app's entry (no findings: drop it), then say the fleet-wide ones in the threads."""
        records = tuple(records_of(report))
        entry = FleetEntry(findings=records, at=time.time(), since=since, channel=channel, thread_ts=thread_ts)
        await self.s.store.fleet.put(key, entry)
        if records:
            await self.say_fleet_wide(key, records)

    async def say_fleet_wide(self, key: str, records: tuple[FleetFinding, ...]) -> None:
        minimum = self.s.settings.runtime.fleet_min_apps
        done: set[str] = set()
        for rec in records:
            if rec.sig_id in done:
                continue
            done.add(rec.sig_id)
            members = await self.s.store.fleet.apps_with(rec.sig_id)
            if len(members) < minimum:
                continue
            # the check, when due, outside the lock below: the group's other alerts do not wait for it
            await self._check_if_due(rec)
            # one alert at a time per signature: two workers must not both say the line in the same thread
            async with self.locks.hold(f"fleet:{rec.sig_id}"):
                await self._say(key, rec)

    async def _check_if_due(self, rec: FleetFinding) -> None:
        """Check the group's system-level rule again (:mod:`bot.runtime.systemfix`) when the last check is older than
        :data:`CHECK_EVERY_S` (one replica at a time: a mark in the store), keep what it found with the fleet, and put
        an offered rule's Open PR on every parent of the group."""
        raw = await self.s.store.fleet.get_offer(rec.sig_id)
        if raw is not None and time.time() - float(raw.get("at") or 0) < CHECK_EVERY_S:
            return
        if not await self.s.store.first_seen(f"fleet-check:{rec.sig_id}", CHECK_EVERY_S):
            return
        entries = await self.s.store.fleet.get(sorted(await self.s.store.fleet.apps_with(rec.sig_id)), time.time())
        group = self.group_of(rec, entries)
        if group is None or not group.fleet_wide:
            return
        threads = {a: [entries[a].channel, entries[a].thread_ts] for a in group.apps}
        rule, state = await self.system.prepare(group, threads)
        if rule is None:
            return
        # what the check found, in the log: the line said in each thread carries it until the next check
        log.info(
            "fleet check of %s (%d apps, %d checked): %s",
            group.signature,
            len(group.apps),
            rule.radius.checked,
            rule.refusal or ("rule offered" if state is not None else "rule found, no Git provider to offer it"),
        )
        offer = SystemOffer(state, rule_text(rule), rule.key, len(group.apps)) if state is not None else None
        await self.s.store.fleet.put_offer(group.sig_id, {
            **(asdict(offer) if offer is not None else {}), "at": time.time(), "value": rule.value, "key": rule.key,
            "refusal": rule.refusal, "radius": asdict(rule.radius)})  # fmt: skip
        if offer is not None:
            for app in group.apps:  # every parent of the group offers it beside the app rule
                await self._offer_on_parent(entries[app], offer)

    async def _say(self, key: str, rec: FleetFinding) -> None:
        # the apps of the group from its set (not every entry: an alert costs a few Redis calls whatever the size of
        # the fleet); the entries only of the threads told
        members = sorted(await self.s.store.fleet.apps_with(rec.sig_id))
        minimum = self.s.settings.runtime.fleet_min_apps
        if len(members) < minimum or key not in members:
            return
        # the first time the group is fleet-wide every thread of it is told; after that, each app joining it
        mark = f"fleet-announced:{rec.sig_id}"
        first = await self.s.store.first_seen(mark, FLEET_TTL_S)
        try:
            entries = await self.s.store.fleet.get(members if first else [key], time.time())
            group = FleetGroup(rec.group, rec.kind, rec.path, rec.writer, rec.cause, tuple(members), (), True)
            todo = [(a, e, f"fleet-line:{a}:{e.thread_ts}:{rec.sig_id}") for a, e in sorted(entries.items())
                    if e.thread_ts]  # fmt: skip
            rule, state = await self._last_check(group)
            for app, e, key_ in todo:
                await self.s.outbox.post(e.channel, fleet_line_message(group, app, rule, state), thread_ts=e.thread_ts,
                                         key=key_)  # fmt: skip
        except BaseException:
            if first:
                await self.s.store.forget(mark)  # the next alert of the group tells every thread again
            raise
        if rule is not None and state is not None:  # the app that joins offers it beside its app rule
            offer = SystemOffer(state, rule_text(rule), rule.key, len(group.apps))
            for e in entries.values():
                await self._offer_on_parent(e, offer)

    async def _last_check(self, group: FleetGroup) -> tuple[SystemRule | None, str | None]:
        """The last check's rule, blast radius and Open PR state, for the group as it is now (an app that joins
        after the check is offered the rule too; the PR covers every app that has the drift when it opens)."""
        raw = await self.s.store.fleet.get_offer(group.sig_id)
        if raw is None:
            return None, None
        try:
            r = raw["radius"]
            radius = BlastRadius(covered=group.apps, apps=tuple(r["apps"]), objects=tuple(r["objects"]),
                                 fields=tuple(r["fields"]), git_managed=tuple(r["git_managed"]),
                                 checked=int(r["checked"]), unchecked=tuple(r["unchecked"]),
                                 pending=tuple(r.get("pending") or ()))  # fmt: skip
            refusal = raw.get("refusal")
            rule = SystemRule(group, str(raw["key"]), dict(raw["value"]), radius,
                              str(refusal) if refusal is not None else None)  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None, None
        state = raw.get("state")
        return rule, str(state) if state and rule.offered else None

    async def _offer_on_parent(self, e: FleetEntry, offer: SystemOffer) -> None:
        if not e.thread_ts:
            return
        kept = await self.s.store.recall_message(e.channel, e.thread_ts)
        if kept is None:  # a parent without Open PR buttons (no Git provider): nothing to put it beside
            return
        message = with_system_offer(Message(text=str(kept.get("text") or ""), blocks=list(kept.get("blocks") or [])),
                                    offer)  # fmt: skip
        await self.s.outbox.update(e.channel, e.thread_ts, message)
        await self.s.store.remember_message(e.channel, e.thread_ts, message.to_dict(), OFFER_TTL_S)

    async def offer_for(self, report: Report) -> SystemOffer | None:
        """The system-level rule offered for one of the report's findings, if any (for its parent)."""
        for sig in sorted({r.sig_id for r in records_of(report)}):
            raw = await self.s.store.fleet.get_offer(sig)
            if raw is not None and raw.get("state") and not raw.get("refusal"):
                try:
                    return SystemOffer(str(raw["state"]), str(raw["rule"]), str(raw["key"]), int(raw["apps"]))
                except (KeyError, TypeError, ValueError):
                    continue
        return None

    def group_of(self, rec: FleetFinding, entries: dict[str, FleetEntry]) -> FleetGroup | None:
        by_app = {a: [f for f in e.findings if f.signature == rec.signature] for a, e in entries.items()}
        groups = group_findings(by_app, self.s.settings.runtime.fleet_min_apps)
        return next((g for g in groups if g.signature == rec.signature), None)
