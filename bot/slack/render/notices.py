"""Short messages that carry no Report: the analysis gave up, ``/argo help``, an error.

What it guarantees beyond :mod:`bot.slack.render.blocks`: each is a few sections long, so it always fits;
the reason or error text is user data, clipped and escaped.
"""

from __future__ import annotations

from bot.slack.render.blocks import MAX_SECTION, Message, context, message, section
from bot.slack.render.escaping import NAME_LIMIT, clip, code, cut_note, escape, fill, in_code
from bot.wording import slack as wording


def analysis_failed_message(app: str, reason: str) -> Message:
    """Posted in the thread when the analysis gave up after its last retry."""
    note = cut_note(app)
    name = escape(clip(app, NAME_LIMIT))
    blocks = [
        section(
            f"{wording.SLACK_ICON_FAILED} "
            + fill(wording.SLACK_ANALYSIS_FAILED, app=f"*{name}*", reason=escape(clip(reason, 2000))),
            note,
        ),
        context([fill(wording.SLACK_ANALYSIS_FAILED_HINT, app=in_code(app))], note),
    ]
    return message(wording.SLACK_ANALYSIS_FAILED.format(app=app, reason=reason), blocks)


def help_message() -> Message:
    """``/argo help``: the commands."""
    lines = [f"• {code(command)}: {escape(what)}" for command, what in wording.SLACK_HELP_COMMANDS]
    note = cut_note("<app>")
    blocks = [
        section(escape(wording.SLACK_HELP_TITLE), note),
        section("\n".join(lines), note),
        context([escape(wording.SLACK_HELP_FOOTER)], note),
    ]
    commands = ", ".join(command for command, _ in wording.SLACK_HELP_COMMANDS)
    return message(f"{wording.SLACK_HELP_TITLE} {commands}", blocks)


def error_message(text: str) -> Message:
    """A short error, for an ephemeral answer."""
    block = section(f"{wording.SLACK_ICON_ERROR} {escape(clip(text, MAX_SECTION - 20))}", "…")
    return message(text, [block])
