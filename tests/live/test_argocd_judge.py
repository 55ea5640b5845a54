"""Every rule argo-why proposes, judged by Argo CD's own diff and normalizer (tests/harness/argocd_judge.py).

For each scenario of the shared casebook and of argo-why's own (tests/scenarios/extra), the rules ``explain``
proposes are given to Argo CD as the Application's ignoreDifferences: the drift must no longer count, and a change to
any other field Git manages must still count. Both diff modes a syncing app can have are judged: ``legacy`` (the
three-way diff) and ``structured-merge`` (an app syncing with ``ServerSideApply=true``), the latter with the schema
of a real API server serving the scenario's kinds, as Argo CD's controller diffs (tests/harness/served_kinds.py). The
judge itself is tested on rules that are too wide and too narrow, in both modes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders import deployment
from tests.harness.argocd_diff import ArgoDiff, ArgoDiffError, Mode
from tests.harness.argocd_judge import RuleDoesNotHold, assert_rule_holds, judge_scenario
from tests.harness.served_kinds import ServedKinds, ServedKindsError, open_crd
from tests.paths import CASEBOOK, EXTRA

SCENARIOS = sorted(p for root in (CASEBOOK / "cases", EXTRA) for p in root.iterdir() if (p / "case.json").is_file())
MODES: list[Mode] = ["legacy", "structured-merge"]


def _served(request: pytest.FixtureRequest, mode: Mode) -> ServedKinds | None:
    """The API server whose schema the structured-merge diff reads (legacy needs none: it is not started for it)."""
    return None if mode == "legacy" else request.getfixturevalue("served_kinds")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("folder", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_proposed_rule_holds_in_argocd(
    argocd_diff_line: ArgoDiff, folder: Path, mode: Mode, request: pytest.FixtureRequest
) -> None:
    """On each Argo CD release line the helper is built for (tests/harness/argocd_diff.py ``LINES``)."""
    spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    judged = judge_scenario(argocd_diff_line, folder, modes=[mode], served=_served(request, mode))
    # every object the verdict gives a rule to was judged, with its blast radius checked leaf by leaf
    ruled = {(e["resource"]["kind"], e["resource"]["name"]) for e in spec["expect"] if e.get("rule") is True}
    assert {tuple(j.object.split(": ", 1)[1].split("/", 1)) for j in judged} >= ruled
    assert all(j.leaves_checked > 0 for j in judged)


def test_the_scenarios_give_argocd_many_rules_to_judge() -> None:
    ruled = [
        e for folder in SCENARIOS
        for e in json.loads((folder / "case.json").read_text(encoding="utf-8"))["expect"] if e.get("rule") is True
    ]  # fmt: skip
    assert len(ruled) >= 20


def _scaled() -> tuple[dict[str, Any], dict[str, Any]]:
    desired = deployment()
    live = {**desired, "spec": {**desired["spec"], "replicas": 5}}
    return desired, live


def _kubeconfig(request: pytest.FixtureRequest, mode: Mode) -> Path | None:
    served = _served(request, mode)
    return None if served is None else served.kubeconfig


@pytest.mark.parametrize("mode", MODES)
def test_the_judge_refuses_a_rule_that_misses_the_drift(
    argocd_diff: ArgoDiff, mode: Mode, request: pytest.FixtureRequest
) -> None:
    desired, live = _scaled()
    rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/template"]}
    with pytest.raises(RuleDoesNotHold, match="still reports the object modified"):
        assert_rule_holds(
            argocd_diff, desired, live, [rule], hides=["/spec/template"], mode=mode,
            kubeconfig=_kubeconfig(request, mode),
        )  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_the_judge_refuses_a_rule_wider_than_it_states(
    argocd_diff: ArgoDiff, mode: Mode, request: pytest.FixtureRequest
) -> None:
    desired, live = _scaled()
    rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec"]}
    with pytest.raises(RuleDoesNotHold, match="hides more than it states.*Git changes /spec/template"):
        assert_rule_holds(
            argocd_diff, desired, live, [rule], hides=["/spec/replicas"], mode=mode,
            kubeconfig=_kubeconfig(request, mode),
        )  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_the_judge_accepts_the_narrow_rule(argocd_diff: ArgoDiff, mode: Mode, request: pytest.FixtureRequest) -> None:
    desired, live = _scaled()
    rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/replicas"]}
    judgement = assert_rule_holds(
        argocd_diff, desired, live, [rule], hides=["/spec/replicas"], mode=mode, kubeconfig=_kubeconfig(request, mode)
    )
    assert "Git changes /spec/template/spec/containers/0/image" in judgement.still_shown
    assert "someone changes /spec/template/spec/containers/1/args/0 live" in judgement.still_shown


def test_a_changed_list_key_never_repeats_a_siblings(argocd_diff: ArgoDiff, served_kinds: ServedKinds) -> None:
    """Changing containerPort 8080 to 8081 next to a port 8081 would be a duplicate key, refused by the API server
    and by Argo CD's structured-merge diff alike: the judge picks a value no sibling holds."""
    desired = deployment()
    desired["spec"]["template"]["spec"]["containers"][0]["ports"].append({"name": "admin", "containerPort": 8081})
    live = {**desired, "spec": {**desired["spec"], "replicas": 5}}
    rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/replicas"]}
    judgement = assert_rule_holds(
        argocd_diff, desired, live, [rule], hides=["/spec/replicas"], mode="structured-merge",
        kubeconfig=served_kinds.kubeconfig,
    )  # fmt: skip
    assert "Git changes /spec/template/spec/containers/0/ports/0/containerPort" in judgement.still_shown


