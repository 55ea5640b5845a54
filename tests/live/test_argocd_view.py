"""explain's ``findings[].shown_by_argocd`` against Argo CD's own legacy diff, on generated objects.

For each generated pair (Git's object, the live one as the API server stores it) Argo CD's diff (the ``argocd_diff``
fixture: gitops-engine and argo-cd linked into argodiff) says whether the object is modified and where its
normalized and predicted live states differ; explain's findings marked ``shown_by_argocd`` must be exactly those
fields (a finding and a reported leaf are the same field when one's pointer contains the other's), and the others
must say why Argo CD does not show them. The generators cover what makes the two readings part: quantities in
another notation, empty omitempty values, a field the Go type does not know (the round trip skipped), defaults
Kubernetes' defaulting functions fill in (a NetworkPolicy port's protocol), StatefulSet ``volumeClaimTemplates``
and custom-resource list items with the server's defaults, with and without a last-applied configuration.

The casebooks are checked the same way elsewhere: tests/live/test_argocd_standin.py (``why`` on Argo CD's own diff
reaches explain's shown findings, both release lines) and tests/live/test_live_casebook.py (legacy and server-side diff
on the real API server).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis import covers, diff_objects, explain
from bot.analysis.remarshal import canonical_quantity
from bot.model import Report
from bot.wording import report as wording
from tests.builders import without_nulls
from tests.harness.argocd_diff import ArgoDiff, ResourceDiff

QUANTITIES = ["1", "1000m", "500m", "0.5", "1Gi", "1024Mi", "2Gi", "2048Mi", "1e3", "1k", "100m", "0.1"]
NOT_SHOWN = (wording.NOT_SHOWN_ROUNDTRIP, wording.NOT_SHOWN_DEFAULTED, wording.NOT_SHOWN_LIVE_ONLY)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def argocd_pointers(r: ResourceDiff) -> set[str]:
    """Where Argo CD's two states differ (both are whole objects: a key only one of them has counts)."""
    if not r.modified:
        return set()
    assert r.predicted_live is not None and r.normalized_live is not None
    both = [*diff_objects(r.predicted_live, r.normalized_live), *diff_objects(r.normalized_live, r.predicted_live)]
    return {d.pointer for d in both}


def _related(pointers: set[str], pointer: str) -> bool:
    return any(covers(p, pointer) or covers(pointer, p) for p in pointers)


def check(argocd_diff: ArgoDiff, desired: dict[str, Any], live: dict[str, Any]) -> Report:
    [r] = argocd_diff.diff([(desired, live)]).resources
    argo = argocd_pointers(r)
    report = explain([desired], [live], app="shop")
    shown = {f.pointer for f in report.findings if f.shown_by_argocd}
    context = (desired, live, sorted(argo), [(f.pointer, f.shown_by_argocd) for f in report.findings])
    assert all(_related(argo, p) for p in shown), context
    assert all(_related(shown, p) for p in argo), context
    for f in report.findings:
        said = [s for s in NOT_SHOWN if s.split("{")[0] in f.explanation]
        assert bool(said) == (not f.shown_by_argocd), (f.explanation, context)
    return report


def stored(quantity: str) -> str:
    """A quantity as the API server stores it: canonical."""
    canonical = canonical_quantity(quantity)
    assert canonical is not None
    return canonical


def _meta(kind: str, name: str = "web") -> dict[str, Any]:
    tracking = {"argocd.argoproj.io/tracking-id": f"shop:/{kind}:shop/{name}"}
    return {"name": name, "namespace": "shop", "annotations": tracking}


@SETTINGS
@given(
    cpu=st.tuples(st.sampled_from(QUANTITIES), st.sampled_from(QUANTITIES)),
    memory=st.tuples(st.sampled_from(QUANTITIES), st.sampled_from(QUANTITIES)),
    env=st.tuples(st.sampled_from(["", "prod"]), st.sampled_from(["prod", "absent"])),  # the server drops ""
    image=st.sampled_from(["nginx:1.27", "nginx:1.28"]),
    unknown=st.sampled_from([None, "resource", "sidecar"]),
    last_applied=st.booleans(),
)
def test_deployments(
    argocd_diff: ArgoDiff, cpu: tuple[str, str], memory: tuple[str, str], env: tuple[str, str], image: str,
    unknown: str | None, last_applied: bool,
) -> None:  # fmt: skip
    def deployment(cpu: str, memory: str, env_value: str, image: str) -> dict[str, Any]:
        container: dict[str, Any] = {"name": "app", "image": image, "env": [{"name": "MODE", "value": env_value}],
                                     "resources": {"limits": {"cpu": cpu, "memory": memory}}}  # fmt: skip
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("Deployment"), "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}}}}  # fmt: skip

    desired = deployment(cpu[0], memory[0], env[0], "nginx:1.27")
    if unknown is not None:  # a key the Go type does not have: Argo CD compares the object as written
        desired["spec"]["template"]["spec"]["containers"][0][unknown] = {"x": "y"}
    live = deployment(stored(cpu[1]), stored(memory[1]), env[1], image)
    if env[1] == "absent":
        del live["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"]
    if last_applied:
        live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(desired)
    report = check(argocd_diff, desired, without_nulls(live))
    if unknown is not None:  # the field itself is a finding, and every canonical form Argo CD now shows names it
        field = f"spec.template.spec.containers[name=app].{unknown}"
        [own] = [f for f in report.findings if f.path == field]
        assert (own.cause, own.shown_by_argocd) == ("normalization", True), own
        assert "the Kubernetes type Container (core/v1) has no such field" in own.explanation, own.explanation
        # the others name it exactly when Argo CD stops showing them once it is gone from Git
        fixed = copy.deepcopy(desired)
        del fixed["spec"]["template"]["spec"]["containers"][0][unknown]
        [after] = argocd_diff.diff([(fixed, without_nulls(live))]).resources
        for f in report.findings:
            if f is not own and f.shown_by_argocd:
                named = f"({field} is not a field of its type)" in f.explanation
                assert named == (not _related(argocd_pointers(after), f.pointer)), f.explanation


