"""What the drift page shows, computed from a Report: pure data the template only has to lay out.

For every object pair of the report that has findings (``Report.objects``): the rows of
:func:`bot.analysis.side_by_side`, each marked (``diff``: under a finding and different; ``other``: different but
not a finding, such as a difference an existing ignoreDifferences rule hides; ``live``: a field only the live object
has, which Argo CD does not compare; ``same``), the finding cards placed right after the lines they concern, and
the runs of unremarkable lines folded (a few lines of context kept on each side). At the top: app, revision, diff
mode, findings by cause, warnings and notes.

Guarantees: pure (no I/O, no clock); values are the Report's, so Secret values stay masked; every finding of the
report appears on the page exactly once, beside its lines when the object pair is known, in the list of findings
without an object otherwise; a long opaque value is carried with its length and a short hash so that the page can
fold it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from bot.analysis import Cell, Owner, Row, covers, side_by_side
from bot.model import Alert, ComparedObject, Finding, Report
from bot.wording import report as wording

FOLD_MIN = 8
"""A run of at least this many unremarkable lines is folded."""
FOLD_CONTEXT = 2
"""Lines kept visible on each side of a fold, next to something remarkable."""

State = Literal["diff", "other", "live", "same"]


@dataclass(frozen=True)
class Side:
    indent: int
    text: str
    long_length: int = 0
    long_hash: str = ""
    long_value: str = ""

    @classmethod
    def of(cls, cell: Cell | None) -> Side | None:
        if cell is None:
            return None
        if cell.long_value is None:
            return cls(cell.indent, cell.text)
        digest = hashlib.sha256(cell.long_value.encode()).hexdigest()[:12]
        return cls(cell.indent, cell.text, len(cell.long_value), digest, cell.long_value)


@dataclass(frozen=True)
class Line:
    left: Side | None
    right: Side | None
    state: State
    pointer: str
    owners: tuple[Owner, ...]
    inherited: bool
    findings: tuple[int, ...]
    """Numbers of the findings this line belongs to."""
    unowned: bool = False
    """A finding of this line says no entry owns its field: the Writer column says so too, never the owner of an
    ancestor (which the finding just said is not the writer)."""
    kind: Literal["line"] = "line"


@dataclass(frozen=True)
class Card:
    number: int
    finding: Finding
    cause_title: str
    rule_yaml: str
    """The proposed ignoreDifferences entry (and sync options) as YAML, what the copy button copies; "" if none."""
    kind: Literal["card"] = "card"


@dataclass(frozen=True)
class Fold:
    lines: tuple[Line, ...]
    kind: Literal["fold"] = "fold"


Block = Line | Card | Fold


@dataclass
class ObjectView:
    anchor: str
    label: str
    api: str
    blocks: list[Block]
    writers: list[Owner]
    has_managed_fields: bool
    findings: int
    diff_lines: int


@dataclass
class Page:
    app: str
    revision: str | None
    diff_mode: str
    causes: list[tuple[str, str, int]]
    """(cause, its title, how many findings), most first."""
    cards: list[Card]
    objects: list[ObjectView]
    unplaced: list[Card] = field(default_factory=list)
    """Findings whose object pair the report does not hold (a report read back from JSON)."""
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    compared: int = 0
    not_compared: list[str] = field(default_factory=list)
    application: dict[str, Any] | None = None


def _rule_yaml(f: Finding) -> str:
    if f.fix.rule is None:
        return ""
    text = yaml.safe_dump({"ignoreDifferences": [f.fix.rule]}, sort_keys=False, allow_unicode=True, width=1000)
    if f.fix.sync_options:
        text += yaml.safe_dump({"syncPolicy": {"syncOptions": list(f.fix.sync_options)}}, sort_keys=False,
                               allow_unicode=True, width=1000)  # fmt: skip
    return text


def _diff_mode(report: Report) -> str:
    facts = report.application
    if facts is None:
        return wording.PAGE_MODE_FILES
    options = str(facts.get("compare_options") or "")
    if "ServerSideDiff=true" in options.replace(" ", ""):
        return wording.PAGE_MODE_SERVER_SIDE
    return wording.PAGE_MODE_LEGACY


def _state(row: Row, numbers: tuple[int, ...], exact: bool) -> State:
    """``exact``: a finding names this very field; its line is marked even when both sides read the same (a masked
    Secret value, a list whose members only changed order)."""
    if numbers and (row.differs or (exact and not row.embedded)):
        return "diff"
    if not row.differs:
        return "same"
    return "live" if row.left is None else "other"


def _object_view(obj: ComparedObject, cards: Sequence[Card], index: int) -> ObjectView:
    sbs = side_by_side(obj.desired, obj.live)
    pointers = [(c.number, c.finding.pointer) for c in cards]
    unowned_pointers = [c.finding.pointer for c in cards if c.finding.writer.manager is None]
    lines: list[Line] = []
    for row in sbs.rows:
        numbers = tuple(n for n, p in pointers if covers(p, row.pointer))
        exact = any(p == row.pointer for _, p in pointers)
        unowned = row.inherited and any(covers(p, row.pointer) for p in unowned_pointers)
        lines.append(Line(Side.of(row.left), Side.of(row.right), _state(row, numbers, exact), row.pointer,
                          () if unowned else row.owners, row.inherited and not unowned, numbers, unowned))  # fmt: skip
    # a card goes after the last line of its field (its subtree), else after the last line it covers, else at the end
    after: dict[int, list[Card]] = {}
    end: list[Card] = []
    for card in cards:
        last = max((i for i, ln in enumerate(lines) if covers(card.finding.pointer, ln.pointer)), default=None)
        if last is None:
            end.append(card)
        else:
            after.setdefault(last, []).append(card)
    blocks: list[Block] = []
    for i, line in enumerate(lines):
        blocks.append(line)
        blocks.extend(after.get(i, []))
    blocks.extend(end)
    r = obj.resource
    return ObjectView(
        anchor=f"o{index}",
        label=r.label,
        api=f"{r.group}/{r.version}" if r.group else (r.version or "v1"),
        blocks=_fold(blocks),
        writers=sbs.writers,
        has_managed_fields=sbs.has_managed_fields,
        findings=len(cards),
        diff_lines=sum(1 for ln in lines if ln.state == "diff"),
    )


def _remarkable(block: Block) -> bool:
    return not isinstance(block, Line) or block.state in ("diff", "other") or bool(block.findings)


def _fold(blocks: list[Block]) -> list[Block]:
    """Runs of unremarkable lines folded, :data:`FOLD_CONTEXT` lines kept beside what is remarkable."""
    out: list[Block] = []
    run: list[Line] = []

    def flush(at_start: bool, at_end: bool) -> None:
        head = 0 if at_start else FOLD_CONTEXT
        tail = 0 if at_end else FOLD_CONTEXT
        if len(run) - head - tail >= FOLD_MIN:
            out.extend(run[:head])
            out.append(Fold(tuple(run[head : len(run) - tail])))
            out.extend(run[len(run) - tail :])
        else:
            out.extend(run)
        run.clear()

    started = False
    for block in blocks:
        if isinstance(block, Line) and not _remarkable(block):
            run.append(block)
            continue
        flush(not started, False)
        started = True
        out.append(block)
    flush(not started, True)
    return out


def _one_sided(report: Report) -> list[str]:
    """Resources only one side has, and an OutOfSync nothing explains: said where the warnings are."""
    out = [f"{r.resource.label}: {wording.RESOURCE_STATES[r.state]}. {r.explanation} {r.fix}" for r in report.resources]
    said = report.nothing_differs
    if said is not None:
        out.append(f"{said.get('explanation')} {said.get('fix')}")
    return out


def build_page(report: Report, alert: Alert | None = None) -> Page:
    """The page of one report (``alert`` adds what the bot knows beyond it: revision, namespace)."""
    alert = alert or Alert.from_report(report)
    cards = [
        Card(n, f, wording.cause_title(f.cause, added=f.desired is None), _rule_yaml(f))
        for n, f in enumerate(report.findings, 1)
    ]
    by_cause = Counter(f.cause for f in report.findings)
    ranked = sorted(by_cause.items(), key=lambda kv: (-kv[1], kv[0]))
    added = {c for c in by_cause if all(f.desired is None for f in report.findings if f.cause == c)}
    causes: list[tuple[str, str, int]] = [(c, wording.cause_title(c, added=c in added), n) for c, n in ranked]
    drifted: list[tuple[ComparedObject, list[Card]]] = []
    placed: set[int] = set()
    for obj in report.objects:
        mine = [c for c in cards if c.finding.resource == obj.resource and c.number not in placed]
        if mine:
            placed.update(c.number for c in mine)
            drifted.append((obj, mine))
    drifted.sort(key=lambda pair: pair[1][0].number)  # in the order of the findings (the report's order)
    objects = [_object_view(obj, mine, i) for i, (obj, mine) in enumerate(drifted, 1)]
    return Page(
        app=alert.app,
        revision=alert.revision,
        diff_mode=_diff_mode(report),
        causes=causes,
        cards=cards,
        objects=objects,
        unplaced=[c for c in cards if c.number not in placed],
        warnings=[*report.warnings, *_one_sided(report)],
        notes=list(report.notes),
        compared=report.resources_compared,
        not_compared=[r.label for r in report.not_compared],
        application=report.application,
    )
