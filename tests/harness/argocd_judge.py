"""Argo CD's own code judges the ignoreDifferences rules argo-why proposes.

A rule argo-why proposes makes two promises, and both are checked here by Argo CD's diff and normalizer (the
``argocd_diff`` fixture, tests/harness/argocd_diff.py), never by our own verifier (bot/analysis/verify.py):

1. with the rule in the Application's ``spec.ignoreDifferences``, the drifted fields no longer count: the object is
   not modified;
2. the blast radius the PR states (``fix.hides``) is all the rule hides: a change to any other field Git manages
   (each leaf of the desired object, in Git and, where the live object holds the same value at the same place, live)
   still makes the object modified.

:func:`assert_rule_holds` is the reusable check (objects read from a real API server can be given to it);
:func:`judge_scenario` runs it on a casebook-format folder with the rules ``explain`` proposes there, in each diff
mode asked: ``legacy``, and ``structured-merge`` (an app syncing with ``ServerSideApply=true``) on the schema of a
real API server serving the scenario's kinds, as Argo CD's controller diffs (tests/harness/served_kinds.py).
Differences that have no rule (a manual edit, a nondeterministic render) are first put back to Git's value in the
live object, so that what is judged is the rule alone.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from bot.analysis.engine import explain
from bot.analysis.loader import load_documents
from bot.analysis.pairing import pair_objects
from bot.analysis.pointer import MISSING, Path, covers, join, resolve, split
from bot.analysis.verify import rule_paths
from bot.model import Finding
from tests.harness.argocd_diff import ArgoDiff, Mode
from tests.harness.served_kinds import ServedKinds

_SKIPPED_TOP = frozenset({"apiVersion", "kind", "status"})
_METADATA_KEPT = frozenset({"labels", "annotations"})
_TRACKING = "argocd.argoproj.io/tracking-id"


class RuleDoesNotHold(AssertionError):
    """Argo CD's code disagrees with what argo-why promised about a rule."""


@dataclass
class Judgement:
    """What Argo CD said about one object and its rules."""

    object: str
    rules: list[dict[str, Any]]
    leaves_checked: int = 0
    still_shown: list[str] = field(default_factory=list)
    """Git-managed leaves whose change Argo CD still reports (as promised)."""


