"""Verdicts that hold beyond the casebook: defaulting is proven, confidence is earned (issue 9, points 1 and 3)."""

from __future__ import annotations

import copy
import json
from typing import Any

from bot.analysis import explain
from bot.model import Finding
from bot.wording import report as wording
from tests.builders import deployment, entry, live_of

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
    # Argo CD's three-way diff leaves out what a custom resource has beyond Git's: it never shows it, so no rule
    assert not f.shown_by_argocd and f.fix.rule is None and f.fix.action == "change-source"
    assert wording.NOT_SHOWN_LIVE_ONLY.format(kind="Widget") in f.explanation
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
    from bot.analysis.verify import rule_paths

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


# --- issue 22, item 4: the manager that wrote the field decides the writer ------------------------------------------


def hpa(target: str = "web", namespace: str = "shop") -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": target, "namespace": namespace},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                 "minReplicas": 2, "maxReplicas": 10},
    }  # fmt: skip


def scaled_by(manager: str, subresource: str | None = "scale", replicas: int = 7) -> tuple[dict[str, Any], Any]:
    d = deployment()
    live = live_of(d, entry(manager, {"f:spec": {"f:replicas": {}}}, subresource=subresource))
    del live["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:replicas"]  # taken from Argo CD
    live["spec"]["replicas"] = replicas
    return d, live


def test_a_person_scaling_through_the_scale_subresource_is_a_manual_edit_even_with_an_hpa() -> None:
    for manager in ("kubectl", "kubectl-scale", "k9s", "Mozilla"):
        d, live = scaled_by(manager)
        f = only(explain([d], [live], [hpa()], app="shop").findings)
        assert (f.cause, f.writer.manager, f.writer.subresource) == ("manual-edit", manager, "scale"), manager
        assert f.fix.rule is None and f.fix.action in ("revert", "change-source")
        # the HPA is context, not the writer: said in words, and the better fix is the autoscaler's, never "commit 7"
        assert f.writer.object is None
        assert "HorizontalPodAutoscaler shop/web also targets this Deployment and will overwrite it" in f.explanation
        assert f.fix.alternative is not None and "leave spec.replicas out of Git" in f.fix.alternative


def test_the_hpa_controller_writing_replicas_is_still_the_autoscaler() -> None:
    d, live = scaled_by("kube-controller-manager")
    f = only(explain([d], [live], [hpa()], app="shop").findings)
    assert (f.cause, f.confidence) == ("autoscaler", "confirmed") and f.writer.object is not None


def test_a_manager_named_manager_is_no_evidence_of_an_operator() -> None:
    """Kubebuilder names every controller's binary `manager`: the name alone proves nothing."""
    d, live = scaled_by("manager", subresource=None, replicas=0)
    f = only(explain([d], [live], app="shop").findings)
    assert f.cause != "operator" and f.confidence != "confirmed" and f.fix.rule is None
    assert "Kubebuilder" in f.explanation
    # a context object that drives the Deployment is evidence: kube-green's SleepInfo in its namespace
    sleep: dict[str, Any] = {"apiVersion": "kube-green.com/v1alpha1", "kind": "SleepInfo",
             "metadata": {"name": "nights", "namespace": "shop"}, "spec": {"sleepAt": "20:00"}}  # fmt: skip
    f = only(explain([d], [live], [sleep], app="shop").findings)
    assert f.cause == "operator" and f.writer.object is not None and f.writer.object.kind == "SleepInfo"
    sleep["spec"]["excludeRef"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}]
    assert only(explain([d], [live], [sleep], app="shop").findings).cause == "unknown"


# --- issue 22, item 2: what not to do belongs to its finding and never contradicts its fix ---------------------------


