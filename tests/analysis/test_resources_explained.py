"""Resources that are not field differences: hooks and what Argo CD does not compare, resources only one side has
(to prune, missing after a sync), and an OutOfSync with nothing that differs.

Through ``argo-why explain`` on files (the CLI, exit status included), ``why`` against the stand-in Argo CD (whose
Application status and ``managed-resources`` are shaped like argocd-server 3.x's: a live object Git no longer has
is ``modified: false`` with ``requiresPruning`` in the status, hooks are never served), and the Slack rendering
(golden files in tests/slack/golden/, ``UPDATE_GOLDEN=1`` rewrites them).

The rules held here are Argo CD's own: gitops-engine's ``pkg/sync/hook`` (``IsHook``, ``Skip``, Helm's
``crd-install`` that is no hook), argo-cd's ``controller/hook.go`` (post-delete hooks) and ``controller/state.go``
(``IgnoreExtraneous``, ``requiresPruning``, excluded kinds).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.analysis import explain
from bot.analysis.argoscope import excluded, is_hook, is_sync_skip, skip_reason, tracks
from bot.cli import exit_status
from bot.config import ArgoCDSettings
from bot.demo.runner import webhook_body
from bot.model import Report, report_from_dict
from bot.wording import report as wording
from bot.wording import slack as wording_slack
from tests.builders import deployment, live_of
from tests.cli.test_why import why
from tests.fakes.argocd import FakeArgoCD, app_from_case, build_application, resource_diff
from tests.fakes.cases import why_settings
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings
from tests.paths import CASEBOOK, ROOT
from tests.slack.test_slack_render import check_golden, hand_alert, rendered

Obj = dict[str, Any]
HOOK, HELM_HOOK = "argocd.argoproj.io/hook", "helm.sh/hook"


def configmap(name: str, *, app: str = "shop", namespace: str = "shop", **annotations: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "annotations": {
                "argocd.argoproj.io/tracking-id": f"{app}:/ConfigMap:{namespace}/{name}", **annotations}},
            "data": {"level": "info"}}  # fmt: skip


def job(name: str, **annotations: str) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "shop", "annotations": {
                "argocd.argoproj.io/tracking-id": f"shop:batch/Job:shop/{name}", **annotations}},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "m", "image": "migrate:1"}]}}}}  # fmt: skip


def live(obj: Obj) -> Obj:
    """``obj`` as the API server stores it after Argo CD's client-side apply."""
    out = copy.deepcopy(obj)
    out["metadata"].update(uid="7d1c", resourceVersion="4242", creationTimestamp="2026-11-01T10:00:00Z")
    fields: Obj = {"f:metadata": {"f:annotations": {f"f:{k}": {} for k in out["metadata"].get("annotations") or {}}}}
    if "data" in out:
        fields["f:data"] = {f"f:{k}": {} for k in out["data"]}
    out["metadata"]["managedFields"] = [{"apiVersion": out["apiVersion"], "fieldsType": "FieldsV1",
                                         "fieldsV1": fields, "manager": "argocd-controller", "operation": "Update",
                                         "time": "2026-11-01T10:00:00Z"}]  # fmt: skip
    return out


def application(*, automated: Obj | None = None, name: str = "shop") -> Obj:
    app = build_application(name, "shop", [])
    if automated is not None:
        app["spec"]["syncPolicy"]["automated"] = automated
    return app


