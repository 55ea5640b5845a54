"""The project's documentation stands on its own in a fresh clone (issue 22, item 22): README, CONTRIBUTING,
CHANGELOG and deploy/README never point outside the repository (``../shared``, DESIGN.md), and every relative link
and every file a documented command runs exists. The code's docstrings and comments (bot/, handlers/, scripts/,
deploy/, bench/, tests/, pyproject.toml, Makefile) cite the README, the vendored data or a public source instead.
Vendored data under ``tests/scenarios/`` keeps its provenance notes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT

DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "deploy").rglob("*.md"))]
OUTSIDE = ("../shared", "DESIGN.md", "DESIGN §", "notes §")
"""What points at files a clone does not have: the shared folder beside the checkout, the design document, the
wire-format notes kept there (cited as "notes §N")."""
CODE_DIRS = ("bot", "handlers", "scripts", "deploy", "bench", "tests")
CODE_FILES = ("pyproject.toml", "Makefile")
NOT_CHECKED = ("tests/scenarios/", "tests/project/test_docs.py")
"""Vendored data keeps its provenance (tests/scenarios/README.md); this file names what it looks for."""
ALLOWED_LINE = "SHARED_CASEBOOK"
"""tests/paths.py and tests/analysis/test_casebook.py may look for the shared casebook beside the checkout
(optional)."""
UNTRACKED = {".venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "screenshots"}


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


def _code_files() -> list[str]:
    """The tracked files the check covers, relative to ROOT: ``git ls-files`` in a checkout, else the tree."""
    git = shutil.which("git")
    if git and (ROOT / ".git").exists():
        out = subprocess.run(
            [git, "ls-files", "-z", "--", *CODE_DIRS, *CODE_FILES], cwd=ROOT, capture_output=True, check=True
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
    else:
        found = [p for d in CODE_DIRS for p in (ROOT / d).rglob("*") if p.is_file()]
        names = [p.relative_to(ROOT).as_posix() for p in found if not UNTRACKED & set(p.relative_to(ROOT).parts)]
        names += [n for n in CODE_FILES if (ROOT / n).is_file()]
    return sorted(n for n in names if not n.startswith(NOT_CHECKED))


def test_no_code_comment_points_outside_the_repository() -> None:
    files = _code_files()
    assert len(files) > 100 and "pyproject.toml" in files and "bot/model.py" in files, files[:5]
    offenders = []
    for name in files:
        text = (ROOT / name).read_bytes().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if ALLOWED_LINE in line:
                continue
            offenders += [f"{name}:{number}: {outside}" for outside in OUTSIDE if outside in line]
    assert not offenders, "cite the README, the vendored copy or a public source instead:\n" + "\n".join(offenders)
