"""Input a user got slightly wrong (issue 28, items 1 to 7 and 12), through the command line as a user runs it.

Each test runs ``argo-why`` in a process of its own and reads what a user reads: the exit status, the one line on
stderr (naming the file and the document), the JSON report and the text report.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import deployment, entry, live_of


def run(*args: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, input=data, timeout=120, cwd=cwd)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def write(tmp: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a refused input (exit 2, nothing on stdout, no traceback)."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[:500], proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    [line] = proc.stderr.strip().splitlines()
    return line


def edited(desired: dict[str, Any]) -> dict[str, Any]:
    """The live Deployment after ``kubectl edit`` changed the image."""
    live = live_of(desired, entry("kubectl-edit", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"app"}': {"f:image": {}}}}}}}))  # fmt: skip
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:hotfix"
    return live


def scaled(desired: dict[str, Any]) -> dict[str, Any]:
    """The live Deployment after its HPA scaled it to 7 through the scale subresource."""
    live = live_of(desired, entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale"))
    live["spec"]["replicas"] = 7
    return live


HPA = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
}


def report_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode in (0, 1), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


# --- 1. --app naming no tracking id of the manifests -------------------------------------------------------------


@pytest.mark.parametrize("tracking", ["annotation", "label"])
def test_an_app_name_matching_no_tracking_is_said_and_builds_no_shared_resource_verdict(
    tmp_path: Path, tracking: str
) -> None:
    d = deployment()
    if tracking == "label":
        del d["metadata"]["annotations"]
        d["metadata"]["labels"]["app.kubernetes.io/instance"] = "shop"
    desired, live = write(tmp_path, "d.yaml", d), write(tmp_path, "l.yaml", edited(d))
    report = report_of(run("explain", "--desired", desired, "--live", live, "--app", "shpo", "--format", "json"))
    assert [(f["cause"], f["writer"]["manager"]) for f in report["findings"]] == [("manual-edit", "kubectl-edit")]
    [warning] = report["warnings"]
    assert "shpo" in warning and "shop" in warning, warning
    text = run("explain", "--desired", desired, "--live", live, "--app", "shpo")
    assert text.returncode == 1 and text.stdout.startswith("WARNING: ") and "shared-resource" not in text.stdout
    # the right name, or one only the namespace prefix of apps in any namespace tells apart: no warning
    for app in ("shop", "team-a_shop"):
        assert (
            report_of(run("explain", "--desired", desired, "--live", live, "--app", app, "--format", "json"))[
                "warnings"
            ]
            == []
        )


def test_an_instance_label_naming_the_helm_release_builds_no_shared_resource_verdict_either(tmp_path: Path) -> None:
    """`helm template` output names the release in app.kubernetes.io/instance; Argo CD's label tracking rewrote it to
    the app's name live. The app named is the one the live object names: nothing is shared."""
    d = deployment()
    del d["metadata"]["annotations"]
    d["metadata"]["labels"]["app.kubernetes.io/instance"] = "shop-prod"
    live = edited(d)
    live["metadata"]["labels"]["app.kubernetes.io/instance"] = "shop"
    report = report_of(run("explain", "--desired", write(tmp_path, "d.yaml", d), "--live",
                           write(tmp_path, "l.yaml", live), "--app", "shop", "--format", "json"))  # fmt: skip
    causes = {f["pointer"]: f["cause"] for f in report["findings"]}
    assert causes["/spec/template/spec/containers/0/image"] == "manual-edit"
    assert "shared-resource" not in causes.values(), causes
    [warning] = report["warnings"]
    assert "--app shop" in warning and "shop-prod" in warning


# --- 2. the same manifests twice ---------------------------------------------------------------------------------


