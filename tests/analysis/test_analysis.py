"""The analysis on hand-built objects: diff semantics, causes, rules, existing ignores, masking."""

from __future__ import annotations

import copy
import json
from typing import Any

from bot.analysis import explain
from bot.analysis.diff import diff_objects
from bot.analysis.verify import jq_paths
from tests.builders import deployment, entry, live_of


def pointers(desired: dict[str, Any], live: dict[str, Any]) -> list[str]:
    return [d.pointer for d in diff_objects(desired, live)]


def test_defaults_and_key_defaults_are_not_drift() -> None:
    d = deployment()
    assert pointers(d, live_of(d)) == []
    assert explain([d], [live_of(d)]).findings == []


def test_keyed_lists_match_by_key_and_report_the_live_index() -> None:
    d = deployment()
    live = live_of(d)
    containers = live["spec"]["template"]["spec"]["containers"]
    containers.reverse()  # proxy first live, app second
    containers[1]["env"].insert(0, {"name": "INJECTED", "value": "1"})
    containers[1]["env"][1]["value"] = "debug"
    assert pointers(d, live) == ["/spec/template/spec/containers/1/env/1/value"]


def test_missing_keyed_item_is_reported_where_it_would_be_appended() -> None:
    d = deployment()
    live = live_of(d)
    live["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "INJ"}, {"name": "MODE", "value": "prod"}]
    d["spec"]["template"]["spec"]["containers"][0]["env"].append({"name": "NEW", "value": "x"})
    assert pointers(d, live) == ["/spec/template/spec/containers/0/env/2"]


def test_an_unchanged_list_with_a_repeated_merge_key_is_not_drift() -> None:
    # env names repeat in real manifests (the API server keeps both, the last wins in the container); an unchanged
    # list is not drift, though matching by key pairs the second item with the first
    d = deployment()
    d["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "MODE", "value": "a"},
        {"name": "MODE", "value": "b"},
    ]
    live = live_of(d)
    live["spec"]["replicas"] = 7
    assert pointers(d, live) == ["/spec/replicas"]


def test_atomic_list_element_and_only_live_keys() -> None:
    d = deployment()
    live = live_of(d)
    live["spec"]["template"]["spec"]["containers"][1]["args"][1] = "/etc/envoy2"
    live["spec"]["template"]["spec"]["containers"][0]["securityContext"] = {"runAsNonRoot": True}  # only live: no
    assert pointers(d, live) == ["/spec/template/spec/containers/1/args/1"]


def test_custom_resource_lists_compare_as_whole_values() -> None:
    d: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": {"items": [{"name": "a", "size": 1}], "extra": {"x": 1}},
    }
    live = copy.deepcopy(d)
    live["spec"]["items"][0]["color"] = "blue"  # only live, inside a list of an unknown type: a finding
    live["spec"]["extra"]["y"] = 2  # only live, in a plain map: not a finding
    assert pointers(d, live) == ["/spec/items/0/color"]


def test_reordered_atomic_list_is_one_normalization_finding() -> None:
    d: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"hosts": ["a", "b"]},
    }
    live = copy.deepcopy(d)
    live["spec"]["hosts"] = ["b", "a"]
    live["metadata"]["managedFields"] = [entry("argocd-controller", {"f:spec": {"f:hosts": {}}}, "Apply")]
    report = explain([d], [live], app="w")
    assert [(f.pointer, f.cause) for f in report.findings] == [("/spec/hosts", "normalization")]


def test_autoscaler_rule_is_narrow_and_verified() -> None:
    d = deployment()
    live = live_of(d, entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale"))
    live["spec"]["replicas"] = 7
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web-hpa", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    }
    [f] = explain([d], [live], [hpa]).findings
    assert f.cause == "autoscaler" and f.confidence == "confirmed"
    assert f.writer.object is not None and f.writer.object.name == "web-hpa"
    assert f.writer.subresource == "scale"
    assert f.fix.rule == {
        "group": "apps",
        "kind": "Deployment",
        "name": "web",
        "namespace": "shop",
        "jsonPointers": ["/spec/replicas"],
    }
    assert f.fix.sync_options == ["RespectIgnoreDifferences=true"]
    assert f.fix.hides == ["/spec/replicas"] and f.fix.verified is True


def test_operator_rule_in_keyed_list_selects_by_key_with_key_defaults() -> None:
    d = deployment()
    ctl: dict[str, Any] = {
        "f:spec": {
            "f:template": {
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"app"}': {"f:ports": {'k:{"containerPort":8080,"protocol":"TCP"}': {"f:name": {}}}}
                    }
                }
            }
        }
    }
    live = live_of(d, entry("port-namer", ctl))
    live["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"] = "web"
    [f] = explain([d], [live]).findings
    assert f.cause == "operator" and f.writer.manager == "port-namer"
    assert f.fix.rule is not None
    [expr] = f.fix.rule["jqPathExpressions"]
    assert 'select(.name == "app")' in expr and '(.protocol // "TCP") == "TCP"' in expr
    assert [list(p) for p in jq_paths(expr, live)] == [
        ["spec", "template", "spec", "containers", 0, "ports", 0, "name"]
    ]
    assert [list(p) for p in jq_paths(expr, d)] == [["spec", "template", "spec", "containers", 0, "ports", 0, "name"]]


