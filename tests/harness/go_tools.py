"""The Go test tooling (tests/tools/): where its binaries are, built on first use by ``scripts/build-go-tools.sh``.

``build_go_tools()`` returns the folder holding ``kube-apiserver``, ``etcd``, ``kubectl`` and ``argodiff``, built once
per machine into ``${XDG_CACHE_HOME:-~/.cache}/argo-why/go-tools/<versions and hash>/`` and reused afterwards (the
script answers at once when the folder exists). The answer is remembered for the session; the
``go_tools`` fixture gives it to a test. A build that fails raises
:class:`GoToolsError` with the failing step and the Go error: the tests that need the tools fail, never skip.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "scripts" / "build-go-tools.sh"


class GoToolsError(Exception):
    """The Go tools could not be built or started; the message holds the step and the error."""


@functools.cache
def build_go_tools() -> Path:
    """The folder of the built binaries (kube-apiserver, etcd, argodiff), building them when missing."""
    proc = subprocess.run([str(BUILD_SCRIPT)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GoToolsError(f"scripts/build-go-tools.sh failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def go_tools() -> Path:
    """The folder of the built Go tools, for a test that runs one of them itself (``notify``, for example)."""
    try:
        return build_go_tools()
    except GoToolsError as e:
        pytest.fail(f"the Go test tools could not be built: {e}", pytrace=False)
