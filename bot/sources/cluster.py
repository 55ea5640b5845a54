"""Read-only cluster context through the Kubernetes API (the official ``kubernetes`` client).

What the analysis may use to name a writer: HorizontalPodAutoscalers and KEDA
ScaledObjects in the drifted objects' namespaces, MutatingWebhookConfigurations,
the Namespaces themselves (their labels feed webhook namespaceSelectors), Argo
Rollouts, kube-green SleepInfos, Argo CD Applications, and the CustomResourceDefinitions
of the drifted custom resources (their schemas prove defaults and pruned fields).
Only ``list``/``get`` are ever called.

A missing permission (403), an API that is not installed (404, e.g. KEDA absent)
or an unreachable cluster never fails the analysis: each becomes a line in
``ClusterContext.missing`` so that the report can say which evidence it lacks.
The client is synchronous; calls run in worker threads.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from bot.sources.kubeimport import import_kubernetes

IN_CLUSTER = frozenset({"https://kubernetes.default.svc", "in-cluster"})
PER_NAMESPACE_MAX = 3
"""Up to this many namespaces, namespaced reads (least privilege); beyond, cluster-wide lists (fewer calls)."""
CLIENT_TTL_S = 600.0
"""A cluster's API client (its configuration, credentials and connection pool) is reused this long, then built again
from the kubeconfig (a file that changed is read again). Its token is refreshed by the client itself when it expires
(an exec plugin's, the service account's, an OIDC auth-provider's)."""


@dataclass
class ClusterContext:
    objects: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    calls: int = 0


class Clusters:
    """Which cluster an Application's destination is: a kubeconfig context, or the in-cluster service account.

    ``kubeconfig`` (``KUBECONFIG``) and ``contexts`` (``ARGOCD_CLUSTER_CONTEXTS``: destination server URL or
    name -> kube context) are plain values, so a resolver can be built without the bot's settings.
    """

    def __init__(self, kubeconfig: str | None = None, contexts: dict[str, str] | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.contexts = dict(contexts or {})
        self._clients: dict[str | None, tuple[float, Any]] = {}

    def _client(self, context: str | None) -> Any:
        """The API client of ``context``, shared by the analyses for :data:`CLIENT_TTL_S` (each built its own: a
        kubeconfig parsed, a configuration and a connection pool, new connections, per analysis)."""
        now = time.monotonic()
        cached = self._clients.get(context)
        if cached is not None and now - cached[0] < CLIENT_TTL_S:
            return cached[1]
        client = _api_client(self.kubeconfig, context)
        self._clients[context] = (now, client)
        return client

    def for_destination(self, destination: dict[str, Any]) -> tuple[ClusterSource | None, str]:
        """The source for an Application's destination, or ``None`` and the reason there is none."""
        server, name = destination.get("server"), destination.get("name")
        context: str | None = None
        mapped = False
        for key in (server, name):
            if key and key in self.contexts:
                context, mapped = self.contexts[key] or None, True
                break
        if not mapped and not ({server, name} & IN_CLUSTER):
            where = server or name or "?"
            return None, (f"destination cluster {where} has no kube context: map it in ARGOCD_CLUSTER_CONTEXTS "
                          "(cluster=context)")  # fmt: skip
        try:
            return ClusterSource(self._client(context), context or "current context"), ""
        except Exception as e:  # the kubernetes client raises many types for a bad or absent config
            return None, f"no cluster access ({type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''})"


class ClusterSource:
    """One cluster, reached through a kubeconfig context or the in-cluster service account."""

    def __init__(self, api_client: Any, label: str) -> None:
        self._api = api_client
        self.label = label

    async def context_for(
        self, namespaces: Iterable[str], app_namespace: str | None, crds: Iterable[str] = ()
    ) -> ClusterContext:
        """Every context object the analysis uses, for drifted objects in ``namespaces`` (and the CRDs named
        ``crds``, ``<plural>.<group>``: one ``get`` each, a missing one is no problem)."""
        get = partial(_get, self._api)
        out = ClusterContext()
        webhooks = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
        jobs: list[tuple[str, Callable[[], Any]]] = [("MutatingWebhookConfigurations", partial(get, webhooks))]
        wanted = sorted(set(namespaces))
        if len(wanted) <= PER_NAMESPACE_MAX:
            for ns in wanted:
                jobs += [
                    (f"Namespace {ns}", partial(get, f"/api/v1/namespaces/{ns}")),
                    (f"HorizontalPodAutoscalers in {ns}",
                     partial(get, f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers")),
                    (f"ScaledObjects in {ns}", partial(get, f"/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects")),
                    (f"Rollouts in {ns}", partial(get, f"/apis/argoproj.io/v1alpha1/namespaces/{ns}/rollouts")),
                    (f"SleepInfos in {ns}", partial(get, f"/apis/kube-green.com/v1alpha1/namespaces/{ns}/sleepinfos")),
                ]  # fmt: skip
        else:
            # many namespaces: a few cluster-wide lists instead of five calls per namespace
            jobs += [
                ("Namespaces", partial(get, "/api/v1/namespaces")),
                ("HorizontalPodAutoscalers", partial(get, "/apis/autoscaling/v2/horizontalpodautoscalers")),
                ("ScaledObjects", partial(get, "/apis/keda.sh/v1alpha1/scaledobjects")),
                ("Rollouts", partial(get, "/apis/argoproj.io/v1alpha1/rollouts")),
                ("SleepInfos", partial(get, "/apis/kube-green.com/v1alpha1/sleepinfos")),
            ]  # fmt: skip
        for name in sorted(set(crds)):
            jobs.append((f"CustomResourceDefinition {name}",
                         partial(get, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")))  # fmt: skip
        if app_namespace:
            apps = f"/apis/argoproj.io/v1alpha1/namespaces/{app_namespace}/applications"
            jobs.append((f"Applications in {app_namespace}", partial(get, apps)))
        results = await asyncio.gather(*(asyncio.to_thread(_call, what, fn) for what, fn in jobs))
        keep = set(wanted)
        out.calls = len(jobs)
        unreachable = False
        for what, (objs, problem) in zip((w for w, _ in jobs), results, strict=True):
            out.objects.extend(o for o in objs if _relevant(o, keep))
            if problem == "unreachable":
                unreachable = True
            elif problem:
                out.missing.append(f"{what}: {problem}")
        if unreachable:
            out.missing.insert(0, f"cluster {self.label} is unreachable: no HPA, webhook or namespace was checked")
        return out


def _relevant(obj: dict[str, Any], namespaces: set[str]) -> bool:
    """Cluster-wide lists are cut down to the namespaces of the drifted objects."""
    meta = obj.get("metadata") or {}
    if obj.get("kind") == "Namespace":
        return meta.get("name") in namespaces
    ns = meta.get("namespace")
    kinds = ("Application", "MutatingWebhookConfiguration", "CustomResourceDefinition")
    return ns is None or ns in namespaces or obj.get("kind") in kinds


def _get(api: Any, path: str) -> Any:
    """``GET path`` through the client's own request path (its configuration, credentials, TLS and ``ApiException``
    for a status that is not 2xx), raw: the typed API classes (``CoreV1Api``, ...) are not used because importing them
    builds a validated signature for each of their hundreds of methods (~30 MB in a replica, issue 29) for the few
    reads made here. The names in ``path`` are Kubernetes names (DNS labels and subdomains): nothing to escape."""
    from kubernetes.client.exceptions import ApiException

    request = api.param_serialize("GET", path, header_params={"Accept": "application/json"},
                                  auth_settings=["BearerToken"])  # fmt: skip
    response = api.call_api(*request)
    response.read()
    if not 200 <= response.status <= 299:
        raise ApiException.from_response(http_resp=response, body=None, data=None)
    return response


def _api_client(kubeconfig: str | None, context: str | None) -> Any:
    import_kubernetes()  # the package's first import in a replica is here: without requests and oauthlib
    from kubernetes import client, config

    kubeconfig = kubeconfig or os.environ.get("KUBECONFIG")
    default = Path.home() / ".kube" / "config"
    if kubeconfig or default.exists():
        path = (kubeconfig or str(default)).split(os.pathsep)[0]
        return config.new_client_from_config(config_file=path, context=context)  # type: ignore[no-untyped-call]
    if context:
        raise RuntimeError(f"kube context {context} asked for, but no kubeconfig is set")
    cfg = client.Configuration()
    config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
    return client.ApiClient(cfg)


def _call(what: str, fn: Callable[[], Any]) -> tuple[list[dict[str, Any]], str]:
    """Run one read; ``(objects, problem)`` where problem is ``""``, a reason, or ``"unreachable"``."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        resp = fn()
    except ApiException as e:
        if e.status == 404:
            return [], ""  # the API is not installed (no KEDA, no Rollouts) or the object is absent
        if e.status in (401, 403):
            return [], f"not allowed ({e.status} {e.reason}); grant get/list on it to see this evidence"
        return [], f"failed ({e.status} {e.reason})"
    except (HTTPError, OSError):
        return [], "unreachable"
    body = json.loads(resp.data) if hasattr(resp, "data") else resp
    if not isinstance(body, dict):
        return [], ""
    items = body.get("items") if "items" in body else [body]
    kind = str(body.get("kind") or "")
    objs = []
    for item in items or []:
        if isinstance(item, dict):
            if kind.endswith("List") and "kind" not in item:
                item = {"apiVersion": body.get("apiVersion"), "kind": kind[: -len("List")], **item}
            objs.append(item)
    return objs, ""
