"""Issue 30, items 1 to 3 and 6: every verdict says what proves it, through ``explain`` and ``why``.

* Git ahead of the cluster (``not-synced``): the live value is what Argo CD last sent (its own
  last-applied-configuration, or the render of the revision it last synced) and Git renders another. Fix: sync,
  never a rule; ``why`` says it from the Application's revisions (multi-source too) in one calm sentence.
* A mutating webhook is ``confirmed`` only when something shows the value changed on admission, and one that
  intercepts every resource (Gatekeeper's, Kyverno's stock configurations) proves nothing on its own.
* A value Git sets that live lacks, owned by nobody, is a removal unless a literal default explains it: never
  ``normalization`` on the strength of a rule about how present values are rewritten.
* Advice fits what is configured: selfHeal already on, Helm's command line, findings Argo CD does not show.

The objects are the casebook's (built under the API server's ownership rules) and argo-why's own scenarios; the live
casebook (tests/live/scenarios.py) writes the same situations on the real API server.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bot.analysis import explain
from bot.config import ArgoCDSettings
from bot.model import Finding, Report
from bot.wording import report as wording
from tests.builders import deployment, entry, explain_case, live_of
from tests.cli.test_why import why
from tests.fakes.argocd import REVISION, FakeArgoCD, app_from_case, build_application
from tests.fakes.cases import why_settings
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.paths import CASEBOOK, EXTRA

ROLLBACK = CASEBOOK / "cases" / "unknown-argocd-owned-rollback"
GATEKEEPER = EXTRA / "gatekeeper-image-digest-mutation"
NEW = "c0ffee0000000000000000000000000000000001"
IMAGE = "/spec/template/spec/containers/0/image"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CATCH_ALL: dict[str, Any] = {
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "gatekeeper-mutating-webhook-configuration"},
    "webhooks": [{"name": "mutation.gatekeeper.sh",
                  "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                             "resources": ["*"], "scope": "*"}],
                  "namespaceSelector": {"matchExpressions": [
                      {"key": "admission.gatekeeper.sh/ignore", "operator": "DoesNotExist"}]}}],
}  # fmt: skip


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, [(f.pointer, f.cause) for f in findings]
    return findings[0]


@pytest.fixture
def settings(argocd: FakeArgoCD, kube: FakeKubernetes, tmp_path: Path) -> ArgoCDSettings:
    return why_settings(argocd, kube, tmp_path)


def serve(argocd: FakeArgoCD, kube: FakeKubernetes, folder: Path, *, git_at: str | None = NEW,
          old_render: list[dict[str, Any]] | None = None, multi_source: bool = False,
          phase: str | None = None, automated: bool = False) -> str:  # fmt: skip
    """A scenario served as an Application whose Git moved to ``git_at`` after the sync of ``REVISION``."""
    app, resources, renders = app_from_case(folder)
    ssa = "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"]
    rebuilt = build_application(app["metadata"]["name"], app["spec"]["destination"]["namespace"], resources,
                                server_side_apply=ssa, git_at=git_at)  # fmt: skip
    if multi_source:
        spec, status = rebuilt["spec"], rebuilt["status"]
        spec["sources"] = [spec.pop("source"), {"repoURL": "https://git.example.com/values.git", "ref": "values"}]
        status["sync"]["revisions"] = [status["sync"].pop("revision"), "v2"]
        for h in status["history"]:
            h["revisions"] = [h.pop("revision"), "v2"]
        status["operationState"]["syncResult"]["revisions"] = [status["operationState"]["syncResult"].pop("revision"),
                                                                "v2"]  # fmt: skip
    if phase:
        rebuilt["status"]["operationState"].update(phase=phase, message="one or more objects failed to apply.")
    if automated:
        rebuilt["spec"]["syncPolicy"]["automated"] = {"prune": False, "selfHeal": False}
    argocd.add_app(rebuilt, resources, renders, revision_renders={REVISION: old_render} if old_render else None)
    kube.add(*context_from_case(folder))
    return str(rebuilt["metadata"]["name"])


# --- 1. Git ahead of the cluster ---------------------------------------------------------------------------------


def test_explain_reads_git_ahead_from_argocds_own_last_applied_configuration() -> None:
    """Before: ``unknown (possible)``, "Argo CD itself wrote the live value (a rollback, an older revision or a
    manual sync)", investigate. The last-applied-configuration Argo CD owns holds the live value: Git moved."""
    f = only(explain_case(ROLLBACK, "pricing").findings)
    assert (f.cause, f.confidence, f.fix.action, f.fix.rule) == ("not-synced", "confirmed", "sync", None)
    assert wording.REASON_NOT_SYNCED.format(how=wording.SENT_HOW["last-applied"]) in f.explanation
    assert f.fix.alternative == wording.ALTERNATIVES["not-synced"]
    assert wording.AVOID["not-synced"][0] in f.fix.avoid
    assert wording.EVIDENCE_SENT_LIVE.format(how=wording.SENT_HOW["last-applied"]) in f.evidence


