"""What the scheduler says by itself: a reminder in a thread whose drift stays unresolved, the end of a mute, the
daily summary of the apps drifting longest.

What it guarantees beyond :mod:`bot.slack.render.blocks`: each message is a few sections long (the summary at most
:data:`SUMMARY_SIZE` lines), so it always fits; app names are linked to Argo CD as the alert says and escaped.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.analysis.fleet import FleetGroup
from bot.slack.render.blocks import Message, context, message, section
from bot.slack.render.escaping import code, cut_note, escape, fill, in_code
from bot.slack.render.inputs import Alert
from bot.slack.render.phrases import app_md
from bot.wording import slack as wording
from bot.wording.report import plural

SUMMARY_SIZE = 10


def duration(seconds: float) -> str:
    """ "2 days 3 hours", "5 hours 10 minutes", "7 minutes": the two largest units, plain text."""
    minutes = int(seconds // 60)
    counts = (minutes // 1440, minutes % 1440 // 60, minutes % 60)
    parts = [plural(forms, n) for forms, n in zip(wording.SLACK_DURATION_UNITS, counts, strict=True) if n]
    return " ".join(parts[:2]) or plural(wording.SLACK_DURATION_UNITS[2], 0)


def reminder_message(alert: Alert, drifting_s: float, unsettled_syncs: int) -> Message:
    """In the app's thread: still OutOfSync after so long."""
    note = cut_note(alert.app)
    values = {"duration": duration(drifting_s), "syncs": plural(wording.SLACK_UNSETTLED, unsettled_syncs)}
    text = fill(wording.SLACK_REMINDER, app=app_md(alert), **{k: escape(v) for k, v in values.items()})
    blocks = [section(f"{wording.SLACK_ICON_DRIFT} {text}", note),
              context([fill(wording.SLACK_REMINDER_HINT, app=in_code(alert.app))], note)]  # fmt: skip
    return message(wording.SLACK_REMINDER.format(app=alert.app, **values), blocks)


def mute_ended_message(alert: Alert, user: str | None) -> Message:
    """In the app's thread: the mute ended and the app still drifts."""
    who = f"<@{user}>" if user and user.isalnum() else escape(user or "?")
    text = fill(wording.SLACK_MUTE_ENDED, app=app_md(alert), user=who)
    return message(
        wording.SLACK_MUTE_ENDED.format(app=alert.app, user=user or "?"), [section(text, cut_note(alert.app))]
    )


def summary_message(rows: Sequence[tuple[Alert, float, int]], fleet: Sequence[FleetGroup] = ()) -> Message:
    """The daily summary: (alert, seconds drifting, unsettled syncs) of the apps drifting longest, longest first;
    then one line per fleet-wide finding (``fleet``)."""
    note = cut_note("<app>")
    shown = rows[:SUMMARY_SIZE]
    apps = plural(wording.SLACK_APPS, len(shown))
    lines, plain = [], []
    for alert, drifting_s, syncs in shown:
        values = {"duration": duration(drifting_s), "syncs": plural(wording.SLACK_UNSETTLED, syncs)}
        lines.append("• " + fill(wording.SLACK_SUMMARY_LINE, app=app_md(alert),
                                 **{k: escape(v) for k, v in values.items()}))  # fmt: skip
        plain.append(wording.SLACK_SUMMARY_LINE.format(app=alert.app, **values))
    title = wording.SLACK_SUMMARY_TITLE.format(apps=apps)
    blocks = [section(f"{wording.SLACK_ICON_DRIFT} *{escape(title)}*", note), section("\n".join(lines), note)]
    fleet_lines = []
    for g in [g for g in fleet if g.fleet_wide][:SUMMARY_SIZE]:
        fleet_lines.append(f"{wording.SLACK_ICON_FLEET} " + fill(
            wording.SLACK_SUMMARY_FLEET_LINE, field=code(g.path), kind=code(g.group_kind), writer=code(g.writer),
            apps=escape(plural(wording.SLACK_APPS, len(g.apps)))))  # fmt: skip
        plain.append(
            wording.SLACK_SUMMARY_FLEET_LINE.format(
                field=g.path, kind=g.group_kind, writer=g.writer, apps=plural(wording.SLACK_APPS, len(g.apps))
            )
        )
    if fleet_lines:
        blocks.append(section("\n".join(fleet_lines), note))
    blocks.append(context([escape(wording.SLACK_SUMMARY_HINT)], note))
    return message(f"{title}: " + "; ".join(plain), blocks)
