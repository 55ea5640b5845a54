"""Fixes from chat in Slack: the Open PR and Approve buttons, and what the thread says about approvals and PRs.

What it guarantees beyond :mod:`bot.slack.render.blocks`:

* every Open PR button (``action_id`` ``open_pr``) and Approve button (``approve``) carries a Block Kit
  ``confirm`` dialog that says what will be proposed, so the click arrives confirmed; its value is the opaque
  state id the caller passes, nothing else;
* each button sits alone in an actions block whose ``block_id`` names its slot (:func:`fix_block_id`), so that
  the block can be found and replaced by "PR #N opened by @user" (:func:`pr_link_block`, :func:`replace_block`)
  without touching the rest of the message;
* people are mentioned only through :func:`mention` (a Slack user or user-group ID, else escaped text); links
  come only from the Git host's answer, escaped so that they cannot break out of ``<url|text>``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.intake.jobs import ActionId
from bot.model import Finding
from bot.slack.render.blocks import JSONBlock, Message, button, context, message, section
from bot.slack.render.escaping import clip, code, code_block, cut_note, escape, fill, in_code
from bot.slack.render.phrases import resource_name
from bot.wording import slack as wording
from bot.wording.report import short_value

FixKind = Literal["ignore", "source", "commit"]
_SLOT_NAMES = {"ignore": "finding", "source": "source", "commit": "commit"}
SLOT_ALL = "all"
_USER = re.compile(r"[UW][A-Z0-9]{2,20}")
_GROUP = re.compile(r"S[A-Z0-9]{2,20}")
_MARKUP = re.compile(r"<(?:@|!subteam\^)?([^>|]*)(?:\|([^>]*))?>")
"""A mention or link in mrkdwn: the notification text keeps the ID of who is mentioned, or the link's label."""


def slot_finding(index: int, kind: FixKind = "ignore") -> str:
    """The slot of finding ``index`` (0-based, in the Report's order)."""
    return f"{_SLOT_NAMES[kind]}-{index}"


def fix_block_id(slot: str) -> str:
    return f"argo-why-fix-{slot}"


@dataclass(frozen=True)
class PRLink:
    """A pull request the bot opened: shown instead of the button that asked for it."""

    number: int
    url: str
    by: str
    """The Slack user whose approval opened it."""
    title: str = ""


@dataclass(frozen=True)
class FixButtons:
    """The Open PR buttons of one message: a state id per slot, or the PR already opened for it."""

    states: Mapping[str, str] = field(default_factory=dict)
    prs: Mapping[str, PRLink] = field(default_factory=dict)
    approvals_required: int = 1
    fix_ids: Mapping[str, str] = field(default_factory=dict)
    """The fix each slot proposes (not rendered: the caller remembers where each fix's buttons are)."""


def mention(who: str) -> str:
    """``<@U…>`` for a user ID, ``<!subteam^S…>`` for a user group, anything else as escaped text."""
    if _USER.fullmatch(who):
        return f"<@{who}>"
    if _GROUP.fullmatch(who):
        return f"<!subteam^{who}>"
    return escape(clip(who, 80))


def _link(url: str, text: str) -> str:
    if not url.startswith(("https://", "http://")):
        return escape(text)
    return f"<{escape(url).replace('|', '%7C')}|{escape(text)}>"


def _pr_link(pr: PRLink) -> str:
    return _link(pr.url, wording.SLACK_PR_LINK.format(number=pr.number))


def what(kind: FixKind, findings: Sequence[Finding]) -> str:
    """What a fix proposes, in plain words (for the confirm dialog and the thread)."""
    one, many = {"ignore": (wording.SLACK_PR_WHAT_ONE, wording.SLACK_PR_WHAT_MANY),
                  "source": (wording.SLACK_PR_WHAT_SOURCE_ONE, wording.SLACK_PR_WHAT_SOURCE_MANY),
                  "commit": (wording.SLACK_PR_WHAT_COMMIT_ONE, wording.SLACK_PR_WHAT_COMMIT_MANY)}[kind]  # fmt: skip
    if len(findings) == 1:
        f = findings[0]
        resource = f"{f.resource.kind} {resource_name(f)}"
        return one.format(field=f.pointer, resource=resource, live=short_value(f.live))
    return many.format(count=len(findings))