def run_explain(
    tmp_path: Path, desired: list[Obj], lives: list[Obj], context: tuple[Obj, ...] | list[Obj] = ()
) -> tuple[int, dict[str, Any], str]:
    """``argo-why explain`` on files, as a user runs it: (exit status, JSON report, text report)."""
    files = []
    for name, objs in (("desired", desired), ("live", lives), ("context", list(context))):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
        files.append(str(path))
    argv = [sys.executable, "-m", "bot", "explain", "--desired", files[0], "--live", files[1], "--app", "shop"]
    if context:
        argv += ["--context", files[2]]
    out = subprocess.run([*argv, "--format", "json"], capture_output=True, text=True, cwd=ROOT, check=False)
    text = subprocess.run([*argv, "--format", "text"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert out.returncode == text.returncode, (out.stderr, text.stderr)
    return out.returncode, json.loads(out.stdout), text.stdout


# --- Argo CD's rules, one by one --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "hook", "skip"),
    [
        ({HOOK: "PreSync"}, True, False),
        ({HOOK: "PostSync,SyncFail"}, True, False),
        ({HOOK: ""}, True, False),  # the annotation alone makes a hook (gitops-engine IsHook)
        ({HOOK: "Skip"}, False, True),  # never applied, but no hook
        ({HOOK: "Skip,PreSync"}, True, False),  # Skip only counts alone
        ({HOOK: "PostDelete"}, True, False),  # argo-cd controller/hook.go
        ({HELM_HOOK: "pre-install,pre-upgrade"}, True, False),
        ({HELM_HOOK: "test"}, True, False),  # any Helm hook value is a hook, even one Argo CD does not run
        ({HELM_HOOK: "post-delete"}, True, False),
        ({HELM_HOOK: "crd-install"}, False, False),  # Helm 2's CRD marker: a plain resource for Argo CD
        ({HELM_HOOK: "Skip"}, True, False),  # Helm's annotation has no Skip
        ({HOOK: "Skip", HELM_HOOK: "pre-install"}, False, True),  # Argo CD's annotation wins over Helm's
        ({"argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}, False, False),  # a policy is no hook
        ({}, False, False),
    ],
)
def test_hooks_are_told_apart_as_gitops_engine_does(annotations: dict[str, str], hook: bool, skip: bool) -> None:
    obj = job("migrate", **annotations)
    assert (is_hook(obj), is_sync_skip(obj)) == (hook, skip)
    assert skip_reason(obj, None) == ("hook" if hook else "sync-skip" if skip else None)


def test_the_live_object_decides_whether_a_pair_is_a_hook() -> None:
    """controller/state.go looks at the live object when there is one (``obj := liveObj``)."""
    assert skip_reason(job("m"), job("m", **{HOOK: "PreSync"})) == "hook"
    assert skip_reason(job("m", **{HOOK: "PreSync"}), job("m")) is None


def test_excluded_kinds_follow_argocd_cm() -> None:
    cm = {"kind": "ConfigMap", "metadata": {"name": "argocd-cm"}, "data": {
        "resource.exclusions": "- apiGroups: ['batch']\n  kinds: ['Job']\n  clusters: ['*']\n"}}  # fmt: skip
    assert excluded(job("m"), cm) and not excluded(configmap("a"), cm)
    only = {"kind": "ConfigMap", "metadata": {"name": "argocd-cm"}, "data": {
        "resource.inclusions": "- apiGroups: ['']\n  kinds: ['ConfigMap']\n  clusters: ['*']\n"}}  # fmt: skip
    assert excluded(job("m"), only) and not excluded(configmap("a"), only)
    assert not excluded(job("m"), None)


def test_tracking_must_name_the_object_itself() -> None:
    own = configmap("old")
    copied = copy.deepcopy(own)
    copied["metadata"]["name"] = "copy"  # a controller copied the annotation onto another object
    assert tracks(own, "shop") and not tracks(copied, "shop") and not tracks(own, "other")
    labelled: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop",
                "labels": {"app.kubernetes.io/instance": "shop"}}}  # fmt: skip
    assert tracks(labelled, "shop")
    labelled["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "web"}]
    assert not tracks(labelled, "shop")


# --- explain, on files ------------------------------------------------------------------------------------------


def test_a_chart_with_hooks_is_no_drift(tmp_path: Path) -> None:
    """A migration Job (deleted after it succeeded), a Helm test Pod and a pre-install hook are in the rendered
    manifests but not in the cluster: Argo CD never compares them, so the app is clean (before: "Incomplete",
    exit 1)."""
    web = deployment()
    hooks = [
        job("migrate", **{HOOK: "PreSync", "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}),
        job("smoke", **{HELM_HOOK: "test"}),
        job("seed", **{HELM_HOOK: "pre-install"}),
        job("skipped", **{HOOK: "Skip"}),
    ]
    status, report, text = run_explain(tmp_path, [web, *hooks], [live_of(web)])
    assert status == 0, text
    assert report["findings"] == [] and report["not_compared"] == [] and report["resources"] == []
    assert [(s["resource"]["name"], s["reason"]) for s in report["skipped"]] == [
        ("migrate", "hook"), ("smoke", "hook"), ("seed", "hook"), ("skipped", "sync-skip")]  # fmt: skip
    assert report["summary"]["skipped"] == 4 and report["summary"]["not_compared"] == 0
    assert text.startswith(wording.NO_DRIFT.format(app="shop", compared="1 resource"))
    assert "Job shop/migrate (a sync hook)" in text


def test_a_crd_install_hook_is_an_ordinary_resource(tmp_path: Path) -> None:
    web = deployment()
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "dbs.example.com", "annotations": {HELM_HOOK: "crd-install"}}}  # fmt: skip
    status, report, _ = run_explain(tmp_path, [web, crd], [live_of(web)])
    assert status == 1 and [r["name"] for r in report["not_compared"]] == ["dbs.example.com"]
    assert report["skipped"] == []


def test_excluded_kinds_are_not_compared(tmp_path: Path) -> None:
    web = deployment()
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "argocd-cm", "namespace": "argocd"},
          "data": {"resource.exclusions": "- apiGroups: ['batch']\n  kinds: ['Job']\n"}}  # fmt: skip
    status, report, _ = run_explain(tmp_path, [web, job("nightly")], [live_of(web)], [cm])
    assert status == 0 and [(s["resource"]["name"], s["reason"]) for s in report["skipped"]] == [
        ("nightly", "excluded")
    ]