def three_causes() -> Any:
    """web: replicas by the HPA (a rule); worker: an env value Argo CD itself wrote (unknown, no rule); api: an image
    set by hand (a manual edit, fixed by syncing)."""
    web = deployment("web")
    web_live = live_of(web, entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale"))
    web_live["spec"]["replicas"] = 6
    worker = deployment("worker")
    worker_live = live_of(worker)
    worker_live["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = "debug"
    api = deployment("api")
    image: dict[str, Any] = {
        "f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"app"}': {"f:image": {}}}}}}
    }
    api_live = live_of(api, entry("kubectl-edit", image))
    api_live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:1.0.1-hotfix"
    return explain([web, worker, api], [web_live, worker_live, api_live], [hpa("web")], app="shop")


def test_each_finding_says_its_own_what_not_to_do_in_text_json_and_slack() -> None:
    from bot.report.text import render
    from bot.slack.render import Alert, thread_messages
    from bot.wording import report as wording

    report = three_causes()
    causes = {f.resource.name: f for f in report.findings}
    assert {n: f.cause for n, f in causes.items()} == {"web": "autoscaler", "worker": "unknown", "api": "manual-edit"}
    assert causes["web"].fix.rule is not None and causes["api"].fix.action == "revert"
    text = render(report)
    blocks = {name: text.split(f"\nDeployment shop/{name} ", 1)[1].split("\nDeployment ")[0] for name in causes}
    assert "What not to do:" not in text  # no merged list at the end
    for name, f in causes.items():
        assert f.fix.avoid, name
        for line in f.fix.avoid:
            assert line in blocks[name], (name, line)  # said under its own finding ...
            others = [n for n in causes if n != name and line not in causes[n].fix.avoid]
            assert all(line not in blocks[n] for n in others), (name, line)  # ... and under no other
    assert "until the writer is known" not in blocks["web"] and "re-sync" not in blocks["api"]
    as_json = json.loads(json.dumps(report.to_dict()))
    assert [f["fix"]["avoid"] for f in as_json["findings"]] == [f.fix.avoid for f in report.findings]
    thread = thread_messages(report, Alert(app="shop"))
    sections = [b["text"]["text"] for m in thread for b in m.blocks if b["type"] == "section"]
    for f in report.findings:
        [fix_section] = [s for s in sections if wording.short_value(f.fix.alternative, 30)[:-1] in s]
        for other in report.findings:
            for line in other.fix.avoid:
                assert (line in fix_section) == (line in f.fix.avoid), (f.resource.name, line)


def test_no_advice_forbids_what_its_own_fix_recommends() -> None:
    from bot.model import CAUSES
    from bot.wording import report as wording

    for cause in CAUSES:
        for rule in (True, False):
            for action in ("ignore", "change-source", "revert", "server-side-diff", "resolve-ownership", "investigate"):
                for allocated in (True, False):
                    lines = wording.avoid_for(cause, rule=rule, action=action, allocated=allocated)
                    asked = wording.recommends(rule, action, False)
                    assert all(not wording.forbids(line) & asked for line in lines)
                    if rule:
                        assert not any("Do not add an ignore rule" in line or "Do not ignore" in line for line in lines)
                    if action == "revert":
                        assert not any("re-sync" in line or "expect a sync" in line for line in lines)


# --- issue 22, item 5: empty values are shown, allocated values never go into Git ------------------------------------


def service(cluster_ip: Any, ssa: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    d: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"clusterIP": cluster_ip, "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "nodePort": 0}], "type": "NodePort"},
    }  # fmt: skip
    live = copy.deepcopy(d)
    live["spec"].update(clusterIP="10.96.41.17", clusterIPs=["10.96.41.17"], sessionAffinity="None")
    live["spec"]["ports"][0].update(nodePort=31380, protocol="TCP", targetPort=80)
    owned: dict[str, Any] = {"f:spec": {"f:selector": {}, "f:type": {}}}
    if ssa:  # the applied configuration holds the empty value: Argo CD owns the field
        owned["f:spec"]["f:clusterIP"] = {}
    live["metadata"]["managedFields"] = [
        {**entry("argocd-controller", owned, "Apply" if ssa else "Update"), "apiVersion": "v1"}
    ]
    return d, live


def test_an_empty_allocated_field_in_git_is_deleted_from_git_never_filled_with_the_allocated_value() -> None:
    from bot.report.text import render

    for ssa in (False, True):
        d, live = service("", ssa)
        report = explain([d], [live], app="shop")
        by_pointer = {f.pointer: f for f in report.findings}
        for pointer, value in (("/spec/clusterIP", "10.96.41.17"), ("/spec/ports/0/nodePort", "31380")):
            f = by_pointer[pointer]
            assert (f.fix.action == "change-source" and f.fix.rule is None) or f.fix.fallback, (pointer, ssa)
            alternative = f.fix.alternative or ""
            assert alternative.startswith("Delete `") and "from Git" in alternative, alternative
            assert "Write the defaulted value" not in alternative and "write the mutated value" not in alternative
            assert not any("Git writes the default" in line for line in f.fix.avoid)
            assert any("Do not write the allocated value into Git" in line for line in f.fix.avoid)
            assert value in alternative  # named as what never to write
        # the empty string stays visible in every sentence
        f = by_pointer["/spec/clusterIP"]
        assert 'is 10.96.41.17 live but "" in Git' in f.explanation and 'Delete `clusterIP: ""` from Git' in (
            f.fix.alternative or ""
        )
        assert 'Git:      ""' in render(report)


def test_a_claims_volume_name_left_empty_in_git_is_the_binders_and_deleted_from_git() -> None:
    d: dict[str, Any] = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "db"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}, "volumeName": ""},
    }  # fmt: skip
    live = copy.deepcopy(d)
    live["spec"]["volumeName"] = "pvc-3f1c2b7a-9d8e-4c6b-a5f4-1e2d3c4b5a69"
    live["metadata"]["managedFields"] = [
        {
            **entry("argocd-controller", {"f:spec": {"f:accessModes": {}, "f:resources": {}}}, "Apply"),
            "apiVersion": "v1",
        },
        {**entry("kube-controller-manager", {"f:spec": {"f:volumeName": {}}}), "apiVersion": "v1"},
    ]
    f = only(explain([d], [live], app="db").findings)
    assert f.cause == "operator" and f.fix.action == "change-source"
    assert (f.fix.alternative or "").startswith('Delete `volumeName: ""` from Git')
    assert "Render what the controller writes" not in (f.fix.alternative or "")
    # Argo CD's round trip drops the empty value (omitempty): shown only while the last-applied configuration has it,
    # as then the three-way patch deletes the bound volume's name
    assert not f.shown_by_argocd and f.fix.rule is None
    live["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(d)}
    f = only(explain([d], [live], app="db").findings)
    assert f.shown_by_argocd and f.fix.action == "change-source" and f.fix.fallback and f.fix.rule is not None


def test_short_values_keep_empty_and_padded_strings_visible() -> None:
    from bot.wording.report import short_value

    assert short_value("") == '""' and short_value(" x") == '" x"' and short_value("x") == "x"


# --- issue 22, item 6: identical drift on sibling items gets a verified rule per item ---------------------------------


def test_the_same_ca_injected_into_every_webhook_gets_a_verified_rule_for_each_webhook() -> None:
    names = ["a.example.com", "b.example.com", "c.example.com", "d.example.com"]
    d: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "hooks"},
        "webhooks": [{"name": n, "failurePolicy": "Fail", "sideEffects": "None",
                      "clientConfig": {"caBundle": "Cg==", "service": {"name": "svc", "namespace": "n"}}}
                     for n in names],
    }  # fmt: skip
    live = copy.deepcopy(d)
    injected: dict[str, Any] = {
        f'k:{{"name":"{n}"}}': {".": {}, "f:clientConfig": {"f:caBundle": {}}, "f:name": {}} for n in names[:3]
    }
    live["metadata"]["managedFields"] = [
        {
            **entry("cert-manager-cainjector", {"f:webhooks": injected}, "Apply"),
            "apiVersion": "admissionregistration.k8s.io/v1",
        }
    ]
    for w in live["webhooks"][:3]:  # the fourth keeps Git's value: it differs nowhere
        w["clientConfig"]["caBundle"] = "LS0tLS1CRUdJTi1DQS0tLS0t"
    report = explain([d], [live], app="shop")
    assert [f.pointer for f in report.findings] == [f"/webhooks/{i}/clientConfig/caBundle" for i in range(3)]
    for i, f in enumerate(report.findings):
        assert f.cause == "operator" and f.fix.verified is True and f.fix.rule is not None, f.pointer
        assert f.fix.rule["jqPathExpressions"] == [
            f'.webhooks[] | select(.name == "{names[i]}") | .clientConfig.caBundle'
        ]
        assert f.fix.hides == [f.pointer] and "no ignore rule can hide" not in f.explanation