def test_the_same_manifests_given_twice_are_said_and_counted_once(tmp_path: Path) -> None:
    d = deployment()
    desired, live = write(tmp_path, "d.yaml", d), write(tmp_path, "l.yaml", edited(d))
    twice = run("explain", "--desired", desired, desired, "--live", live, live, "--format", "json")
    report = report_of(twice)
    assert report["summary"]["resources_compared"] == 1 and len(report["findings"]) == 1
    assert report["summary"]["findings"] == 1
    assert any("Deployment shop/web" in w and "2 times" in w and "--desired" in w for w in report["warnings"]), report
    assert any("Deployment shop/web" in w and "2 times" in w and "--live" in w for w in report["warnings"]), report
    # a doubled paste inside one file (one document repeated) is the same mistake
    doubled = write(tmp_path, "doubled.yaml", d, d)
    report = report_of(run("explain", "--desired", doubled, "--live", live, "--format", "json"))
    assert report["summary"]["resources_compared"] == 1 and len(report["findings"]) == 1
    once = report_of(run("explain", "--desired", desired, "--live", live, "--format", "json"))
    assert once["warnings"] == []


# --- 3. a live export without metadata.namespace ---------------------------------------------------------------


def test_a_live_object_without_namespace_takes_it_from_its_desired_counterpart(tmp_path: Path) -> None:
    d = deployment()
    live = scaled(d)
    del live["metadata"]["namespace"]
    args = ("--desired", write(tmp_path, "d.yaml", d), "--live", write(tmp_path, "l.yaml", live),
            "--context", write(tmp_path, "c.yaml", HPA))  # fmt: skip
    [f] = report_of(run("explain", *args, "--format", "json"))["findings"]
    assert f["resource"]["namespace"] == "shop"
    assert f["cause"] == "autoscaler" and f["confidence"] == "confirmed"
    assert f["writer"]["object"] == {"kind": "HorizontalPodAutoscaler", "namespace": "shop", "name": "web"}
    assert f["fix"]["rule"]["namespace"] == "shop"
    text = run("explain", *args)
    assert "Deployment shop/web (apps/v1)" in text.stdout, text.stdout


# --- 4. --desired and --live swapped -----------------------------------------------------------------------------


def test_desired_and_live_swapped_is_bad_input_saying_so(tmp_path: Path) -> None:
    d = deployment()
    desired, live = write(tmp_path, "d.yaml", d), write(tmp_path, "l.yaml", edited(d))
    line = one_line(run("explain", "--desired", live, "--live", desired))
    assert line.startswith(f"argo-why: {live}: ") and "swapped" in line, line
    assert "--desired" in line and "--live" in line
    # a live side that carries what the API server writes is not a swap, whatever the desired side holds
    export = edited(d)
    assert run("explain", "--desired", write(tmp_path, "export.yaml", export), "--live", live).returncode == 0


# --- 5. no managedFields, or managedFields that cannot be read ---------------------------------------------------


def test_findings_on_an_object_without_managed_fields_are_never_confirmed(tmp_path: Path) -> None:
    d = deployment()
    live = live_of(d)
    live["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "0.5"  # 500m, another form
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:hotfix"
    del live["metadata"]["managedFields"]
    report = report_of(run("explain", "--desired", write(tmp_path, "d.yaml", d), "--live",
                           write(tmp_path, "l.yaml", live), "--format", "json"))  # fmt: skip
    assert any("lowered confidence" in n for n in report["notes"])
    assert {f["cause"] for f in report["findings"]} == {"normalization", "unknown"}
    assert [f["confidence"] for f in report["findings"] if f["confidence"] == "confirmed"] == []


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda mf: "argocd-controller owns everything", id="a-string"),
        pytest.param(lambda mf: [{k: v for k, v in e.items() if k != "fieldsV1"} for e in mf], id="no-fieldsV1"),
        pytest.param(lambda mf: [mf[0], "kubectl-edit"], id="an-entry-not-a-mapping"),
    ],
)
def test_managed_fields_that_cannot_be_read_propose_no_rule(tmp_path: Path, spoil: Any) -> None:
    d = deployment()
    live = edited(d)
    live["metadata"]["managedFields"] = spoil(live["metadata"]["managedFields"])
    report = report_of(run("explain", "--desired", write(tmp_path, "d.yaml", d), "--live",
                           write(tmp_path, "l.yaml", live), "--format", "json"))  # fmt: skip
    [f] = report["findings"]
    assert f["fix"]["rule"] is None and f["cause"] == "unknown" and f["confidence"] != "confirmed", f
    assert any("Deployment shop/web" in n and "could not be read" in n for n in report["notes"]), report["notes"]


