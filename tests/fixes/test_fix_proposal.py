"""bot.fixes.proposal and bot.fixes.pr_text: the identity of a fix, merged rules, and what the PR says."""

from __future__ import annotations

from dataclasses import replace

from bot.fixes.pr_text import Target, pr_body, pr_title, wide_fields
from bot.fixes.proposal import ignore_proposal, merge_rules, source_proposal
from bot.model import Finding, Fix, ObjectRef, ResourceRef, Writer

WEB = ResourceRef("apps", "Deployment", "shop", "web", "v1")
HPA = Writer("kube-controller-manager", "Update", "scale", "2026-11-02T10:00:00Z",
             ObjectRef("HorizontalPodAutoscaler", "web", "shop"))  # fmt: skip


def hpa_finding(resource: ResourceRef = WEB) -> Finding:
    rule = {"group": resource.group, "kind": resource.kind, "namespace": resource.namespace, "name": resource.name,
            "jsonPointers": ["/spec/replicas"]}  # fmt: skip
    return Finding(resource, "/spec/replicas", 2, 7, "autoscaler", "confirmed", HPA,
                   "/spec/replicas of Deployment shop/web is 7 live but 2 in Git: the HPA sets it.",
                   Fix("ignore", rule, ["RespectIgnoreDifferences=true"], "Remove spec.replicas.", ["/spec/replicas"],
                       True),
                   ["HorizontalPodAutoscaler shop/web targets this object"])  # fmt: skip


def webhook_finding() -> Finding:
    expr = '.spec.template.spec.containers[] | select(.name == "istio-proxy")'
    rule = {"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web", "jqPathExpressions": [expr]}
    return Finding(WEB, "/spec/template/spec/containers/1", None, {"name": "istio-proxy"}, "mutating-webhook",
                   "confirmed", Writer(object=ObjectRef("MutatingWebhookConfiguration", "istio-sidecar-injector")),
                   "", Fix("ignore", rule, [], None, ["/spec/template/spec/containers/1"], True))  # fmt: skip


def test_rules_for_one_object_merge_and_paths_are_not_repeated() -> None:
    a = {"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web", "jsonPointers": ["/spec/replicas"]}
    b = {**a, "jsonPointers": ["/spec/replicas", "/metadata/labels/x"]}
    c = {"kind": "ConfigMap", "namespace": "shop", "name": "web", "jqPathExpressions": [".data.x"]}
    assert merge_rules([a, b, c]) == [
        {"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web",
         "jsonPointers": ["/spec/replicas", "/metadata/labels/x"]},
        c,
    ]  # fmt: skip


def test_the_same_fix_has_the_same_identity_whichever_findings_order() -> None:
    one, two = hpa_finding(), webhook_finding()
    a = ignore_proposal("shop", "argocd", [one, two])
    b = ignore_proposal("shop", "argocd", [one, replace(two, live={"name": "istio-proxy", "image": "other"})])
    assert a is not None and b is not None
    assert (
        a.fix_hash == b.fix_hash and a.branch == f"argo-why/shop/{a.fix_hash}" and a.fix_id.startswith("argocd/shop:")
    )
    alone = ignore_proposal("shop", "argocd", [one])
    assert alone is not None and alone.fix_hash != a.fix_hash
    assert alone.sync_options == ("RespectIgnoreDifferences=true",)
    other_app = ignore_proposal("cart", "argocd", [one])
    assert other_app is not None and other_app.branch != alone.branch


def test_findings_without_a_rule_propose_nothing() -> None:
    manual = replace(hpa_finding(), cause="manual-edit", fix=Fix("revert"))
    assert ignore_proposal("shop", None, [manual]) is None
    assert source_proposal("shop", None, [manual]) is None


def test_only_autoscaled_replicas_of_workloads_have_a_source_fix() -> None:
    p = source_proposal("shop", None, [hpa_finding(), webhook_finding()])
    assert p is not None and p.kind == "source" and p.pointers == ["/spec/replicas"]
    cm = ResourceRef("", "ConfigMap", "shop", "web")
    assert source_proposal("shop", None, [hpa_finding(cm)]) is None
    ignore = ignore_proposal("shop", None, [hpa_finding()])
    assert ignore is not None and ignore.fix_hash != p.fix_hash


