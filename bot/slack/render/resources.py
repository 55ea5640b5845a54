"""What the parent and the thread say about resources only one side has, and about an OutOfSync with nothing that
differs (:attr:`bot.model.Report.resources`, :attr:`bot.model.Report.nothing_differs`).

What it guarantees: every value goes through :mod:`bot.slack.render.escaping`; the explanations and fixes are the
report's own sentences (the same in the text report, the JSON and Slack); one section per resource, so the thread
is split only between resources.
"""

from __future__ import annotations

from bot.model import Report, ResourceIssue
from bot.slack.render.blocks import JSONBlock, context, section
from bot.slack.render.escaping import clip, code, escape, fill
from bot.slack.render.phrases import NOTE_LIMIT, kind_md
from bot.wording import slack as wording
from bot.wording.report import RESOURCE_STATES, plural


def _name(r: ResourceIssue) -> str:
    res = r.resource
    return f"{kind_md(res.kind)} {code(f'{res.namespace}/{res.name}' if res.namespace else res.name)}"


def one_sided_count(report: Report) -> str:
    """ "2 resources only one side has", plain text."""
    return plural(wording.SLACK_ONE_SIDED, len(report.resources))


def parent_lines(report: Report, limit: int = 10) -> list[str]:
    """One bullet per resource for the parent: the resource and its state."""
    return [
        "• " + fill(wording.SLACK_RESOURCE_LINE, resource=_name(r), state=escape(RESOURCE_STATES[r.state]))
        for r in report.resources[:limit]
    ]


def resources_plain(report: Report) -> str:
    return "; ".join(f"{r.resource.label}: {RESOURCE_STATES[r.state]}" for r in report.resources[:3]) + (
        f"; {wording.SLACK_AND_MORE.format(count=len(report.resources) - 3)}" if len(report.resources) > 3 else ""
    )


def nothing_differs_blocks(report: Report, note: str) -> list[JSONBlock]:
    said = report.nothing_differs
    if said is None:
        return []
    lines = [escape(wording.SLACK_NOTHING_DIFFERS_TITLE), escape(str(said.get("explanation") or ""))]
    lines.append(fill(wording.SLACK_NOTHING_DIFFERS_FIX, fix=escape(str(said.get("fix") or ""))))
    return [section("\n".join(lines), note)]


def resource_groups(report: Report, note: str) -> list[tuple[list[JSONBlock], str]]:
    """The thread's part: one section per resource (state, why, fix, then what Argo CD says), plain summaries."""
    groups: list[tuple[list[JSONBlock], str]] = []
    for r in report.resources:
        lines = [
            fill(wording.SLACK_RESOURCE_TITLE, resource=_name(r), state=escape(RESOURCE_STATES[r.state])),
            escape(r.explanation),
            fill(wording.SLACK_RESOURCE_FIX, fix=escape(r.fix)),
        ]
        blocks = [section("\n".join(lines), note)]
        if r.evidence:
            evidence = [escape(wording.SLACK_RESOURCE_EVIDENCE), *(escape(clip(e, NOTE_LIMIT)) for e in r.evidence)]
            blocks.append(context(evidence[:10], note))
        groups.append((blocks, f"{r.resource.label}: {RESOURCE_STATES[r.state]}"))
    blocks = nothing_differs_blocks(report, note)
    if blocks:
        groups.append((blocks, wording.SLACK_TEXT_NOTHING_DIFFERS.format(app=report.app or "app")))
    return groups
