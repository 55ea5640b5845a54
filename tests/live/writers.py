"""The API calls of every writer of the live casebook, on the wire as the real writer makes them.

:class:`Cluster` is a small HTTPS client of the test API server (httpx, the admin token). Each writer is one method
named for who it is, and sends what that writer sends (verb, content type, ``fieldManager``, User-Agent):

* Argo CD, client-side apply (the default): ``kubectl apply``'s code in the controller: a create, or a three-way
  strategic merge patch, carrying ``kubectl.kubernetes.io/last-applied-configuration``, ``fieldManager=
  argocd-controller`` (managedFields operation ``Update``);
* Argo CD with ``ServerSideApply=true``: an ``application/apply-patch+yaml`` by ``argocd-controller``, ``force=true``
  (operation ``Apply``);
* ``kubectl scale`` (a merge patch of the ``scale`` subresource, no fieldManager: the server names it ``kubectl``
  from the User-Agent), an HPA (kube-controller-manager ``PUT``s the scale subresource), KEDA's operator (the same
  by ``keda-operator``);
* a person: ``kubectl edit`` (strategic merge patch, ``kubectl-edit``), ``kubectl patch`` (``kubectl-patch``),
  ``kubectl apply`` (``kubectl-client-side-apply``, or ``kubectl`` Apply with ``--server-side --force-conflicts``);
* an operator: server-side apply with its own manager;
* a pipeline's ``helm upgrade``: a strategic merge patch by ``helm`` (Helm names its field manager after its binary).
"""

from __future__ import annotations

import copy
import json
import ssl
from collections.abc import Mapping
from typing import Any

import httpx

from tests.harness.kube_server import KubeServer

Obj = dict[str, Any]
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL_UA = "kubectl/v1.34.2 (linux/amd64) kubernetes/6a2b4da"
KCM_UA = "kube-controller-manager/v1.34.2 (linux/amd64) kubernetes/6a2b4da/system:serviceaccount:kube-system:" \
    "horizontal-pod-autoscaler"  # fmt: skip
ARGOCD = "argocd-controller"
HELM_UA = "Helm/3.16.2"

# (group, kind) -> (plural, namespaced) for the kinds the casebook writes; custom resources are added by `serve`.
_RESOURCES: dict[tuple[str, str], tuple[str, bool]] = {
    ("", "ConfigMap"): ("configmaps", True),
    ("", "Secret"): ("secrets", True),
    ("", "Service"): ("services", True),
    ("", "Namespace"): ("namespaces", False),
    ("", "ServiceAccount"): ("serviceaccounts", True),
    ("apps", "Deployment"): ("deployments", True),
    ("apps", "StatefulSet"): ("statefulsets", True),
    ("batch", "Job"): ("jobs", True),
    ("autoscaling", "HorizontalPodAutoscaler"): ("horizontalpodautoscalers", True),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): ("customresourcedefinitions", False),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): ("mutatingwebhookconfigurations", False),
    ("networking.k8s.io", "NetworkPolicy"): ("networkpolicies", True),
}


class ApiError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body[:2000]}")
        self.status = status


def serve(group: str, kind: str, plural: str, namespaced: bool = True) -> None:
    """Makes a custom resource's kind known to :func:`path_of`."""
    _RESOURCES[(group, kind)] = (plural, namespaced)


def is_namespaced(obj: Mapping[str, Any]) -> bool:
    api_version = str(obj["apiVersion"])
    return _RESOURCES[(api_version.rpartition("/")[0], str(obj["kind"]))][1]


def path_of(obj: Mapping[str, Any], *, name: bool = True) -> str:
    api_version = str(obj["apiVersion"])
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    plural, namespaced = _RESOURCES[(group, str(obj["kind"]))]
    base = f"/apis/{api_version}" if group else f"/api/{api_version}"
    meta = obj["metadata"]
    if namespaced:
        base += f"/namespaces/{meta['namespace']}"
    return f"{base}/{plural}/{meta['name']}" if name else f"{base}/{plural}"


