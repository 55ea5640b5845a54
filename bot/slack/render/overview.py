"""The drift overview (``/argo drift``, the App Home tab): the OutOfSync apps grouped by cause and writer, paged.

Pure: from the fleet's groups and per-app facts to a :class:`Message` (or a Home tab view). Fleet-wide groups come
first, then the most apps; each group says its top fields and, per app, how long it has drifted, whether it is
muted and whether a PR is open. An app is listed once, under its largest group. Pages hold :data:`GROUPS_PER_PAGE`
groups, so a page always fits Slack's limits (every value clipped and escaped).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.analysis.fleet import FleetGroup
from bot.slack.render.blocks import JSONBlock, Message, context, header, message, section
from bot.slack.render.escaping import clip, code, escape, fill
from bot.slack.render.schedule import duration
from bot.wording import slack as wording
from bot.wording.report import plural

GROUPS_PER_PAGE = 8
APPS_PER_GROUP = 8
TOP_FIELDS = 3


@dataclass(frozen=True)
class AppFacts:
    """What the overview says about one app beyond its findings."""

    drifting_s: float
    muted: bool = False
    pr_open: bool = False


@dataclass(frozen=True)
class Overview:
    groups: tuple[FleetGroup, ...]
    """One group per (cause, writer), each app under one group only."""
    apps: int
    page: int
    pages: int
    total_groups: int


def overview(groups: Sequence[FleetGroup], page: int = 1) -> Overview:
    """Page ``page`` (1-based, clamped) of the overview of ``groups`` (as :func:`group_findings` orders them)."""
    seen: set[str] = set()
    merged: dict[tuple[str, str], list[FleetGroup]] = {}
    for g in groups:
        merged.setdefault((g.cause, g.writer), []).append(g)
    rows: list[FleetGroup] = []
    for (cause, writer), members in merged.items():
        apps = tuple(sorted({a for g in members for a in g.apps} - seen))
        if not apps:
            continue
        seen.update(apps)
        fields = Counter(g.path for g in members for _ in g.apps)
        top = " | ".join(p for p, _ in fields.most_common(TOP_FIELDS))
        first = members[0]
        rows.append(
            FleetGroup(
                first.group,
                first.kind,
                top,
                writer,
                cause,
                apps,
                tuple(o for g in members for o in g.objects),
                any(g.fleet_wide for g in members),
            )
        )
    rows.sort(key=lambda g: (not g.fleet_wide, -len(g.apps), g.cause, g.writer))
    pages = max(1, -(-len(rows) // GROUPS_PER_PAGE))
    page = min(max(page, 1), pages)
    shown = rows[(page - 1) * GROUPS_PER_PAGE : page * GROUPS_PER_PAGE]
    return Overview(tuple(shown), len(seen), page, pages, len(rows))


def _app_line(app: str, facts: AppFacts | None) -> str:
    flags = []
    if facts is not None and facts.muted:
        flags.append(wording.SLACK_OVERVIEW_MUTED)
    if facts is not None and facts.pr_open:
        flags.append(wording.SLACK_OVERVIEW_PR)
    extra = f" ({', '.join(flags)})" if flags else ""
    return fill(wording.SLACK_OVERVIEW_APP, app=code(app), duration=escape(duration(facts.drifting_s if facts else 0)),
                flags=escape(extra))  # fmt: skip


def overview_blocks(view: Overview, facts: Mapping[str, AppFacts], total_groups: int) -> list[JSONBlock]:
    title = wording.SLACK_OVERVIEW_TITLE.format(
        apps=plural(wording.SLACK_APPS, view.apps), groups=plural(wording.SLACK_OVERVIEW_GROUPS, total_groups)
    )
    blocks: list[JSONBlock] = [header(clip(title, 150))]
    if not view.groups:
        return [*blocks, section(escape(wording.SLACK_OVERVIEW_EMPTY), "…")]
    for g in view.groups:
        head = fill(wording.SLACK_OVERVIEW_GROUP, cause=f"*{escape(g.cause)}*", writer=code(g.writer),
                    apps=escape(plural(wording.SLACK_APPS, len(g.apps))))  # fmt: skip
        if g.fleet_wide:
            head = f"{wording.SLACK_ICON_FLEET} *{escape(wording.SLACK_OVERVIEW_FLEET)}* · {head}"
        lines = [f"• {_app_line(a, facts.get(a))}" for a in g.apps[:APPS_PER_GROUP]]
        if len(g.apps) > APPS_PER_GROUP:
            lines.append(escape(wording.SLACK_AND_MORE.format(count=len(g.apps) - APPS_PER_GROUP)))
        fields = fill(wording.SLACK_OVERVIEW_FIELDS, fields=code(g.path, 300))
        blocks.append(section(f"{head}\n{fields}\n" + "\n".join(lines), "…"))
    more = (
        wording.SLACK_OVERVIEW_PAGE.format(page=view.page, pages=view.pages, next=view.page + 1)
        if view.page < view.pages
        else wording.SLACK_OVERVIEW_LAST_PAGE.format(page=view.page, pages=view.pages)
    )
    blocks.append(context([escape(more)], "…"))
    return blocks


def overview_message(groups: Sequence[FleetGroup], facts: Mapping[str, AppFacts], page: int = 1) -> Message:
    """``/argo drift [page]``: the overview as a message."""
    view = overview(groups, page)
    total = len(overview(groups, 1).groups) if view.pages == 1 else len({(g.cause, g.writer) for g in groups})
    blocks = overview_blocks(view, facts, total)
    plain = wording.SLACK_OVERVIEW_TITLE.format(
        apps=plural(wording.SLACK_APPS, view.apps), groups=plural(wording.SLACK_OVERVIEW_GROUPS, total)
    )
    return message(plain, blocks)


def home_view(groups: Sequence[FleetGroup], facts: Mapping[str, AppFacts]) -> dict[str, Any]:
    """The App Home tab (``views.publish``): the first page of the overview."""
    return {"type": "home", "blocks": overview_message(groups, facts).blocks}
