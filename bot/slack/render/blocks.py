"""Block Kit blocks and their limits: the builders every message uses, validation, and packing into messages.

What it guarantees for each :class:`Message` built through :func:`message`:

* ``text`` is always set: a plain-language summary (escaped, on one line, at most :data:`TEXT_LIMIT`
  characters) for notifications and screen readers;
* at most 50 blocks (:data:`MAX_BLOCKS`) and at most :data:`MESSAGE_BUDGET` characters of block JSON
  (Slack refuses messages from about 12,000-13,000); :func:`pack` spreads longer content over several
  messages, keeping each group of blocks whole unless it cannot fit in a message of its own;
* every section (and context element) text is at most :data:`MAX_SECTION` characters, cut with a note
  (:func:`bot.slack.render.escaping.cut`) when longer;
* every block passes slack_sdk's own models (``Block.parse(b).to_dict()``: lengths of headers, buttons,
  confirm dialogs, ...), checked by :func:`validate_blocks` before a message is returned (``ValueError``
  otherwise);
* the action_ids are the contract ``show_diff``, ``mute`` and ``recheck``; button values are the opaque
  ids the caller passes (at most :data:`MAX_BUTTON_VALUE` characters, ``ValueError`` otherwise).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

from bot.intake.jobs import ActionId
from bot.slack.render.escaping import clip, cut, escape, fill, in_code
from bot.slack.render.inputs import Buttons
from bot.wording import slack as wording

ACTIONS_BLOCK_ID = "argo-why-actions"
"""The parent's button block, so that a caller can find and replace it."""

MAX_BLOCKS = 50
MAX_SECTION = 3000
MESSAGE_BUDGET = 11_000
"""Characters of ``json.dumps(blocks, ensure_ascii=False)`` per message, below Slack's practical ~12,000."""
MAX_BUTTON_VALUE = 2000
TEXT_LIMIT = 1000

JSONBlock = dict[str, Any]


@dataclass(frozen=True)
class Message:
    """One Slack message: ``text`` is the plain fallback, ``blocks`` the validated Block Kit JSON."""

    text: str
    blocks: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The ``chat.postMessage``/``chat.update`` arguments ``{"text": ..., "blocks": [...]}`` (a copy)."""
        return {"text": self.text, "blocks": copy.deepcopy(self.blocks)}


def section(text: str, note: str) -> JSONBlock:
    """A mrkdwn section of ``text``, cut with ``note`` beyond :data:`MAX_SECTION` characters."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": cut(text, MAX_SECTION, note)}}


def context(texts: Sequence[str], note: str) -> JSONBlock:
    """A context block of the first ten ``texts`` (mrkdwn), each cut like a section."""
    return {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": cut(t, MAX_SECTION, note)} for t in texts[:10]],
    }


def fit_section(text: str, note: str, room: int) -> JSONBlock | None:
    """A section of ``text`` whose JSON takes at most ``room`` characters, cut further as needed (None: no room)."""
    limit = MAX_SECTION
    while limit > len(note) + 100:
        block = section(text, note) if limit == MAX_SECTION else section(cut(text, limit, note), note)
        size = json_size(block)
        if size <= room:
            return block
        limit = min(limit - 100, limit * room // size)
    return None


def header(text: str) -> JSONBlock:
    """A header block of plain ``text``, clipped to Slack's 150 characters."""
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, 150)}}


def _plain(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text}


def button(label: str, action_id: str, value: str, confirm: dict[str, Any] | None = None) -> dict[str, Any]:
    """A button element; ``ValueError`` when ``value`` is longer than :data:`MAX_BUTTON_VALUE`."""
    if len(value) > MAX_BUTTON_VALUE:
        raise ValueError(f"the value of button {action_id!r} is longer than {MAX_BUTTON_VALUE} characters")
    element: dict[str, Any] = {"type": "button", "action_id": action_id, "text": _plain(label), "value": value}
    if confirm is not None:
        element["confirm"] = confirm
    return element