def test_a_catch_all_webhook_does_not_turn_git_ahead_into_a_webhook() -> None:
    """Before: ``mutating-webhook (confirmed)`` and an ignore rule on the env value as soon as a webhook that
    intercepts every resource is in the context. What Argo CD sent is the live value: nothing changed it."""
    from bot.analysis import load_documents

    docs = {n: load_documents((ROLLBACK / n).read_text(), n) for n in ("desired.yaml", "live.yaml")}
    for hook in (CATCH_ALL, _specific_webhook()):
        f = only(explain(docs["desired.yaml"], docs["live.yaml"], [hook], app="pricing").findings)
        assert (f.cause, f.confidence, f.fix.rule) == ("not-synced", "confirmed", None), hook["metadata"]["name"]


def _specific_webhook() -> dict[str, Any]:
    hook = copy.deepcopy(CATCH_ALL)
    hook["metadata"]["name"] = "deployments-only"
    hook["webhooks"][0]["rules"][0].update(apiGroups=["apps"], resources=["deployments"])
    return hook


async def test_why_says_git_ahead_once_with_the_revisions(settings: ArgoCDSettings, argocd: FakeArgoCD,
                                                          kube: FakeKubernetes) -> None:  # fmt: skip
    name = serve(argocd, kube, ROLLBACK)
    report = await why(settings, name)
    f = only(report.findings)
    assert (f.cause, f.confidence, f.fix.action, f.fix.rule) == ("not-synced", "confirmed", "sync", None)
    assert report.application is not None and report.application["git_ahead"] is True
    assert report.application["synced_revisions"] == [REVISION] and report.application["target_revisions"] == [NEW]
    assert report.git_ahead is not None and report.git_ahead["why_not"] == "manual"
    assert (
        report.notes[0] == report.git_ahead["text"] and NEW[:7] in report.notes[0] and REVISION[:7] in report.notes[0]
    )
    assert report.to_dict()["git_ahead"]["synced"] == [REVISION]
    assert not report.warnings  # a calm note, not a warning
    from bot.report.text import render

    text = render(report)
    assert text.count(report.git_ahead["text"]) == 1
    assert text.index(report.git_ahead["text"]) < text.index("verdict:")