def _plain(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text}


def _confirm(title: str, text: str, yes: str) -> dict[str, Any]:
    return {
        "title": _plain(clip(title, 100)),
        "text": {"type": "mrkdwn", "text": escape(clip(text, 300))},
        "confirm": _plain(yes),
        "deny": _plain(wording.SLACK_PR_CONFIRM_NO),
    }


def pr_link_block(block_id: str, pr: PRLink) -> JSONBlock:
    """What replaces a button once its PR is open: "PR #N opened by @user", under the button's block id."""
    text = fill(wording.SLACK_PR_OPENED_BY, link=_pr_link(pr), user=mention(pr.by))
    return {"type": "context", "block_id": block_id, "elements": [{"type": "mrkdwn", "text": text}]}


def fix_block(slot: str, kind: FixKind, findings: Sequence[Finding], app: str, fixes: FixButtons) -> JSONBlock | None:
    """The Open PR button of ``slot`` (or the PR opened for it), or ``None`` when the slot has neither."""
    if slot in fixes.prs:
        return pr_link_block(fix_block_id(slot), fixes.prs[slot])
    state = fixes.states.get(slot)
    if state is None or not findings:
        return None
    if kind == "source":
        label = wording.SLACK_BUTTON_SOURCE_FIX
    elif kind == "commit":
        label = wording.SLACK_BUTTON_COMMIT_LIVE
    elif slot == SLOT_ALL and len(findings) > 1:
        label = wording.SLACK_BUTTON_OPEN_PR_ALL.format(count=len(findings))
    else:
        label = wording.SLACK_BUTTON_OPEN_PR
    required = wording.SLACK_PR_REQUIRED[0 if fixes.approvals_required < 2 else 1]
    text = wording.SLACK_PR_CONFIRM_TEXT.format(what=what(kind, findings), app=clip(app, 60), required=required)
    dialog = _confirm(wording.SLACK_PR_CONFIRM_TITLE, text, wording.SLACK_PR_CONFIRM_YES)
    return {"type": "actions", "block_id": fix_block_id(slot),
            "elements": [button(label, ActionId.OPEN_PR, state, dialog)]}  # fmt: skip


def replace_block(blocks: Sequence[JSONBlock], block_id: str, new: JSONBlock) -> list[JSONBlock] | None:
    """A copy of ``blocks`` with the block ``block_id`` replaced by ``new``; ``None`` when there is no such block."""
    out = copy.deepcopy(list(blocks))
    for i, block in enumerate(out):
        if block.get("block_id") == block_id:
            out[i] = new
            return out
    return None


def approval_message(app: str, kind: FixKind, findings: Sequence[Finding], approvers: Sequence[str],
                     required: int, state: str) -> Message:  # fmt: skip
    """ "Approved 1 of 2 by @alice" with the Approve button (its value: the fix's state id)."""
    phrase = what(kind, findings)
    text = fill(wording.SLACK_APPROVED_PARTLY, count=str(len(approvers)), required=str(required),
                approvers=", ".join(mention(a) for a in approvers), what=escape(phrase))  # fmt: skip
    dialog = _confirm(wording.SLACK_APPROVE_CONFIRM_TITLE, wording.SLACK_APPROVE_CONFIRM_TEXT.format(what=phrase),
                      wording.SLACK_BUTTON_APPROVE)  # fmt: skip
    approve = {"type": "actions", "block_id": fix_block_id("approve"),
               "elements": [button(wording.SLACK_BUTTON_APPROVE, ActionId.APPROVE, state, dialog)]}  # fmt: skip
    plain = wording.SLACK_APPROVED_PARTLY.format(count=len(approvers), required=required,
                                                 approvers=", ".join(approvers), what=phrase)  # fmt: skip
    return message(plain, [section(f":ballot_box_with_check: {text}", cut_note(app)), approve])


