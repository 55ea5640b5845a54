"""What a pull request proposes: the findings it is for, the merged rules, and its identity. Pure.

A :class:`Proposal` is built from findings that carry a rule (``ignore``), from one autoscaler finding whose
field should leave the manifest instead (``source``), or from one field changed by hand whose live value should
become Git's (``commit``: the hotfix that was right). Guarantees:

* rules for the same object (group, kind, namespace, name) are merged into one entry, pointers and expressions
  in first-seen order without repeats, exactly as the editor merges them into a file;
* :attr:`Proposal.fix_hash` depends only on what would change in Git (the kind, the merged rules, the sync
  options), never on findings' order, values or times: the same fix is the same hash, so the same branch
  (``argo-why/APP/HASH``), the same lock and the same approvals, whichever button asked for it;
* nothing here reads a Secret's value: findings come from a Report, which is masked already.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.intake.jobs import app_key
from bot.model import Finding
from bot.wording.report import MASK

RuleKey = tuple[str, str, str, str]
_LIST_FIELDS = ("jsonPointers", "jqPathExpressions", "managedFieldsManagers")
SOURCE_FIX_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})
"""Kinds whose ``/spec/replicas`` an autoscaler owns and Git can simply leave out."""


def rule_key(rule: dict[str, Any]) -> RuleKey:
    """The object a rule is scoped to: group (``""`` for core), kind, namespace, name."""
    return (str(rule.get("group") or ""), str(rule.get("kind") or ""), str(rule.get("namespace") or ""),
            str(rule.get("name") or ""))  # fmt: skip


def merge_rules(rules: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per object, its paths unioned in first-seen order; keys in Argo CD's usual order."""
    merged: dict[RuleKey, dict[str, Any]] = {}
    for rule in rules:
        entry = merged.setdefault(rule_key(rule), {k: v for k, v in rule.items() if k not in _LIST_FIELDS})
        for name in _LIST_FIELDS:
            for value in rule.get(name) or []:
                values = entry.setdefault(name, [])
                if value not in values:
                    values.append(value)
    return list(merged.values())


@dataclass(frozen=True)
class Proposal:
    """One pull request's worth of change for one Application."""

    app: str
    app_namespace: str | None
    kind: Literal["ignore", "source", "commit"]
    findings: tuple[Finding, ...]
    rules: tuple[dict[str, Any], ...] = ()
    """``ignore``: the merged ignoreDifferences entries to add."""
    sync_options: tuple[str, ...] = ()
    """``ignore``: what to add to ``spec.syncPolicy.syncOptions``."""

    @property
    def app_key(self) -> str:
        return app_key(self.app, self.app_namespace)

    @property
    def fix_hash(self) -> str:
        if self.kind == "ignore":
            what: Any = {"rules": list(self.rules), "sync_options": sorted(self.sync_options)}
        elif self.kind == "commit":  # another live value is another fix
            what = sorted(f"{_ref(f)}{f.pointer}={json.dumps(f.live, sort_keys=True)}" for f in self.findings)
        else:
            what = sorted(f"{_ref(f)}{f.pointer}" for f in self.findings)
        raw = json.dumps({"kind": self.kind, "what": what}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(raw.encode()).hexdigest()[:10]

    @property
    def fix_id(self) -> str:
        """The fix's identity in the store: approvals, the one-PR lock and the PR record are keyed by it."""
        return f"{self.app_key}:{self.fix_hash}"

    @property
    def branch(self) -> str:
        return f"argo-why/{self.app}/{self.fix_hash}"

    @property
    def pointers(self) -> list[str]:
        return [f.pointer for f in self.findings]


def ignore_proposal(app: str, app_namespace: str | None, findings: Sequence[Finding]) -> Proposal | None:
    """The rules of every finding that has one, or ``None`` when none has."""
    chosen = tuple(f for f in findings if f.fix.rule is not None)
    if not chosen:
        return None
    options: list[str] = []
    for f in chosen:
        options += [o for o in f.fix.sync_options if o not in options]
    rules = merge_rules(f.fix.rule for f in chosen if f.fix.rule is not None)
    return Proposal(app, app_namespace, "ignore", chosen, tuple(rules), tuple(options))


def source_fixable(f: Finding) -> bool:
    """An autoscaler owns the replica count: the better fix is to leave ``spec.replicas`` out of Git."""
    return f.cause == "autoscaler" and f.pointer == "/spec/replicas" and f.resource.kind in SOURCE_FIX_KINDS


def source_proposal(app: str, app_namespace: str | None, findings: Sequence[Finding]) -> Proposal | None:
    """Drop each autoscaled ``spec.replicas`` from its manifest, or ``None`` when no finding allows it."""
    chosen = tuple(f for f in findings if source_fixable(f))
    return Proposal(app, app_namespace, "source", chosen) if chosen else None


def commit_fixable(f: Finding) -> bool:
    """A field changed by hand whose live value can be written into the manifest line for line: a scalar on both
    sides, never a Secret's (masked) value."""
    scalars = (str, int, float, bool)
    return (
        f.cause == "manual-edit"
        and isinstance(f.live, scalars)
        and isinstance(f.desired, scalars)
        and MASK not in (f.live, f.desired)
        and f.resource.kind != "Secret"
    )


def commit_proposal(app: str, app_namespace: str | None, findings: Sequence[Finding]) -> Proposal | None:
    """Write each hand-made live value into its manifest, or ``None`` when no finding allows it."""
    chosen = tuple(f for f in findings if commit_fixable(f))
    return Proposal(app, app_namespace, "commit", chosen) if chosen else None


def proposal(kind: str, app: str, app_namespace: str | None, findings: Sequence[Finding]) -> Proposal | None:
    """The proposal of ``kind`` (``ignore``, ``source``, ``commit``) for these findings, or ``None``."""
    if kind == "source":
        return source_proposal(app, app_namespace, findings)
    if kind == "commit":
        return commit_proposal(app, app_namespace, findings)
    return ignore_proposal(app, app_namespace, findings)


def _ref(f: Finding) -> str:
    r = f.resource
    return f"{r.group}/{r.kind}/{r.namespace}/{r.name}"
