"""Slack Block Kit messages from a Report: pure functions from data to :class:`Message`.

No I/O, no Slack client, no clock. What every function here guarantees for each message it returns:

* ``text`` is always set: a plain-language summary for notifications and screen readers;
* at most 50 blocks (:data:`MAX_BLOCKS`) and at most :data:`MESSAGE_BUDGET` characters of block JSON
  (Slack refuses messages from about 12,000-13,000); longer content is split into several messages
  (:func:`thread_messages`), collapsed ("and N more") or handed back as a file (:func:`diff_message`);
* every section (and context element) text is at most 3,000 characters; longer text is cut at a line
  end with the note "… cut; see `argo-why why <app>` for the rest", never inside an escape, a link or
  an open code block;
* every block passes slack_sdk's own models (``Block.parse(b).to_dict()``: lengths of headers,
  buttons, confirm dialogs, ...), checked here before a message is returned (``ValueError`` otherwise);
* user data (app names, pointers, values, explanations, warnings, notes, reasons) is escaped for mrkdwn
  (``&``, ``<``, ``>``), so it can never form a link or a mention; inline values never carry a backtick
  or a newline, code blocks never carry a fence;
* values are shown as the Report holds them: Secret values are already masked there, and nothing here
  can unmask them;
* the action_ids are the contract ``show_diff``, ``mute`` and ``recheck``; button values are the opaque
  ids the caller passes (at most 2,000 characters, ``ValueError`` otherwise).

All wording comes from :mod:`bot.wording.slack` (the report's own titles and advice from :mod:`bot.wording.report`).

The modules, from the bottom up: :mod:`~bot.slack.render.escaping` (mrkdwn-safe text),
:mod:`~bot.slack.render.inputs` (:class:`Alert`, :class:`Buttons`), :mod:`~bot.slack.render.blocks`
(:class:`Message`, block builders, limits, validation, packing), :mod:`~bot.slack.render.phrases` (how an app,
a resource and a finding are named), then one module per kind of message: :mod:`~bot.slack.render.parent`,
:mod:`~bot.slack.render.thread`, :mod:`~bot.slack.render.diff`, :mod:`~bot.slack.render.digest` and
:mod:`~bot.slack.render.notices` (analysis failed, help, error).
"""

from __future__ import annotations

from bot.slack.render.blocks import (
    ACTIONS_BLOCK_ID,
    MAX_BLOCKS,
    MAX_SECTION,
    MESSAGE_BUDGET,
    Message,
    validate_blocks,
)
from bot.slack.render.diff import diff_message
from bot.slack.render.digest import digest_message
from bot.slack.render.escaping import escape
from bot.slack.render.inputs import Alert, Buttons
from bot.slack.render.notices import analysis_failed_message, error_message, help_message
from bot.slack.render.parent import parent_message
from bot.slack.render.thread import thread_messages

__all__ = [
    "ACTIONS_BLOCK_ID",
    "MAX_BLOCKS",
    "MAX_SECTION",
    "MESSAGE_BUDGET",
    "Alert",
    "Buttons",
    "Message",
    "analysis_failed_message",
    "diff_message",
    "digest_message",
    "error_message",
    "escape",
    "help_message",
    "parent_message",
    "thread_messages",
    "validate_blocks",
]
