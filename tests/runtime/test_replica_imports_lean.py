"""A replica loads the editors of Open PR (bot.fixes' opener and argocd-cm editor, ruamel.yaml) with the first PR it
opens, not at start, and reads the cluster through the kubernetes client without its typed API classes (issue 29:
memory per replica; a storm's replicas analyse and post, and rarely open a PR)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.test_replica_imports import ROOT, loaded_after


def test_starting_the_bot_loads_no_pr_editor() -> None:
    probe = "import bot.app, bot.cli, bot.runtime, bot.web.view\nimport sys\nprint(sorted(m for m in sys.modules))"
    loaded = loaded_after(probe)
    assert "ruamel" not in loaded


def test_the_pr_editors_still_load_when_a_pr_is_opened() -> None:
    loaded = loaded_after("import bot.app\nfrom bot.fixes.opener import open_fix\nfrom bot.fixes.cmedit import Form")
    assert "ruamel" in loaded


READ = """
import asyncio, json, sys, tempfile
from pathlib import Path
from bench.storm import CASE
from bot.demo.fake_kube import FakeKubernetes, context_from_case
from bot.sources.cluster import Clusters
with tempfile.TemporaryDirectory() as tmp, FakeKubernetes() as kube:
    kube.add(*context_from_case(CASE))
    clusters = Clusters(str(kube.write_kubeconfig(Path(tmp) / "kc", context="c")), {"in-cluster": "c"})
    source, why = clusters.for_destination({"server": "in-cluster"})
    ctx = asyncio.run(source.context_for(["checkout"], "argocd"))
print(json.dumps({"kinds": sorted({o["kind"] for o in ctx.objects}), "missing": ctx.missing, "typed": sorted(
    m for m in sys.modules if m.startswith("kubernetes.client.api.") or m == "pydantic._internal._validate_call")}))
"""


def test_a_cluster_read_goes_through_the_kubernetes_client_without_its_typed_api_classes() -> None:
    # CoreV1Api and the others validate each of their hundreds of methods' arguments with pydantic: importing them
    # cost a replica ~30 MB at its first analysis, for the few GETs made through the client's own request path
    out = subprocess.run([sys.executable, "-c", READ], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=300)  # fmt: skip
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["typed"] == [] and seen["missing"] == []
    assert {"HorizontalPodAutoscaler", "Application"} <= set(seen["kinds"]), seen["kinds"]


def test_the_analyses_share_a_cluster_client_until_it_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each analysis built its own client (a kubeconfig parsed, a configuration, a connection pool and new
    connections); now one per kube context, built again after CLIENT_TTL_S (a changed kubeconfig is read again)."""
    from bot.demo.fake_kube import FakeKubernetes
    from bot.sources import cluster

    with FakeKubernetes() as kube:
        clusters = cluster.Clusters(str(kube.write_kubeconfig(tmp_path / "kc", context="c")), {"in-cluster": "c"})
        first, _ = clusters.for_destination({"server": "in-cluster"})
        again, _ = clusters.for_destination({"server": "in-cluster"})
        assert first is not None and again is not None and first._api is again._api
        monkeypatch.setattr(cluster, "CLIENT_TTL_S", 0.0)
        later, _ = clusters.for_destination({"server": "in-cluster"})
        assert later is not None and later._api is not first._api
