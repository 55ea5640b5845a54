"""Verdicts that hold beyond the casebook: defaulting is proven, confidence is earned (issue 9, points 1 and 3)."""

from __future__ import annotations

import copy
import json
from typing import Any

from bot.analysis import explain
from bot.model import Finding
from tests.conftest import deployment, entry, live_of

TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}
INJECTED = {"key": "cloud.example.com/spot", "operator": "Exists", "effect": "NoSchedule"}


def with_tolerations(ssa: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """Git renders one toleration; live has a second one appended at admission, in a list Argo CD owns whole."""
    d = deployment()
    d["spec"]["template"]["spec"]["tolerations"] = [TOLERATION]
    live = live_of(d)
    argo = live["metadata"]["managedFields"][0]
    argo["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:tolerations"] = {}
    if not ssa:  # client-side apply: Update, with the last-applied-configuration annotation
        argo["operation"] = "Update"
        live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(d)
    live["spec"]["template"]["spec"]["tolerations"] = [TOLERATION, INJECTED]
    return d, live


def webhook(name: str = "spot-tolerations", resources: str = "deployments") -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "tolerations.spot.example.com",
                "rules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                           "resources": [resources]}],
            }
        ],
    }  # fmt: skip


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, [(f.pointer, f.cause) for f in findings]
    return findings[0]


def test_an_item_a_webhook_appends_to_a_list_argocd_owns_is_the_webhooks() -> None:
    d, live = with_tolerations()
    f = only(explain([d], [live], [webhook()], app="shop").findings)
    assert (f.pointer, f.cause, f.confidence) == ("/spec/template/spec/tolerations/1", "mutating-webhook", "confirmed")
    assert f.writer.object is not None and f.writer.object.name == "spot-tolerations"
    assert f.writer.manager == "argocd-controller"  # the atomic list's owner, as the decoder reads it


def test_without_the_webhook_configuration_last_applied_still_shows_admission_changed_it() -> None:
    d, live = with_tolerations()
    f = only(explain([d], [live], app="shop").findings)
    assert (f.cause, f.confidence) == ("mutating-webhook", "likely")
    assert "last-applied-configuration" in f.explanation


def test_without_webhook_or_last_applied_an_added_item_is_never_a_default() -> None:
    d, live = with_tolerations(ssa=True)
    f = only(explain([d], [live], app="shop").findings)
    assert f.cause == "unknown" and f.fix.rule is None


