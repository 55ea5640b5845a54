"""``fix.sync_caveat``: with every proposed rule, what a sync still does to the fields the rule hides from the diff.

Argo CD's ignoreDifferences only changes the comparison: without RespectIgnoreDifferences a sync applies Git's value
(argoproj/argo-cd#4912); with it, a resource Argo CD creates still gets Git's value (argoproj/argo-cd#2913), and in a
custom resource the whole outermost list holding the hidden fields is taken from live (argoproj/argo-cd#27480).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.analysis.engine import explain
from bot.model import Finding
from tests.harness.argocd_judge import load_objects
from tests.paths import CASEBOOK, EXTRA


def _findings(folder: Path) -> list[Finding]:
    spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    report = explain(
        load_objects(folder / "desired.yaml"), load_objects(folder / "live.yaml"),
        load_objects(folder / "context.yaml"), app=spec["app"],
    )  # fmt: skip
    return report.findings


SCENARIOS = sorted(p for root in (CASEBOOK / "cases", EXTRA) for p in root.iterdir() if (p / "case.json").is_file())


@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: p.name)
def test_every_rule_says_what_a_sync_still_does(folder: Path) -> None:
    for f in _findings(folder):
        if f.fix.rule is None:
            assert f.fix.sync_caveat is None
            continue
        caveat = f.fix.sync_caveat
        assert caveat is not None and "argoproj/argo-cd#" in caveat
        assert all(h in caveat for h in f.fix.hides)
        if "RespectIgnoreDifferences=true" in f.fix.sync_options:
            assert "argoproj/argo-cd#2913" in caveat and "#4912" not in caveat
        else:
            assert "without RespectIgnoreDifferences=true a sync" in caveat and "argoproj/argo-cd#4912" in caveat


def test_a_webhook_rule_without_respect_says_sync_writes_git_again() -> None:
    [f] = _findings(CASEBOOK / "cases" / "kyverno-label-webhook")
    assert f.fix.sync_options == []
    assert f.fix.sync_caveat is not None and "/metadata/labels/cost-center" in f.fix.sync_caveat


def test_a_custom_resource_list_item_names_the_whole_list_sync_takes_from_live() -> None:
    findings = _findings(CASEBOOK / "cases" / "rollouts-virtualservice-weights")
    assert findings and all(f.fix.sync_caveat for f in findings)
    for f in findings:
        assert f.fix.sync_caveat is not None
        assert "whole list /spec/http from live" in f.fix.sync_caveat and "argoproj/argo-cd#27480" in f.fix.sync_caveat


def test_a_built_in_kind_has_no_custom_resource_list_caveat() -> None:
    [f] = _findings(CASEBOOK / "cases" / "cainjector-cabundle-vwc")
    assert f.fix.sync_caveat is not None and "#27480" not in f.fix.sync_caveat


def test_sync_caveat_is_in_the_json_report_and_read_back() -> None:
    from bot.model import Report, report_from_dict

    [f] = _findings(CASEBOOK / "cases" / "hpa-replicas-csa")
    data = Report(app="shop", findings=[f]).to_dict()
    caveat = data["findings"][0]["fix"]["sync_caveat"]
    assert "RespectIgnoreDifferences=true only spares" in caveat and "/spec/replicas" in caveat
    assert report_from_dict(data).findings[0].fix.sync_caveat == caveat
