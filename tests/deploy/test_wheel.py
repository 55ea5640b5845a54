"""The shipped package is the product: the wheel holds the demo and its examples, not the tests' fakes, and
``argo-why demo`` runs from it installed the way the image installs it.

The wheel is built offline from a clean copy of what the Dockerfile copies (no ``build/`` left over from an earlier
build can leak into it), with the setuptools and wheel of the test environment (``--no-build-isolation``). It is then
installed as the Dockerfile does: a fresh virtual environment, the dependencies from ``requirements.lock`` with
``--require-hashes`` (from PyPI, or pip's cache), the wheel with ``--no-deps``; and the demo runs as uid 10001 (the
image's user) from a virtual environment it cannot write to, as under the chart's read-only root filesystem.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.paths import ROOT

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
# The modules the demo runs, as paths below bot/demo/ without ".py".
DEMO_MODULES = (
    *("__init__", "runner", "fake_kube", "gitops", "serving", "transcript"),
    *(f"fake_argocd/{m}" for m in ("__init__", "server", "applications", "diffs", "masking", "objects")),
    *(f"fake_git/{m}" for m in ("__init__", "repo", "host", "github", "gitlab")),
    *(f"fake_slack/{m}" for m in ("__init__", "server", "web_api", "wire", "bodies")),
)

# The packages of the bot, as paths below bot/ (the layout of README's table): each ships with its __init__.py.
PACKAGES = (
    "analysis",
    "analysis/blame",
    "demo",
    "fixes",
    "queue",
    "report",
    "runtime",
    "slack",
    "slack/render",
    "sources",
    "sources/git",
    "store",
    "wording",
)
RUNTIME_MODULES = ("worker", "alerts", "digest", "fixflow", "followup", "sweep", "reminders", "scheduler", "serial",
                   "runtime", "services")  # fmt: skip
WORDING_MODULES = ("report", "slack", "pr", "cli")

# The drift page: its renderer and the templates it reads as package data, as paths below bot/report/.
REPORT_FILES = ("__init__.py", "html.py", "page_model.py", *(f"templates/{t}" for t in
                ("page.html", "_macros.html", "page.css", "page.js")))  # fmt: skip


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path  # a fresh virtual environment: the locked dependencies, then the wheel


def _pip(*args: str, cwd: Path, python: str = sys.executable) -> None:
    proc = subprocess.run(
        [python, "-m", "pip", "--disable-pip-version-check", "--no-input", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600,
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
    # Outside pytest's private (0700) temporary root, so that another uid can run what is installed there.
    home = Path(tempfile.mkdtemp(prefix="argo-why-venv-"))
    home.chmod(0o755)
    venv = home / "venv"
    try:
        subprocess.run([_system_python(), "-m", "venv", str(venv)], check=True, timeout=120)
        python = str(venv / "bin" / "python")
        _pip("install", "--require-hashes", "--no-deps", "-r", str(ROOT / "requirements.lock"), cwd=tmp, python=python)
        _pip("install", "--no-deps", str(wheel), cwd=tmp, python=python)
        yield Installed(wheel, venv)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _system_python() -> str:
    """An interpreter any user can run, as the image's /usr/local/bin/python is (Debian's, where this one is not)."""
    for candidate in ("/usr/local/bin/python3", "/usr/bin/python3", sys.executable):
        usable = subprocess.run([candidate, "-c", "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))"],
                                capture_output=True, timeout=60) if Path(candidate).exists() else None  # fmt: skip
        if usable is not None and usable.returncode == 0 and _world_runnable(Path(candidate)):
            return candidate
    return sys.executable


def _world_runnable(path: Path) -> bool:
    real = path.resolve()
    return all(p.stat().st_mode & 0o001 for p in [real, *real.parents])


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


def test_wheel_holds_every_package_of_the_bot(installed: Installed) -> None:
    names = _names(installed.wheel)
    assert {f"bot/{p}/__init__.py" for p in PACKAGES} <= names
    assert {f"bot/runtime/{m}.py" for m in RUNTIME_MODULES} | {f"bot/wording/{m}.py" for m in WORDING_MODULES} <= names
    assert {"bot/store/records.py", "bot/report/text.py", "bot/why.py", "bot/sources/clients.py"} <= names


def test_wheel_holds_the_drift_page_and_its_templates(installed: Installed) -> None:
    names = _names(installed.wheel)
    assert {f"bot/report/{f}" for f in REPORT_FILES} <= names
    templates = {p.relative_to(ROOT).as_posix() for p in (ROOT / "bot" / "report" / "templates").iterdir()}
    assert {n for n in names if n.startswith("bot/report/templates/")} == templates


def test_wheel_leaves_the_tests_fakes_out(installed: Installed) -> None:
    names = _names(installed.wheel)
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"bot", "handlers"}
    assert not [n for n in names if n.startswith("bot/devtools/")]
    with zipfile.ZipFile(installed.wheel) as zf:
        shipped = {n: zf.read(n).decode() for n in names if n.startswith("bot/demo/") and n.endswith(".py")}
    leaked = [(n, d) for n, text in shipped.items() for d in TEST_ONLY if d + "(" in text]
    assert not leaked


def test_demo_runs_from_the_wheel_in_a_fresh_venv_as_the_image_user(installed: Installed) -> None:
    bin_ = installed.venv / "bin"
    # the image's environment: its PATH and user, no HOME of its own, nothing of this checkout
    # a temporary folder of this venv's (removed with it): the demo keeps the drift pages it saves there
    tmp = installed.venv.parent / "tmp"
    tmp.mkdir(exist_ok=True)
    tmp.chmod(0o1777)
    env = {"PATH": f"{bin_}:/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1",
           "LANG": "C.UTF-8", "TMPDIR": str(tmp)}  # fmt: skip
    # as uid 10001 where this test can switch users and that uid can run the interpreter; else as this user
    switch = os.geteuid() == 0 and _world_runnable(bin_ / "python")
    as_image_user: dict[str, Any] = {"user": 10001, "group": 10001, "extra_groups": []} if switch else {}
    where = subprocess.run(
        [str(bin_ / "python"), "-c", "import bot, bot.demo; print(bot.__file__); print(bot.demo.EXAMPLES)"],
        cwd="/tmp", env=env, capture_output=True, text=True, timeout=60, **as_image_user,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    package, examples = where.stdout.split()
    assert Path(package).is_relative_to(installed.venv) and "site-packages" in package  # not the editable checkout
    assert Path(examples) == Path(package).parent / "demo" / "examples"

    demo = subprocess.run(
        [str(bin_ / "argo-why"), "demo"],
        cwd="/tmp", env=env, capture_output=True, text=True, timeout=120, **as_image_user,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stdout + demo.stderr
    for app in ("checkout", "flights-search", "tenant-guard"):
        assert f"app={app}" in demo.stdout and f"applications/argocd/{app}|{app}>" in demo.stdout
    assert "200 duplicate" in demo.stdout and "never written to" in demo.stdout
    # the drift page, rendered from the wheel's templates and served behind each thread's Full diff link
    saved = re.findall(r"/view/\S+ -> 200, saved as (\S+\.html)", demo.stdout)
    assert len(saved) == 3 and all("<!DOCTYPE html>" in Path(p).read_text()[:100] for p in saved)
    assert all(Path(p).is_relative_to(tmp) for p in saved)


def _locked() -> dict[str, tuple[Version, str]]:
    """requirements.lock: canonical name -> (pinned version, the entry's text with its hashes)."""
    entries: dict[str, tuple[Version, str]] = {}
    for entry in re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements.lock").read_text()):
        pin = re.match(r"^([A-Za-z0-9._-]+)==([^ ;\\]+)", entry)
        if pin:
            entries[canonicalize_name(pin.group(1))] = (Version(pin.group(2)), entry)
    return entries


def test_the_lock_pins_every_dependency_of_the_package_with_hashes() -> None:
    locked = _locked()
    for dependency in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        req = Requirement(dependency)
        assert canonicalize_name(req.name) in locked, f"{req.name} is not in requirements.lock: run make lock"
        version = locked[canonicalize_name(req.name)][0]
        assert req.specifier.contains(version, prereleases=True), f"{req}, but the lock has {version}: make lock"
    assert all("--hash=sha256:" in text for _, text in locked.values())