async def test_why_with_server_side_apply_reads_the_synced_revisions_render(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    """Server-side apply keeps no last-applied-configuration, and Gatekeeper's webhook intercepts everything: the
    render of the revision Argo CD last synced (one more call) is what it sent, and it is the live value."""
    before = only(explain_case(GATEKEEPER, "payments").findings)
    assert (before.cause, before.confidence, before.fix.rule) == ("unknown", "possible", None)
    live = next(o for o in _docs(GATEKEEPER, "live.yaml") if o["metadata"]["name"] == "payments-worker")
    old = _docs(GATEKEEPER, "desired.yaml")
    worker = next(o for o in old if o["metadata"]["name"] == "payments-worker")
    worker["spec"]["template"]["spec"]["containers"][0]["image"] = live["spec"]["template"]["spec"]["containers"][0][
        "image"
    ]
    name = serve(argocd, kube, GATEKEEPER, old_render=old)
    f = only(await _why_findings(settings, name))
    assert (f.cause, f.confidence, f.fix.rule, f.writer.manager) == (
        "not-synced",
        "confirmed",
        None,
        "argocd-controller",
    )
    assert wording.SENT_HOW["render"] in f.explanation
    assert any(c.path.endswith("/manifests") and c.query.get("revision") == REVISION for c in argocd.calls)


async def test_why_multi_source_git_ahead_is_likely_from_the_revisions_alone(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    name = serve(argocd, kube, GATEKEEPER, multi_source=True, automated=True)
    report = await why(settings, name)
    f = only(report.findings)
    assert (f.cause, f.confidence, f.fix.rule) == ("not-synced", "likely", None)
    assert f.explanation.endswith(wording.REASON_NOT_SYNCED_REVISION + ".") or wording.REASON_NOT_SYNCED_REVISION in (
        f.explanation
    )
    assert report.git_ahead is not None and report.git_ahead["target"] == [NEW, "v2"]
    assert report.git_ahead["why_not"] == "automated"


async def test_why_says_the_failed_sync(settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes) -> None:
    name = serve(argocd, kube, ROLLBACK, phase="Failed")
    report = await why(settings, name)
    assert report.git_ahead is not None and report.git_ahead["why_not"] == "failed"
    assert "one or more objects failed to apply." in report.git_ahead["text"]


async def test_same_revision_is_no_git_ahead(settings: ArgoCDSettings, argocd: FakeArgoCD,
                                             kube: FakeKubernetes) -> None:  # fmt: skip
    """Synced at Git's revision: the catch-all webhook changed the image on admission (Argo CD sent this revision's
    value and still owns the field), but it intercepts everything, so ``likely``, never ``confirmed``."""
    name = serve(argocd, kube, GATEKEEPER, git_at=None)
    report = await why(settings, name)
    f = only(report.findings)
    assert report.git_ahead is None and report.application is not None and not report.application["git_ahead"]
    assert (f.cause, f.confidence) == ("mutating-webhook", "likely")
    assert wording.SENT_HOW["revision"] in f.explanation


def _docs(folder: Path, name: str) -> list[dict[str, Any]]:
    from bot.analysis import load_documents

    return load_documents((folder / name).read_text(), name)


async def _why_findings(settings: ArgoCDSettings, name: str) -> list[Finding]:
    report: Report = await why(settings, name)
    return report.findings


# --- 2. a webhook is confirmed only by evidence about this field ----------------------------------------------------


def _ssa_image_rewrite() -> tuple[dict[str, Any], dict[str, Any]]:
    """Argo CD applied (server-side) Git's image; the stored one is another: a webhook, or Git ahead."""
    d = deployment()
    live = live_of(d)
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example.com/mirror/app@sha256:" + "ab" * 32
    return d, live


def test_a_specific_webhook_without_proof_is_likely_and_a_catch_all_one_proves_nothing() -> None:
    d, live = _ssa_image_rewrite()
    specific = only(explain([d], [live], [_specific_webhook()], app="shop").findings)
    assert (specific.cause, specific.confidence) == ("mutating-webhook", "likely")
    anything = only(explain([d], [live], [CATCH_ALL], app="shop").findings)
    assert (anything.cause, anything.confidence, anything.fix.rule) == ("unknown", "possible", None)
    assert "intercepts every resource" in anything.explanation and "not synced" in anything.explanation


def test_argocds_last_applied_proves_the_admission_change() -> None:
    d, live = _ssa_image_rewrite()
    live["metadata"]["managedFields"][0]["operation"] = "Update"
    live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(d)
    f = only(explain([d], [live], [_specific_webhook()], app="shop").findings)
    assert (f.cause, f.confidence) == ("mutating-webhook", "confirmed")
    assert wording.EVIDENCE_SENT_GIT.format(how=wording.SENT_HOW["last-applied"]) in f.evidence
    g = only(explain([d], [live], [CATCH_ALL], app="shop").findings)
    assert (g.cause, g.confidence) == ("mutating-webhook", "likely")


def test_a_persons_kubectl_apply_last_applied_is_not_argocds() -> None:
    """A last-applied-configuration a person's ``kubectl apply`` rewrote says what the person sent, not Argo CD."""
    d, live = _ssa_image_rewrite()
    theirs = copy.deepcopy(d)
    theirs["spec"]["template"]["spec"]["containers"][0]["image"] = live["spec"]["template"]["spec"]["containers"][0][
        "image"
    ]
    live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(theirs)
    live["metadata"]["managedFields"].append(
        entry("kubectl-client-side-apply", {"f:metadata": {"f:annotations": {f"f:{LAST_APPLIED}": {}}}})
    )
    f = only(explain([d], [live], [], app="shop").findings)
    assert f.cause != "not-synced"


# --- 3. an absent value is not a default unless proven ------------------------------------------------------------


def _limit_removed(csa: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    d = deployment()
    d["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1", "memory": "512Mi"}
    live = live_of(d)
    del live["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
    if csa:
        live["metadata"]["managedFields"][0]["operation"] = "Update"
        live["metadata"]["annotations"][LAST_APPLIED] = json.dumps(d)
    return d, live


@pytest.mark.parametrize("csa", [True, False], ids=["csa", "ssa"])
def test_a_removed_memory_limit_is_a_removal_not_normalization(csa: bool) -> None:
    """Before: ``normalization (confirmed)``, "absent means the same", with a fallback ignore rule. Kubernetes has
    no default for a limit: no limit is not the same value."""
    d, live = _limit_removed(csa)
    f = only(explain([d], [live], [CATCH_ALL], app="shop").findings)
    assert (f.pointer, f.cause, f.writer.manager, f.fix.rule) == (
        "/spec/template/spec/containers/0/resources/limits/memory", "unknown", None, None
    )  # fmt: skip
    assert f.fix.alternative == wording.ALTERNATIVE_REMOVED
    assert (wording.REASON_REMOVED_SENT.format(how=wording.SENT_HOW["last-applied"]) if csa
            else wording.REASON_REMOVED) in f.explanation  # fmt: skip


def test_a_default_git_writes_that_omitempty_drops_is_still_normalization() -> None:
    d = deployment()
    d["spec"]["template"]["spec"]["hostNetwork"] = False
    live = live_of(d)
    del live["spec"]["template"]["spec"]["hostNetwork"]
    f = only(explain([d], [live], [], app="shop").findings)
    assert f.cause == "normalization"


# --- 6. advice that fits what is configured -------------------------------------------------------------------------


def test_selfheal_already_on_is_said_as_what_it_does() -> None:
    """Before: "Do not turn on selfHeal ..." beside an Application that has it on."""
    from bot.analysis import load_documents

    folder = CASEBOOK / "cases" / "hpa-replicas-csa"
    docs = {n: load_documents((folder / n).read_text(), n) for n in ("desired.yaml", "live.yaml", "context.yaml")}
    case = json.loads((folder / "case.json").read_text())
    app = build_application(case["app"], "shop", [], self_heal=True)
    f = only(explain(docs["desired.yaml"], docs["live.yaml"], [*docs["context.yaml"], app], app=case["app"]).findings)
    assert not any("Do not turn on selfHeal" in line for line in f.fix.avoid)
    assert wording.SELF_HEAL_ON[wording.AVOID["autoscaler"][1]] in f.fix.avoid
    off = only(explain(docs["desired.yaml"], docs["live.yaml"], docs["context.yaml"], app=case["app"]).findings)
    assert wording.AVOID["autoscaler"][1] in off.fix.avoid


def test_the_helm_command_line_is_a_person_or_a_pipeline_not_flux() -> None:
    """Before: ``other-gitops``, "Helm (CLI or a pipeline) applies this object too", resolve-ownership."""
    d = deployment()
    live = live_of(d, entry("helm", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"app"}': {"f:image": {}}}}}}}))  # fmt: skip
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example.com/app:hotfix"
    f = only(explain([d], [live], [], app="shop").findings)
    assert (f.cause, f.confidence, f.writer.manager, f.fix.action) == ("manual-edit", "likely", "helm", "revert")
    assert "Flux" not in f.explanation.replace("Flux's Helm controller", "")


def test_findings_argocd_does_not_show_never_ask_for_server_filled_values_in_git() -> None:
    """Before: the StatefulSet's claim template ``status`` got "Write the defaulted value in Git"."""
    report = explain_case(CASEBOOK / "cases" / "sts-volumeclaimtemplates-defaults", "kafka")
    hidden = [f for f in report.findings if not f.shown_by_argocd]
    assert hidden
    for f in hidden:
        assert f.fix.rule is None and f.fix.alternative == wording.ALTERNATIVE_NOT_SHOWN, f.pointer
    assert report.to_dict()["summary"]["shown_by_argocd"] == len(report.findings) - len(hidden)


def test_a_catch_all_webhook_does_not_block_a_published_default() -> None:
    """Gateway API's published defaults are ``likely`` (versions differ); a webhook whose rules name HTTPRoutes
    could have set the value instead, one that intercepts every resource says nothing about it."""
    from bot.analysis import load_documents

    folder = CASEBOOK / "cases" / "httproute-crd-defaults"
    docs = {n: load_documents((folder / n).read_text(), n) for n in ("desired.yaml", "live.yaml")}
    app = json.loads((folder / "case.json").read_text())["app"]
    plain = explain(docs["desired.yaml"], docs["live.yaml"], [], app=app).findings
    with_hook = explain(docs["desired.yaml"], docs["live.yaml"], [CATCH_ALL], app=app).findings

    def verdicts(findings: list[Finding]) -> list[tuple[str, str, str]]:
        return [(f.pointer, f.cause, f.confidence) for f in findings]

    assert verdicts(with_hook) == verdicts(plain)
    assert {f.cause for f in plain} <= {"api-defaulting", "normalization"}


async def test_why_without_the_synced_revisions_render_claims_no_more_than_the_revisions(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    """Argo CD cannot render the revision it last synced (gone from the repository): the revisions alone say Git
    is ahead, ``likely``, and a note says the render failed; never today's render taken for the old one."""
    name = serve(argocd, kube, GATEKEEPER)
    report = await why(settings, name)
    f = only(report.findings)
    assert (f.cause, f.confidence, f.fix.rule) == ("not-synced", "likely", None)
    assert any(n.startswith("could not render the revision Argo CD last synced") for n in report.notes)