def test_title_names_field_object_and_writer_or_the_count() -> None:
    one = ignore_proposal("shop", None, [hpa_finding()])
    assert one is not None
    assert pr_title(one) == (
        "argo-why: ignore /spec/replicas of Deployment/web rewritten by HorizontalPodAutoscaler shop/web"
    )
    both = ignore_proposal("shop", None, [hpa_finding(), webhook_finding()])
    assert both is not None
    assert pr_title(both) == (
        "argo-why: ignore 2 fields of shop rewritten by HorizontalPodAutoscaler shop/web, "
        "MutatingWebhookConfiguration istio-sidecar-injector"
    )
    source = source_proposal("shop", None, [hpa_finding()])
    assert source is not None and pr_title(source).startswith("argo-why: drop /spec/replicas of Deployment/web")


def test_body_has_the_change_and_the_four_points_for_every_finding() -> None:
    p = ignore_proposal("shop", None, [hpa_finding(), webhook_finding()])
    assert p is not None
    body = pr_body(p, Target("acme/gitops", "apps/shop.yaml", "main"),
                   approvers=[("U0ALICE", "Alice Liddell"), ("U0BOB", None)],
                   thread_url="https://acme.slack.com/archives/C1/p1700000000000100")  # fmt: skip
    assert "In `apps/shop.yaml` of `acme/gitops` (based on `main`)" in body
    assert "- /spec/replicas" in body and "- RespectIgnoreDifferences=true" in body
    assert 'select(.name == \\"istio-proxy\\")' in body or 'select(.name == "istio-proxy")' in body
    for point in ("Which controller changes the field", "Why it is the intended owner", "Why ignoring it is safe",
                  "What real drift will still be detected"):  # fmt: skip
        assert body.count(point) == 2, point
    assert "Approved in Slack by Alice Liddell (`<@U0ALICE>` in Slack), `<@U0BOB>` in Slack." in body
    assert "(https://acme.slack.com/archives/C1/p1700000000000100)" in body
    assert "every Application it generates" not in body


def test_body_of_an_applicationset_edit_says_every_generated_app_gets_the_rule() -> None:
    p = ignore_proposal("shop-eu", None, [hpa_finding()])
    assert p is not None
    body = pr_body(p, Target("acme/gitops", "appsets/shop.yaml", "main", "spec.template.spec", "shop"),
                   approvers=[], thread_url=None)  # fmt: skip
    assert "ApplicationSet `shop`: every Application it generates gets the rule" in body
    assert "Added under `spec.template.spec.ignoreDifferences`" in body


def test_a_rule_that_hides_an_image_says_future_changes_are_not_synced() -> None:
    f = replace(hpa_finding(), pointer="/spec/template/spec/containers/0/image",
                fix=replace(hpa_finding().fix, hides=["/spec/template/spec/containers/0/image"]))  # fmt: skip
    assert wide_fields(f) == ["/spec/template/spec/containers/0/image"]
    p = ignore_proposal("shop", None, [f])
    assert p is not None
    assert "future Git changes to them will not be synced" in pr_body(p, Target("r", "p", "b"), approvers=[],
                                                                        thread_url=None)  # fmt: skip


def test_masked_values_stay_masked_and_fences_cannot_be_closed_by_values() -> None:
    secret = ResourceRef("", "Secret", "shop", "creds")
    f = replace(hpa_finding(secret), pointer="/data/password", desired="<redacted>", live="<redacted>")
    f = replace(f, explanation="value ``` with a fence")
    p = ignore_proposal("shop", None, [f])
    assert p is not None
    body = pr_body(p, Target("r", "p", "b"), approvers=[], thread_url=None)
    assert "Git: `<redacted>` · live: `<redacted>`" in body
