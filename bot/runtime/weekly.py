"""The weekly report (a scheduled job, on the one replica that holds the scheduler's lease): a message with the apps
drifting longest and the rules merged in the last 7 days, and in its thread a PNG chart of OutOfSync hours by
cause over the last :data:`WEEKS` weeks, uploaded with Slack's files API (``files.getUploadURLExternal`` then
``files.completeUploadExternal``).

The hours come from the sweep (:meth:`record_hours`, every sweep: each OutOfSync app of the fleet index counts
for its main cause), the merged rules from the PR follow-up (:meth:`record_merged`); both are kept 10 weeks
(:mod:`bot.store.fleet`). The message and the chart are each posted once per week (outbox keys), whichever replica
or retry runs it. The chart is drawn in a child process (:func:`draw_chart`): matplotlib is never resident in a
replica. Only the apps whose alerts go to the alert channel are listed there.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.runtime.services import Services
from bot.slack.render.weekly import weekly_message
from bot.store.fleet import FleetEntry
from bot.wording import slack as wording

WEEKS = 6
LONGEST = 10
WEEK_S = 7 * 24 * 3600


def iso_week(at: float) -> str:
    year, week, _ = datetime.fromtimestamp(at, UTC).isocalendar()
    return f"{year}-W{week:02d}"


def recent_weeks(now: float, count: int = WEEKS) -> list[str]:
    """The ISO weeks of the last ``count`` weeks, oldest first, this week last."""
    day = datetime.fromtimestamp(now, UTC)
    return [iso_week((day - timedelta(weeks=i)).timestamp()) for i in range(count - 1, -1, -1)]


def main_cause(entry: FleetEntry) -> str:
    causes = Counter(f.cause for f in entry.findings)
    return min(causes, key=lambda c: (-causes[c], c)) if causes else "unknown"


async def draw_chart(weeks: Sequence[str], seconds: Mapping[str, Mapping[str, float]]) -> bytes:
    """The chart of :func:`bot.report.chart.drift_chart`, drawn in a child process: matplotlib, numpy and Pillow
    (about 55 MB) are loaded there for a few seconds once a week, never kept by the replica, and the drawing does
    not hold up the replica's event loop."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.report.chart", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)  # fmt: skip
    png, err = await child.communicate(json.dumps({"weeks": list(weeks), "seconds": seconds}).encode())
    if child.returncode != 0:
        raise RuntimeError(f"the weekly chart could not be drawn: {err.decode(errors='replace').strip()[-300:]}")
    return png


class WeeklyReport:
    def __init__(self, services: Services) -> None:
        self.s = services

    async def record_hours(self, now: float, cap_s: float) -> None:
        """Count the time since the last call (at most ``cap_s``) for every OutOfSync app, by its main cause."""
        entries = await self.s.store.fleet.entries(now)
        per_cause = Counter(main_cause(e) for e in entries.values())
        await self.s.store.fleet.add_hours(iso_week(now), {c: float(n) for c, n in per_cause.items()}, now, cap_s)

    async def record_merged(self, record: dict[str, Any], apps: int) -> None:
        now = time.time()
        await self.s.store.fleet.add_ended(iso_week(now), {"title": str(record.get("title") or ""),
                                                          "url": str(record.get("url") or ""), "apps": apps,
                                                          "at": now})  # fmt: skip

    async def run(self) -> int:
        """Post this week's report; how many apps it lists as drifting."""
        now = time.time()
        weeks = recent_weeks(now)
        seconds = {w: await self.s.store.fleet.hours(w) for w in weeks}
        channel = self.s.channel
        entries = {k: e for k, e in (await self.s.store.fleet.entries(now)).items() if e.channel == channel}
        longest = sorted(((k, now - e.since) for k, e in entries.items()), key=lambda kv: -kv[1])[:LONGEST]
        merged = [r for w in weeks[-2:] for r in await self.s.store.fleet.ended(w)
                  if now - float(r.get("at") or 0) <= WEEK_S]  # fmt: skip
        week = weeks[-1]
        _, ts = await self.s.outbox.post(channel, weekly_message(week, len(weeks), longest, merged),
                                         key=f"weekly:{week}")  # fmt: skip
        await self.s.outbox.upload(channel, ts, f"argo-why-drift-{week}.png", await draw_chart(weeks, seconds),
                                   wording.SLACK_WEEKLY_CHART_TITLE, key=f"weekly-chart:{week}")  # fmt: skip
        return len(longest)
