"""The Report and its parts: plain dataclasses, the JSON report contract (README, "The report (`--format json`)").

``Report.to_dict()`` is the one place the JSON shape is produced; every output
format (text, JSON, Slack) renders from these objects. Values held here are
already masked where they belong to a Secret.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from bot.wording import report as wording

Cause = Literal[
    "autoscaler",
    "operator",
    "mutating-webhook",
    "api-defaulting",
    "normalization",
    "nondeterministic-render",
    "shared-resource",
    "other-gitops",
    "manual-edit",
    "unknown",
    "not-synced",
]
CAUSES: tuple[str, ...] = Cause.__args__  # type: ignore[attr-defined]
Confidence = Literal["confirmed", "likely", "possible"]
Action = Literal[
    "ignore", "change-source", "revert", "server-side-diff", "resolve-ownership", "investigate", "sync"
]  # fmt: skip
ResourceState = Literal["requires-pruning", "missing"]


@dataclass(frozen=True, order=True)
class ResourceRef:
    group: str
    kind: str
    namespace: str
    name: str
    version: str = ""

    @property
    def label(self) -> str:
        """``Kind ns/name`` (``Kind name`` when cluster-scoped), for people."""
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "version": self.version,
            "kind": self.kind,
            "namespace": self.namespace or None,
            "name": self.name,
        }


@dataclass(frozen=True)
class ObjectRef:
    kind: str
    name: str
    namespace: str | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name}


@dataclass(frozen=True)
class Writer:
    manager: str | None = None
    operation: str | None = None
    subresource: str | None = None
    time: str | None = None
    object: ObjectRef | None = None
    co_owners: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        if self.object is not None:
            return self.object.label
        return self.manager or "nobody"

    def to_dict(self) -> dict[str, Any]:
        return {
            "manager": self.manager,
            "operation": self.operation,
            "subresource": self.subresource,
            "time": self.time,
            "object": self.object.to_dict() if self.object else None,
            "label": self.label,
            "co_owners": list(self.co_owners),
        }


@dataclass
class Fix:
    action: Action
    rule: dict[str, Any] | None = None
    sync_options: list[str] = field(default_factory=list)
    alternative: str | None = None
    hides: list[str] = field(default_factory=list)
    verified: bool | None = None
    fallback: bool = False
    caution: str | None = None
    """Said with the rule when it hides an image, a command, args or a whole section: Git changes there stop syncing."""
    avoid: list[str] = field(default_factory=list)
    """What not to do about this cause (never the fix itself: re-syncing is the fix of a manual edit)."""
    sync_caveat: str | None = None
    """When the rule is right for the diff but a sync would still write Git's value (no RespectIgnoreDifferences,
    list items of a custom resource, a resource created again): what happens, with the Argo CD issue."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "rule": self.rule,
            "sync_options": list(self.sync_options),
            "alternative": self.alternative,
            "hides": list(self.hides),
            "verified": self.verified,
            "fallback": self.fallback,
            "caution": self.caution,
            "avoid": list(self.avoid),
            "sync_caveat": self.sync_caveat,
        }


@dataclass
class Finding:
    resource: ResourceRef
    pointer: str
    desired: Any
    live: Any
    cause: Cause
    confidence: Confidence
    writer: Writer
    explanation: str
    fix: Fix
    evidence: list[str] = field(default_factory=list)
    path: str = ""
    """The pointer as people read it (``spec.template.spec.containers[name=web].image``), for sentences; the
    pointer stays the contract."""
    shown_by_argocd: bool = True
    """Whether Argo CD's own diff (the app's diff mode, legacy when not known) reports this difference: false for
    one its comparison makes equal (a built-in kind read through its Go type, a server-side dry-run)."""

    @property
    def field_name(self) -> str:
        """What sentences call the field: the readable path, else the pointer."""
        return self.path or self.pointer

    def sort_key(self) -> tuple[str, str, str, str, str]:
        r = self.resource
        return (r.group, r.kind, r.namespace, r.name, self.pointer)

    def to_dict(self) -> dict[str, Any]:
        return {
            "resource": self.resource.to_dict(),
            "pointer": self.pointer,
            "desired": self.desired,
            "live": self.live,
            "cause": self.cause,
            "confidence": self.confidence,
            "writer": self.writer.to_dict(),
            "explanation": self.explanation,
            "fix": self.fix.to_dict(),
            "evidence": list(self.evidence),
            "path": self.path,
            "shown_by_argocd": self.shown_by_argocd,
        }