@pytest.mark.parametrize(
    ("automated", "annotations", "reason"),
    [
        (None, {}, "manual-sync"),
        ({"selfHeal": True}, {}, "auto-prune-off"),
        ({"prune": True}, {}, "prune-pending"),
        (None, {"argocd.argoproj.io/sync-options": "Prune=false"}, "prune-disabled"),
        (None, {"argocd.argoproj.io/sync-options": "Prune=confirm"}, "prune-needs-confirmation"),
    ],
)
def test_a_tracked_object_git_no_longer_has_requires_pruning(
    tmp_path: Path, automated: Obj | None, annotations: dict[str, str], reason: str
) -> None:
    """Before: explain ignored live objects without a desired counterpart, and said "No drift" (exit 0)."""
    web, old = deployment(), configmap("old-settings", **annotations)
    status, report, text = run_explain(tmp_path, [web], [live_of(web), live(old)], [application(automated=automated)])
    assert status == 1, text
    [issue] = report["resources"]
    assert issue["resource"]["name"] == "old-settings" and issue["state"] == "requires-pruning"
    assert issue["reason"] == reason and issue["explanation"] == wording.PRUNE_REASONS[reason].format(
        label="ConfigMap shop/old-settings")  # fmt: skip
    assert issue["fix"] == wording.PRUNE_FIXES.get(reason, wording.PRUNE_FIX).format(app="shop")
    assert report["summary"]["requires_pruning"] == 1 and report["findings"] == []
    assert "requires pruning" in text and issue["fix"] in text


def test_what_argocd_does_not_count_as_extraneous_is_not_reported(tmp_path: Path) -> None:
    """IgnoreExtraneous, a copied tracking annotation, another app's object, a leftover hook: none is pruned."""
    web = deployment()
    ignored = configmap("kept", **{"argocd.argoproj.io/compare-options": "IgnoreExtraneous"})
    copied = configmap("original")
    copied["metadata"]["name"] = "copy"
    other = configmap("theirs", app="billing")
    hook = job("migrate", **{HOOK: "PreSync"})
    status, report, _ = run_explain(tmp_path, [web], [live_of(web), *(live(o) for o in (ignored, copied, other, hook))])
    assert status == 0 and report["resources"] == []
    assert sorted((s["resource"]["name"], s["reason"]) for s in report["skipped"]) == [
        ("kept", "ignore-extraneous"), ("migrate", "hook")]  # fmt: skip


