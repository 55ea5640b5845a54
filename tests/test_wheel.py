"""The shipped package is the product: the wheel holds the demo and its examples, not the tests' fakes, and
``argo-why demo`` runs from an installed wheel (not only from the checkout).

The wheel is built offline from a clean copy of what the Dockerfile copies (no ``build/`` left over from an earlier
build can leak into it), with the setuptools and wheel of the test environment (``--no-build-isolation``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

# What only tests use: it lives in tests/fakes/ and must not reach the wheel.
TEST_ONLY = (
    "def fail_next",
    "def drop_next",
    "def error_next",
    "def deny",
    "def forbid",
    "def reset",
    "def wait_for",
    "def add_user",
    "def slash_command_body",
    "def event_body",
)
DEMO_MODULES = ("__init__", "runner", "fake_argocd", "fake_kube", "fake_slack", "serving", "transcript")


@dataclass(frozen=True)
class Installed:
    wheel: Path
    target: Path  # pip install --target: the packages, and bin/argo-why


def _pip(*args: str, cwd: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("bot", "handlers"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(tmp / "dist"), str(src), cwd=tmp)
    (wheel,) = (tmp / "dist").glob("argo_why-*.whl")
    target = tmp / "site"
    _pip("install", "--no-deps", "--no-index", "--target", str(target), str(wheel), cwd=tmp)
    yield Installed(wheel, target)


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def test_wheel_holds_the_demo_and_every_bundled_example(installed: Installed) -> None:
    names = _names(installed.wheel)
    assert {f"bot/demo/{m}.py" for m in DEMO_MODULES} <= names
    examples = ROOT / "bot" / "demo" / "examples"
    bundled = {p.relative_to(ROOT).as_posix() for p in examples.rglob("*") if p.is_file()}
    assert len({p.split("/")[3] for p in bundled}) >= 3 and all(p.endswith((".json", ".yaml")) for p in bundled)
    assert {n for n in names if n.startswith("bot/demo/examples/")} == bundled


def test_wheel_leaves_the_tests_fakes_out(installed: Installed) -> None:
    names = _names(installed.wheel)
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"bot", "handlers"}
    assert not [n for n in names if n.startswith("bot/devtools/")]
    with zipfile.ZipFile(installed.wheel) as zf:
        shipped = {n: zf.read(n).decode() for n in names if n.startswith("bot/demo/") and n.endswith(".py")}
    leaked = [(n, d) for n, text in shipped.items() for d in TEST_ONLY if d + "(" in text]
    assert not leaked


def test_demo_runs_from_the_installed_wheel(installed: Installed, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(installed.target)}
    env.pop("PYTHONHOME", None)
    where = subprocess.run(
        [sys.executable, "-c", "import bot, bot.demo; print(bot.__file__); print(bot.demo.EXAMPLES)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    package, examples = where.stdout.split()
    assert Path(package) == installed.target / "bot" / "__init__.py"  # not the editable checkout
    assert Path(examples) == installed.target / "bot" / "demo" / "examples"

    demo = subprocess.run(
        [str(installed.target / "bin" / "argo-why"), "demo"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stdout + demo.stderr
    for app in ("checkout", "flights-search", "tenant-guard"):
        assert f"app={app}" in demo.stdout and f"applications/argocd/{app}|{app}>" in demo.stdout
    assert "200 duplicate" in demo.stdout and "never written to" in demo.stdout