def test_manual_edit_proposes_no_rule() -> None:
    d = deployment()
    edit: dict[str, Any] = {
        "f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"app"}': {"f:image": {}}}}}}
    }
    live = live_of(d, entry("kubectl-edit", edit))
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:1.0.1-hotfix"
    [f] = explain([d], [live]).findings
    assert (f.cause, f.fix.action, f.fix.rule) == ("manual-edit", "revert", None)


def test_existing_ignore_differences_hide_findings() -> None:
    d = deployment()
    live = live_of(d, entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale"))
    live["spec"]["replicas"] = 7
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "shop"},
        "spec": {"ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]},
    }
    report = explain([d], [live], [app])
    assert report.findings == [] and report.ignored == 1
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "argocd-cm", "namespace": "argocd"},
        "data": {
            "resource.customizations.ignoreDifferences.apps_Deployment": "managedFieldsManagers:\n"
            "- kube-controller-manager\n"
        },
    }
    assert explain([d], [live], [cm]).findings == []


def test_no_managed_fields_is_unknown_not_nobody_and_noted() -> None:
    d = deployment()
    live = live_of(d)
    del live["metadata"]["managedFields"]
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "other"
    report = explain([d], [live])
    [f] = report.findings
    assert (f.cause, f.writer.manager, f.fix.rule) == ("unknown", None, None)
    assert any("managedFields" in n for n in report.notes)


def test_desired_object_without_live_counterpart_is_a_note() -> None:
    d = deployment()
    other = deployment(name="api")
    report = explain([d, other], [live_of(d)])
    assert report.findings == [] and any("Deployment shop/api" in n for n in report.notes)


def test_secret_values_are_masked_everywhere() -> None:
    desired = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "n"},
        "stringData": {"password": "hunter2"},
    }
    live = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "s",
            "namespace": "n",
            "managedFields": [entry("kubectl-edit", {"f:data": {"f:password": {}}})],
        },
        "data": {"password": "c2VjcmV0"},
    }
    report = explain([desired], [live], app="x")
    text = json.dumps(report.to_dict())
    assert "hunter2" not in text and "c2VjcmV0" not in text and "aHVudGVyMg==" not in text
    [f] = report.findings
    assert f.pointer == "/data/password" and f.desired == f.live == "<redacted>"


def test_mutating_webhook_selectors() -> None:
    d = deployment()
    d["metadata"]["labels"]["team"] = "payments"
    live = live_of(d)
    live["metadata"]["labels"]["team"] = "platform"  # nobody owns the rewrite (ownership precedes admission)

    def mwc(ns_selector: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "policy"},
            "webhooks": [
                {
                    "name": "labels.policy.example.com",
                    "namespaceSelector": ns_selector,
                    "rules": [
                        {
                            "apiGroups": ["apps"],
                            "apiVersions": ["v1"],
                            "operations": ["UPDATE"],
                            "resources": ["deployments"],
                        }
                    ],
                }
            ],
        }

    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"policy": "on"}}}
    [f] = explain([d], [live], [mwc({"matchLabels": {"policy": "on"}}), ns]).findings
    assert f.cause == "mutating-webhook" and f.confidence == "confirmed"
    assert f.writer.object is not None and f.writer.object.name == "policy"
    [f] = explain([d], [live], [mwc({"matchLabels": {"policy": "off"}}), ns]).findings
    assert f.cause == "mutating-webhook" and f.writer.object is None and f.confidence == "likely"
    [f] = explain([d], [live], [mwc({"matchLabels": {"policy": "on"}})]).findings  # namespace labels unknown
    assert f.writer.object is not None and f.confidence == "likely"


def test_keda_scaled_object_is_preferred_over_its_hpa() -> None:
    d = deployment()
    live = live_of(d, entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale"))
    live["spec"]["replicas"] = 0
    so = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"name": "web"}},
    }
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "keda-hpa-web", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    }
    [f] = explain([d], [live], [hpa, so]).findings
    assert f.writer.object is not None and f.writer.object.kind == "ScaledObject"


def test_synthetic_managers_are_unknown_writers() -> None:
    d = deployment()
    live = live_of(d, entry("before-first-apply", {"f:spec": {"f:replicas": {}}}))
    live["spec"]["replicas"] = 5
    [f] = explain([d], [live]).findings
    assert (f.cause, f.writer.manager, f.fix.rule) == ("unknown", "before-first-apply", None)


def test_label_tracking_names_another_application() -> None:
    d = deployment()
    del d["metadata"]["annotations"]
    d["metadata"]["labels"]["app.kubernetes.io/instance"] = "shop"
    live = live_of(d)
    live["metadata"]["labels"]["app.kubernetes.io/instance"] = "shop-copy"
    report = explain([d], [live], app="shop")
    [f] = report.findings
    assert f.pointer == "/metadata/labels/app.kubernetes.io~1instance" and f.cause == "shared-resource"
    assert f.fix.action == "resolve-ownership" and f.fix.rule is None
