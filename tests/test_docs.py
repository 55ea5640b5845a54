"""The project's documentation stands on its own in a fresh clone (issue 22, item 22): README, CONTRIBUTING,
CHANGELOG and deploy/README never point outside the repository (``../shared``, DESIGN.md), and every relative link
and every file a documented command runs exists. Vendored data under ``tests/scenarios/`` keeps its provenance notes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "deploy").rglob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_document_points_outside_the_repository(doc: Path) -> None:
    text = doc.read_text()
    for outside in ("../shared", "/work/", "DESIGN.md", "DESIGN §"):
        assert outside not in text, f"{doc.name} points at {outside}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_documented_script_exists(doc: Path) -> None:
    text = doc.read_text()
    links = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t and not t.startswith("#")]
    missing = [link for link in links if link and not (doc.parent / link).exists()]
    scripts = re.findall(r"python3? ((?:tests|bench|scripts)/[\w/.-]+\.py)", text)
    missing += [s for s in scripts if not (ROOT / s).exists()]
    assert not missing, f"{doc.name}: {missing}"
