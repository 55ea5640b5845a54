"""A fleet of stand-in apps for the fleet tests: the same HPA drift in several apps, and drifts of their own.

Each app is one Deployment (``deployment()`` of the conftest) served by the fake Argo CD. ``hpa_app`` has its
replicas rewritten by the HPA controller (``kube-controller-manager`` through the scale subresource, the only
owner of ``spec.replicas`` live); ``edited_app`` has its image changed with ``kubectl edit``; ``quiet_app`` is
Synced, with an unrelated replicas value Git sets.
"""

from __future__ import annotations

import copy
from typing import Any

from bot.demo.fake_argocd.applications import build_application
from tests.builders import deployment, entry, live_of
from tests.fakes.argocd import FakeArgoCD, resource_diff

HPA_MANAGER = "kube-controller-manager"


def _argo_entry_without_replicas(live: dict[str, Any]) -> None:
    fields = live["metadata"]["managedFields"][0]["fieldsV1"]
    fields["f:spec"].pop("f:replicas", None)


def _tracked(app: str, obj: dict[str, Any]) -> dict[str, Any]:
    m = obj["metadata"]
    m["annotations"]["argocd.argoproj.io/tracking-id"] = f"{app}:apps/Deployment:{m['namespace']}/{m['name']}"
    return obj


def hpa_objects(app: str, *, image_edit: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    desired = _tracked(app, deployment(name="web", namespace=app))
    extra = [entry(HPA_MANAGER, {"f:spec": {"f:replicas": {}}}, subresource="scale")]
    if image_edit:
        extra.append(entry("kubectl-edit", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
            'k:{"name":"app"}': {"f:image": {}}}}}}}))  # fmt: skip
    live = live_of(desired, *extra)
    _argo_entry_without_replicas(live)
    live["spec"]["replicas"] = 5
    if image_edit:
        live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:hotfix"
    return desired, live


def edited_objects(app: str) -> tuple[dict[str, Any], dict[str, Any]]:
    desired = _tracked(app, deployment(name="web", namespace=app))
    live = live_of(desired, entry("kubectl-edit", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"app"}': {"f:image": {}}}}}}}))  # fmt: skip
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:hotfix"
    return desired, live


def serve(argocd: FakeArgoCD, app: str, desired: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    diffs = [resource_diff(copy.deepcopy(desired), copy.deepcopy(live))]
    application = build_application(app, app, diffs)
    argocd.add_app(application, diffs, [[desired]])
    served: dict[str, Any] = application
    return served
