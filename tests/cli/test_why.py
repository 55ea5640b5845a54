"""``argo-why why`` against a fake Argo CD and a fake Kubernetes API: the real httpx and kubernetes clients.

Every casebook scenario is served as an Application; ``why`` must reach the same verdicts as ``explain`` on the
scenario's files. Errors (401, 403, 404, unreachable, 5xx and 429 retried) are translated for people.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.config import ArgoCDSettings
from bot.model import Report
from bot.sources.argocd import ArgoCDError
from bot.sources.clients import argocd_factory, clusters
from bot.why import investigate
from tests.builders import explain_case
from tests.fakes.argocd import FakeArgoCD, app_from_case
from tests.fakes.cases import serve_case, why_settings
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.paths import CASEBOOK, EXTRA

CASES = sorted(p.name for p in (CASEBOOK / "cases").iterdir())
EXTRA_CASES = sorted(
    p.name for p in EXTRA.iterdir() if (p / "case.json").is_file() and "\nkind:" in (p / "live.yaml").read_text()
)
"""argo-why's own scenarios whose live objects are whole (Argo CD never serves a pasted object without its kind)."""
WITH_APP = {"gatekeeper-image-digest-mutation"}
"""Scenarios whose files alone prove less than ``why`` knows: the Application says Argo CD last synced the revision
Git is at, so what it sent is Git's value (server-side apply keeps no last-applied-configuration). ``explain`` given
that Application (``--context``) reaches ``why``'s verdict."""


@pytest.fixture
def settings(argocd: FakeArgoCD, kube: FakeKubernetes, tmp_path: Path) -> ArgoCDSettings:
    return why_settings(argocd, kube, tmp_path)


async def why(settings: ArgoCDSettings, app: str, *, cluster: bool = True, **kw: Any) -> Report:
    async with argocd_factory(settings)() as client:
        return await investigate(app, argocd=client, cluster=clusters(settings) if cluster else None, **kw)


def verdicts(report: Report) -> set[tuple[str, str, str, str, str | None, bool]]:
    return {(f.resource.kind, f.resource.name, f.pointer, f.cause, f.writer.manager, f.fix.rule is None)
            for f in report.findings}  # fmt: skip


@pytest.mark.parametrize(
    "folder", [CASEBOOK / "cases" / c for c in CASES] + [EXTRA / c for c in EXTRA_CASES], ids=lambda p: p.name
)
async def test_why_reaches_the_same_verdicts_as_explain(
    folder: Path, settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app_name = json.loads((folder / "case.json").read_text())["app"]
    app, resources, renders = app_from_case(folder)
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(folder))
    report = await why(settings, app_name)
    expected = explain_case(folder, app_name, shown_only=True, application=app if folder.name in WITH_APP else None)
    assert verdicts(report) == verdicts(expected)
    assert report.application is not None and report.application["name"] == app_name
    assert not argocd.errors and not kube.errors
    assert all(c.method == "GET" for c in argocd.calls) and all(c.method == "GET" for c in kube.calls)


