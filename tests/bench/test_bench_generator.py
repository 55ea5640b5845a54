"""The benchmark's application generator (bench/analysis.py) builds what it promises."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "analysis.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_analysis", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_analysis", module)
    spec.loader.exec_module(module)
    return module


bench = _bench()


def test_build_app_gives_parseable_json_with_managed_fields() -> None:
    desired_json, live_json, context_json, drifted = bench.build_app(40, 0.1, 1)

    desired = json.loads(desired_json)
    live = json.loads(live_json)
    context = json.loads(context_json)
    assert isinstance(desired, list) and len(desired) == 40
    assert live["kind"] == "List" and len(live["items"]) == 40
    assert context["kind"] == "List" and context["items"]
    assert drifted == 4

    assert Counter(o["kind"] for o in desired) == Counter(o["kind"] for o in live["items"])
    for obj in live["items"]:
        entries: list[dict[str, Any]] = obj["metadata"].get("managedFields") or []
        assert entries, f"{obj['kind']} {obj['metadata']['name']} has no managedFields"
        assert all(e["fieldsType"] == "FieldsV1" and e["fieldsV1"] for e in entries)
        assert any(e["manager"] == "argocd-controller" for e in entries)
        assert obj["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"].startswith(bench.APP + ":")


def test_build_app_is_deterministic() -> None:
    assert bench.build_app(25, 0.2, 7) == bench.build_app(25, 0.2, 7)
    assert bench.build_app(25, 0.2, 7) != bench.build_app(25, 0.2, 8)


def test_every_injected_drift_is_explained_with_its_cause() -> None:
    analysis = pytest.importorskip("bot.analysis")
    desired_json, live_json, context_json, injected = bench.generate(40, 0.2, 3)

    report = analysis.explain(
        analysis.load_documents(desired_json, "desired"),
        analysis.load_documents(live_json, "live"),
        analysis.load_documents(context_json, "context"),
        app=bench.APP,
    )

    assert sum(injected.values()) == 8
    wanted = Counter({bench.EXPECTED_CAUSE[k]: n for k, n in injected.items()})
    assert Counter(f.cause for f in report.findings) == wanted
