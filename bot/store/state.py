"""State the bot keeps in the store between messages, typed: what buttons point at.

The store (:mod:`bot.store`) keeps JSON; these models are what the rest of the bot reads and writes
through it (the thread map's record, :class:`bot.store.ThreadRef`, belongs to the store itself: this module
imports the store, never the other way round). Guarantees:

* button state (:class:`ReportState`, :class:`DigestState`) is saved under an opaque id whose kind
  prefix is the model's :attr:`KIND`; :meth:`StateModel.load` answers ``None`` for an expired id, an
  id of another kind, or a payload that does not validate (a button value comes from outside), never
  an exception.

The keys and their lifetimes are listed in :mod:`bot.store`, which owns them.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.model import Alert, Buttons, ComparedObject, DigestSummary, Finding, Report, report_from_dict

if TYPE_CHECKING:
    from bot.store import Store

log = logging.getLogger("bot.state")  # its name from before the move to the store: log filters keep working


class StateModel(BaseModel):
    """State behind a button value: saved under ``<KIND>:<random>``, loaded back only as the same kind."""

    model_config = ConfigDict(extra="ignore")
    KIND: ClassVar[str]

    async def save(self, store: Store, ttl_s: int) -> str:
        # JSON written by pydantic-core from the model: no dict copy of the state (a digest's is a thousand apps,
        # rewritten at every flush)
        return await store.put_state(self.KIND, self.model_dump_json(), ttl_s)

    @classmethod
    async def load(cls, store: Store, state_id: str) -> Self | None:
        if not state_id.startswith(f"{cls.KIND}:"):
            return None
        raw = await store.get_state(state_id)
        if raw is None:
            return None
        try:
            return cls.model_validate_json(raw)
        except ValidationError:
            log.warning("unreadable %s state %s; treated as expired", cls.KIND, state_id)
            return None


class DigestItem(BaseModel):
    """One app waiting in (or listed by) the digest: the alert and its report (the JSON of ``Report.to_dict``)."""

    alert: Alert
    report: dict[str, Any]
    reason: str | None = None
    """Why the analysis failed (``alert.status`` "failed")."""
    channel: str | None = None
    """The channel whose digest lists it (``None``, in entries written before channels were routed: SLACK_CHANNEL)."""
    route_note: str | None = None
    """Why it is listed in ``SLACK_CHANNEL`` instead of its own channel (said once in the digest's thread)."""

    def parsed_report(self) -> Report:
        return report_from_dict(self.report)

    @classmethod
    def of(cls, alert: Alert, report: Report, reason: str | None = None, channel: str | None = None,
           route_note: str | None = None) -> DigestItem:  # fmt: skip
        """What the digest needs of a report, no more (it may list a thousand apps, rewritten at every flush): per
        finding the resource, pointer, cause and writer; the first warning; the resources only one side has."""
        findings = [{"resource": f.resource.to_dict(), "pointer": f.pointer, "cause": f.cause,
                     "writer": {"manager": f.writer.manager,
                                "object": f.writer.object.to_dict() if f.writer.object else None}}
                    for f in report.findings]  # fmt: skip
        resources = [r.to_dict() for r in report.resources]  # few: resources only one side has
        return cls(alert=alert, report={"app": report.app, "findings": findings, "warnings": report.warnings[:1],
                                        "resources": resources},
                   reason=reason, channel=channel, route_note=route_note)  # fmt: skip


class ReportState(StateModel, DigestItem):
    """What the buttons of an alert (Show diff, Mute, Re-check) act on."""

    KIND: ClassVar[str] = "report"
    app_key: str
    app: str
    app_namespace: str | None = None


class FixState(StateModel):
    """What one Open PR (or Approve) button proposes: the app, the kind of fix, and the findings it is for."""

    KIND: ClassVar[str] = "fix"
    app_key: str
    app: str
    app_namespace: str | None = None
    kind: Literal["ignore", "source", "commit"]
    slot: str
    alert: Alert
    findings: list[dict[str, Any]]

    def parsed_findings(self) -> list[Finding]:
        return report_from_dict({"app": self.app, "findings": self.findings}).findings


class ViewState(StateModel):
    """What a "Full diff" link shows (:mod:`bot.web.viewlinks`, :mod:`bot.web.view`): the report with its object pairs.

    Saved only when view links are enabled, for ``VIEW_LINK_TTL`` (the link's own lifetime), under
    ``state:view:<id>``; the objects are the Report's, Secret values already masked.
    """

    KIND: ClassVar[str] = "view"
    alert: Alert
    report: dict[str, Any]
    objects: list[dict[str, Any]]

    @classmethod
    def of(cls, alert: Alert, report: Report) -> ViewState:
        """Only the object pairs that have findings: the page shows no other."""
        drifted = {f.resource for f in report.findings}
        objects = [o.to_dict() for o in report.objects if o.resource in drifted]
        return cls(alert=alert, report=report.to_dict(), objects=objects)

    def parsed_report(self) -> Report:
        report = report_from_dict(self.report)
        report.objects = [ComparedObject.from_dict(o) for o in self.objects]
        return report


class DigestRow(BaseModel):
    """One app a digest message lists: what its line, its group and its row in the full list need, not its report
    (the digest's state is read and written whole at every flush, for up to thousands of apps)."""

    alert: Alert
    summary: DigestSummary | None = None
    """``None`` only in a row written before summaries were kept: its ``report`` is read instead."""
    reason: str | None = None
    """Why the analysis failed (``alert.status`` "failed")."""
    buttons: Buttons | None = None
    """The ids behind its "Show details" button, made when it joined a digest short enough for a line per app."""
    report: dict[str, Any] | None = Field(default=None, exclude=True)
    """Read from a row written before summaries were kept (the same fields as :class:`DigestItem`); never written."""


class DigestState(StateModel):
    """The apps the current digest message lists, by app key, so that a later flush adds to it."""

    KIND: ClassVar[str] = "digest"
    items: dict[str, DigestRow]
    grouped: bool = False
    """The message groups the apps (too many for a line each): the full list goes into its thread at the end."""


class SystemFixState(StateModel):
    """What an Open PR button of a system-level rule points at: the argocd-cm rule and the apps it covers."""

    KIND: ClassVar[str] = "sysfix"
    sig_id: str
    key: str
    """The argocd-cm key (``resource.customizations.ignoreDifferences.<group>_<Kind>``)."""
    rule: dict[str, list[str]]
    what: str
    """The drift in words (field, kind, writer), for the dialog, the thread and the PR."""
    apps: list[str]
    """The app keys the rule covers."""
    threads: dict[str, list[str]]
    """app key -> [channel, thread ts] of each covered app's thread."""
    radius: list[str]
    """The blast radius in lines, for the PR body."""
    unchecked: list[str] = []
    """The apps the check left out (not readable, or not analysed yet), named in the PR body."""
    checked: int = 0
    """How many apps the check read."""

    @property
    def fix_id(self) -> str:
        """Approvals, the one-PR lock and the PR record are keyed by it (the rule, not the state)."""
        raw = json.dumps({"key": self.key, "rule": self.rule}, sort_keys=True)
        return f"system:{hashlib.sha256(raw.encode()).hexdigest()[:12]}"
