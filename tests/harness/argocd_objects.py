"""Manifests the e2e tests put in Git (plain dicts, written as YAML by ``E2E.add_files``), and references to their
live copies for the cluster's writers (``tests.live.writers.Cluster`` needs apiVersion, kind, name, namespace)."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def deployment(name: str, *, replicas: int | None = 2, image: str = "nginx:1.27") -> Obj:
    spec: Obj = {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
                     "spec": {"containers": [{"name": "web", "image": image, "ports": [{"containerPort": 80}]}]}},
    }  # fmt: skip
    if replicas is not None:
        spec = {"replicas": replicas, **spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def hpa(name: str, *, min_replicas: int = 2, max_replicas: int = 10) -> Obj:
    return {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                 "minReplicas": min_replicas, "maxReplicas": max_replicas,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                                               "target": {"type": "Utilization",
                                                                          "averageUtilization": 80}}}]},
    }  # fmt: skip


def configmap(name: str, data: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": dict(data)}


def service(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 80}]}}  # fmt: skip


def ref(obj: Obj, namespace: str) -> Obj:
    """The live object's address: what the cluster's writers take."""
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "metadata": {"name": obj["metadata"]["name"], "namespace": namespace}}  # fmt: skip
