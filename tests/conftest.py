"""Shared fixtures: where the shared test data lives, and small object builders."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the fakes are imported when a fixture first needs them
    from bot.config import ArgoCDSettings
    from bot.model import Report
    from tests.fakes.argocd import FakeArgoCD
    from tests.fakes.kube import FakeKubernetes
    from tests.fakes.slack import FakeSlack

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "tests" / "scenarios"
CASEBOOK = SCENARIOS / "casebook"
"""The shared casebook as vendored into the repository (tests/scenarios/README.md): scenarios, README, check.py."""
EXTRA = SCENARIOS / "extra"
"""argo-why's own scenarios, in the casebook's format, checked by the same check.py."""
CORPUS = SCENARIOS / "corpus"
"""Argo CD's, gitops-engine's and kubectl-blame's test objects, vendored (tests/scenarios/corpus/INDEX.md)."""
SHARED_CASEBOOK = ROOT.parent / "shared" / "casebook"
"""The shared casebook beside the checkout, when present: the reference the vendored copy was taken from."""


class FakeClock:
    """A clock tests move by hand (``clock.now += 60``), for the parts whose clock is injectable."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def argocd() -> Iterator[FakeArgoCD]:
    """A fake Argo CD API server shared by a test module (``reset()`` it per test)."""
    from tests.fakes.argocd import FakeArgoCD

    with FakeArgoCD() as fake:
        yield fake


@pytest.fixture(scope="module")
def kube() -> Iterator[FakeKubernetes]:
    """A fake Kubernetes API server shared by a test module (``reset()`` it per test)."""
    from tests.fakes.kube import FakeKubernetes

    with FakeKubernetes() as fake:
        yield fake


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    """A fake Slack Web API shared by a test module (the service tests clear it per test)."""
    from tests.fakes.slack import FakeSlack

    with FakeSlack() as fake:
        yield fake


def without_nulls(obj: Any) -> Any:
    """``obj`` as the API server stores it: no nulls, at any depth."""
    if isinstance(obj, dict):
        return {k: without_nulls(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [without_nulls(v) for v in obj]
    return obj


def explain_case(
    folder: Path, app: str, *, shown_only: bool = False, application: dict[str, Any] | None = None
) -> Report:
    """``explain`` on a scenario folder's files (desired, live, context, desired-again), as the casebook runs it.

    ``shown_only``: only the findings Argo CD's own diff shows (``shown_by_argocd``), which is what ``why`` sees.
    ``application``: the Application added to the context, as ``--context`` would.
    """
    from bot.analysis import explain, load_documents

    def docs(name: str) -> list[dict[str, Any]]:
        path = folder / name
        return load_documents(path.read_text(), name) if path.exists() else []

    again = docs("desired-again.yaml") if (folder / "desired-again.yaml").exists() else None
    context = docs("context.yaml") + ([application] if application is not None else [])
    report = explain(docs("desired.yaml"), docs("live.yaml"), context, app=app, desired_again=again)
    if shown_only:
        report.findings[:] = [f for f in report.findings if f.shown_by_argocd]
    return report


def why_settings(argocd: FakeArgoCD, kube: FakeKubernetes, tmp_path: Path) -> ArgoCDSettings:
    """Settings for ``argo-why why`` against the fake Argo CD and the fake Kubernetes API, both reset."""
    from pydantic import SecretStr

    from bot.config import ArgoCDSettings

    argocd.reset()
    kube.reset()
    kubeconfig = kube.write_kubeconfig(tmp_path / "kubeconfig", context="fake")
    return ArgoCDSettings(
        url=argocd.url,
        token=SecretStr(argocd.token),
        retries=2,
        timeout=5.0,
        kubeconfig=str(kubeconfig),
        cluster_contexts={"https://kubernetes.default.svc": "fake"},
    )


def serve_case(argocd: FakeArgoCD, kube: FakeKubernetes, case: str, **kw: Any) -> dict[str, Any]:
    """Serve a casebook scenario as an Application (and its context on the fake cluster); the Application."""
    from tests.fakes.argocd import app_from_case
    from tests.fakes.kube import context_from_case

    folder = CASEBOOK / "cases" / case
    app, resources, renders = app_from_case(folder, **kw)
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(folder))
    app_obj: dict[str, Any] = app
    return app_obj


def deployment(name: str = "web", namespace: str = "shop", **spec: Any) -> dict[str, Any]:
    """A desired Deployment as Argo CD renders it."""
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/name": name},
            "annotations": {"argocd.argoproj.io/tracking-id": f"shop:apps/Deployment:{namespace}/{name}"},
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "ghcr.io/acme/web:1.0.0",
                            "ports": [{"name": "http", "containerPort": 8080}],
                            "env": [{"name": "MODE", "value": "prod"}],
                            "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
                        },
                        {"name": "proxy", "image": "envoyproxy/envoy:v1.31.0", "args": ["--config", "/etc/envoy"]},
                    ]
                },
            },
        },
    }
    obj["spec"].update(spec)
    return obj


ARGO_FIELDS: dict[str, Any] = {
    "f:metadata": {
        "f:annotations": {"f:argocd.argoproj.io/tracking-id": {}},
        "f:labels": {"f:app.kubernetes.io/name": {}},
    },
    "f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {"f:app.kubernetes.io/name": {}}},
            "f:spec": {
                "f:containers": {
                    'k:{"name":"app"}': {
                        ".": {},
                        "f:env": {
                            'k:{"name":"MODE"}': {".": {}, "f:name": {}, "f:value": {}},
                        },
                        "f:image": {},
                        "f:name": {},
                        "f:ports": {
                            'k:{"containerPort":8080,"protocol":"TCP"}': {".": {}, "f:containerPort": {}, "f:name": {}}
                        },
                        "f:resources": {"f:requests": {"f:cpu": {}, "f:memory": {}}},
                    },
                    'k:{"name":"proxy"}': {".": {}, "f:args": {}, "f:image": {}, "f:name": {}},
                }
            },
        },
    },
}


def live_of(desired: dict[str, Any], *extra_entries: dict[str, Any]) -> dict[str, Any]:
    """The live counterpart of ``deployment()``: API defaults filled in, Argo CD's SSA entry plus ``extra_entries``."""
    live = copy.deepcopy(desired)
    meta = live["metadata"]
    meta.update({"uid": "0b7a3c52-1b7e-4a53-9d0c-1f2e3d4c5b6a", "resourceVersion": "81234", "generation": 3})
    meta["managedFields"] = [
        {
            "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": copy.deepcopy(ARGO_FIELDS),
            "manager": "argocd-controller",
            "operation": "Apply",
            "time": "2026-11-01T10:00:00Z",
        },
        *extra_entries,
    ]
    spec = live["spec"]
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    for c in spec["template"]["spec"]["containers"]:
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        for p in c.get("ports", []):
            p.setdefault("protocol", "TCP")
    live["status"] = {"observedGeneration": 3, "replicas": spec.get("replicas", 1)}
    return live


def entry(
    manager: str,
    fields: dict[str, Any],
    operation: str = "Update",
    subresource: str | None = None,
    time: str = "2026-11-02T10:00:00Z",
) -> dict[str, Any]:
    e: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
        "time": time,
    }
    if subresource:
        e["subresource"] = subresource
    return e


from tests.argocd_diff import argocd_diff, argocd_diff_line, argodiff_helpers  # noqa: E402,F401
from tests.kube_server import kube_api, kube_namespace, kube_server  # noqa: E402,F401
from tests.redis_server import redis_server, redis_url  # noqa: E402,F401
from tests.served_kinds import served_kinds  # noqa: E402,F401
