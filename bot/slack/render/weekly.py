"""The weekly report's message: the apps drifting longest and the rules merged this week (the chart goes in its
thread as a PNG, from :mod:`bot.report.chart`).

Pure; names and titles are user data (escaped, clipped); a link only from a URL the Git host gave.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.slack.render.blocks import JSONBlock, Message, header, message, section
from bot.slack.render.escaping import clip, code, escape, fill
from bot.slack.render.schedule import duration
from bot.wording import slack as wording
from bot.wording.report import plural

SHOWN = 10


def _link(url: str, text: str) -> str:
    if not url.startswith(("https://", "http://")):
        return escape(text)
    return f"<{escape(url).replace('|', '%7C')}|{escape(clip(text, 150))}>"


def weekly_message(week: str, weeks: int, longest: Sequence[tuple[str, float]],
                   merged: Sequence[dict[str, Any]]) -> Message:  # fmt: skip
    title = wording.SLACK_WEEKLY_TITLE.format(week=week)
    blocks: list[JSONBlock] = [header(title), section(escape(wording.SLACK_WEEKLY_CHART.format(weeks=weeks)), "…")]
    if longest:
        lines = [f"• {fill(wording.SLACK_WEEKLY_LONGEST_LINE, app=code(a), duration=escape(duration(s)))}"
                 for a, s in longest[:SHOWN]]  # fmt: skip
        blocks.append(section(f"*{escape(wording.SLACK_WEEKLY_LONGEST)}*\n" + "\n".join(lines), "…"))
    else:
        blocks.append(section(escape(wording.SLACK_WEEKLY_NONE_DRIFTING), "…"))
    if merged:
        lines = []
        for r in merged[:SHOWN]:
            link = _link(str(r.get("url") or ""), str(r.get("title") or "PR"))
            apps = escape(plural(wording.SLACK_APPS, int(r.get("apps") or 0)))
            lines.append(f"• {fill(wording.SLACK_WEEKLY_MERGED_LINE, link=link, apps=apps)}")
        blocks.append(section(f"*{escape(wording.SLACK_WEEKLY_MERGED)}*\n" + "\n".join(lines), "…"))
    else:
        blocks.append(section(escape(wording.SLACK_WEEKLY_NONE_MERGED), "…"))
    return message(title, blocks)
