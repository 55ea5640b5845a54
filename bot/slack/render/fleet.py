"""Slack messages about the fleet: the one line a thread gets when its drift is fleet-wide.

Pure functions from :class:`bot.analysis.fleet.FleetGroup` to :class:`Message`; every name is user data (escaped,
clipped), and a long list of apps is cut to the first few with how many more.
"""

from __future__ import annotations

from bot.analysis.fleet import FleetGroup
from bot.slack.render.blocks import Message, message, section
from bot.slack.render.escaping import code, escape, fill, plural
from bot.wording import slack as wording

NAMES_SHOWN = 5


def _names(apps: list[str]) -> str:
    shown = ", ".join(code(a) for a in apps[:NAMES_SHOWN])
    more = len(apps) - NAMES_SHOWN
    return f"{shown} {escape(wording.SLACK_AND_MORE.format(count=more))}" if more > 0 else shown


def fleet_line_message(group: FleetGroup, app: str) -> Message:
    """Posted once in an app's thread when its drift is fleet-wide: how many other apps have it, the first names."""
    others = [a for a in group.apps if a != app]
    values = {"others": escape(plural(wording.SLACK_OTHER_APPS, len(others))), "names": _names(others),
              "field": code(group.path), "kind": code(group.group_kind), "writer": code(group.writer)}  # fmt: skip
    text = f"{wording.SLACK_ICON_FLEET} " + fill(wording.SLACK_FLEET_LINE, **values)
    plain = wording.SLACK_FLEET_LINE.format(
        others=plural(wording.SLACK_OTHER_APPS, len(others)), names=", ".join(others[:NAMES_SHOWN]),
        field=group.path, kind=group.group_kind, writer=group.writer)  # fmt: skip
    return message(plain, [section(text, "…")])