def test_the_json_additions_round_trip() -> None:
    web, old = deployment(), configmap("old")
    report = explain([web, job("m", **{HOOK: "PreSync"})], [live_of(web), live(old)], [application()], app="shop")
    again = report_from_dict(report.to_dict())
    assert again.to_dict() == report.to_dict()
    assert again.resources[0].reason == "manual-sync" and again.skipped[0].reason == "hook"


# --- why, against the stand-in Argo CD --------------------------------------------------------------------------


@pytest.fixture
def settings(argocd: FakeArgoCD, kube: FakeKubernetes, tmp_path: Path) -> ArgoCDSettings:
    return why_settings(argocd, kube, tmp_path)


def serve(argocd: FakeArgoCD, pairs: list[tuple[Obj | None, Obj | None]], *, automated: Obj | None = None,
          status: Obj | None = None) -> Obj:  # fmt: skip
    """An Application of these (target, live) pairs, its status derived as Argo CD derives it, then ``status``
    merged over it (what a test sets: the last operation, the revisions)."""
    diffs = [resource_diff(t, lv) for t, lv in pairs]
    app = build_application("shop", "shop", diffs)
    if automated is not None:
        app["spec"]["syncPolicy"]["automated"] = automated
    for key, value in (status or {}).items():
        app["status"][key] = value
    argocd.add_app(app, diffs)
    return app


def test_the_standin_serves_what_argocd_serves_for_hooks_and_pruning() -> None:
    """argo-cd's handleResourceCreateOrDeleteDiff: a live object Git no longer has is Modified: false; its status
    says requiresPruning; hooks get no sync status and are flagged (managed-resources leaves them out)."""
    old, hook = live(configmap("old")), job("migrate", **{HOOK: "PreSync"})
    prune, hooked = resource_diff(None, old), resource_diff(hook, live(hook))
    assert "modified" not in prune and hooked["hook"] is True
    app = build_application("shop", "shop", [prune, hooked])
    entries = {r["name"]: r for r in app["status"]["resources"]}
    assert entries["old"]["status"] == "OutOfSync" and entries["old"]["requiresPruning"] is True
    assert "status" not in entries["migrate"] and entries["migrate"]["hook"] is True
    assert app["status"]["sync"]["status"] == "OutOfSync"
    kept = live(configmap("kept", **{"argocd.argoproj.io/compare-options": "IgnoreExtraneous"}))
    assert build_application("shop", "shop", [resource_diff(None, kept)])["status"]["sync"]["status"] == "Synced"


async def test_why_names_what_to_prune(settings: ArgoCDSettings, argocd: FakeArgoCD) -> None:
    """Before: managed-resources' modified is false for these, so why said nothing and exit 0."""
    web = deployment()
    serve(argocd, [(web, live_of(web)), (None, live(configmap("old")))], automated={"selfHeal": True})
    report = await why(settings, "shop", cluster=False)
    [issue] = report.resources
    assert (issue.resource.name, issue.state, issue.reason) == ("old", "requires-pruning", "auto-prune-off")
    assert wording.PRUNE_EVIDENCE_STATUS in issue.evidence
    assert any("ignored (requires pruning)" in e for e in issue.evidence)
    assert report.findings == [] and report.nothing_differs is None and exit_status(report) == 1


async def test_why_leaves_out_what_ignores_extraneous(settings: ArgoCDSettings, argocd: FakeArgoCD) -> None:
    web = deployment()
    kept = live(configmap("kept", **{"argocd.argoproj.io/compare-options": "IgnoreExtraneous"}))
    serve(argocd, [(web, live_of(web)), (None, kept), (job("m", **{HOOK: "PreSync"}), None)])
    report = await why(settings, "shop", cluster=False)
    assert report.resources == [] and [s.reason for s in report.skipped] == ["ignore-extraneous"]
    assert report.clean and exit_status(report) == 0


SYNCED = "9f3c2a1d5be4c1a0e2f7b8c9d0a1b2c3d4e5f607"