# --- why structured-merge is judged on an API server's schema -----------------------------------------------------


def _webhooks() -> tuple[dict[str, Any], dict[str, Any]]:
    """Two webhooks from Git without a caBundle; cert-manager's cainjector injected one into the second."""
    service = {"name": "guard", "namespace": "guard", "path": "/validate", "port": 443}
    hook = {"admissionReviewVersions": ["v1"], "sideEffects": "None", "failurePolicy": "Fail",
            "clientConfig": {"service": service}}  # fmt: skip
    desired: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "guard"}, "webhooks": [{**hook, "name": "a.guard.io"}, {**hook, "name": "b.guard.io"}],
    }  # fmt: skip
    live = copy.deepcopy(desired)
    live["webhooks"][1]["clientConfig"]["caBundle"] = "Q0EK"
    argo: dict[str, Any] = {f'k:{{"name":"{n}"}}': {".": {}, "f:name": {}, "f:clientConfig": {"f:service": {}}}
            for n in ("a.guard.io", "b.guard.io")}  # fmt: skip
    ca: dict[str, Any] = {".": {}, "f:name": {}, "f:clientConfig": {"f:caBundle": {}}}
    injector = {'k:{"name":"b.guard.io"}': ca}
    live["metadata"]["managedFields"] = [
        {"apiVersion": "admissionregistration.k8s.io/v1", "fieldsType": "FieldsV1", "manager": manager,
         "operation": "Apply", "fieldsV1": {"f:webhooks": fields}}
        for manager, fields in (("argocd-controller", argo), ("cert-manager-cainjector", injector))
    ]  # fmt: skip
    return desired, live


def _raw(argocd_diff: ArgoDiff, desired: Any, live: Any, kubeconfig: Path | None) -> dict[str, Any]:
    answers: list[dict[str, Any]] = argocd_diff.request({
        "mode": "structured-merge", "kubeconfig": str(kubeconfig or ""), "ignoreDifferences": [], "argocdCM": {},
        "includeMutationWebhook": False, "resources": [{"desired": desired, "live": live}],
    })["resources"]  # fmt: skip
    [answer] = answers
    return answer


def test_structured_merge_without_the_clusters_schema_is_a_verdict_no_argocd_gives(
    argocd_diff: ArgoDiff, served_kinds: ServedKinds
) -> None:
    """gitops-engine's structured-merge diff without a GVK parser takes every list as atomic: the caBundle another
    manager owns would vanish from predicted live, and the object count as modified. Argo CD's controller always
    passes the destination cluster's parser, where ``webhooks`` merge by name: the object is in sync. So the wrapper
    refuses the request the controller never sends, and the judge gives the API server's kubeconfig."""
    desired, live = _webhooks()
    bare = _raw(argocd_diff, desired, live, None)
    assert bare["modified"] and "caBundle" not in bare["predictedLive"]["webhooks"][1]["clientConfig"]
    served = _raw(argocd_diff, desired, live, served_kinds.kubeconfig)
    assert not served["modified"] and served["predictedLive"]["webhooks"][1]["clientConfig"]["caBundle"] == "Q0EK"
    with pytest.raises(ArgoDiffError, match="structured-merge needs kubeconfig"):
        argocd_diff.diff([(desired, live)], mode="structured-merge")
    with pytest.raises(ValueError, match="give its kubeconfig"):
        assert_rule_holds(argocd_diff, desired, live, [], mode="structured-merge")


def test_a_custom_resource_without_its_crd_is_served_with_an_open_schema(served_kinds: ServedKinds) -> None:
    subnet = {"apiVersion": "ec2.judge.example.com/v1", "kind": "Subnet", "metadata": {"name": "a"}, "spec": {}}
    crd = open_crd(subnet)
    assert crd["spec"]["scope"] == "Cluster" and crd["metadata"]["name"] == "subnets.ec2.judge.example.com"
    served_kinds.serve([subnet])
    # the same kind with another CRD later would make verdicts depend on the order tests run in: refused
    other = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
             "metadata": {"name": crd["metadata"]["name"]}, "spec": {**crd["spec"], "scope": "Namespaced"}}  # fmt: skip
    served_kinds.serve([subnet], [other])  # already published: nothing to install
    with pytest.raises(ServedKindsError, match="different CRDs"):
        served_kinds.install(other)