# --- issue 22, item 7: a custom resource's value re-serialised by its own webhook -----------------------------------


def certificate(duration: str) -> dict[str, Any]:
    return {
        "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
        "metadata": {"name": "tls", "namespace": "shop"},
        "spec": {"secretName": "tls", "duration": duration, "issuerRef": {"name": "ca", "kind": "ClusterIssuer"}},
    }  # fmt: skip


def cert_manager_webhook() -> dict[str, Any]:
    rule = {"apiGroups": ["cert-manager.io"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
            "resources": ["*/*"]}  # fmt: skip
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "cert-manager-webhook"},
            "webhooks": [{"name": "webhook.cert-manager.io", "rules": [rule]}]}  # fmt: skip


def test_a_custom_resources_duration_rewritten_by_its_webhook_names_the_webhook_and_the_value_to_write() -> None:
    d = certificate("2160h")
    live = certificate("2160h0m0s")
    spec: dict[str, Any] = {"f:spec": {"f:duration": {}, "f:secretName": {}, "f:issuerRef": {}}}
    live["metadata"]["managedFields"] = [{**entry("argocd-controller", spec), "apiVersion": "cert-manager.io/v1"}]
    f = only(explain([d], [live], [cert_manager_webhook()], app="shop").findings)
    assert (f.cause, f.writer.manager) == ("normalization", "argocd-controller")
    assert f.writer.object is not None and f.writer.object.name == "cert-manager-webhook"
    words = " ".join([f.explanation, f.fix.alternative or "", *f.fix.avoid])
    assert "the API server stores what it is given" in f.explanation
    assert "webhook.cert-manager.io" in f.explanation and "cert-manager-webhook" in words
    assert "Write `2160h0m0s` in Git" in (f.fix.alternative or "")
    assert not any("the API server stores the same value" in line or "the API server normalises" in line
                   for line in f.fix.avoid)  # fmt: skip
    # without the webhook in the context, the words still do not blame the API server, and say what to add
    f = only(explain([d], [live], app="shop").findings)
    assert "own mutating webhook or conversion" in f.explanation and "--context" in f.explanation
    assert not any("the API server" in line for line in f.fix.avoid)
    # a built-in kind's quantity is the API server's form: named, with the exact value to write
    dep = deployment()
    dep_live = live_of(dep)
    dep["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "0.5"  # stored as 500m
    f = only(explain([dep], [dep_live], app="shop").findings)
    assert f.cause == "normalization" and "Write `500m` in Git instead of `0.5`" in (f.fix.alternative or "")
    assert any("the API server stores the same value" in line for line in f.fix.avoid)


# --- issue 22, item 9: the rules to paste hold one entry per object ---------------------------------------------------


def test_rules_for_several_fields_of_one_object_are_pasted_as_one_entry_per_object() -> None:
    import yaml

    from bot.analysis.verify import rule_paths
    from bot.cli import read_objects
    from bot.fixes.proposal import ignore_proposal, rule_key
    from bot.report.text import render
    from bot.slack.render import Alert, thread_messages
    from tests.paths import CASEBOOK

    case = CASEBOOK / "cases" / "rollouts-virtualservice-weights"
    desired, live = read_objects([str(case / "desired.yaml")]), read_objects([str(case / "live.yaml")])
    context = read_objects([str(case / "context.yaml")]) if (case / "context.yaml").exists() else []
    report = explain(desired, live, context, app=json.loads((case / "case.json").read_text())["app"])
    ruled = [f for f in report.findings if f.fix.rule is not None and not f.fix.fallback]
    assert len(ruled) >= 2 and len({rule_key(f.fix.rule) for f in ruled if f.fix.rule}) == 1
    # the JSON contract keeps one rule per finding ...
    assert all(len((f.fix.rule or {}).get("jqPathExpressions", []) + (f.fix.rule or {}).get("jsonPointers", [])) == 1
               for f in ruled)  # fmt: skip
    # ... and what people paste has one entry for the object, covering every finding, as the PR writes it
    text = render(report)
    block = text.split("Rules to paste under the Application's spec", 1)[1].split(":\n", 1)[1].split("\n\n")[0]
    pasted = yaml.safe_load(block)["ignoreDifferences"]
    assert len(pasted) == 1
    [obj] = [o for o in live if o["kind"] == ruled[0].resource.kind]
    hidden = {"/" + "/".join(str(t) for t in p) for p in rule_paths(pasted[0], obj)}
    assert {f.pointer for f in ruled} <= hidden
    proposal = ignore_proposal("app", None, report.findings)
    assert proposal is not None and [r for r in proposal.rules if rule_key(r) == rule_key(pasted[0])] == pasted
    thread = thread_messages(report, Alert(app="app"))
    paste = [
        b["text"]["text"] for m in thread for b in m.blocks if "Rules to paste" in b.get("text", {}).get("text", "")
    ]
    assert len(paste) == 1 and paste[0].count("kind: VirtualService") == 1
