"""bot/analysis/remarshal.py against Argo CD's own diff: what gitops-engine's remarshal makes equal, ours does too.

Generated objects (hypothesis): Deployments, Services and ConfigMaps whose Git and live sides differ in the notation
of a quantity, in empty values of omitempty fields, in nulls and empty lists and maps. Argo CD's legacy diff (the
``argocd_diff`` fixture) says whether the object is modified; our reading (remarshal both sides, then diff) must say
the same. And the data file is what its generator writes.
"""

from __future__ import annotations

import copy
import filecmp
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis.diff import diff_objects
from bot.analysis.remarshal import canonical_quantity, refusal, remarshal
from tests.builders import without_nulls
from tests.harness.argocd_diff import ArgoDiff
from tests.paths import ROOT

QUANTITIES = ["1", "1000m", "0.5", "500m", "1Gi", "1024Mi", "1536Mi", "1.5Gi", "2048Ki", "2Mi", "1e3", "1k", "1000",
              "100m", "0.1", "1073741824", "512Mi", "0.5Gi", "250m", "1e-3", "1m"]  # fmt: skip
EMPTY: st.SearchStrategy[Any] = st.sampled_from(["", None, [], {}])


@pytest.mark.live  # `go run` of tests/tools/omitempty: Go, without a fixture that says so
def test_the_data_file_is_what_its_generator_writes(tmp_path: Path) -> None:
    out = tmp_path / "remarshal.json"
    subprocess.run([str(ROOT / "scripts" / "gen-remarshal-data.sh"), str(out)], check=True, timeout=900)
    assert filecmp.cmp(out, ROOT / "bot" / "analysis" / "data" / "remarshal.json", shallow=False)


def test_canonical_quantities_as_go_writes_them() -> None:
    assert [canonical_quantity(q) for q in ("1000m", "1024Mi", "0.5", "1.5Gi", "1e3", "2048Ki", "x", "1.2.3")] == [
        "1", "1Gi", "500m", "1536Mi", "1e3", "2Mi", None, None,
    ]  # fmt: skip


def _deployment(cpu: str, memory: str, env_value: Any, extra: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "app", "image": "nginx:1.27",
        "resources": {"limits": {"cpu": cpu, "memory": memory}},
        "env": [{"name": "MODE", "value": env_value}],
        **extra,
    }  # fmt: skip
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}}},
    }  # fmt: skip


def _ours_modified(desired: dict[str, Any], live: dict[str, Any]) -> bool:
    return bool(diff_objects(remarshal(desired), remarshal(live)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cpu=st.tuples(st.sampled_from(QUANTITIES), st.sampled_from(QUANTITIES)),
    memory=st.tuples(st.sampled_from(QUANTITIES), st.sampled_from(QUANTITIES)),
    env=st.tuples(st.sampled_from(["", "prod", None]), st.sampled_from(["", "prod", None, "absent"])),
    # a key the Go type does not have ("resource", a typo) makes Argo CD diff the whole object as it is
    extra=st.dictionaries(st.sampled_from(["args", "command", "workingDir", "ports", "resource"]), EMPTY, max_size=2),
)
def test_deployments_modified_as_argocd_says(
    argocd_diff: ArgoDiff, cpu: tuple[str, str], memory: tuple[str, str], env: tuple[Any, Any], extra: dict[str, Any]
) -> None:
    desired = _deployment(cpu[0], memory[0], env[0], extra)
    live = without_nulls(_deployment(cpu[1], memory[1], env[1], {}))
    if env[1] == "absent":
        del live["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"]
    [argo] = argocd_diff.diff([(desired, live)]).resources
    assert _ours_modified(desired, live) == argo.modified, (desired, live)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cluster_ip=st.sampled_from(["", None, "absent", "10.96.0.10"]),
    port_name=st.sampled_from(["", None, "http"]),
    labels=st.sampled_from([{}, None, {"a": "b"}]),
    data=st.sampled_from([{}, None, {"k": ""}, {"k": "v"}]),
)
def test_services_and_configmaps_modified_as_argocd_says(
    argocd_diff: ArgoDiff, cluster_ip: Any, port_name: Any, labels: Any, data: Any
) -> None:
    spec: dict[str, Any] = {"ports": [{"port": 80, "name": port_name}], "selector": {"app": "web"}}
    if cluster_ip != "absent":
        spec["clusterIP"] = cluster_ip
    meta = {"name": "web", "namespace": "shop", "labels": labels}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}
    live_service = without_nulls(copy.deepcopy(service))
    live_service["spec"]["clusterIP"] = "10.96.0.10"
    live_service["spec"]["ports"][0].pop("name", None) if not port_name else None
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}, "data": data}
    live_cm = without_nulls({**cm, "data": {k: v for k, v in (data or {}).items()} or None})
    answer = argocd_diff.diff([(service, live_service), (cm, live_cm)])
    assert [_ours_modified(service, live_service), _ours_modified(cm, live_cm)] == [
        r.modified for r in answer.resources
    ], (service, live_service, cm, live_cm)


def test_one_unknown_field_and_argocd_compares_the_object_as_it_is(argocd_diff: ArgoDiff) -> None:
    """gitops-engine decodes with DisallowUnknownFields: a StatefulSet's ``strategy`` (a Deployment field) keeps
    ``1000m`` from becoming ``1``, and Argo CD reports the quantity (argoproj/argo-cd#16400)."""
    desired = _deployment("1000m", "1Gi", "prod", {})
    desired["kind"] = "StatefulSet"
    desired["spec"]["serviceName"] = "web"
    live = copy.deepcopy(desired)
    live["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "1"
    [clean] = argocd_diff.diff([(desired, live)]).resources
    assert (clean.modified, _ours_modified(desired, live), refusal(desired)) == (False, False, None)
    desired["spec"]["strategy"] = {"type": "RollingUpdate"}
    [argo] = argocd_diff.diff([(desired, live)]).resources
    assert (argo.modified, _ours_modified(desired, live)) == (True, True)
    refused = refusal(desired)
    assert refused is not None and refused.pointer == "/spec/strategy"
    assert remarshal(desired) == desired and refusal(live) is None