def _op(phase: str = "Succeeded", *, results: Sequence[Obj] = (), resources: list[Obj] | None = None,
        revision: str = SYNCED, message: str = "successfully synced") -> Obj:  # fmt: skip
    sync: Obj = {"revision": revision}
    if resources is not None:
        sync["resources"] = resources
    return {"operation": {"sync": sync, "initiatedBy": {"username": "admin"}}, "phase": phase, "message": message,
            "syncResult": {"resources": list(results), "revision": revision},
            "startedAt": "2026-11-02T10:00:00Z", "finishedAt": "2026-11-02T10:00:07Z"}  # fmt: skip


def _result(status: str, message: str, name: str = "settings") -> Obj:
    return {"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "shop", "name": name, "status": status,
            "message": message, "syncPhase": "Sync"}  # fmt: skip


@pytest.mark.parametrize(
    ("operation", "reason", "said"),
    [
        (
            _op(resources=[{"group": "apps", "kind": "Deployment", "name": "web"}]),
            "selective-sync",
            "the last sync named only: Deployment/web",
        ),
        (
            _op("Failed", results=[_result("SyncFailed", 'namespaces "shop" not found')]),
            "namespace-missing",
            'namespaces "shop" not found',
        ),
        (_op("Failed", results=(_result("SyncFailed", 'ConfigMap "" not found'),)), "kind-not-served", '"" not found'),
        (
            _op("Failed", results=[_result("SyncFailed", "admission webhook denied the request")]),
            "sync-failed",
            "admission webhook denied",
        ),
        (_op("Failed", message="one or more objects failed to apply"), "sync-stopped", "one or more objects failed"),
        (_op(revision="4b1e0c7d2a9f8e3b6c5d4a1f0e9d8c7b6a5f4e3d"), "not-synced", None),
        (
            _op(results=[_result("Synced", "configmap/settings created")]),
            "deleted-after-sync",
            "configmap/settings created",
        ),
        (_op(), "unknown", "the last sync: Succeeded"),
    ],
)
async def test_why_names_why_a_resource_is_missing(
    settings: ArgoCDSettings, argocd: FakeArgoCD, operation: Obj, reason: str, said: str | None
) -> None:
    """Before: "ConfigMap settings is missing from the cluster: not a field difference, not analysed"."""
    web, cm = deployment(), configmap("settings")
    serve(argocd, [(web, live_of(web)), (cm, None)], status={"operationState": operation})
    report = await why(settings, "shop", cluster=False)
    [issue] = report.resources
    assert (issue.resource.name, issue.state, issue.reason) == ("settings", "missing", reason), issue
    assert issue.fix == wording.MISSING_FIXES[reason].format(app="shop", group="", kind="ConfigMap", name="settings")
    assert said is None or any(said in e for e in issue.evidence), issue.evidence
    assert report.not_compared == [] and exit_status(report) == 1
    assert not any("not analysed" in n or "could not read" in n for n in report.notes), report.notes
    assert not [c for c in argocd.calls if c.path.endswith("/resource")]  # nothing to read from the cluster


async def test_outofsync_with_nothing_that_differs(settings: ArgoCDSettings, argocd: FakeArgoCD) -> None:
    """argoproj/argo-cd#18153: the status says OutOfSync right after a sync, and no resource differs. Before: an
    empty report, exit 0."""
    web = deployment()
    app = serve(argocd, [(web, live_of(web))])
    app["status"]["sync"]["status"] = "OutOfSync"
    app["status"]["resources"][0]["status"] = "OutOfSync"
    app["status"]["reconciledAt"] = "2026-11-02T10:00:05Z"  # before the sync finished (10:00:07)
    argocd.add_app(app, [resource_diff(web, live_of(web))])
    report = await why(settings, "shop", cluster=False)
    said = report.nothing_differs
    assert said is not None and report.findings == [] and report.resources == []
    assert said["compared_after_sync"] is False and said["reconciled_at"] == "2026-11-02T10:00:05Z"
    assert [r["name"] for r in said["out_of_sync_resources"]] == ["web"]
    assert "before the last sync finished" in said["explanation"] and "--hard-refresh" in said["fix"]
    assert exit_status(report) == 1 and report.to_dict()["nothing_differs"] == said


async def test_a_synced_app_with_nothing_that_differs_is_clean(settings: ArgoCDSettings, argocd: FakeArgoCD) -> None:
    web = deployment()
    serve(argocd, [(web, live_of(web))])
    report = await why(settings, "shop", cluster=False)
    assert report.nothing_differs is None and report.clean


