"""The command line contract: formats, exit codes, and one clear line for bad input."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli import main
from tests.builders import deployment, entry, live_of
from tests.paths import CASEBOOK


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, input=stdin, timeout=60)


def write(tmp: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@pytest.fixture
def drifted(tmp_path: Path) -> tuple[str, str]:
    d = deployment()
    live = live_of(
        d,
        entry(
            "kubectl-edit",
            {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"app"}': {"f:image": {}}}}}}},
        ),
    )
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:1.0.1"
    return write(tmp_path, "desired.yaml", d), write(
        tmp_path, "live.yaml", {"apiVersion": "v1", "kind": "List", "items": [live]}
    )


def test_json_report_and_exit_1_on_drift(drifted: tuple[str, str]) -> None:
    desired, live = drifted
    proc = run("explain", "--desired", desired, "--live", live, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    [f] = report["findings"]
    assert f["resource"] == {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop", "name": "web"}
    assert f["pointer"] == "/spec/template/spec/containers/0/image"
    assert f["writer"]["manager"] == "kubectl-edit" and f["cause"] == "manual-edit"
    assert set(f) >= {"desired", "live", "confidence", "explanation", "fix"}


def test_text_report_groups_by_resource(drifted: tuple[str, str]) -> None:
    desired, live = drifted
    proc = run("explain", "--desired", desired, "--live", live)
    assert proc.returncode == 1
    assert "Deployment shop/web (apps/v1)" in proc.stdout and "manual-edit" in proc.stdout
    assert proc.stdout.startswith("shop: 1 difference in 1 resource (of 1 compared)")  # counted words, no "(s)"


def test_stdin_and_json_input(tmp_path: Path) -> None:
    d = deployment()
    live_path = tmp_path / "live.json"
    live_path.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [live_of(d)]}))
    proc = run("explain", "--desired", "-", "--live", str(live_path), "--format", "json", stdin=yaml.safe_dump(d))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["findings"] == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("kind: Deployment\nmetadata:\n  name: [unclosed\n", "document 1: not valid YAML (line"),
        ("kind: ConfigMap\nmetadata: {name: a}\n---\nkind: x\n  bad: indent\n", "document 2: not valid YAML (line 5"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nmetadata:\n  name: b\n",
         "document 2: object has no kind"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "document 1: ConfigMap has no metadata.name"),
        ("- just\n- a list\n", "document 1: expected a Kubernetes object"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_naming_file_and_document(tmp_path: Path, content: str, message: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    good = write(tmp_path, "live.yaml", live_of(deployment()))
    proc = run("explain", "--desired", str(bad), "--live", good)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and message in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_file_and_no_counterpart(tmp_path: Path) -> None:
    good = write(tmp_path, "live.yaml", live_of(deployment()))
    proc = run("explain", "--desired", str(tmp_path / "nope.yaml"), "--live", good)
    assert proc.returncode == 2 and "nope.yaml: cannot read" in proc.stderr
    other = write(tmp_path, "other.yaml", deployment(name="api"))
    proc = run("explain", "--desired", other, "--live", good)
    assert proc.returncode == 2 and "no object in --desired has a counterpart" in proc.stderr


def test_partial_input_reports_with_notes(tmp_path: Path) -> None:
    d, extra = deployment(), deployment(name="api")
    live = live_of(d)
    del live["metadata"]["managedFields"]
    proc = run(
        "explain",
        "--desired",
        write(tmp_path, "d.yaml", d, extra),
        "--live",
        write(tmp_path, "l.yaml", live),
        "--format",
        "json",
    )
    # nothing differs in what was compared, but one desired object was not compared: not "no drift"
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["findings"] == [] and report["summary"]["not_compared"] == 1
    assert report["not_compared"] == [
        {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop", "name": "api"}
    ]
    notes = report["notes"]
    assert notes[0].startswith("Not compared (no live counterpart): 1 of 2 desired objects;")
    assert any("shop/api" in n for n in notes) and any("managedFields" in n for n in notes)
    assert "note:" in proc.stderr
    text = run("explain", "--desired", str(tmp_path / "d.yaml"), "--live", str(tmp_path / "l.yaml"))
    assert text.returncode == 1 and text.stdout.startswith("Incomplete: ") and "No drift" not in text.stdout


def test_usage_error_exits_2_without_traceback() -> None:
    proc = run("explain", "--live", "x.yaml")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_secret_case_text_output_never_shows_values(capsys: pytest.CaptureFixture[str]) -> None:
    case = CASEBOOK / "cases" / "helm-randalphanum-secret"
    forbidden = json.loads((case / "case.json").read_text())["forbid_strings"]
    for fmt in ("text", "json"):
        code = main(
            [
                "explain",
                "--desired",
                str(case / "desired.yaml"),
                "--live",
                str(case / "live.yaml"),
                "--desired-again",
                str(case / "desired-again.yaml"),
                "--format",
                fmt,
            ]
        )
        out = capsys.readouterr()
        assert code == 1
        assert not [s for s in forbidden if s in out.out or s in out.err]


def test_serve_stops_with_one_line_per_missing_or_malformed_variable_all_at_once() -> None:
    env = {k: v for k, v in __import__("os").environ.items()
           if not k.startswith(("SLACK_", "ARGOCD_", "WEBHOOK_", "GIT_"))}  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "bot", "serve"], capture_output=True, text=True, timeout=60, env=env)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and lines[0] == "argo-why: 6 settings need fixing before argo-why can start:"
    assert lines[1] == "  SLACK_BOT_TOKEN is not set: the bot token (xoxb-...) of the Slack app"
    assert [line.split()[0] for line in lines[2:]] == ["SLACK_CHANNEL", "ARGOCD_URL", "ARGOCD_TOKEN", "WEBHOOK_TOKEN",
                                                       "SLACK_SIGNING_SECRET"]  # fmt: skip
    env.update(SLACK_BOT_TOKEN="xoxb-1", SLACK_CHANNEL="alerts", SLACK_APP_TOKEN="xapp-1", ARGOCD_URL="https://a",
               ARGOCD_TOKEN="t", WEBHOOK_TOKEN="w")  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "bot", "serve"], capture_output=True, text=True, timeout=60, env=env)
    assert (
        proc.returncode == 2 and proc.stderr.startswith("argo-why: SLACK_CHANNEL:") and "Traceback" not in proc.stderr
    )


@pytest.mark.parametrize("side", ["--desired", "--live"])
@pytest.mark.parametrize("content", ["", "---\n# nothing rendered\n", "apiVersion: v1\nkind: List\nitems: []\n"])
def test_an_empty_desired_or_live_file_is_bad_input_naming_the_file(
    drifted: tuple[str, str], tmp_path: Path, side: str, content: str
) -> None:
    """`argocd app manifests` writes nothing when the login expired: that is never "No drift" (issue 22, item 1)."""
    desired, live = drifted
    empty = tmp_path / "empty.yaml"
    empty.write_text(content)
    files = {"--desired": desired, "--live": live, side: str(empty)}
    proc = run("explain", "--desired", files["--desired"], "--live", files["--live"])
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == "" and "No drift" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"argo-why: {empty}: ") and side in line


def test_an_empty_desired_on_stdin_is_bad_input_too(drifted: tuple[str, str]) -> None:
    _, live = drifted
    proc = run("explain", "--desired", "-", "--live", live, stdin="")
    assert proc.returncode == 2 and proc.stderr.startswith("argo-why: <stdin>: ")


def test_no_drift_is_only_said_when_every_desired_object_was_compared(drifted: tuple[str, str], tmp_path: Path) -> None:
    desired, _ = drifted
    d = deployment()
    other = {**d, "metadata": {**d["metadata"], "name": "worker"}}
    both = write(tmp_path, "both.yaml", d, other)
    live = write(tmp_path, "live-clean.yaml", live_of(d))
    proc = run("explain", "--desired", both, "--live", live)
    assert proc.returncode == 1 and "No drift" not in proc.stdout and "Incomplete" in proc.stdout
    proc = run("explain", "--desired", desired, "--live", live)
    assert proc.returncode == 0 and proc.stdout.startswith("No drift")


# --- --version, --help per command, and counted words (issue 22, item 17) --------------------------------------


def test_version_is_the_installed_package_version() -> None:
    from importlib.metadata import version

    proc = run("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"argo-why {version('argo-why')}"


def test_each_commands_help_lists_its_environment_and_exit_status() -> None:
    from bot.config import ArgoCDSettings, GitSettings, RedisSettings, RuntimeSettings, SlackSettings

    def variables(*groups: type[Any]) -> set[str]:
        return {str(f.validation_alias) for g in groups for f in g.model_fields.values()}

    expected: dict[str, tuple[set[str], set[str]]] = {  # command: (variables, exit codes)
        "explain": (set(), {"0", "1", "2", "3"}),
        "why": (variables(ArgoCDSettings), {"0", "1", "2", "3"}),
        "blame": (set(), {"0", "2", "3"}),
        "serve": (variables(SlackSettings, ArgoCDSettings, RedisSettings, GitSettings, RuntimeSettings),
                  {"0", "2", "3"}),
        "demo": (set(), {"0", "3"}),
    }  # fmt: skip
    assert "--help lists the environment" in run("--help").stdout
    for command, (names, codes) in expected.items():
        proc = run(command, "--help")
        assert proc.returncode == 0, proc.stderr
        environment, _, status = proc.stdout.partition("\nexit status:\n")
        assert "environment" in environment and "ARGO_WHY_DEBUG" in environment, command
        listed = set(re.findall(r"\b[A-Z][A-Z_]{2,}\b", environment.split("environment", 1)[1]))
        assert names <= listed, (command, names - listed)
        assert {line.split()[0] for line in status.splitlines() if line.strip()} == codes, (command, status)


def _output_strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that can reach a person (docstrings excepted), f-string parts included."""
    tree = ast.parse(path.read_text())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}  # fmt: skip
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]  # fmt: skip


def test_no_output_says_difference_s() -> None:
    root = Path(__file__).resolve().parents[2]
    found = [f"{path.relative_to(root)}:{line}: {text!r}"
             for package in ("bot", "handlers", "bench") for path in sorted((root / package).rglob("*.py"))
             for line, text in _output_strings(path) if re.search(r"[a-z]\((s|es)\)", text)]  # fmt: skip
    assert not found, "\n".join(found)


@pytest.mark.parametrize(("count", "words"), [(0, "0 differences"), (1, "1 difference"), (2, "2 differences")])
def test_counts_take_the_singular_or_the_plural(count: int, words: str) -> None:
    from bot.wording import report as wording

    assert wording.plural(wording.DIFFERENCES, count) == words
