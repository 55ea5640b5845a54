"""Where the checkout and the shared test data are: the vendored casebook, argo-why's own scenarios, the corpus."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The checkout."""
SCENARIOS = ROOT / "tests" / "scenarios"
CASEBOOK = SCENARIOS / "casebook"
"""The shared casebook as vendored into the repository (tests/scenarios/README.md): scenarios, README, check.py."""
EXTRA = SCENARIOS / "extra"
"""argo-why's own scenarios, in the casebook's format, checked by the same check.py."""
CORPUS = SCENARIOS / "corpus"
"""Argo CD's, gitops-engine's and kubectl-blame's test objects, vendored (tests/scenarios/corpus/INDEX.md)."""
SHARED_CASEBOOK = ROOT.parent / "shared" / "casebook"
"""The shared casebook beside the checkout, when present: the reference the vendored copy was taken from."""