# --- Slack ------------------------------------------------------------------------------------------------------


def _one_sided_report() -> Report:
    web = deployment()
    app = application(automated={"selfHeal": True})
    app["status"]["operationState"] = _op(resources=[{"group": "apps", "kind": "Deployment", "name": "web"}])
    report = explain([web], [live_of(web), live(configmap("old"))], [app], app="shop")
    from bot.analysis.resources import missing_issue
    from bot.model import ResourceRef

    ref = ResourceRef("", "ConfigMap", "shop", "settings", "v1")
    report.resources.append(missing_issue(ref, configmap("settings"), "shop", app))
    return report


def test_golden_resources_only_one_side_has() -> None:
    data = rendered(_one_sided_report(), hand_alert())
    parent = json.dumps(data["parent"])
    assert "ConfigMap" in parent and "requires pruning" in parent and "missing from the cluster" in parent
    thread = json.dumps(data["thread"])
    assert "Sync the whole app" in thread and "auto-sync runs without prune" in thread
    check_golden("hand-resources", data)


def test_golden_nothing_differs() -> None:
    app = application()
    app["status"]["sync"]["status"] = "OutOfSync"
    from bot.analysis.resources import nothing_differs

    report = Report(app="shop", resources_compared=3, nothing_differs=nothing_differs(app, "shop"))
    data = rendered(report, hand_alert())
    assert "hard-refresh" in json.dumps(data["thread"]) and "nothing differs now" in json.dumps(data["parent"])
    check_golden("hand-nothing-differs", data)


def test_findings_and_resources_share_the_thread() -> None:
    from tests.slack.test_slack_render import hand_report

    report = hand_report()
    report.resources = _one_sided_report().resources
    data = rendered(report, hand_alert())
    assert "Also 2 resources only one side has" in json.dumps(data["parent"])
    assert any("only one side has" in m["text"] for m in data["thread"])


# --- the bot ----------------------------------------------------------------------------------------------------


async def test_the_bot_explains_a_resource_to_prune_instead_of_turning_green(
    slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Before: no field differs, so the alert turned the parent green ("Synced again") for an OutOfSync app."""
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    folder = CASEBOOK / "cases" / "clean-no-findings"
    app, resources, renders = app_from_case(folder)
    name, ns = app["metadata"]["name"], app["spec"]["destination"]["namespace"]
    resources.append(resource_diff(None, live(configmap("old-flags", app=name, namespace=ns))))
    app["status"] = build_application(name, ns, resources)["status"]
    assert app["status"]["sync"]["status"] == "OutOfSync"
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(folder))
    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
    [parent] = slack.messages(CHANNEL)
    assert "Synced again" not in parent["text"] and "only one side has" in parent["text"]
    thread = json.dumps(slack.thread(CHANNEL, parent["ts"]))
    assert "old-flags" in thread and f"argocd app sync {name} --prune" in thread


def test_the_drift_page_says_which_resources_and_the_fix() -> None:
    from bot.report.html import render_html

    report = _one_sided_report()
    page = render_html(report)
    for r in report.resources:
        assert r.explanation.replace("'", "&#39;") in page and r.fix.replace("'", "&#39;") in page


def test_a_digest_says_an_app_has_resources_only_one_side_has() -> None:
    from bot.slack.render import digest_message
    from bot.slack.render.digest import digest_summary
    from bot.store.state import DigestItem

    report = _one_sided_report()
    kept = DigestItem.of(hand_alert(), report).parsed_report()  # what the digest buffer keeps in Redis
    assert [r.resource.name for r in kept.resources] == ["old", "settings"]
    billing = hand_alert(app="billing")
    entries = [
        (hand_alert(), digest_summary(hand_alert(), kept)),
        (billing, digest_summary(billing, Report(app="billing"))),
    ]
    message = digest_message(entries, None)
    text = json.dumps(message.to_dict())
    assert wording_slack.SLACK_DIGEST_STATES["one-sided"] in text and wording_slack.SLACK_DIGEST_STATES["clean"] in text