# --- 6. an alias bomb, an oversized input, empty blame input -----------------------------------------------------


def alias_bomb(levels: int = 10) -> str:
    lines = ['  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"  {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize("command", ["explain", "blame"])
def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path: Path, command: str) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    live = write(tmp_path, "l.yaml", live_of(deployment()))
    args = ("explain", "--desired", str(bomb), "--live", live) if command == "explain" else ("blame", str(bomb))
    line = one_line(run(*args))  # before the fix: runs until the timeout kills it
    assert line.startswith(f"argo-why: {bomb}: document 1: ") and "alias" in line, line


def test_a_few_aliases_are_still_read(tmp_path: Path) -> None:
    d = deployment()
    labels = d["metadata"]["labels"]
    d["spec"]["selector"]["matchLabels"] = d["spec"]["template"]["metadata"]["labels"] = labels
    text = yaml.safe_dump(d)  # one dict three times: an anchor and two aliases, as people write them
    assert text.count("*id001") == 2
    desired = tmp_path / "d.yaml"
    desired.write_text(text)
    proc = run("explain", "--desired", str(desired), "--live", write(tmp_path, "l.yaml", live_of(d)))
    assert proc.returncode == 0, proc.stderr


def test_an_input_larger_than_the_bound_is_refused_naming_it() -> None:
    from bot.analysis.loader import MAX_INPUT_BYTES

    big = b"# " + b"x" * (MAX_INPUT_BYTES + 16) + b"\n"
    line = one_line(run("blame", "-", stdin=big))
    assert line.startswith("argo-why: <stdin>: ") and "MiB" in line, line


def test_blame_of_empty_input_is_bad_input() -> None:
    for empty in ("", "---\n# nothing\n"):
        line = one_line(run("blame", "-", stdin=empty))
        assert line.startswith("argo-why: <stdin>: ") and "no object" in line, line


# --- 7. hints that fit the mistake -------------------------------------------------------------------------------


def test_an_empty_live_file_gets_no_argocd_login_hint(tmp_path: Path) -> None:
    d = deployment()
    desired, live = write(tmp_path, "d.yaml", d), write(tmp_path, "l.yaml", live_of(d))
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    live_line = one_line(run("explain", "--desired", desired, "--live", str(empty)))
    assert "--live" in live_line and "login" not in live_line and "kubectl get" in live_line, live_line
    desired_line = one_line(run("explain", "--desired", str(empty), "--live", live))
    assert "--desired" in desired_line and "argocd login" in desired_line


def test_stdin_given_twice_says_it_can_be_read_once() -> None:
    line = one_line(run("explain", "--desired", "-", "--live", "-", stdin=yaml.safe_dump(deployment())))
    assert "standard input" in line and "once" in line and "login" not in line, line


def test_a_helm_notes_document_is_said_to_be_no_kubernetes_object(tmp_path: Path) -> None:
    notes = tmp_path / "manifests.yaml"
    helm_notes = (
        "---\n# Source: shop/templates/NOTES.txt\n1. Get the application URL by running these commands:\n"
        "  export POD_NAME=$(kubectl get pods -l app=web -o jsonpath='{.items[0].metadata.name}')\n"
    )
    notes.write_text(yaml.safe_dump(deployment()) + helm_notes)
    line = one_line(run("explain", "--desired", str(notes), "--live", write(tmp_path, "l.yaml", live_of(deployment()))))
    assert line.startswith(f"argo-why: {notes}: document 2: "), line
    assert "not a Kubernetes object" in line and "1. Get the application URL" in line, line
    text = tmp_path / "text.yaml"
    text.write_text("Thank you for installing shop. Your release is named shop.\n")
    line = one_line(run("explain", "--desired", str(text), "--live", str(tmp_path / "l.yaml")))
    assert "not a Kubernetes object" in line and "Thank you for installing" in line, line