@SETTINGS
@given(
    protocol=st.sampled_from([None, "TCP", "UDP"]),
    live_protocol=st.sampled_from(["TCP", "UDP"]),
    port=st.sampled_from([(8080, 8080), (8080, 9090)]),
    last_applied=st.booleans(),
)
def test_networkpolicies_and_kubernetes_defaulting(
    argocd_diff: ArgoDiff, protocol: str | None, live_protocol: str, port: tuple[int, int], last_applied: bool
) -> None:
    def policy(port: int, protocol: str | None) -> dict[str, Any]:
        ports: dict[str, Any] = {"port": port, "protocol": protocol}
        out: dict[str, Any] = without_nulls({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                             "metadata": _meta("NetworkPolicy"),
                             "spec": {"podSelector": {}, "ingress": [{"ports": [ports]}]}})  # fmt: skip
        return out

    desired = policy(port[0], protocol)
    live = policy(port[1], live_protocol)
    live["spec"]["policyTypes"] = ["Ingress"]
    if last_applied:
        live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(desired)
    check(argocd_diff, desired, live)


@SETTINGS
@given(
    storage=st.tuples(st.sampled_from(["1Gi", "1024Mi", "2Gi"]), st.sampled_from(["1Gi", "2Gi"])),
    defaults=st.booleans(),
    last_applied=st.booleans(),
    replicas=st.tuples(st.sampled_from([1, 3]), st.sampled_from([1, 3])),
)
def test_statefulset_volume_claim_templates(
    argocd_diff: ArgoDiff, storage: tuple[str, str], defaults: bool, last_applied: bool, replicas: tuple[int, int]
) -> None:
    def sts(storage: str, replicas: int) -> dict[str, Any]:
        claim = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
        template = {"metadata": {"name": "data"}, "spec": claim}
        return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": _meta("StatefulSet"), "spec": {
            "replicas": replicas, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}},
            "volumeClaimTemplates": [template]}}  # fmt: skip

    desired = sts(storage[0], replicas[0])
    live = sts(stored(storage[1]), replicas[1])
    if defaults:  # what the API server stores in each template
        template = live["spec"]["volumeClaimTemplates"][0]
        template.update(apiVersion="v1", kind="PersistentVolumeClaim", status={"phase": "Pending"})
        template["spec"]["volumeMode"] = "Filesystem"
    if last_applied:
        live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(desired)
    check(argocd_diff, desired, live)


@SETTINGS
@given(
    weight=st.sampled_from([None, 1, 5]),
    live_weight=st.sampled_from([1, 5]),
    hostname=st.tuples(st.sampled_from(["a.example", "b.example"]), st.sampled_from(["a.example", "b.example"])),
    last_applied=st.booleans(),
    extra_live_rule=st.booleans(),
)
def test_custom_resources_list_items(
    argocd_diff: ArgoDiff, weight: int | None, live_weight: int, hostname: tuple[str, str], last_applied: bool,
    extra_live_rule: bool,
) -> None:  # fmt: skip
    def route(weight: int | None, hostname: str, defaults: bool) -> dict[str, Any]:
        backend: dict[str, Any] = {"name": "web", "port": 80, "weight": weight}
        parent: dict[str, Any] = {"name": "gw"}
        if defaults:
            backend.update(group="", kind="Service")
            parent.update(group="gateway.networking.k8s.io", kind="Gateway")
        out: dict[str, Any] = without_nulls({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                             "metadata": _meta("HTTPRoute"), "spec": {
                                 "hostnames": [hostname], "parentRefs": [parent],
                                 "rules": [{"backendRefs": [backend]}]}})  # fmt: skip
        return out

    desired = route(weight, hostname[0], defaults=False)
    live = route(live_weight, hostname[1], defaults=True)
    if extra_live_rule:  # an item beyond Git's list: the three-way diff keeps it, so that it shows
        live["spec"]["rules"].append(copy.deepcopy(live["spec"]["rules"][0]))
    if last_applied:
        live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(desired)
    check(argocd_diff, desired, live)


@SETTINGS
@given(
    cpu=st.tuples(st.sampled_from(QUANTITIES), st.sampled_from(QUANTITIES)),
    env=st.tuples(st.sampled_from(["", "prod"]), st.sampled_from(["prod", "absent"])),
    unknown=st.booleans(),
)
def test_argo_rollouts_pod_templates(
    argocd_diff: ArgoDiff, cpu: tuple[str, str], env: tuple[str, str], unknown: bool
) -> None:
    """Argo CD re-encodes a Rollout's pod template through PodSpec (its known-types normalizer), leniently."""

    def rollout(cpu: str, env_value: str) -> dict[str, Any]:
        env_var = {"name": "MODE", "value": env_value}
        container = {"name": "app", "image": "nginx:1.27", "env": [env_var], "resources": {"requests": {"cpu": cpu}}}
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": _meta("Rollout"), "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"canary": {"steps": [{"setWeight": 20}]}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}}}}  # fmt: skip

    desired = rollout(cpu[0], env[0])
    if unknown:  # unknown to PodSpec: dropped by this lenient decoding, nothing refused
        desired["spec"]["template"]["spec"]["containers"][0]["resource"] = {"x": "y"}
    live = rollout(cpu[1], env[1])  # a custom resource is stored as written
    if env[1] == "absent":
        del live["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"]
    check(argocd_diff, desired, live)