def pr_opened_message(app: str, pr: PRLink, *, approvers: Sequence[str], path: str, repo: str, base: str,
                      change: str, fields: Sequence[str] = (), committed: bool = False) -> Message:  # fmt: skip
    """The thread's record of a PR: who opened it, who approved, and what it proposes (``change``: YAML added)."""
    note = cut_note(app)
    head = fill(wording.SLACK_PR_OPENED, icon=":white_check_mark:", link=_pr_link(pr), user=mention(pr.by),
                approved=fill(wording.SLACK_PR_APPROVED_BY, approvers=", ".join(mention(a) for a in approvers)),
                title=escape(clip(pr.title, 250)))  # fmt: skip
    where = {"path": code(path, 200), "repo": code(repo, 200), "base": code(base)}
    if change:
        blocks = [section(head, note), section(fill(wording.SLACK_PR_PROPOSED, **where) + "\n" + code_block(change),
                                               note)]  # fmt: skip
    else:
        named = ", ".join(code(f) for f in fields)
        template = wording.SLACK_PR_PROPOSED_COMMIT if committed else wording.SLACK_PR_PROPOSED_SOURCE
        blocks = [section(head, note), section(fill(template, fields=named, **where), note)]
    plain = wording.SLACK_PR_OPENED.format(icon="", link=f"#{pr.number}", user=pr.by,
                                           approved=wording.SLACK_PR_APPROVED_BY.format(approvers=", ".join(approvers)),
                                           title=pr.title)  # fmt: skip
    return message(plain, blocks)


def paste_message(app: str, reason: str, snippet: str, *, template: str = wording.SLACK_PR_PASTE) -> Message:
    """No PR is possible: why, and the YAML to paste by hand into ``app`` (empty ``snippet``: nothing to paste).
    ``template`` names what ``app`` is: an Application (``SLACK_PR_PASTE``) or argocd-cm (``SLACK_PR_PASTE_CM``)."""
    note = cut_note(app)
    if not snippet:
        return message(wording.SLACK_PR_PASTE_SOURCE.format(reason=reason),
                       [section(fill(wording.SLACK_PR_PASTE_SOURCE, reason=escape(reason)), note)])  # fmt: skip
    text = fill(template, reason=escape(reason), app=code(app))
    return message(template.format(reason=reason, app=app),
                   [section(text + "\n" + code_block(snippet), note)])  # fmt: skip


def fix_notice(template: str, *, app: str, icon: str = "", pr: PRLink | None = None, user: str | None = None,
               **values: str) -> Message:  # fmt: skip
    """A one-section message from a ``wording.SLACK_PR_*`` template: ``pr`` fills ``{link}``, ``user`` ``{user}``
    (a mention), ``app`` ``{app}``; other ``values`` are plain text and escaped here. ``icon`` is said once: where
    the template places ``{icon}``, else in front; never in the plain text."""
    md: dict[str, str] = {k: escape(v) for k, v in values.items()}
    plain: dict[str, str] = dict(values)
    if pr is not None:
        md["link"], plain["link"] = _pr_link(pr), f"#{pr.number}"
    if user is not None:
        md["user"], plain["user"] = mention(user), user
    md["app"], plain["app"] = f"`{in_code(app)}`", app
    md["icon"], plain["icon"] = icon, ""
    used_md = {k: v for k, v in md.items() if "{" + k + "}" in template}
    used_plain = {k: v for k, v in plain.items() if "{" + k + "}" in template}
    text = fill(template, **used_md)
    shown = text if "{icon}" in template else f"{icon} {text}"
    return message(template.format(**used_plain).strip(), [section(shown.strip(), cut_note(app))])


def approvers_text(approvers: Sequence[str]) -> str:
    """Who may approve, as mentions (users and user groups)."""
    return ", ".join(mention(a) for a in approvers)


def ephemeral_notice(template: str, **md: str) -> Message:
    """A short ephemeral answer from a template whose values are mrkdwn already (mentions, code)."""
    text = fill(template, **md)
    return message(_MARKUP.sub(lambda m: m.group(2) or m.group(1), text), [context([text], "…")])
