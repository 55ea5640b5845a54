"""The Dockerfile builds what the chart runs: a base pinned by digest, locked dependencies checked against their
hashes, uid 10001, a health check on an endpoint the bot serves, and nothing copied that .dockerignore leaves out.

No image is built here (no container engine in the test environment); tests/deploy/test_wheel.py runs the same install
steps (fresh venv, ``--require-hashes -r requirements.lock``, the wheel ``--no-deps``) and the demo as uid 10001.
"""

from __future__ import annotations

import re
import tomllib

import yaml

from tests.paths import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
LINES = [line.strip() for line in re.sub(r"\\\n", " ", DOCKERFILE).splitlines() if line.strip()]


def _instructions(name: str) -> list[str]:
    return [line[len(name) + 1 :] for line in LINES if line.startswith(name + " ")]


def test_the_base_image_is_pinned_by_digest() -> None:
    [arg] = [a for a in _instructions("ARG") if a.startswith("PYTHON_IMAGE=")]
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.\d+-slim@sha256:[0-9a-f]{64}", arg)
    assert {f.split()[0] for f in _instructions("FROM")} == {"${PYTHON_IMAGE}"}


def test_dependencies_come_from_the_locks_with_their_hashes() -> None:
    run = " ".join(_instructions("RUN"))
    assert "--require-hashes --no-deps -r requirements.lock" in run
    assert "--require-hashes --no-deps -r requirements-build.lock" in run
    assert "--no-build-isolation" in run and "pip install --no-deps /dist/argo_why-" in run


def test_it_runs_as_uid_10001_with_a_health_check_on_healthz() -> None:
    assert _instructions("USER") == ["10001:10001"]
    [health] = _instructions("HEALTHCHECK")
    assert "/healthz" in health and 'Route("/healthz"' in (ROOT / "bot" / "app.py").read_text()
    assert _instructions("ENTRYPOINT") == ['["argo-why"]'] and _instructions("CMD") == ['["serve"]']


def test_dockerignore_keeps_every_file_the_dockerfile_copies() -> None:
    ignore = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    assert ignore[0] == "*"  # everything is left out, but what is named again below
    kept = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied = {src.rstrip("/") for c in _instructions("COPY") if "--from=" not in c for src in c.split()[:-1]}
    assert copied == kept
    assert all((ROOT / path).exists() for path in copied)


def test_the_chart_runs_the_version_the_package_declares() -> None:
    chart = yaml.safe_load((ROOT / "deploy" / "chart" / "argo-why" / "Chart.yaml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert chart["appVersion"] == project["version"]  # the image tag the chart pulls by default
