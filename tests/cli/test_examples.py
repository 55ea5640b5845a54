"""The bundled examples (``make demo``) hold their own verdicts, checked like the casebook's."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bot.cli import main
from bot.demo import EXAMPLES
from tests.paths import CASEBOOK, ROOT


def test_examples_meet_their_verdicts() -> None:
    checker = CASEBOOK / "check.py"
    proc = subprocess.run(
        [sys.executable, str(checker), str(EXAMPLES), "--cmd", f"{sys.executable} -m bot"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed, 0 failed" in proc.stdout


def test_demo_reports_print_every_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--reports"]) == 0
    out = capsys.readouterr().out
    for folder in sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir()):
        assert folder in out
    assert "autoscaler (confirmed)" in out and "mutating-webhook" in out


def test_demo_runs_the_whole_pipeline_offline(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the demo keeps the drift pages it saves
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for app in ("checkout", "flights-search", "tenant-guard"):
        assert f"app={app}" in out and f"applications/argocd/{app}|{app}>" in out
    assert "200 duplicate" in out and "400 app.name" in out
    assert "HorizontalPodAutoscaler `checkout/checkout-api`" in out and "Diff of" in out
    assert "never written to" in out
    # two teams: the checkout app (AppProject shop) in #shop, the others in #alerts
    alerts, shop = out.split("in the shop team's #shop")
    assert "┏━ #shop" in shop and "checkout" in shop and "┏━ #shop" not in alerts
    assert "tenant-guard" in alerts and "tenant-guard" not in shop.split("The pull request")[0]
