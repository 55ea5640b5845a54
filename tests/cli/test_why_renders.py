"""``argo-why why`` asks Argo CD only for what a finding needs (issue 29, the storm).

* The two uncached renders of the revision (each a full render on Argo CD's repo server) are asked for only when a
  difference could be decided by them: only Argo CD, or nobody, owns it and no earlier rule explained it. The
  nondeterministic-render verdicts are still found (tests/cli/test_why.py holds every scenario's verdicts to explain's,
  which always gets the second render);
* an app Argo CD does not have costs one request for the Application, never its managed-resources;
* what was read is handed to the caller (``Reads``), so that the alert routes with that Application.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.config import ArgoCDSettings
from bot.model import Report
from bot.sources.argocd import ArgoCDError
from bot.sources.clients import argocd_factory
from bot.why import Reads, investigate
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.cases import serve_case, why_settings
from tests.fakes.kube import FakeKubernetes


@pytest.fixture
def settings(argocd: FakeArgoCD, kube: FakeKubernetes, tmp_path: Path) -> ArgoCDSettings:
    return why_settings(argocd, kube, tmp_path)


async def why(settings: ArgoCDSettings, app: str, **kw: Any) -> Report:
    async with argocd_factory(settings)() as client:
        return await investigate(app, argocd=client, cluster=None, **kw)


def calls(argocd: FakeArgoCD) -> list[str]:
    return [c.path.rsplit("/", 1)[-1] + ("?noCache" if c.query.get("noCache") == "true" else "")
            for c in argocd.calls]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "pointer"),
    [("helm-randalphanum-secret", "/data/secret"), ("cronjob-schedule-from-now", "/spec/schedule")],
)
async def test_a_field_only_argo_cd_owns_gets_the_two_renders_and_its_verdict(
    case: str, pointer: str, settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    name = str(serve_case(argocd, kube, case)["metadata"]["name"])
    report = await why(settings, name)
    assert calls(argocd) == [name, "managed-resources", "manifests?noCache", "manifests?noCache"]
    assert {f.cause for f in report.findings if f.pointer == pointer} == {"nondeterministic-render"}


@pytest.mark.parametrize("case", ["hpa-replicas-csa", "manual-kubectl-edit-image"])
async def test_a_field_another_writer_owns_gets_no_render(
    case: str, settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    name = str(serve_case(argocd, kube, case)["metadata"]["name"])
    report = await why(settings, name)
    assert report.findings and report.renders_wanted == 0
    assert calls(argocd) == [name, "managed-resources"]


async def test_an_unknown_app_costs_one_request_for_the_application(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    serve_case(argocd, kube, "hpa-replicas-csa")
    reads = Reads()
    with pytest.raises(ArgoCDError):
        await why(settings, "gone", reads=reads)
    assert "managed-resources" not in calls(argocd)
    assert calls(argocd).count("gone") == 1
    assert reads.app_read and reads.app is None  # the alert routes without asking again


async def test_what_was_read_is_handed_to_the_caller(
    settings: ArgoCDSettings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = serve_case(argocd, kube, "hpa-replicas-csa")
    reads = Reads()
    await why(settings, str(app["metadata"]["name"]), reads=reads)
    assert reads.app is not None and reads.app["metadata"]["name"] == app["metadata"]["name"]
    assert reads.pairs
    kinds = {(d or lv or {}).get("kind") for d, lv in reads.pairs}
    assert "Deployment" in kinds