@dataclass
class ResourceIssue:
    """A resource only one side has: in the cluster but no longer in Git (``requires-pruning``), or in Git but not in
    the cluster (``missing``). Not a field difference: the JSON report lists them in ``resources``."""

    resource: ResourceRef
    state: ResourceState
    reason: str
    """Why, as a short code (``auto-prune-off``, ``prune-disabled``, ``selective-sync``, ``sync-failed``, ...;
    ``unknown`` when nothing says): README, "The report"."""
    explanation: str
    fix: str
    evidence: list[str] = field(default_factory=list)
    """What Argo CD's status or the objects say (a sync result's message, an annotation)."""

    def to_dict(self) -> dict[str, Any]:
        return {"resource": self.resource.to_dict(), "state": self.state, "reason": self.reason,
                "explanation": self.explanation, "fix": self.fix, "evidence": list(self.evidence)}  # fmt: skip


@dataclass(frozen=True)
class Skipped:
    """A resource Argo CD gives no sync status (a hook, ``hook: Skip``, ``IgnoreExtraneous``, an excluded kind):
    neither a finding nor "not compared"."""

    resource: ResourceRef
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"resource": self.resource.to_dict(), "reason": self.reason}


@dataclass
class ComparedObject:
    """One compared object pair, for the drift page: Git's rendered object and the live one (managedFields kept).

    Secret values are already masked in both (``masking.masked_object``). Not part of the JSON contract: the page
    (``bot.report.html``) draws it, and the bot keeps it for the page's link (``bot.store.state.ViewState``).
    """

    resource: ResourceRef
    desired: dict[str, Any]
    live: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"resource": self.resource.to_dict(), "desired": self.desired, "live": self.live}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ComparedObject:
        return cls(_resource_from_dict(data["resource"]), dict(data["desired"]), dict(data["live"]))


@dataclass
class Report:
    app: str | None
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    resources_compared: int = 0
    ignored: int = 0
    not_compared: list[ResourceRef] = field(default_factory=list)
    """Desired objects with no live counterpart: the report says nothing about them."""
    warnings: list[str] = field(default_factory=list)
    """Said first: a write loop in progress (selfHeal against another controller), and the like."""
    application: dict[str, Any] | None = None
    """Facts about the Argo CD Application (``argo-why why`` only)."""
    diff_mode: str | None = None
    """How Argo CD compares the app (``legacy`` or ``server-side``), when the Application was among the inputs."""
    git_ahead: dict[str, Any] | None = None
    """``why`` only, when Git's target revision is not the one Argo CD last synced: ``synced`` and ``target`` (lists,
    one per source), ``why_not`` (``manual``, ``automated``, ``failed``, ``running``) and ``text`` (the sentence)."""
    objects: list[ComparedObject] = field(default_factory=list)
    """The object pairs that differ, for the page (not in ``to_dict()``: the JSON report stays as it was)."""
    resources: list[ResourceIssue] = field(default_factory=list)
    """Resources only one side has (to prune, missing), each with its reason and fix."""
    skipped: list[Skipped] = field(default_factory=list)
    """Resources Argo CD does not compare (hooks and the like): neither findings nor ``not_compared``."""
    nothing_differs: dict[str, Any] | None = None
    """``why`` only: Argo CD says OutOfSync, yet no field differs and no resource is only on one side; what its
    status says (comparison time, sync time, revision) and the step that settles it."""
    renders_wanted: int = 0
    """Objects with a difference that a second render of the revision could decide (``desired_again`` was not
    given, and only Argo CD or nobody owns the field): bot mode then asks for the renders (not in ``to_dict()``)."""

    @property
    def drifted(self) -> bool:
        return bool(self.findings)

    @property
    def git_ahead_only(self) -> bool:
        """Git is ahead of what Argo CD last synced and every difference is Git's change not synced yet: not drift,
        said in one calm message (no thread, no alarm)."""
        return self.git_ahead is not None and all(f.cause == "not-synced" for f in self.findings)

    @property
    def clean(self) -> bool:
        """Nothing to say: no finding, every desired object compared, no resource only one side has, and Argo CD
        does not claim OutOfSync against the evidence."""
        return not self.findings and self.complete and not self.resources and self.nothing_differs is None

    @property
    def subject(self) -> str:
        """What the report is about, as people name it: the app (``team-a/shop`` for an app of another namespace,
        tracked as ``team-a_shop``), else its objects (those with findings, else those compared), never a
        placeholder such as "app"."""
        if self.app:
            return wording.app_shown(self.app)
        labels = [f.resource.label for f in self.findings] or [o.resource.label for o in self.objects]
        return wording.objects_named(list(dict.fromkeys(labels or [r.label for r in self.not_compared])))

    @property
    def complete(self) -> bool:
        """Every desired object was compared: without findings, the app matches Git."""
        return not self.not_compared

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "app": self.app,
            "findings": [f.to_dict() for f in self.findings],
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "summary": {
                "resources_compared": self.resources_compared,
                "not_compared": len(self.not_compared),
                "findings": len(self.findings),
                "shown_by_argocd": sum(f.shown_by_argocd for f in self.findings),
                "already_ignored": self.ignored,
            },
            "not_compared": [r.to_dict() for r in self.not_compared],
            "resources": [r.to_dict() for r in self.resources],
            "skipped": [s.to_dict() for s in self.skipped],
        }
        summary = out["summary"]
        summary["requires_pruning"] = sum(r.state == "requires-pruning" for r in self.resources)
        summary["missing"] = sum(r.state == "missing" for r in self.resources)
        summary["skipped"] = len(self.skipped)
        if self.nothing_differs is not None:
            out["nothing_differs"] = self.nothing_differs
        if self.application is not None:
            out["application"] = self.application
        if self.diff_mode is not None:
            out["diff_mode"] = self.diff_mode
        if self.git_ahead is not None:
            out["git_ahead"] = self.git_ahead
        return out