def widgets(
    git_part: dict[str, Any], live_part: dict[str, Any], manager: str = "argocd-controller", operation: str = "Apply"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A custom resource whose one list item Git renders as ``git_part`` and live holds as ``live_part``; ``manager``
    owns the list (atomic, as every list of a custom resource)."""
    d: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"},
        "spec": {"parts": [git_part]},
    }
    live = copy.deepcopy(d)
    live["spec"]["parts"] = [live_part]
    live["metadata"]["managedFields"] = [entry(manager, {"f:spec": {"f:parts": {}}}, operation)]
    return d, live  # fmt: skip


def test_custom_resource_list_items_and_keys_are_not_assumed_defaults() -> None:
    d, live = widgets({"name": "a"}, {"name": "a", "size": 3})  # no CRD, no known default: nothing proves one
    f = only(explain([d], [live], app="shop").findings)
    assert f.pointer == "/spec/parts/0/size" and f.cause != "api-defaulting"


def crd(default: Any, field: str = "size") -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {"name": {"type": "string"}, field: {"type": "integer", "default": default}},
    }
    spec = {"type": "object", "properties": {"parts": {"type": "array", "items": item}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True,
                          "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}],
        },
    }  # fmt: skip


def test_the_crd_schema_in_the_context_proves_a_default_when_the_value_agrees() -> None:
    d, live = widgets({"name": "a"}, {"name": "a", "size": 3})
    f = only(explain([d], [live], [crd(3)], app="shop").findings)
    assert (f.cause, f.confidence) == ("api-defaulting", "confirmed")
    assert any("widgets.example.com" in e for e in f.evidence)
    # the narrowest leaf, in every item: never the whole list
    assert f.fix.rule is not None and f.fix.rule.get("jqPathExpressions") == [".spec.parts[].size"]
    assert only(explain([d], [live], [crd(5)], app="shop").findings).cause != "api-defaulting"


def test_git_writing_a_zero_default_the_server_drops_is_normalization_not_unknown() -> None:
    d, live = widgets({"name": "a", "enabled": False}, {"name": "a"}, "widget-operator", "Update")
    schema = crd(False, field="enabled")
    f = only(explain([d], [live], [schema], app="shop").findings)
    assert f.pointer == "/spec/parts/0/enabled" and f.cause == "operator"  # the operator rewrote the list
    live["metadata"]["managedFields"] = [entry("argocd-controller", {"f:spec": {"f:parts": {}}}, "Apply")]
    f = only(explain([d], [live], [schema], app="shop").findings)
    assert (f.cause, f.confidence) == ("normalization", "confirmed")
    # a built-in kind drops an omitempty false by itself
    dep = deployment()
    dep["spec"]["template"]["spec"]["hostNetwork"] = False
    f = only(explain([dep], [live_of(deployment())], app="shop").findings)
    assert (f.pointer, f.cause, f.confidence) == ("/spec/template/spec/hostNetwork", "normalization", "likely")


def annotated(manager: str) -> tuple[dict[str, Any], dict[str, Any]]:
    d = deployment()
    live = live_of(d, entry(manager, {"f:metadata": {"f:labels": {"f:app.kubernetes.io/name": {}}}}))
    live["metadata"]["labels"]["app.kubernetes.io/name"] = "rewritten"
    return d, live


def test_an_unknown_manager_is_at_most_likely_and_could_be_a_script() -> None:
    f = only(explain(*map(lambda o: [o], annotated("nightly-relabel")), app="shop").findings)
    assert (f.cause, f.confidence) == ("operator", "likely")
    assert "person's script" in f.explanation


def test_a_known_controller_is_confirmed() -> None:
    for manager in ("kube-controller-manager", "openshift.io/image-registry-pull-secrets_service-account-controller",
                    "cert-manager-cainjector", "pilot-discovery"):  # fmt: skip
        f = only(explain(*map(lambda o: [o], annotated(manager)), app="shop").findings)
        assert (f.cause, f.confidence) == ("operator", "confirmed"), manager


# --- a rule never hides what Git manages (point 2) --------------------------------------------------------


def hidden(rule: dict[str, Any], obj: dict[str, Any]) -> list[str]:
    from bot.analysis.pointer import join
    from bot.analysis.rules import rule_paths

    return sorted(join(p) for p in rule_paths(rule, obj))


def test_a_rule_for_an_appended_item_selects_it_by_content_and_spares_gits_items() -> None:
    d, live = with_tolerations()
    f = only(explain([d], [live], [webhook()], app="shop").findings)
    assert f.fix.rule is not None and f.fix.rule["jqPathExpressions"] == [
        '.spec.template.spec.tolerations[] | select(.key == "cloud.example.com/spot")'
    ]
    assert hidden(f.fix.rule, live) == ["/spec/template/spec/tolerations/1"] and hidden(f.fix.rule, d) == []


def test_an_appended_copy_of_a_git_item_gets_no_rule_and_says_why() -> None:
    d, live = with_tolerations()
    live["spec"]["template"]["spec"]["tolerations"] = [TOLERATION, TOLERATION]
    f = only(explain([d], [live], [webhook()], app="shop").findings)
    assert f.cause == "mutating-webhook" and f.fix.rule is None and f.fix.verified is False
    assert f.fix.action == "server-side-diff" and "none is proposed" in f.explanation


def test_scalar_items_are_selected_by_value() -> None:
    d: dict[str, Any] = {
        "apiVersion": "example.com/v1", "kind": "Route", "metadata": {"name": "r", "namespace": "n"},
        "spec": {"hosts": ["shop.example.com"]},
    }  # fmt: skip
    live = copy.deepcopy(d)
    live["spec"]["hosts"].append("shop.internal")
    live["metadata"]["managedFields"] = [entry("route-operator", {"f:spec": {"f:hosts": {}}})]
    f = only(explain([d], [live], app="shop").findings)
    assert f.fix.rule is not None and f.fix.rule["jqPathExpressions"] == [
        '.spec.hosts[] | select(. == "shop.internal")'
    ]


def test_a_list_git_leaves_empty_is_named_whole() -> None:
    d, live = with_tolerations()
    d["spec"]["template"]["spec"]["tolerations"] = []
    live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(d)
    findings = explain([d], [live], [webhook()], app="shop").findings
    assert [f.fix.rule and f.fix.rule.get("jsonPointers") for f in findings] == [
        ["/spec/template/spec/tolerations"]
    ] * 2


def test_rules_that_hide_an_image_or_a_whole_section_say_what_stops_syncing() -> None:
    d = deployment()
    live = live_of(d, entry("image-pinner", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"app"}': {"f:image": {}}}}}}}))  # fmt: skip
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web@sha256:0123"
    f = only(explain([d], [live], app="shop").findings)
    assert f.fix.caution is not None and "/spec/template/spec/containers/0/image" in f.fix.caution
    assert "will not be synced either" in f.explanation
    d, live = with_tolerations()
    d["spec"]["template"]["spec"]["tolerations"] = []
    assert all(f.fix.caution is None for f in explain([d], [live], [webhook()], app="shop").findings)


# --- advice follows the cause (point 4) -------------------------------------------------------------------


def test_what_not_to_do_never_contradicts_the_fix() -> None:
    from bot.report.text import render
    from bot.wording import report as wording

    d = deployment()
    live = live_of(d, entry("kubectl-edit", {"f:spec": {"f:replicas": {}}}))
    live["spec"]["replicas"] = 5
    report = explain([d], [live], app="shop")
    [f] = report.findings
    assert f.cause == "manual-edit" and f.fix.action == "revert"
    assert not any("re-sync" in line for line in f.fix.avoid)
    text = render(report)
    assert "Do not re-sync" not in text and wording.AVOID["manual-edit"][0] in text
    for cause in ("api-defaulting", "normalization"):
        assert any("another writer" in line for line in wording.AVOID[cause])
        assert not any("selfHeal" in line for line in wording.AVOID[cause])


def test_an_item_prepended_by_a_webhook_is_selected_by_content_where_it_shows() -> None:
    """Position-matched lists shift: the added item's own finding gets a rule for that item alone; the rule of each
    shifted position must still name the finding's pointer, as the casebook checks it."""
    d = deployment()
    live = live_of(d)
    live["spec"]["template"]["spec"]["containers"][1]["args"] = ["--log-level=debug", "--config", "/etc/envoy"]
    report = explain([d], [live], [webhook()], app="shop")
    first = report.findings[0]
    assert first.pointer == "/spec/template/spec/containers/1/args/0" and first.fix.rule is not None
    assert first.fix.rule["jqPathExpressions"] == [
        '.spec.template.spec.containers[] | select(.name == "proxy") | .args[] | select(. == "--log-level=debug")'
    ]
    for f in report.findings:
        assert f.fix.rule is not None and any(f.pointer.startswith(h) for h in f.fix.hides), f.pointer


def test_a_key_that_appeared_at_admission_in_a_custom_resource_is_not_pinned_on_a_webhook_blindly() -> None:
    """Argo CD sent Git's item (last-applied shows it); a key appeared in it. Without the CRD or a matching webhook,
    a schema default and a webhook are both possible: unknown, and the reason names both."""
    d, live = widgets({"name": "a"}, {"name": "a", "size": 3}, operation="Update")
    live["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(d)}
    f = only(explain([d], [live], app="shop").findings)
    assert f.cause == "unknown" and "webhook" in f.explanation and "CRD" in f.explanation
    assert only(explain([d], [live], [crd(3)], app="shop").findings).cause == "api-defaulting"