class Cluster:
    """The test API server, spoken to over HTTPS as kubectl and the controllers do."""

    def __init__(self, server: KubeServer) -> None:
        self.server = server
        self._http = httpx.Client(
            base_url=server.url, verify=ssl.create_default_context(cafile=str(server.ca_file)), timeout=30.0,
            headers={"Authorization": f"Bearer {server.token}", "Accept": "application/json"},
        )  # fmt: skip

    def close(self) -> None:
        self._http.close()

    def call(
        self, method: str, path: str, body: Any = None, *, content_type: str = "application/json",
        params: Mapping[str, str] | None = None, user_agent: str = "argo-why-tests",
    ) -> Obj:  # fmt: skip
        content = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        resp = self._http.request(
            method, path, content=content, params=dict(params or {}),
            headers={"Content-Type": content_type, "User-Agent": user_agent},
        )  # fmt: skip
        if resp.status_code >= 400:
            raise ApiError(resp.status_code, resp.text)
        out: Obj = resp.json()
        return out

    def get(self, obj: Mapping[str, Any]) -> Obj:
        """The live object as ``kubectl get -o yaml --show-managed-fields`` shows it (apiVersion and kind set)."""
        live = self.call("GET", path_of(obj))
        live.setdefault("apiVersion", obj["apiVersion"])
        live.setdefault("kind", obj["kind"])
        return live

    def exists(self, obj: Mapping[str, Any]) -> bool:
        try:
            self.call("GET", path_of(obj))
        except ApiError as e:
            if e.status == 404:
                return False
            raise
        return True

    def create(self, obj: Mapping[str, Any], manager: str = "argo-why-tests") -> Obj:
        return self.call("POST", path_of(obj, name=False), obj, params={"fieldManager": manager})

    def delete(self, obj: Mapping[str, Any]) -> None:
        try:
            self.call("DELETE", path_of(obj))
        except ApiError as e:
            if e.status != 404:
                raise

    # -- Argo CD ------------------------------------------------------------------------------------------------

    def argocd_client_side_apply(self, desired: Mapping[str, Any]) -> Obj:
        """Argo CD's default sync: kubectl apply's code with ``--field-manager=argocd-controller``."""
        return self.client_side_apply(desired, ARGOCD, KUBECTL_UA)

    def argocd_server_side_apply(self, desired: Mapping[str, Any]) -> Obj:
        """A sync with ``ServerSideApply=true``."""
        return self.server_side_apply(desired, ARGOCD)

    # -- kubectl and people ---------------------------------------------------------------------------------------

    def client_side_apply(self, desired: Mapping[str, Any], manager: str, user_agent: str = KUBECTL_UA) -> Obj:
        """``kubectl apply``: create with the last-applied annotation, else a three-way strategic merge patch (a
        JSON merge patch for custom resources) from the previous last-applied configuration to ``desired``."""
        applied = copy.deepcopy(dict(desired))
        applied.get("metadata", {}).get("annotations", {}).pop(LAST_APPLIED, None)
        if not applied["metadata"].get("annotations"):
            applied["metadata"].pop("annotations", None)
        text = json.dumps(applied, separators=(",", ":"), sort_keys=True)
        full = copy.deepcopy(applied)
        full["metadata"].setdefault("annotations", {})[LAST_APPLIED] = text + "\n"
        if not self.exists(desired):
            return self.call("POST", path_of(desired, name=False), full,
                             params={"fieldManager": manager}, user_agent=user_agent)  # fmt: skip
        live = self.get(desired)
        previous = json.loads(((live["metadata"].get("annotations") or {}).get(LAST_APPLIED)) or "{}")
        patch = three_way(previous, full, live)
        group = str(desired["apiVersion"]).rpartition("/")[0]
        builtin = "." not in group or group.endswith(".k8s.io")
        kind = "application/strategic-merge-patch+json" if builtin else "application/merge-patch+json"
        return self.call("PATCH", path_of(desired), patch, content_type=kind,
                         params={"fieldManager": manager}, user_agent=user_agent)  # fmt: skip

    def server_side_apply(self, obj: Mapping[str, Any], manager: str, *, force: bool = True) -> Obj:
        params = {"fieldManager": manager}
        if force:
            params["force"] = "true"
        return self.call("PATCH", path_of(obj), obj, content_type="application/apply-patch+yaml", params=params)

    def kubectl_scale(self, obj: Mapping[str, Any], replicas: int) -> Obj:
        """``kubectl scale --replicas=N``: a merge patch of the scale subresource without a fieldManager."""
        return self.call("PATCH", path_of(obj) + "/scale", {"spec": {"replicas": replicas}},
                         content_type="application/merge-patch+json", user_agent=KUBECTL_UA)  # fmt: skip

    def autoscale(self, obj: Mapping[str, Any], replicas: int, *, user_agent: str = KCM_UA) -> Obj:
        """An autoscaler's write: GET then PUT of the scale subresource (the HPA controller's scale client)."""
        scale = self.call("GET", path_of(obj) + "/scale")
        scale["spec"]["replicas"] = replicas
        return self.call("PUT", path_of(obj) + "/scale", scale, user_agent=user_agent)

    def kubectl_edit(self, obj: Mapping[str, Any], patch: Obj) -> Obj:
        """``kubectl edit``: the difference between the edited and the original object as a strategic merge patch."""
        return self.call("PATCH", path_of(obj), patch, content_type="application/strategic-merge-patch+json",
                         params={"fieldManager": "kubectl-edit"}, user_agent=KUBECTL_UA)  # fmt: skip

    def kubectl_patch(self, obj: Mapping[str, Any], patch: Any, *, kind: str = "strategic") -> Obj:
        """``kubectl patch --type=strategic|merge|json``."""
        content = {"strategic": "application/strategic-merge-patch+json", "merge": "application/merge-patch+json",
                   "json": "application/json-patch+json"}[kind]  # fmt: skip
        return self.call("PATCH", path_of(obj), patch, content_type=content,
                         params={"fieldManager": "kubectl-patch"}, user_agent=KUBECTL_UA)  # fmt: skip

    # -- Helm's command line ----------------------------------------------------------------------------------------

    def helm_upgrade(self, obj: Mapping[str, Any], patch: Obj) -> Obj:
        """``helm upgrade``: Helm's three-way strategic merge patch, its field manager the binary's name (``helm``)."""
        return self.call("PATCH", path_of(obj), patch, content_type="application/strategic-merge-patch+json",
                         params={"fieldManager": "helm"}, user_agent=HELM_UA)  # fmt: skip


def three_way(previous: Any, desired: Any, live: Any) -> Any:
    """kubectl apply's patch: every key of ``desired`` that differs from ``live``, and a null for every key the
    previous apply sent that ``desired`` no longer has. Lists are sent whole (the server merges them by key)."""
    if not (isinstance(desired, dict) and isinstance(live, dict)):
        return desired
    prev = previous if isinstance(previous, dict) else {}
    patch: Obj = {}
    for key, value in desired.items():
        if key not in live:
            patch[key] = value
        elif value != live[key]:
            patch[key] = three_way(prev.get(key), value, live[key])
    for key in prev:
        if key not in desired:
            patch[key] = None
    return patch