def _resource_from_dict(r: dict[str, Any]) -> ResourceRef:
    return ResourceRef(r.get("group") or "", r["kind"], r.get("namespace") or "", r["name"], r.get("version") or "")


def report_from_dict(data: dict[str, Any]) -> Report:
    """The inverse of ``Report.to_dict()`` (state kept in Redis for buttons is a report dict)."""
    findings = []
    for f in data.get("findings") or []:
        r, w, x = f["resource"], f.get("writer") or {}, f.get("fix") or {}
        obj = w.get("object")
        findings.append(
            Finding(
                resource=_resource_from_dict(r),
                pointer=f["pointer"],
                desired=f.get("desired"),
                live=f.get("live"),
                cause=f["cause"],
                confidence=f.get("confidence", "possible"),
                writer=Writer(w.get("manager"), w.get("operation"), w.get("subresource"), w.get("time"),
                              ObjectRef(obj["kind"], obj["name"], obj.get("namespace")) if obj else None,
                              tuple(w.get("co_owners") or ())),
                explanation=f.get("explanation", ""),
                path=str(f.get("path") or ""),
                shown_by_argocd=bool(f.get("shown_by_argocd", True)),
                fix=Fix(action=x.get("action", "investigate"), rule=x.get("rule"),
                        sync_options=list(x.get("sync_options") or []), alternative=x.get("alternative"),
                        hides=list(x.get("hides") or []), verified=x.get("verified"),
                        fallback=bool(x.get("fallback")), caution=x.get("caution"),
                        avoid=list(x.get("avoid") or []), sync_caveat=x.get("sync_caveat")),
                evidence=list(f.get("evidence") or []),
            )
        )  # fmt: skip
    summary = data.get("summary") or {}
    return Report(
        app=data.get("app"),
        findings=findings,
        notes=list(data.get("notes") or []),
        resources_compared=int(summary.get("resources_compared") or 0),
        ignored=int(summary.get("already_ignored") or 0),
        not_compared=[_resource_from_dict(r) for r in data.get("not_compared") or []],
        warnings=list(data.get("warnings") or []),
        application=data.get("application"),
        diff_mode=data.get("diff_mode"),
        git_ahead=data.get("git_ahead"),
        resources=[
            ResourceIssue(
                _resource_from_dict(r["resource"]),
                r["state"],
                str(r.get("reason") or "unknown"),
                str(r.get("explanation") or ""),
                str(r.get("fix") or ""),
                list(r.get("evidence") or []),
            )
            for r in data.get("resources") or []
        ],
        skipped=[
            Skipped(_resource_from_dict(s["resource"]), str(s.get("reason") or "")) for s in data.get("skipped") or []
        ],
        nothing_differs=data.get("nothing_differs"),
    )


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
            app=text("name") or report.subject,
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


class DigestSummary(NamedTuple):
    """What a digest shows of one app's report, kept instead of the report: a digest may list a thousand apps, and
    each flush renders every one of them (``bot.slack.render.digest.digest_summary`` makes it)."""

    state: Literal["drift", "one-sided", "clean", "pending", "failed", "synced"]
    differences: int = 0
    """How many findings (a drifting app)."""
    cause: str = ""
    """The cause most of its findings have (a drifting app), as in ``Finding.cause``."""
    writer: str = ""
    """Who writes that cause's fields, named so that apps hit by the same writer share it ("" when nobody is named)."""
    warned: bool = False
    """The report has a warning, shown beside the app's line."""
