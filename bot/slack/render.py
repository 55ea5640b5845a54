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

All wording comes from :mod:`bot.wording` (section "Slack").
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import yaml
from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

from bot import wording
from bot.analysis.managedfields import ARGOCD_MANAGERS
from bot.model import Finding, Report

__all__ = [
    "ACTIONS_BLOCK_ID",
    "ACTION_MUTE",
    "ACTION_RECHECK",
    "ACTION_SHOW_DIFF",
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

ACTION_SHOW_DIFF = "show_diff"
ACTION_MUTE = "mute"
ACTION_RECHECK = "recheck"
ACTIONS_BLOCK_ID = "argo-why-actions"
"""The parent's button block, so that a caller can find and replace it."""

MAX_BLOCKS = 50
MAX_SECTION = 3000
MESSAGE_BUDGET = 11_000
"""Characters of ``json.dumps(blocks, ensure_ascii=False)`` per message, below Slack's practical ~12,000."""
MAX_BUTTON_VALUE = 2000
PARENT_VERDICTS = 10
VALUE_LIMIT = 300
NAME_LIMIT = 120
POINTER_LIMIT = 200
NOTE_LIMIT = 500
TEXT_LIMIT = 1000
HIDES_SHOWN = 5

_SHA = re.compile(r"[0-9a-f]{40}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

JSONBlock = dict[str, Any]


@dataclass(frozen=True)
class Message:
    """One Slack message: ``text`` is the plain fallback, ``blocks`` the validated Block Kit JSON."""

    text: str
    blocks: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The ``chat.postMessage``/``chat.update`` arguments ``{"text": ..., "blocks": [...]}`` (a copy)."""
        return {"text": self.text, "blocks": copy.deepcopy(self.blocks)}


@dataclass(frozen=True)
class Alert:
    """What the parent message shows beyond the Report."""

    app: str
    app_namespace: str | None = None
    project: str | None = None
    revision: str | None = None
    unsettled_syncs: int = 1
    """How many syncs did not settle the drift in this episode."""
    argocd_url: str | None = None
    """Argo CD's base URL; the app links to ``{argocd_url}/applications/{app_namespace}/{app}``."""
    status: Literal["drift", "synced", "failed"] = "drift"

    @classmethod
    def from_report(cls, report: Report) -> Alert:
        """The alert a Report alone implies: name, namespace, project, revision and recent syncs of the revision
        from ``report.application`` when ``argo-why why`` filled it in (no sync count otherwise)."""
        facts = report.application or {}

        def text(key: str) -> str | None:
            value = facts.get(key)
            return str(value) if value else None

        return cls(
            app=text("name") or report.app or "app",
            app_namespace=text("namespace"),
            project=text("project"),
            revision=text("revision"),
            unsettled_syncs=int(facts.get("syncs_same_revision_last_hour") or 0),
        )


@dataclass(frozen=True)
class Buttons:
    """Opaque state ids (kept in Redis by the caller), used as the buttons' values."""

    show_diff: str
    mute: str
    recheck: str


# --- text helpers ---------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """``text`` made safe for mrkdwn: ``&``, ``<`` and ``>`` as entities (Slack's three control characters),
    no code fence (a zero-width space splits any run of three backticks) and no control character."""
    out = _CONTROL.sub("\ufffd", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    while "```" in out:
        out = out.replace("```", "``\u200b`")
    return out


def _t(template: str, **values: str) -> str:
    """A wording template as mrkdwn: the template escaped, then filled with values that are mrkdwn already."""
    return escape(template).format(**values)


def _n(forms: tuple[str, str], count: int) -> str:
    return forms[0 if count == 1 else 1].format(count=count)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _code(text: str, limit: int = NAME_LIMIT) -> str:
    """User data as inline code: clipped, on one line, escaped, without backticks."""
    inner = escape(_clip(" ".join(text.split("\n")), limit)).replace("`", "'")
    return f"`{inner}`" if inner.strip() else '`""`'


def _code_block(text: str) -> str:
    return "```\n" + escape(text) + "\n```"


def _value_text(value: Any, limit: int = VALUE_LIMIT) -> str:
    """A value in a line: strings as they are, anything else (and odd strings) as JSON; cut at ``limit``."""
    if isinstance(value, str) and value and value.strip() == value and "\n" not in value:
        text = value
    else:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return _clip(text, limit)


def _value(value: Any) -> str:
    return escape(wording.SLACK_ABSENT) if value is None else _code(_value_text(value), VALUE_LIMIT)


def _cut(text: str, limit: int, note: str) -> str:
    """``text`` within ``limit`` characters; when longer, cut at a line end (if one is near) with ``note``."""
    if len(text) <= limit:
        return text
    room = limit - len(note) - 6
    head = text[:room]
    newline = head.rfind("\n")
    if newline > room - 600:
        head = head[:newline]
    amp = head.rfind("&")
    if amp != -1 and ";" not in head[amp:]:
        head = head[:amp]  # half an entity
    lt = head.rfind("<")
    if lt != -1 and ">" not in head[lt:]:
        head = head[:lt]  # half a link (user data has no raw "<": it is escaped)
    if head.count("```") % 2:
        head += "\n```"
    return head + "\n" + note


def _in_code(app: str) -> str:
    """An app name for a template that already puts it in backticks."""
    return escape(_clip(app, 60)).replace("`", "'")


def _cut_note(app: str) -> str:
    return _t(wording.SLACK_CUT, app=_in_code(app))


# --- blocks ---------------------------------------------------------------------------------------------


def _section(text: str, note: str) -> JSONBlock:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _cut(text, MAX_SECTION, note)}}


def _context(texts: Sequence[str], note: str) -> JSONBlock:
    return {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": _cut(t, MAX_SECTION, note)} for t in texts[:10]],
    }


def _fit_section(text: str, note: str, room: int) -> JSONBlock | None:
    """A section of ``text`` whose JSON takes at most ``room`` characters, cut further as needed (None: no room)."""
    limit = MAX_SECTION
    while limit > len(note) + 100:
        block = _section(text, note) if limit == MAX_SECTION else _section(_cut(text, limit, note), note)
        size = _size(block)
        if size <= room:
            return block
        limit = min(limit - 100, limit * room // size)
    return None


def _header(text: str) -> JSONBlock:
    return {"type": "header", "text": {"type": "plain_text", "text": _clip(text, 150)}}


def _plain(text: str) -> dict[str, str]:
    return {"type": "plain_text", "text": text}


def _button(label: str, action_id: str, value: str, confirm: dict[str, Any] | None = None) -> dict[str, Any]:
    if len(value) > MAX_BUTTON_VALUE:
        raise ValueError(f"the value of button {action_id!r} is longer than {MAX_BUTTON_VALUE} characters")
    button: dict[str, Any] = {"type": "button", "action_id": action_id, "text": _plain(label), "value": value}
    if confirm is not None:
        button["confirm"] = confirm
    return button


def _mute_confirm(app: str) -> dict[str, Any]:
    name = _clip(app, 60)
    return {
        "title": _plain(_clip(wording.SLACK_MUTE_CONFIRM_TITLE.format(app=name), 100)),
        "text": {"type": "mrkdwn", "text": _t(wording.SLACK_MUTE_CONFIRM_TEXT, app=_in_code(name))},
        "confirm": _plain(wording.SLACK_MUTE_CONFIRM_YES),
        "deny": _plain(wording.SLACK_MUTE_CONFIRM_NO),
    }


def _actions(buttons: Buttons, app: str, which: Sequence[str]) -> JSONBlock:
    elements = []
    if ACTION_SHOW_DIFF in which:
        elements.append(_button(wording.SLACK_BUTTON_SHOW_DIFF, ACTION_SHOW_DIFF, buttons.show_diff))
    if ACTION_MUTE in which:
        elements.append(_button(wording.SLACK_BUTTON_MUTE, ACTION_MUTE, buttons.mute, _mute_confirm(app)))
    if ACTION_RECHECK in which:
        elements.append(_button(wording.SLACK_BUTTON_RECHECK, ACTION_RECHECK, buttons.recheck))
    return {"type": "actions", "block_id": ACTIONS_BLOCK_ID, "elements": elements}


def _size(block: Any) -> int:
    return len(json.dumps(block, ensure_ascii=False))


def validate_blocks(blocks: Sequence[dict[str, Any]]) -> None:
    """Raise ``ValueError`` unless ``blocks`` is a message Slack accepts: count, size and slack_sdk's models."""
    if len(blocks) > MAX_BLOCKS:
        raise ValueError(f"{len(blocks)} blocks in one message (at most {MAX_BLOCKS})")
    size = _size(list(blocks))
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


def _message(plain: str, blocks: list[JSONBlock]) -> Message:
    """A validated message; ``plain`` is the fallback summary before escaping."""
    validate_blocks(blocks)
    return Message(text=escape(_clip(" ".join(plain.split()), TEXT_LIMIT)) or "argo-why", blocks=blocks)


def _fitting(groups: Iterable[tuple[list[JSONBlock], str]]) -> Iterator[tuple[list[JSONBlock], str]]:
    """The groups, with any group too large for a message of its own split into its blocks."""
    for group, summary in groups:
        if len(group) > MAX_BLOCKS or _size(group) > MESSAGE_BUDGET:
            yield from (([block], summary if i == 0 else "") for i, block in enumerate(group))
        else:
            yield group, summary


def _pack(groups: Iterable[tuple[list[JSONBlock], str]]) -> list[tuple[list[JSONBlock], list[str]]]:
    """Groups of blocks (each kept whole, with a summary) packed into as few messages as the limits allow."""
    out: list[tuple[list[JSONBlock], list[str]]] = []
    blocks: list[JSONBlock] = []
    summaries: list[str] = []
    size = 2  # "[]"
    for group, summary in _fitting(groups):
        if blocks and (
            len(blocks) + len(group) > MAX_BLOCKS or size + sum(_size(b) + 2 for b in group) > MESSAGE_BUDGET
        ):
            out.append((blocks, summaries))
            blocks, summaries, size = [], [], 2
        if not blocks and group and group[0]["type"] == "divider":
            group = group[1:]
        blocks.extend(group)
        size += sum(_size(b) + 2 for b in group)
        if summary:
            summaries.append(summary)
    if blocks:
        out.append((blocks, summaries))
    return out


# --- what the blocks say --------------------------------------------------------------------------------


def _app_md(alert: Alert) -> str:
    """The app's name in bold, linked to Argo CD when its URL is known."""
    name = escape(_clip(alert.app, NAME_LIMIT))
    if not alert.argocd_url:
        return f"*{name}*"
    path = "/".join(quote(p, safe="") for p in (alert.app_namespace, alert.app) if p)
    url = f"{alert.argocd_url.rstrip('/')}/applications/{path}"
    return f"*<{escape(url).replace('|', '%7C')}|{name}>*"


def _short_revision(revision: str) -> str:
    return revision[:7] if _SHA.fullmatch(revision) else _clip(revision, 40)


def _facts(alert: Alert, *, unsettled: bool) -> str:
    parts = []
    if alert.revision:
        parts.append(_t(wording.SLACK_REVISION, revision=_code(_short_revision(alert.revision))))
    if alert.project:
        parts.append(_t(wording.SLACK_PROJECT, project=_code(alert.project)))
    if unsettled and alert.unsettled_syncs > 0:
        parts.append(escape(_n(wording.SLACK_UNSETTLED, alert.unsettled_syncs)))
    return " · ".join(parts)


def _resource_name(f: Finding) -> str:
    r = f.resource
    return f"{r.namespace}/{r.name}" if r.namespace else r.name


def _kind(kind: str) -> str:
    return escape(_clip(kind, 80))


def _resource_md(f: Finding) -> str:
    return f"{_kind(f.resource.kind)} {_code(_resource_name(f))}"


def _who(f: Finding) -> str | None:
    """The writer for a verdict: the object it acts for, and the manager unless that is Argo CD or the requester."""
    w = f.writer
    manager = w.manager if w.manager and w.manager not in ARGOCD_MANAGERS and f.cause != "mutating-webhook" else None
    if w.object is not None:
        name = f"{w.object.namespace}/{w.object.name}" if w.object.namespace else w.object.name
        who = f"{_kind(w.object.kind)} {_code(name)}"
        if manager and w.subresource:
            detail = wording.SLACK_WHO_DETAIL.format(manager=manager, subresource=w.subresource)
        elif manager:
            detail = wording.SLACK_WHO_MANAGER.format(manager=manager)
        else:
            return who
        return f"{who} {escape(_clip(detail, NAME_LIMIT))}"
    if manager:
        via = f" {escape(wording.SLACK_WHO_VIA.format(subresource=w.subresource))}" if w.subresource else ""
        return _code(manager) + via
    return None


def _verdict(f: Finding) -> str:
    """One line: "`/spec/replicas` of Deployment `shop/web` is rewritten by HorizontalPodAutoscaler `shop/web` …"."""
    with_who, without = wording.SLACK_PREDICATES.get(f.cause, wording.SLACK_PREDICATES["unknown"])
    who = _who(f)
    predicate = _t(with_who, who=who) if who is not None and "{who}" in with_who else escape(without)
    return _t(
        wording.SLACK_VERDICT, field=_code(f.pointer, POINTER_LIMIT), resource=_resource_md(f), predicate=predicate
    )


def _verdict_plain(f: Finding) -> str:
    title = wording.CAUSE_TITLES.get(f.cause, f.cause)
    return f"{_clip(f.pointer, 80)} of {f.resource.kind} {_clip(_resource_name(f), 80)}: {title}"


def _summary_plain(findings: Sequence[Finding], shown: int = 3) -> str:
    parts = [_verdict_plain(f) for f in findings[:shown]]
    rest = len(findings) - shown
    if rest > 0:
        parts.append(wording.SLACK_AND_MORE.format(count=rest))
    return "; ".join(parts)


def _counts(report: Report) -> dict[str, str]:
    return {
        "differences": _n(wording.SLACK_DIFFERENCES, len(report.findings)),
        "resources": _n(wording.SLACK_RESOURCES, len({f.resource for f in report.findings})),
    }


def _notes_groups(notes: Sequence[str], note: str) -> list[tuple[list[JSONBlock], str]]:
    texts = [escape(_clip(n, NOTE_LIMIT)) for n in notes]
    return [([_context(texts[i : i + 10], note)], "") for i in range(0, len(texts), 10)]


# --- the parent message ---------------------------------------------------------------------------------


def parent_message(report: Report, alert: Alert, buttons: Buttons | None) -> Message:
    """The one message per drift episode: app, revision, syncs, warnings first, one verdict per field, buttons.

    ``alert.status`` "synced" turns it green (what had drifted stays listed, no buttons); "failed" says the
    analysis failed (Re-check and Mute only). ``buttons=None`` leaves the actions block out. The title, the facts
    and the buttons always fit; the warnings and the verdicts share what is left of the message's budget.
    """
    note = _cut_note(alert.app)
    app = _app_md(alert)
    counts = _counts(report)
    plain: list[str] = []
    actions: list[str] = []

    if alert.status == "synced":
        title, icon = wording.SLACK_PARENT_SYNCED, wording.SLACK_ICON_SYNCED
    elif alert.status == "failed":
        title, icon = wording.SLACK_PARENT_FAILED, wording.SLACK_ICON_FAILED
        actions = [ACTION_MUTE, ACTION_RECHECK]
    else:
        title = wording.SLACK_PARENT_DRIFT if report.findings else wording.SLACK_PARENT_DRIFT_NONE
        icon = wording.SLACK_ICON_DRIFT
        actions = [ACTION_MUTE, ACTION_RECHECK]
        if report.findings:
            actions.insert(0, ACTION_SHOW_DIFF)
    head = [_section(f"{icon} " + _t(title, app=app, **{k: escape(v) for k, v in counts.items()}), note)]
    plain.append(title.format(app=alert.app, **counts) + ".")
    facts = _facts(alert, unsettled=alert.status != "synced")
    info = [_context([facts], note)] if facts else []
    tail = [_actions(buttons, alert.app, actions)] if buttons is not None and actions else []
    room = MESSAGE_BUDGET - _size([*head, *info, *tail]) - 400  # 400: the "more in the thread" line, separators

    warnings: list[JSONBlock] = []
    if alert.status == "drift" and report.warnings:
        text = "\n\n".join(f"{wording.SLACK_ICON_WARNING} {escape(w)}" for w in report.warnings)
        block = _fit_section(text, note, room - (2000 if report.findings else 0))
        warnings = [block] if block is not None else []
        room -= _size(warnings)
        plain.append(_clip(report.warnings[0], 300))

    body: list[JSONBlock] = []
    if alert.status == "failed":
        body.append(_section(_t(wording.SLACK_PARENT_FAILED_HINT, app=_in_code(alert.app)), note))
    elif report.findings:
        lines = [escape(wording.SLACK_SYNCED_WAS)] if alert.status == "synced" else []
        header = len(lines)
        for f in report.findings[:PARENT_VERDICTS]:
            candidate = "\n".join([*lines, f"• {_verdict(f)}"])
            if len(lines) > header and (len(candidate) > MAX_SECTION - 200 or _size(candidate) + 60 > room):
                break
            lines.append(f"• {_verdict(f)}")
        body.append(_section("\n".join(lines), note))
        rest = len(report.findings) - (len(lines) - header)
        if alert.status == "drift":
            more = [_t(wording.SLACK_MORE_IN_THREAD, count=str(rest))] if rest > 0 else []
            body.append(_context([*more, escape(wording.SLACK_SEE_THREAD)], note))
        plain.append(_summary_plain(report.findings))
    elif report.notes:
        body.append(_context([escape(_clip(n, NOTE_LIMIT)) for n in report.notes[:3]], note))

    return _message(" ".join(plain), [*head, *warnings, *info, *body, *tail])


# --- the thread -----------------------------------------------------------------------------------------


def _owner_line(f: Finding) -> str:
    w = f.writer
    if w.manager is None:
        return escape(wording.SLACK_NO_OWNER)
    sub = _t(wording.SLACK_OWNER_SUBRESOURCE, subresource=_code(w.subresource)) if w.subresource else ""
    return _t(
        wording.SLACK_OWNER,
        manager=_code(w.manager),
        operation=escape(_clip(w.operation or "?", 40)),
        subresource=sub,
        time=escape(_clip(w.time, 60)) if w.time else escape(wording.SLACK_UNKNOWN_TIME),
    )


def _evidence_section(f: Finding, number: int, total: int, note: str) -> JSONBlock:
    w = f.writer
    title = wording.CAUSE_TITLES.get(f.cause, f.cause)
    lines = [
        _t(wording.SLACK_FINDING_TITLE, number=str(number), total=str(total), verdict=_verdict(f)),
        _t(wording.SLACK_CAUSE, cause=_code(f.cause), title=escape(title), confidence=escape(f.confidence)),
    ]
    if f.explanation:
        lines.append(escape(f.explanation))
    lines.append(escape(wording.SLACK_EVIDENCE))
    bullets = [_owner_line(f)]
    if w.co_owners:
        owners = ", ".join(_code(o) for o in w.co_owners[:10])
        bullets.append(_t(wording.SLACK_CO_OWNERS, owners=owners))
    if w.object is not None:
        name = f"{w.object.namespace}/{w.object.name}" if w.object.namespace else w.object.name
        bullets.append(_t(wording.SLACK_OBJECT, object=f"{_kind(w.object.kind)} {_code(name)}"))
    # the analysis' own evidence; its managedFields line is the owner line above
    bullets += [escape(_clip(e, 600)) for e in f.evidence if not e.startswith("managedFields:")]
    bullets.append(_t(wording.SLACK_VALUES, desired=_value(f.desired), live=_value(f.live)))
    lines += [f"• {b}" for b in bullets]
    return _section("\n".join(lines), note)


def _hides(f: Finding) -> str:
    shown = [_code(p, POINTER_LIMIT) for p in f.fix.hides[:HIDES_SHOWN]]
    rest = len(f.fix.hides) - HIDES_SHOWN
    if rest > 0:
        shown.append(escape(wording.SLACK_AND_MORE.format(count=rest)))
    return ", ".join(shown) if shown else _code(f.pointer, POINTER_LIMIT)


def _fix_section(f: Finding, note: str) -> JSONBlock:
    fix = f.fix
    better = _t(wording.SLACK_BETTER_FIX, alternative=escape(fix.alternative)) if fix.alternative else ""
    if fix.rule is None:
        if fix.verified is False:
            reason = wording.RULE_NOT_VERIFIED
        else:
            reason = wording.SLACK_NO_RULE_REASONS.get(f.cause, wording.SLACK_NO_RULE_REASONS["unknown"])
        lines = [_t(wording.SLACK_NO_RULE, reason=escape(reason))]
        return _section("\n".join([*lines, better] if better else lines), note)

    rule_yaml = yaml.safe_dump([fix.rule], sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)
    rule = [
        _t(wording.SLACK_FALLBACK_RULE if fix.fallback else wording.SLACK_RULE, hides=_hides(f)),
        _code_block(rule_yaml.rstrip("\n")),
    ]
    if fix.sync_options:
        options = yaml.safe_dump(list(fix.sync_options), default_flow_style=False, allow_unicode=True, width=1000)
        rule += [escape(wording.SLACK_SYNC_OPTIONS), _code_block(options.rstrip("\n"))]
    if fix.verified is False:
        rule.append(f"{wording.SLACK_ICON_ERROR} {escape(wording.SLACK_RULE_UNVERIFIED)}")
    parts = ([better] if better else []) + rule if fix.fallback else rule + ([better] if better else [])
    return _section("\n".join(parts), note)


def _app_facts(report: Report) -> str | None:
    facts = report.application
    if not facts:
        return None
    if facts.get("automated"):
        sync = wording.SLACK_SYNC_SELF_HEAL if facts.get("self_heal") else wording.SLACK_SYNC_AUTOMATED
    else:
        sync = wording.SLACK_SYNC_MANUAL
    respect = wording.SLACK_ON if facts.get("respect_ignore_differences") else wording.SLACK_OFF
    existing = len(facts.get("ignore_differences") or [])
    return _t(wording.SLACK_THREAD_APP_FACTS, sync=escape(sync), respect=escape(respect), existing=str(existing))


def thread_messages(report: Report, alert: Alert) -> list[Message]:
    """The thread under the parent: one section pair per finding, then "What not to do" and the notes.

    Split into as many messages as needed so that each stays within the limits in the module docstring.
    """
    note = _cut_note(alert.app)
    app = _app_md(alert)
    if not report.findings:
        resources = _n(wording.SLACK_RESOURCES, report.resources_compared)
        clean = [
            ([_section(_t(wording.SLACK_NO_DRIFT, resources=escape(resources), app=app), note)], ""),
            *_notes_groups(report.notes, note),
        ]
        plain = wording.SLACK_NO_DRIFT.format(resources=resources, app=alert.app)
        return [_message(plain, blocks) for blocks, _ in _pack(clean)]

    counts = {k: escape(v) for k, v in _counts(report).items()}
    head = [_section(_t(wording.SLACK_THREAD_TITLE, app=app, compared=str(report.resources_compared), **counts), note)]
    facts = _app_facts(report)
    if facts:
        head.append(_context([facts], note))
    total = len(report.findings)
    groups: list[tuple[list[JSONBlock], str]] = []
    for number, f in enumerate(report.findings, 1):
        blocks = [*head] if number == 1 else [{"type": "divider"}]
        blocks += [_evidence_section(f, number, total, note), _fix_section(f, note)]
        groups.append((blocks, _verdict_plain(f)))
    packed = _pack(groups)

    messages = []
    for part, (blocks, summaries) in enumerate(packed, 1):
        plain = wording.SLACK_TEXT_THREAD.format(
            app=alert.app, part=part, parts=len(packed), findings="; ".join(summaries)
        )
        messages.append(_message(plain, blocks))

    do_not = [_header(wording.SLACK_DO_NOT_TITLE), _section("\n".join(f"• {escape(d)}" for d in wording.DO_NOT), note)]
    final = _pack([(do_not, ""), *_notes_groups(report.notes, note)])
    advice = " ".join(wording.DO_NOT)
    messages += [_message(wording.SLACK_TEXT_DO_NOT.format(advice=advice), blocks) for blocks, _ in final]
    return messages


# --- other messages -------------------------------------------------------------------------------------


def analysis_failed_message(app: str, reason: str) -> Message:
    """Posted in the thread when the analysis gave up after its last retry."""
    note = _cut_note(app)
    name = escape(_clip(app, NAME_LIMIT))
    blocks = [
        _section(
            f"{wording.SLACK_ICON_FAILED} "
            + _t(wording.SLACK_ANALYSIS_FAILED, app=f"*{name}*", reason=escape(_clip(reason, 2000))),
            note,
        ),
        _context([_t(wording.SLACK_ANALYSIS_FAILED_HINT, app=_in_code(app))], note),
    ]
    return _message(wording.SLACK_ANALYSIS_FAILED.format(app=app, reason=reason), blocks)


def _diff_lines(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        if value and value.strip() == value:
            return value.splitlines()
        return [json.dumps(value, ensure_ascii=False)]  # empty, or with edge whitespace: quoted to be seen
    if isinstance(value, dict | list):
        return yaml.safe_dump(value, sort_keys=True, default_flow_style=False, allow_unicode=True).splitlines()
    return [json.dumps(value, ensure_ascii=False)]


def _diff_text(report: Report, app: str) -> str:
    lines = [wording.SLACK_DIFF_FROM.format(app=app), wording.SLACK_DIFF_TO.format(app=app)]
    for f in report.findings:
        absent = ""
        if f.desired is None:
            absent = wording.SLACK_DIFF_ABSENT_GIT
        elif f.live is None:
            absent = wording.SLACK_DIFF_ABSENT_LIVE
        resource = f"{f.resource.kind} {_resource_name(f)}"
        lines.append(wording.SLACK_DIFF_HUNK.format(pointer=f.pointer, resource=resource, absent=absent))
        old, new = _diff_lines(f.desired), _diff_lines(f.live)
        if len(old) > 1 or len(new) > 1:
            body = difflib.unified_diff(old, new, lineterm="", n=max(len(old), len(new)))
            lines += [line for line in body if not line.startswith(("---", "+++", "@@"))]
        else:
            lines += [f"-{x}" for x in old] + [f"+{x}" for x in new]
    return "\n".join(lines) + "\n"


def diff_message(report: Report, alert: Alert, limit: int = 2900) -> tuple[Message, str | None]:
    """Git against live for every finding, unified-style, in a code block of at most ``limit`` characters.

    When it does not fit: a short message, and the full (unescaped) text as the second element, for the caller
    to upload as a file in the thread. Values are the Report's, so Secret values stay masked.
    """
    note = _cut_note(alert.app)
    app = _app_md(alert)
    if not report.findings:
        text = _t(wording.SLACK_DIFF_NONE, app=app)
        return _message(wording.SLACK_DIFF_NONE.format(app=alert.app), [_section(text, note)]), None
    differences = _n(wording.SLACK_DIFFERENCES, len(report.findings))
    full = _diff_text(report, alert.app)
    block = _code_block(full.rstrip("\n"))
    if len(block) <= min(limit, MAX_SECTION):
        title = _t(wording.SLACK_DIFF_TITLE, app=app, differences=escape(differences))
        plain = wording.SLACK_DIFF_TITLE.format(app=alert.app, differences=differences)
        return _message(plain, [_section(title, note), _section(block, note)]), None
    lines = str(full.count("\n"))
    text = _t(wording.SLACK_DIFF_FILE, app=app, differences=escape(differences), lines=lines)
    plain = wording.SLACK_DIFF_FILE.format(app=alert.app, differences=differences, lines=lines)
    return _message(plain, [_section(text, note)]), full


def _top_cause(report: Report) -> str:
    counts = Counter(f.cause for f in report.findings)
    first = {c: i for i, c in reversed(list(enumerate(f.cause for f in report.findings)))}
    cause = min(counts, key=lambda c: (-counts[c], first[c]))
    return wording.CAUSE_TITLES.get(cause, cause)


def _digest_line(alert: Alert, report: Report | None) -> tuple[str, str]:
    """The app's line in the digest, as mrkdwn and as plain text."""
    app = _app_md(alert)
    values: dict[str, str] = {}
    if alert.status == "failed":
        template = wording.SLACK_DIGEST_FAILED
    elif alert.status == "synced":
        template = wording.SLACK_DIGEST_SYNCED
    elif report is None:
        template = wording.SLACK_DIGEST_PENDING
    elif not report.findings:
        template = wording.SLACK_DIGEST_CLEAN
    else:
        template = wording.SLACK_DIGEST_LINE
        values = {"differences": _n(wording.SLACK_DIFFERENCES, len(report.findings)), "cause": _top_cause(report)}
    text = _t(template, app=app, **{k: escape(v) for k, v in values.items()})
    if report is not None and report.warnings and alert.status == "drift":
        text = f"{wording.SLACK_ICON_WARNING} {text}"
    return text, template.format(app=alert.app, **values)


def digest_message(items: list[tuple[Alert, Report | None]], buttons: dict[str, Buttons] | None) -> Message:
    """One message for a burst of apps drifting at once: one line per app, each with "Show details".

    The button is ``recheck`` with ``buttons[app].recheck`` as its value (apps missing from ``buttons`` get
    none); beyond what fits in one message, "and N more apps".
    """
    note = _cut_note("<app>")
    count = _n(wording.SLACK_APPS, len(items))
    blocks: list[JSONBlock] = [
        _section(f"{wording.SLACK_ICON_DRIFT} " + _t(wording.SLACK_DIGEST_TITLE, apps=escape(count)), note)
    ]
    if buttons:
        blocks.append(_context([escape(wording.SLACK_DIGEST_HINT)], note))
    reserve = _size(_context([escape(_n(wording.SLACK_DIGEST_MORE, len(items)))], note)) + 2
    size = _size(blocks)
    names: list[str] = []
    shown = 0
    for alert, report in items:
        text, plain = _digest_line(alert, report)
        block = _section(text, note)
        ids = (buttons or {}).get(alert.app)
        if ids is not None:
            block["accessory"] = _button(wording.SLACK_BUTTON_DETAILS, ACTION_RECHECK, ids.recheck)
        last = shown == len(items) - 1
        if len(blocks) + (1 if last else 2) > MAX_BLOCKS or size + _size(block) + 2 + (0 if last else reserve) > (
            MESSAGE_BUDGET
        ):
            break
        blocks.append(block)
        size += _size(block) + 2
        names.append(plain)
        shown += 1
    rest = len(items) - shown
    if rest > 0:
        more = _n(wording.SLACK_DIGEST_MORE, rest)
        blocks.append(_context([escape(more)], note))
        names.append(more)
    title = wording.SLACK_DIGEST_TITLE.format(apps=count)
    return _message(f"{title}: " + "; ".join(names), blocks)


def help_message() -> Message:
    """``/argo help``: the commands."""
    lines = [f"• {_code(command)}: {escape(what)}" for command, what in wording.SLACK_HELP_COMMANDS]
    note = _cut_note("<app>")
    blocks = [
        _section(escape(wording.SLACK_HELP_TITLE), note),
        _section("\n".join(lines), note),
        _context([escape(wording.SLACK_HELP_FOOTER)], note),
    ]
    commands = ", ".join(command for command, _ in wording.SLACK_HELP_COMMANDS)
    return _message(f"{wording.SLACK_HELP_TITLE} {commands}", blocks)


def error_message(text: str) -> Message:
    """A short error, for an ephemeral answer."""
    block = _section(f"{wording.SLACK_ICON_ERROR} {escape(_clip(text, MAX_SECTION - 20))}", "…")
    return _message(text, [block])
