"""The stand-ins serving a casebook scenario, and the settings that point ``argo-why why`` at them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.config import ArgoCDSettings
from tests.fakes.argocd import FakeArgoCD, app_from_case
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.paths import CASEBOOK


def why_settings(argocd: FakeArgoCD, kube: FakeKubernetes, tmp_path: Path) -> ArgoCDSettings:
    """Settings for ``argo-why why`` against the fake Argo CD and the fake Kubernetes API, both reset."""
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
    folder = CASEBOOK / "cases" / case
    app, resources, renders = app_from_case(folder, **kw)
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(folder))
    app_obj: dict[str, Any] = app
    return app_obj