def _mute_confirm(app: str) -> dict[str, Any]:
    name = clip(app, 60)
    return {
        "title": _plain(clip(wording.SLACK_MUTE_CONFIRM_TITLE.format(app=name), 100)),
        "text": {"type": "mrkdwn", "text": fill(wording.SLACK_MUTE_CONFIRM_TEXT, app=in_code(name))},
        "confirm": _plain(wording.SLACK_MUTE_CONFIRM_YES),
        "deny": _plain(wording.SLACK_MUTE_CONFIRM_NO),
    }


def actions_block(buttons: Buttons, app: str, which: Sequence[str]) -> JSONBlock:
    """The parent's actions block (:data:`ACTIONS_BLOCK_ID`) with the buttons named in ``which``, in fixed order."""
    elements = []
    if ActionId.SHOW_DIFF in which:
        elements.append(button(wording.SLACK_BUTTON_SHOW_DIFF, ActionId.SHOW_DIFF, buttons.show_diff))
    if ActionId.MUTE in which:
        elements.append(button(wording.SLACK_BUTTON_MUTE, ActionId.MUTE, buttons.mute, _mute_confirm(app)))
    if ActionId.RECHECK in which:
        elements.append(button(wording.SLACK_BUTTON_RECHECK, ActionId.RECHECK, buttons.recheck))
    return {"type": "actions", "block_id": ACTIONS_BLOCK_ID, "elements": elements}


def json_size(block: Any) -> int:
    """Characters of ``block`` (a block, a list of blocks, a string) as JSON, the way the budget counts them."""
    return len(json.dumps(block, ensure_ascii=False))


def validate_blocks(blocks: Sequence[dict[str, Any]]) -> None:
    """Raise ``ValueError`` unless ``blocks`` is a message Slack accepts: count, size and slack_sdk's models."""
    if len(blocks) > MAX_BLOCKS:
        raise ValueError(f"{len(blocks)} blocks in one message (at most {MAX_BLOCKS})")
    size = json_size(list(blocks))
    if size > MESSAGE_BUDGET:
        raise ValueError(f"{size} characters of blocks in one message (at most {MESSAGE_BUDGET})")
    for block in blocks:
        parsed = Block.parse(block)
        if parsed is None:
            raise ValueError(f"not a Block Kit block: {block.get('type')!r}")
        try:
            parsed.to_dict()
        except SlackObjectFormationError as e:
            raise ValueError(f"{block.get('type')} block: {e}") from e
        for element in block.get("elements") or []:
            if element.get("type") in ("mrkdwn", "plain_text") and len(element.get("text", "")) > MAX_SECTION:
                raise ValueError(f"a context element is longer than {MAX_SECTION} characters")


def message(plain: str, blocks: list[JSONBlock]) -> Message:
    """A validated message; ``plain`` is the fallback summary before escaping."""
    validate_blocks(blocks)
    return Message(text=escape(clip(" ".join(plain.split()), TEXT_LIMIT)) or "argo-why", blocks=blocks)


def _fitting(groups: Iterable[tuple[list[JSONBlock], str]]) -> Iterator[tuple[list[JSONBlock], str]]:
    """The groups, with any group too large for a message of its own split into its blocks."""
    for group, summary in groups:
        if len(group) > MAX_BLOCKS or json_size(group) > MESSAGE_BUDGET:
            yield from (([block], summary if i == 0 else "") for i, block in enumerate(group))
        else:
            yield group, summary


def pack(groups: Iterable[tuple[list[JSONBlock], str]]) -> list[tuple[list[JSONBlock], list[str]]]:
    """Groups of blocks (each kept whole, with a summary) packed into as few messages as the limits allow."""
    out: list[tuple[list[JSONBlock], list[str]]] = []
    blocks: list[JSONBlock] = []
    summaries: list[str] = []
    size = 2  # "[]"
    for group, summary in _fitting(groups):
        if blocks and (
            len(blocks) + len(group) > MAX_BLOCKS or size + sum(json_size(b) + 2 for b in group) > MESSAGE_BUDGET
        ):
            out.append((blocks, summaries))
            blocks, summaries, size = [], [], 2
        if not blocks and group and group[0]["type"] == "divider":
            group = group[1:]
        blocks.extend(group)
        size += sum(json_size(b) + 2 for b in group)
        if summary:
            summaries.append(summary)
    if blocks:
        out.append((blocks, summaries))
    return out
