"""Small object builders for the tests: a Deployment as Argo CD renders it, its live counterpart with managedFields
entries, and ``explain`` run on a scenario folder as the casebook runs it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.model import Report


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
