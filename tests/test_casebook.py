"""The drift casebook, one test per scenario, checked by the casebook's own check.py.

* The shared casebook is the reference: ``../shared/casebook`` (its scenarios and its check.py) when it sits beside
  the checkout, else the copy vendored in tests/scenarios/casebook, so that a fresh clone runs every scenario too.
* argo-why's own scenarios (tests/scenarios/extra) are held to the same checks: check.py's ``check_case`` is
  imported from the vendored copy and run on each folder, exactly as ``check.py tests/scenarios/extra`` would.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import CASEBOOK, EXTRA, SHARED_CASEBOOK

REFERENCE = SHARED_CASEBOOK if (SHARED_CASEBOOK / "check.py").is_file() else CASEBOOK
CMD = [sys.executable, "-m", "bot"]


def _cases(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if (p / "case.json").is_file())


def _checker(casebook: Path) -> ModuleType:
    """check.py of ``casebook``, imported as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location(f"check_{abs(hash(casebook))}", casebook / "check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", _cases(REFERENCE / "cases"))
def test_casebook_scenario(case: str) -> None:
    problems = _checker(REFERENCE).check_case(REFERENCE / "cases" / case, CMD)
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("case", _cases(EXTRA))
def test_own_scenario(case: str) -> None:
    problems = _checker(CASEBOOK).check_case(EXTRA / case, CMD)
    assert problems == [], "\n".join(problems)


def test_vendored_casebook_is_complete() -> None:
    """The vendored copy holds every scenario the tests name, with the checker and its README."""
    assert (CASEBOOK / "check.py").is_file() and (CASEBOOK / "README.md").is_file()
    assert len(_cases(CASEBOOK / "cases")) >= 26
