"""Slack messages about the fleet: the one line a thread gets when its drift is fleet-wide, with the system-level
rule (its Open PR button, its blast radius) or why none is offered, and the approval of that rule.

Pure functions to :class:`Message`; every name is user data (escaped, clipped), a long list of apps is cut to the
first few with how many more. The Open PR button's ``action_id`` is ``open_pr`` (a contract) and its value the
opaque state id the caller passes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from bot.analysis.fleet import FleetGroup, SystemRule
from bot.intake.jobs import ActionId
from bot.slack.render.blocks import JSONBlock, Message, button, context, message, section
from bot.slack.render.escaping import clip, code, escape, fill
from bot.slack.render.fixes import fix_block_id, mention
from bot.wording import slack as wording
from bot.wording.report import plural

NAMES_SHOWN = 5
SLOT_SYSTEM = "system"


def _names(apps: Sequence[str]) -> str:
    shown = ", ".join(code(a) for a in apps[:NAMES_SHOWN])
    more = len(apps) - NAMES_SHOWN
    return f"{shown} {escape(wording.SLACK_AND_MORE.format(count=more))}" if more > 0 else shown


def rule_text(rule: SystemRule) -> str:
    """``managedFieldsManagers: ["kube-controller-manager"]``: the rule on one line, for people."""
    return "; ".join(f"{k}: {json.dumps(v)}" for k, v in rule.value.items())


def _radius(rule: SystemRule) -> str:
    r = rule.radius
    if not r.fields:
        out = fill(wording.SLACK_FLEET_RADIUS_NONE, checked=str(r.checked))
    else:
        out = fill(wording.SLACK_FLEET_RADIUS, fields=escape(plural(wording.SLACK_FIELDS_COUNT, len(r.fields))),
                   objects=escape(plural(wording.SLACK_OBJECTS_COUNT, len(r.objects))),
                   apps=escape(plural(wording.SLACK_APPS, len(r.apps))), names=_names(r.fields))  # fmt: skip
    if r.unchecked:
        out += " " + escape(plural(wording.SLACK_FLEET_UNCHECKED, len(r.unchecked)))
    if r.pending:
        out += " " + escape(plural(wording.SLACK_FLEET_PENDING, len(r.pending)))
    return out


def system_rule_blocks(rule: SystemRule | None, state: str | None) -> list[JSONBlock]:
    """The system-level rule under the fleet line: what it is and hides, and its Open PR button; or why not."""
    if rule is None:
        return []
    if rule.refusal is not None:
        return [context([fill(wording.SLACK_FLEET_NO_RULE, reason=escape(clip(rule.refusal, 2500)))], "…")]
    text = fill(wording.SLACK_FLEET_RULE, count=str(len(rule.group.apps)), rule=code(rule_text(rule), 300),
                key=code(rule.key, 200), radius=_radius(rule))  # fmt: skip
    blocks: list[JSONBlock] = [section(text, "…")]
    if state is not None:
        blocks.append(system_button_block(SystemOffer(state, rule_text(rule), rule.key, len(rule.group.apps))))
    return blocks


@dataclass(frozen=True)
class SystemOffer:
    """What an Open PR button of a system-level rule needs (kept with the fleet, so a parent shows it again)."""

    state: str
    rule: str
    key: str
    apps: int


def system_button_block(offer: SystemOffer) -> JSONBlock:
    """The system-level rule's Open PR button (``open_pr``, the state id as value) with its confirm dialog."""
    dialog_text = wording.SLACK_SYSTEM_CONFIRM_TEXT.format(rule=offer.rule, key=offer.key, count=offer.apps)
    dialog = {"title": {"type": "plain_text", "text": wording.SLACK_SYSTEM_CONFIRM_TITLE},
              "text": {"type": "mrkdwn", "text": escape(clip(dialog_text, 300))},
              "confirm": {"type": "plain_text", "text": wording.SLACK_PR_CONFIRM_YES},
              "deny": {"type": "plain_text", "text": wording.SLACK_PR_CONFIRM_NO}}  # fmt: skip
    return {"type": "actions", "block_id": fix_block_id(SLOT_SYSTEM),
            "elements": [button(wording.SLACK_BUTTON_SYSTEM_RULE, ActionId.OPEN_PR, offer.state, dialog)]}  # fmt: skip


def with_system_offer(m: Message, offer: SystemOffer | None) -> Message:
    """The parent with the system-level rule's Open PR beside the app rule's (replacing an earlier one)."""
    if offer is None:
        return m
    blocks = [b for b in m.blocks if b.get("block_id") != fix_block_id(SLOT_SYSTEM)]
    return Message(text=m.text, blocks=[*blocks, system_button_block(offer)])


def fleet_line_message(group: FleetGroup, app: str, rule: SystemRule | None = None,
                       state: str | None = None) -> Message:  # fmt: skip
    """Posted once in an app's thread when its drift is fleet-wide: how many other apps have it, the first names,
    then the system-level rule with its Open PR button (``state``), or why none is offered."""
    others = [a for a in group.apps if a != app]
    values = {"others": escape(plural(wording.SLACK_OTHER_APPS, len(others))), "names": _names(others),
              "field": code(group.path), "kind": code(group.group_kind), "writer": code(group.writer)}  # fmt: skip
    text = f"{wording.SLACK_ICON_FLEET} " + fill(wording.SLACK_FLEET_LINE, **values)
    plain = wording.SLACK_FLEET_LINE.format(
        others=plural(wording.SLACK_OTHER_APPS, len(others)), names=", ".join(others[:NAMES_SHOWN]),
        field=group.path, kind=group.group_kind, writer=group.writer)  # fmt: skip
    return message(plain, [section(text, "…"), *system_rule_blocks(rule, state)])


def system_approval_message(what: str, rule: str, approvers: Sequence[str], state: str) -> Message:
    """ "Approved 1 of 2 by @alice" for a system-level rule, with the Approve button (value: the state id)."""
    who = ", ".join(mention(a) for a in approvers)
    text = fill(wording.SLACK_SYSTEM_APPROVED_PARTLY, count=str(len(approvers)), approvers=who, rule=code(rule, 300),
                what=escape(what))  # fmt: skip
    dialog = {"title": {"type": "plain_text", "text": wording.SLACK_APPROVE_CONFIRM_TITLE},
              "text": {"type": "mrkdwn", "text": escape(clip(wording.SLACK_APPROVE_CONFIRM_TEXT.format(what=what),
                                                              300))},
              "confirm": {"type": "plain_text", "text": wording.SLACK_BUTTON_APPROVE},
              "deny": {"type": "plain_text", "text": wording.SLACK_PR_CONFIRM_NO}}  # fmt: skip
    approve = {"type": "actions", "block_id": fix_block_id("approve"),
               "elements": [button(wording.SLACK_BUTTON_APPROVE, ActionId.APPROVE, state, dialog)]}  # fmt: skip
    plain = wording.SLACK_SYSTEM_APPROVED_PARTLY.format(count=len(approvers), approvers=", ".join(approvers),
                                                        rule=rule, what=what)  # fmt: skip
    return message(plain, [section(f":ballot_box_with_check: {text}", "…"), approve])
