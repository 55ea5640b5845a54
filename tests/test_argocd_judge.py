"""Every rule argo-why proposes, judged by Argo CD's own diff and normalizer (tests/argocd_judge.py).

For each scenario of the shared casebook and of argo-why's own (tests/scenarios/extra), the rules ``explain``
proposes are given to Argo CD as the Application's ignoreDifferences: the drift must no longer count, and a change to
any other field Git manages must still count. The judge itself is tested on rules that are too wide and too narrow.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.argocd_diff import ArgoDiff
from tests.argocd_judge import RuleDoesNotHold, assert_rule_holds, judge_scenario
from tests.conftest import CASEBOOK, EXTRA, deployment

SCENARIOS = sorted(p for root in (CASEBOOK / "cases", EXTRA) for p in root.iterdir() if (p / "case.json").is_file())


@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_proposed_rule_holds_in_argocd(argocd_diff: ArgoDiff, folder: Path) -> None:
    spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    judged = judge_scenario(argocd_diff, folder)
    # every object the verdict gives a rule to was judged, with its blast radius checked leaf by leaf
    ruled = {(e["resource"]["kind"], e["resource"]["name"]) for e in spec["expect"] if e.get("rule") is True}
    assert {tuple(j.object.split(": ", 1)[1].split("/", 1)) for j in judged} >= ruled
    assert all(j.leaves_checked > 0 for j in judged)


def test_the_scenarios_give_argocd_many_rules_to_judge() -> None:
    ruled = [
        e for folder in SCENARIOS
        for e in json.loads((folder / "case.json").read_text(encoding="utf-8"))["expect"] if e.get("rule") is True
    ]  # fmt: skip
    assert len(ruled) >= 20


def _scaled() -> tuple[dict[str, object], dict[str, object]]:
    desired = deployment()
    live = {**desired, "spec": {**desired["spec"], "replicas": 5}}
    return desired, live


def test_the_judge_refuses_a_rule_that_misses_the_drift(argocd_diff: ArgoDiff) -> None:
    desired, live = _scaled()
    rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/template"]}
    with pytest.raises(RuleDoesNotHold, match="still reports the object modified"):
        assert_rule_holds(argocd_diff, desired, live, [rule], hides=["/spec/template"])


def test_the_judge_refuses_a_rule_wider_than_it_states(argocd_diff: ArgoDiff) -> None:
    desired, live = _scaled()
    rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec"]}
    with pytest.raises(RuleDoesNotHold, match="hides more than it states.*Git changes /spec/template"):
        assert_rule_holds(argocd_diff, desired, live, [rule], hides=["/spec/replicas"])


def test_the_judge_accepts_the_narrow_rule(argocd_diff: ArgoDiff) -> None:
    desired, live = _scaled()
    rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/replicas"]}
    judgement = assert_rule_holds(argocd_diff, desired, live, [rule], hides=["/spec/replicas"])
    assert "Git changes /spec/template/spec/containers/0/image" in judgement.still_shown
    assert "someone changes /spec/template/spec/containers/1/args/0 live" in judgement.still_shown