@pytest.mark.parametrize(
    "template",
    [
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  {{- include "labels" . | nindent 4 }}\n',
    ],
)
def test_an_unrendered_template_is_said_to_be_one(tmp_path: Path, template: str) -> None:
    tpl = tmp_path / "configmap.yaml"
    tpl.write_text(template)
    line = one_line(run("explain", "--desired", str(tpl), "--live", write(tmp_path, "l.yaml", live_of(deployment()))))
    assert line.startswith(f"argo-why: {tpl}: document 1: ") and "unrendered template" in line, line


# --- 12. duplicate keys (two `kind: List` outputs concatenated with >>) ----------------------------------------


def test_two_lists_concatenated_without_a_separator_are_refused_naming_the_line(tmp_path: Path) -> None:
    hpas = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [HPA]}
    apps = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": []}
    context = tmp_path / "context.yaml"
    context.write_text(yaml.safe_dump(hpas))  # kubectl get ... > context.yaml
    first = len(context.read_text().splitlines())
    with context.open("a") as f:  # kubectl get ... >> context.yaml
        f.write(yaml.safe_dump(apps))
    d = deployment()
    line = one_line(run("explain", "--desired", write(tmp_path, "d.yaml", d), "--live",
                        write(tmp_path, "l.yaml", scaled(d)), "--context", str(context)))  # fmt: skip
    assert line.startswith(f"argo-why: {context}: document 1: ") and "duplicate key" in line, line
    assert f"line {first + 1}" in line and "apiVersion" in line, line
    # the same in JSON (a fast path of its own)
    doubled = tmp_path / "doubled.json"
    doubled.write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},\n"kind": "Secret"}\n')
    line = one_line(run("blame", str(doubled)))
    assert "duplicate key" in line and "kind" in line and "line 2" in line, line


def test_merge_keys_are_no_duplicate(tmp_path: Path) -> None:
    d = deployment()
    text = yaml.safe_dump(d)
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: shop\ndata:\n  <<: {a: '1'}\n  b: '2'\n"
    desired = tmp_path / "d.yaml"
    desired.write_text(text + "---\n" + cm)
    live_cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"},
               "data": {"a": "1", "b": "2"}}  # fmt: skip
    proc = run("explain", "--desired", str(desired), "--live", write(tmp_path, "l.yaml", live_of(d), live_cm))
    assert proc.returncode == 0, proc.stderr


def test_a_pasted_copy_keeps_working(tmp_path: Path) -> None:
    """Not a duplicate: a live object pasted without apiVersion beside a whole one of another name."""
    d, api = deployment(), deployment(name="api")
    pasted = {k: v for k, v in copy.deepcopy(edited(api)).items() if k != "apiVersion"}
    report = report_of(run("explain", "--desired", write(tmp_path, "d.yaml", d, api), "--live",
                           write(tmp_path, "l.yaml", live_of(d), pasted), "--format", "json"))  # fmt: skip
    assert report["warnings"] == [] and report["summary"]["resources_compared"] == 2


def test_a_cluster_scoped_object_gets_no_namespace_from_its_manifest(tmp_path: Path) -> None:
    """Charts often put a namespace on a ClusterRole (the API server ignores it): the live one, rightly without,
    stays cluster-scoped, and so does its rule."""
    role: dict[str, Any] = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "reader", "namespace": "shop"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}  # fmt: skip
    live = copy.deepcopy(role)
    del live["metadata"]["namespace"]
    live["rules"][0]["verbs"] = ["get", "list"]
    live["metadata"]["managedFields"] = [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:rules": {}},
         "manager": "rbac-operator", "operation": "Apply", "time": "2026-11-02T10:00:00Z"}]  # fmt: skip
    report = report_of(run("explain", "--desired", write(tmp_path, "d.yaml", role), "--live",
                           write(tmp_path, "l.yaml", live), "--format", "json"))  # fmt: skip
    [f] = report["findings"]
    assert f["resource"]["namespace"] in (None, ""), f["resource"]
    assert f["fix"]["rule"] is None or "namespace" not in f["fix"]["rule"], f["fix"]["rule"]
