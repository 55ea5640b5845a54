"""``argo-why explain`` as a whole process: what it imports, what it leaves to the garbage collector (issue 29).

A start of ``argo-why explain`` imported the Kubernetes client (for one pure function, ``parse_quantity``) and
pydantic-settings (for the ``--help`` epilogs), a fifth of a second each; bench/analysis.py measures the whole
process against a bare ``json.load`` of the same files. These tests hold the imports off and the ported quantity
parser equal to the client's.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kubernetes.utils.quantity import parse_quantity as client_parse_quantity

from bot.analysis.canonical import parse_quantity
from bot.cli import main

HEAVY = ("kubernetes", "pydantic", "pydantic_settings", "httpx", "slack_sdk", "slack_bolt", "redis", "starlette",
         "jinja2", "yaml", "bot.config", "bot.analysis.blame", "bot.analysis.sidebyside")  # fmt: skip

QUANTITIES = [
    "1", "0", "-1", "1.5", ".5", "1e3", "1E3", "2.5e-3", "100m", "1000m", "250u", "3n", "1k", "1K", "1M", "1G",
    "1T", "1P", "1E", "1Ki", "1Mi", "1024Mi", "1.5Gi", "2Ti", "1Pi", "1Ei", "1ki", "1mi", "1ni", "1ui", "Mi", "i",
    "", " 1", "1 ", "abc", "1.2.3", "NaN", "Infinity", "-Infinity", "1Xi", "12Zi", "+5", "0x10", "1_000", "1e",
    1, 0, -3, 2.5, 1e20,
]  # fmt: skip


@pytest.mark.parametrize("value", QUANTITIES, ids=repr)
def test_parse_quantity_is_the_kubernetes_clients(value: str | int | float) -> None:
    try:
        want: Decimal | type[Exception] = client_parse_quantity(value)
    except ValueError:
        want = ValueError
    if want is ValueError:
        with pytest.raises(ValueError):
            parse_quantity(value)
        return
    got = parse_quantity(value)
    assert str(got) == str(want) and type(got) is Decimal


def _app(tmp: Path) -> list[str]:
    desired = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
               "spec": {"replicas": 2, "template": {"spec": {"containers": [
                   {"name": "app", "image": "web:1", "resources": {"limits": {"memory": "1024Mi"}}}]}}}}  # fmt: skip
    live = json.loads(json.dumps(desired))
    live["spec"]["replicas"] = 5
    live["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "1Gi"
    live["metadata"]["managedFields"] = [
        {"manager": "kube-controller-manager", "operation": "Update", "subresource": "scale", "apiVersion": "apps/v1",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
    ]  # fmt: skip
    (tmp / "d.json").write_text(json.dumps(desired))
    (tmp / "l.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [live]}))
    return ["explain", "--desired", str(tmp / "d.json"), "--live", str(tmp / "l.json"), "--format", "json"]


def test_explain_imports_no_client_settings_or_page(tmp_path: Path) -> None:
    code = (
        "import sys, io, contextlib\nfrom bot.cli import main\nout = io.StringIO()\n"
        f"with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    code = main({_app(tmp_path)!r})\n"
        f"print(code, len(__import__('json').loads(out.getvalue())['findings']), "
        f"[m for m in {HEAVY!r} if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # both differences found (the quantity compared as a quantity), and nothing heavy imported for it
    assert done.stdout.split(" ", 2) == ["1", "2", "[]\n"]


def test_explain_leaves_the_collector_as_it_found_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert main(_app(tmp_path)) == 1
    assert len(json.loads(capsys.readouterr().out)["findings"]) == 2
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_version_and_help_are_still_answered() -> None:
    version = subprocess.run([sys.executable, "-m", "bot", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("argo-why ") and not version.stderr
    helped = subprocess.run([sys.executable, "-m", "bot", "why", "--help"], capture_output=True, text=True, check=True)
    assert "ARGOCD_URL" in helped.stdout and "exit status:" in helped.stdout


def test_the_console_script_exits_at_once_after_explain_with_its_whole_output_and_status(tmp_path: Path) -> None:
    # many findings: an output larger than a pipe's buffer, written before the process goes
    args = _app(tmp_path)
    desired = json.loads((tmp_path / "d.json").read_text())
    live = json.loads((tmp_path / "l.json").read_text())["items"][0]
    many_d: list[dict[str, Any]] = []
    many_l: list[dict[str, Any]] = []
    for i in range(300):
        for obj, out in ((desired, many_d), (live, many_l)):
            copy = json.loads(json.dumps(obj))
            copy["metadata"]["name"] = f"web-{i}"
            out.append(copy)
    (tmp_path / "d.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": many_d}))
    (tmp_path / "l.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": many_l}))
    done = subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, check=False)
    assert done.returncode == 1  # drift explained
    assert len(done.stdout) > 65536 and len(json.loads(done.stdout)["findings"]) == 600
    assert b"note:" in done.stderr and b"Traceback" not in done.stderr
    # a reader that stops early: no traceback, no "Exception ignored" from a late flush
    head = subprocess.run(f"{sys.executable} -m bot {' '.join(args)} | head -c 100", shell=True,
                          capture_output=True, check=False)  # fmt: skip
    assert len(head.stdout) == 100 and b"Traceback" not in head.stderr and b"Exception ignored" not in head.stderr
    # a refusal: its status and its one line
    bad = subprocess.run([sys.executable, "-m", "bot", "explain", "--desired", str(tmp_path / "nope.json"),
                          "--live", str(tmp_path / "l.json")], capture_output=True, text=True, check=False)  # fmt: skip
    assert bad.returncode == 2 and "cannot read" in bad.stderr