def git_leaves(desired: Mapping[str, Any]) -> Iterator[Path]:
    """Every scalar Git sets in ``desired`` that Argo CD compares: spec and the like, labels and annotations (not
    the tracking annotation Argo CD writes itself), never apiVersion, kind, name, namespace or status."""

    def walk(value: Any, path: Path) -> Iterator[Path]:
        if isinstance(value, dict):
            for k, v in value.items():
                yield from walk(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from walk(v, (*path, i))
        elif value is not None:
            yield path

    for key, value in desired.items():
        if key in _SKIPPED_TOP:
            continue
        if key == "metadata":
            for section in _METADATA_KEPT:
                for k, v in (value.get(section) or {}).items():
                    if k != _TRACKING:
                        yield from walk(v, ("metadata", section, k))
            continue
        yield from walk(value, (key,))


_QUANTITY = re.compile(r"^[0-9.]+[a-zA-Z]*$")


def _changed(value: Any) -> Any:
    """Another value of the same type, still valid where a quantity is (``500m`` becomes ``1500m``): Argo CD's diff
    round-trips known kinds through their Go types, which refuse a malformed quantity."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str) and _QUANTITY.match(value):
        return f"1{value}"
    return f"{value}-changed"


def _fresh(obj: Any, leaf: Sequence[Any], value: Any) -> Any:
    """:func:`_changed`, and never the value a sibling list item holds at the same key: ``containerPort`` 9093 made
    9094 next to a port 9094 is an object the API server refuses (duplicate keys of a list-map) and Argo CD's
    structured-merge diff too, so it says nothing about the rule."""
    new = _changed(value)
    if len(leaf) >= 2 and isinstance(leaf[-2], int):
        siblings = resolve(obj, leaf[:-2])
        taken = {json.dumps(s.get(leaf[-1]), sort_keys=True) for s in siblings if isinstance(s, dict)}
        for _ in range(10):
            if json.dumps(new, sort_keys=True) not in taken:
                break
            new = _changed(new)
    return new


def _set(obj: Any, path: Sequence[Any], value: Any) -> None:
    parent = resolve(obj, path[:-1])
    last = path[-1]
    if isinstance(parent, list):
        parent[int(last)] = value
    else:
        parent[last] = value


def _with_namespace(desired: Mapping[str, Any], live: Mapping[str, Any] | None) -> dict[str, Any]:
    """Argo CD sets the destination namespace on namespaced desired objects before it diffs them."""
    out = copy.deepcopy(dict(desired))
    ns = ((live or {}).get("metadata") or {}).get("namespace")
    if ns and not (out.get("metadata") or {}).get("namespace"):
        out.setdefault("metadata", {})["namespace"] = ns
    return out


def assert_rule_holds(
    argocd_diff: ArgoDiff,
    desired: Mapping[str, Any],
    live: Mapping[str, Any],
    rules: Sequence[Mapping[str, Any]],
    *,
    hides: Sequence[str] = (),
    mode: Mode = "legacy",
    kubeconfig: FsPath | str | None = None,
    label: str = "",
) -> Judgement:
    """Argo CD's verdict on ``rules`` for one object: raises :class:`RuleDoesNotHold` unless the object is not
    modified with them, and every Git-managed leaf outside ``hides`` (pointers, on the live object, that the rule
    is stated to hide; by default what our reading of the rule selects) still shows as modified when it changes."""
    if mode != "legacy" and not kubeconfig:
        # The controller always has the cluster's schema (see tests/harness/served_kinds.py): without it gitops-engine's
        # structured-merge diff takes every list as atomic, a verdict no Argo CD gives.
        raise ValueError(f"mode {mode} is judged against an API server's schema: give its kubeconfig")
    desired = _with_namespace(desired, live)
    label = label or f"{desired.get('kind')}/{(desired.get('metadata') or {}).get('name')}"
    kw: dict[str, Any] = {"mode": mode, "ignore_differences": list(rules), "kubeconfig": kubeconfig}
    [base] = argocd_diff.diff([(desired, live)], **kw).resources
    if base.modified:
        raise RuleDoesNotHold(
            f"{label} ({mode}): with {json.dumps(list(rules))} Argo CD still reports the object modified:\n"
            f"normalized live {json.dumps(base.normalized_live, sort_keys=True)}\n"
            f"predicted live {json.dumps(base.predicted_live, sort_keys=True)}"
        )
    stated = list(hides)
    hidden_git: list[Path] = []
    if not hides:  # no stated blast radius: what our reading of the rule selects, on both sides
        for rule in rules:
            stated += [join(p) for p in rule_paths(dict(rule), dict(live))]
            hidden_git += rule_paths(dict(rule), desired)
    judgement = Judgement(label, [dict(r) for r in rules])
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for leaf in git_leaves(desired):
        pointer = join(leaf)
        if any(covers(h, pointer) for h in stated) or any(leaf[: len(h)] == h for h in hidden_git):
            continue  # inside the stated blast radius
        value = resolve(desired, leaf)
        git_change = copy.deepcopy(desired)
        _set(git_change, leaf, _fresh(desired, leaf, value))
        cases.append((f"Git changes {pointer}", git_change, dict(live)))
        if resolve(live, leaf) == value:
            live_change = copy.deepcopy(dict(live))
            _set(live_change, leaf, _fresh(live, leaf, value))
            cases.append((f"someone changes {pointer} live", desired, live_change))
    if cases:
        answer = argocd_diff.diff([(d, lv) for _, d, lv in cases], **kw)
        unseen = [i for i, r in enumerate(answer.resources) if not r.modified]
        hidden: list[str] = []
        if unseen:
            # a change Argo CD does not see even without the rule is not the rule's doing (a port renamed under
            # the two-way diff of an object without last-applied-configuration, for one)
            kw_without = {**kw, "ignore_differences": []}
            again = argocd_diff.diff([(cases[i][1], cases[i][2]) for i in unseen], **kw_without).resources
            hidden = [cases[i][0] for i, r in zip(unseen, again, strict=True) if r.modified]
        if hidden:
            raise RuleDoesNotHold(
                f"{label} ({mode}): {json.dumps(list(rules))} hides more than it states ({stated}): "
                f"Argo CD no longer reports: {'; '.join(hidden)}"
            )
        judgement.still_shown = [what for what, _, _ in cases]
    judgement.leaves_checked = len(cases)
    return judgement


# --- scenarios in the casebook's format ------------------------------------------------------------------------


def load_objects(path: FsPath) -> list[dict[str, Any]]:
    """The objects of a scenario file (a ``kind: List`` unfolded); none when the file is absent."""
    if not path.is_file():
        return []
    out: list[dict[str, Any]] = []
    for doc in load_documents(path.read_bytes(), str(path), require_kind=False):
        out += doc.get("items") or [] if doc.get("kind") == "List" else [doc]
    return out


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))


def _reverted(live: dict[str, Any], findings: Sequence[Finding], desired: dict[str, Any]) -> dict[str, Any]:
    """``live`` with every difference that has no rule put back to Git's value."""
    out = copy.deepcopy(live)
    for f in findings:
        if f.fix.rule:
            continue
        path = split(f.pointer)
        # the finding's own values may be masked (Secrets): take Git's value from the desired object instead
        wanted = _desired_value(desired, live, path)
        if wanted is MISSING:
            parent = resolve(out, path[:-1])
            if isinstance(parent, list):
                del parent[int(path[-1])]
            elif isinstance(parent, dict):
                parent.pop(path[-1], None)
        elif resolve(out, path[:-1]) is not MISSING:
            parent = resolve(out, path[:-1])
            if isinstance(parent, list) and int(path[-1]) >= len(parent):
                parent.append(copy.deepcopy(wanted))
            else:
                _set(out, path, copy.deepcopy(wanted))
    return out


def _desired_value(desired: dict[str, Any], live: dict[str, Any], path: Sequence[str]) -> Any:
    from bot.analysis.diff import diff_objects

    for d in diff_objects(desired, live):
        if d.pointer == join(path):
            return d.desired
    return resolve(desired, path)


def judge_scenario(
    argocd_diff: ArgoDiff, folder: FsPath, *, modes: Sequence[Mode] = ("legacy",), served: ServedKinds | None = None
) -> list[Judgement]:
    """Every rule ``explain`` proposes in a scenario folder, judged by Argo CD object by object, in each mode.
    Modes other than ``legacy`` need ``served``: the API server whose schema Argo CD's diff reads, made to serve the
    scenario's kinds (its CRDs from ``context.yaml``)."""
    spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    desired = load_objects(folder / "desired.yaml")
    live = load_objects(folder / "live.yaml")
    context = load_objects(folder / "context.yaml")
    report = explain(desired, live, context, app=spec["app"])
    by_object: dict[tuple[str, str, str], list[Finding]] = {}
    for f in report.findings:
        by_object.setdefault((f.resource.kind, f.resource.namespace or "", f.resource.name), []).append(f)
    out: list[Judgement] = []
    for dobj, lobj in pair_objects(desired, live):
        if lobj is None:
            continue
        findings = by_object.get(_key(lobj), [])
        rules = [f.fix.rule for f in findings if f.fix.rule]
        if not rules:
            continue
        hides = sorted({h for f in findings if f.fix.rule for h in f.fix.hides})
        base_live = _reverted(lobj, findings, dict(dobj))
        for mode in modes:
            kubeconfig = None
            if mode != "legacy":
                if served is None:
                    raise ValueError(f"mode {mode} needs the API server that serves the scenario's kinds")
                served.serve([dobj, lobj], context)
                kubeconfig = served.kubeconfig
            out.append(
                assert_rule_holds(
                    argocd_diff, dobj, base_live, rules, hides=hides, mode=mode, kubeconfig=kubeconfig,
                    label=f"{folder.name}: {lobj.get('kind')}/{lobj['metadata'].get('name')}",
                )
            )  # fmt: skip
    return out
