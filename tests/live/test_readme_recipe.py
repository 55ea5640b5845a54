"""The README's "Using it on a real cluster" recipe, run as it is written, against the real API server (issue 28, 12).

The shell block is read from README.md by this test, so the recipe and its test cannot drift apart. It runs in bash
with the pinned ``kubectl`` of the Go test tooling first on PATH (never the machine's own), the installed
``argo-why``, and a stand-in for the ``argocd`` CLI (not installed here) that prints the rendered manifests for
``argocd app manifests`` and succeeds for ``argocd app get --hard-refresh``. The only change made to the block is the
value of ``NS`` (a fresh namespace per run, on a server shared by the whole session). The app renders what apps
render besides Deployments and Services: its Namespace, a ServiceAccount, a Secret, a ConfigMap, an HPA and a
cluster-scoped ClusterRole, namespaced manifests without a namespace (as Helm charts render them), applied by
server-side apply as Argo CD's controller applies them.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from bot.analysis import load_documents
from tests.harness.go_tools import build_go_tools
from tests.harness.kube_server import KubeServer
from tests.harness.served_kinds import ServedKinds

README = Path(__file__).resolve().parents[2] / "README.md"
APP = "shop"

ARGOCD_STAND_IN = """#!/bin/sh
# A stand-in for the argocd CLI: the two calls the README's recipe makes.
case "$1 $2" in
  "app manifests") [ "$3" = "$EXPECTED_APP" ] || { echo "unknown app $3" >&2; exit 1; }; cat "$RENDERED" ;;
  "app get") [ "$3" = "$EXPECTED_APP" ] || { echo "unknown app $3" >&2; exit 1; }; echo "Name: $3" ;;
  *) echo "argocd stand-in: $* is not part of the recipe" >&2; exit 1 ;;
esac
"""


def recipe_block() -> str:
    """The first shell block of the README's "Using it on a real cluster" section."""
    section = README.read_text(encoding="utf-8").split("\n## Using it on a real cluster\n", 1)[1]
    block = section.split("```sh\n", 1)[1].split("\n```", 1)[0]
    return block + "\n"


def runnable(block: str, namespace: str) -> str:
    """The block up to its illustrative ``argo-why explain ...`` lines, with ``NS`` set to ``namespace``."""
    lines = block.splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("argo-why explain ..."))
    script = "\n".join(lines[:end]) + "\n"
    first = re.compile(r"^APP=shop; NS=shop\b", re.M)
    assert first.search(script), "the recipe starts with APP=shop; NS=shop"
    return first.sub(f"APP=shop; NS={namespace}", script, count=1)


def tracked(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    api = obj["apiVersion"]
    group = api.split("/")[0] if "/" in api else ""
    ns = namespace if obj["kind"] not in ("Namespace", "ClusterRole") else ""
    tid = f"{APP}:{group}/{obj['kind']}:{ns}/{obj['metadata']['name']}"
    obj["metadata"].setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = tid
    return obj


def rendered(namespace: str) -> list[dict[str, Any]]:
    """What `argocd app manifests` prints for the app: namespaced objects without a namespace, as Helm renders."""
    labels = {"app.kubernetes.io/name": "web"}
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "web"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web-credentials"}, "type": "Opaque",
         "stringData": {"password": "s3cret"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web-config"}, "data": {"mode": "prod"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": labels},
         "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
             "metadata": {"labels": labels},
             "spec": {"serviceAccountName": "web", "containers": [
                 {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 8080}]}]}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
         "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 8080}]}},
        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                  "minReplicas": 2, "maxReplicas": 5, "metrics": [{"type": "Resource", "resource": {
                      "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": f"{namespace}-reader"},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]},
    ]  # fmt: skip
    return [tracked(o, namespace) for o in objs]


def application(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": APP, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://git.example.com/shop.git", "path": "chart", "targetRevision": "main"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
        },
    }


class Shell:
    """bash in a work folder, with the pinned kubectl, the argocd stand-in and argo-why on PATH."""

    def __init__(self, work: Path, kube_server: KubeServer) -> None:
        self.work = work
        stand_in = work / "bin"
        stand_in.mkdir()
        (stand_in / "argocd").write_text(ARGOCD_STAND_IN)
        (stand_in / "argocd").chmod(0o755)
        path = [str(build_go_tools()), str(stand_in), str(Path(sys.executable).parent), "/usr/bin", "/bin"]
        self.env = {
            "PATH": os.pathsep.join(path),
            "HOME": str(work),
            "KUBECONFIG": str(kube_server.kubeconfig),
            "RENDERED": str(work / "rendered.yaml"),
            "EXPECTED_APP": APP,
            "LANG": "C.UTF-8",
        }

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=self.work, env=self.env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    def ok(self, script: str) -> str:
        proc = self.run(script)
        assert proc.returncode == 0, (script, proc.stdout, proc.stderr)
        return proc.stdout


def test_the_readme_recipe_as_written_fetches_every_object_the_manifests_name(
    kube_server: KubeServer, served_kinds: ServedKinds, tmp_path: Path
) -> None:
    namespace = f"recipe-{secrets.token_hex(3)}"
    kube_server.create_namespace(namespace)
    kube_server.create_namespace("argocd", exist_ok=True)
    served_kinds.serve([application(namespace)])
    sh = Shell(tmp_path, kube_server)
    assert sh.ok("command -v kubectl").strip() == str(build_go_tools() / "kubectl")  # the pinned one
    (tmp_path / "rendered.yaml").write_text(yaml.safe_dump_all(rendered(namespace)))
    (tmp_path / "app.yaml").write_text(yaml.safe_dump(application(namespace)))
    # Argo CD syncs the app (server-side apply, its field manager) and the Application exists in argocd
    sh.ok(f"kubectl apply --server-side --field-manager=argocd-controller -n {namespace} -f rendered.yaml >/dev/null")
    sh.ok("kubectl apply --server-side --force-conflicts -f app.yaml >/dev/null")

    script = runnable(recipe_block(), namespace)
    clean = sh.run(script)
    assert clean.returncode == 0, (clean.stdout, clean.stderr)
    assert clean.stdout.startswith(f"No drift: {APP} matches Git in 8 resources."), clean.stdout
    # the context recipe wrote one valid file holding both lists
    context = load_documents((tmp_path / "context.yaml").read_bytes(), "context.yaml")
    kinds = {o["kind"] for o in context}
    assert {"HorizontalPodAutoscaler", "Namespace", "Application"} <= kinds, kinds
    assert any(o["kind"] == "Application" and o["metadata"]["name"] == APP for o in context)
    live = load_documents((tmp_path / "live.yaml").read_bytes(), "live.yaml")
    assert sorted(o["kind"] for o in live) == sorted(o["kind"] for o in rendered(namespace))
    assert all(o["metadata"].get("managedFields") for o in live)

    # a person patches the ConfigMap: the same recipe explains it
    sh.ok(f'kubectl patch configmap web-config -n {namespace} --type merge -p \'{{"data":{{"mode":"debug"}}}}\'')
    drift = sh.run(script)
    assert drift.returncode == 1, (drift.stdout, drift.stderr)
    assert f"ConfigMap {namespace}/web-config" in drift.stdout and "manual-edit" in drift.stdout, drift.stdout
    assert "Not compared" not in drift.stdout