def _case(name: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """A casebook scenario as Argo CD would report it, to adjust before serving."""
    return app_from_case(CASEBOOK / "cases" / name)


def _serve(argocd: FakeArgoCD, kube: FakeKubernetes, case: str = "hpa-replicas-csa", **kw: Any) -> str:
    return str(serve_case(argocd, kube, case, **kw)["metadata"]["name"])


async def test_calls_do_not_grow_with_in_sync_resources(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    name = _serve(argocd, kube)
    await why(settings, name, cluster=False)
    # application, managed-resources; no render: the HPA owns the field, no second render could decide it
    # (tests/cli/test_why_renders.py: when one could)
    assert [c.path.rsplit("/", 1)[-1] for c in argocd.calls] == [name, "managed-resources"]


async def test_self_heal_against_an_autoscaler_is_a_write_loop_said_first(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    name = _serve(argocd, kube, self_heal=True)
    report = await why(settings, name, cluster=False)
    assert report.warnings and "Write loop" in report.warnings[0]
    assert report.application is not None and report.application["self_heal"] is True
    assert any("cluster" in n.lower() for n in report.notes)  # the missing evidence is said


async def test_wrong_token_is_explained(settings: ArgoCDSettings) -> None:
    settings.token = SecretStr("nope")
    with pytest.raises(ArgoCDError, match=r"rejected the token \(401"):
        await why(settings, "anything", cluster=False)


async def test_unknown_app_suggests_close_names(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    _serve(argocd, kube)
    with pytest.raises(ArgoCDError, match="no application shop-frontnd.*did you mean shop-frontend"):
        await why(settings, "shop-frontnd", cluster=False)


async def test_denied_app_prints_the_rbac_line(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    name = _serve(argocd, kube)
    argocd.deny(name)
    with pytest.raises(ArgoCDError, match=r"p, argo-why, applications, get, \*/" + name):
        await why(settings, name, cluster=False)


async def test_transient_failures_are_retried(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    name = _serve(argocd, kube)
    settings.retries = 3  # the Application is read first, alone: the three faults below all hit that one request
    argocd.fail_next(1, status=503)
    argocd.fail_next(1, status=429, retry_after=0)
    argocd.drop_next(1)
    assert (await why(settings, name, cluster=False)).findings


async def test_unreachable_argocd_names_the_url(settings: ArgoCDSettings) -> None:
    settings.url = "http://127.0.0.1:9"
    settings.retries = 0
    with pytest.raises(ArgoCDError, match="cannot reach Argo CD at http://127.0.0.1:9"):
        await why(settings, "shop", cluster=False)


async def test_without_cluster_access_confidence_is_lowered(settings: ArgoCDSettings, argocd: FakeArgoCD,
                                                            kube: FakeKubernetes) -> None:  # fmt: skip
    app = serve_case(argocd, kube, "kyverno-label-webhook")
    with_cluster = await why(settings, app["metadata"]["name"])
    without = await why(settings, app["metadata"]["name"], cluster=False)
    [a], [b] = with_cluster.findings, without.findings
    assert a.confidence == "confirmed" and a.writer.object is not None
    assert b.confidence == "likely" and b.writer.object is None
    kube.forbid("mutatingwebhookconfigurations")
    forbidden = await why(settings, app["metadata"]["name"])
    assert any("MutatingWebhookConfigurations" in n and "not allowed" in n for n in forbidden.notes)


def test_cli_why_exit_codes(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from bot.cli import main

    name = _serve(argocd, kube)
    monkeypatch.setenv("ARGOCD_URL", argocd.url)
    monkeypatch.setenv("ARGOCD_TOKEN", argocd.token)
    assert main(["why", name, "--no-cluster", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["findings"][0]["cause"] == "autoscaler" and "application" in out
    monkeypatch.setenv("ARGOCD_TOKEN", "wrong")
    assert main(["why", name, "--no-cluster"]) == 3
    assert "rejected the token" in capsys.readouterr().err
    monkeypatch.delenv("ARGOCD_URL")
    assert main(["why", name]) == 2


async def test_missing_managed_fields_are_read_fresh_through_the_resource_call(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app, resources, renders = _case("hpa-replicas-csa")
    argocd.add_app(app, resources, renders)
    argocd.drop_cached_managed_fields(app["metadata"]["name"])
    report = await why(settings, app["metadata"]["name"], cluster=False)
    assert any(c.path.endswith("/resource") for c in argocd.calls)
    [f] = report.findings
    assert f.writer.manager == "kube-controller-manager" and f.writer.subresource == "scale"


async def test_a_remote_destination_without_a_kube_context_is_noted(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app, resources, renders = _case("hpa-replicas-csa")
    app["spec"]["destination"] = {"server": "https://prod-eu.example.com", "namespace": "shop"}
    argocd.add_app(app, resources, renders)
    report = await why(settings, app["metadata"]["name"])
    assert any("prod-eu.example.com has no kube context" in n for n in report.notes)
    assert not kube.calls


def test_cli_why_format_html_is_the_drift_page_of_argo_cds_diff(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from bot.cli import main

    name = _serve(argocd, kube)
    monkeypatch.setenv("ARGOCD_URL", argocd.url)
    monkeypatch.setenv("ARGOCD_TOKEN", argocd.token)
    assert main(["why", name, "--no-cluster", "--format", "html"]) == 1
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and f"Why {name} is OutOfSync" in page
    assert "Argo CD&#39;s diff (managed-resources" in page and 'class="row diff"' in page
    assert 'data-pointer="/spec/replicas"' in page and "kube-controller-manager" in page
