"""The drift casebook: every scenario must pass ../shared/casebook/check.py, one test per scenario."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import CASEBOOK, ROOT

CASES = sorted(p.name for p in (CASEBOOK / "cases").iterdir()) if (CASEBOOK / "cases").is_dir() else []


@pytest.mark.skipif(not CASES, reason="../shared/casebook is not present")
@pytest.mark.parametrize("case", CASES)
def test_casebook_scenario(case: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(CASEBOOK / "check.py"), "--cmd", f"{sys.executable} -m bot", "--only", case],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed, 0 failed" in proc.stdout
