"""A fake Kubernetes API server: a real HTTP server on 127.0.0.1 that serves stored objects read-only.

It exists so that argo-why's cluster reads go through the official ``kubernetes`` client (kubeconfig loading,
authentication, URL building, JSON decoding) end to end, against answers shaped like kube-apiserver 1.34's.

What it guarantees:

* REST reads for any group/version/resource: ``/api/v1/{resource}[/{name}]``,
  ``/api/v1/namespaces/{ns}/{resource}[/{name}]``, ``/apis/{group}/{version}/...`` likewise. Lists are
  ``{"apiVersion","kind":"<Kind>List","metadata":{"resourceVersion"},"items"}``, items sorted by namespace and name
  and kept exactly as added (apiVersion, kind and managedFields included). ``labelSelector`` (``=``, ``==``,
  ``!=``, exists, ``!k``, ``in``, ``notin``), ``fieldSelector`` (``metadata.name``, ``metadata.namespace``, and
  ``involvedObject.*``/``reason``/``type`` for events) and ``limit``/``continue`` work.
* Served resource types: a built-in set (core, apps, autoscaling v1+v2, batch, networking, policy, rbac,
  admissionregistration, apiextensions, storage, scheduling, discovery, events) plus every type of an added object
  plus the types that added CustomResourceDefinitions define. Anything else (a CRD that is not installed, e.g.
  keda.sh ScaledObjects) answers 404 ``the server could not find the requested resource``, as kube-apiserver does.
* Discovery (``/api``, ``/apis``, ``/apis/{group}``, ``/api/v1``, ``/apis/{group}/{version}``) and ``/version``
  describe exactly what is served, so a discovery-based (dynamic) client sees the same cluster.
* Errors are ``Status`` objects with kube-apiserver's reasons and messages: 401 Unauthorized (missing or wrong
  bearer token), 404 NotFound (``<resource>.<group> "<name>" not found``), 400 BadRequest (bad selectors, watch),
  405 MethodNotAllowed for every write: the bot must never write, and ``.calls`` records every request so tests can
  assert that.

What only tests need (403 Forbidden for chosen resources, failure injection, ``reset``) is added by the subclass in
``tests/fakes/kube.py``.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from bot.demo.fake_argocd.objects import (
    Obj,
    labels_match,
    load_manifests,
    parse_label_selector,
    plural,
    split_api_version,
)
from bot.demo.serving import LocalServer, Request, Response

KUBERNETES_VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.1", "platform": "linux/amd64"}


@dataclass(frozen=True)
class ResourceType:
    group: str
    kind: str
    plural: str
    namespaced: bool
    versions: tuple[str, ...]  # served versions, preferred first

    @property
    def qualified(self) -> str:
        """ "deployments.apps", "configmaps": how kube-apiserver names a resource in messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _types(group: str, versions: tuple[str, ...], namespaced: str, cluster: str = "") -> list[ResourceType]:
    kinds = [(k, True) for k in namespaced.split()] + [(k, False) for k in cluster.split()]
    return [ResourceType(group, kind, plural(kind), scoped, versions) for kind, scoped in kinds]


BUILTIN_TYPES: tuple[ResourceType, ...] = (
    *_types(
        "",
        ("v1",),
        "ConfigMap Secret Service Endpoints Pod ServiceAccount PersistentVolumeClaim Event",
        "Namespace Node PersistentVolume",
    ),
    *_types("apps", ("v1",), "Deployment StatefulSet DaemonSet ReplicaSet ControllerRevision"),
    *_types("autoscaling", ("v2", "v1"), "HorizontalPodAutoscaler"),
    *_types("batch", ("v1",), "Job CronJob"),
    *_types("networking.k8s.io", ("v1",), "Ingress NetworkPolicy", "IngressClass"),
    *_types("policy", ("v1",), "PodDisruptionBudget"),
    *_types("rbac.authorization.k8s.io", ("v1",), "Role RoleBinding", "ClusterRole ClusterRoleBinding"),
    *_types("admissionregistration.k8s.io", ("v1",), "", "MutatingWebhookConfiguration ValidatingWebhookConfiguration"),
    *_types("apiextensions.k8s.io", ("v1",), "", "CustomResourceDefinition"),
    *_types("storage.k8s.io", ("v1",), "", "StorageClass"),
    *_types("scheduling.k8s.io", ("v1",), "", "PriorityClass"),
    *_types("discovery.k8s.io", ("v1",), "EndpointSlice"),
    *_types("events.k8s.io", ("v1",), "Event"),
)

# Field selectors kube-apiserver accepts beyond metadata.name/metadata.namespace (per group, resource).
_EXTRA_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "events"): frozenset(
        [
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "type",
            "source",
            "reportingComponent",
        ]
    ),
    ("", "pods"): frozenset({"spec.nodeName", "status.phase", "spec.serviceAccountName"}),
    ("", "secrets"): frozenset({"type"}),
}


def status(code: int, reason: str, message: str, details: Obj | None = None) -> Obj:
    """A ``Status`` failure object as kube-apiserver writes it."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    body["reason"] = reason
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


class KubeError(Exception):
    def __init__(self, body: Obj) -> None:
        super().__init__(body["message"])
        self.body = body


def _not_served() -> KubeError:
    return KubeError(status(404, "NotFound", "the server could not find the requested resource", {}))


def _bad_request(message: str) -> KubeError:
    return KubeError(status(400, "BadRequest", message))


def _details(rtype: ResourceType, name: str | None = None) -> Obj:
    details: Obj = {}
    if name:
        details["name"] = name
    if rtype.group:
        details["group"] = rtype.group
    details["kind"] = rtype.plural
    return details


def _dig(obj: Obj, dotted: str) -> str:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "" if value is None else str(value)


def parse_field_selector(selector: str, allowed: frozenset[str]) -> list[tuple[str, bool, str]]:
    """``a=b,c!=d`` → [(field, equal?, value)]; unsupported fields raise the API server's BadRequest."""
    terms: list[tuple[str, bool, str]] = []
    for raw in filter(None, (part.strip() for part in selector.split(","))):
        m = re.fullmatch(r"([^=!]+?)\s*(==|!=|=)\s*(.*)", raw)
        if m is None:
            raise _bad_request(f"invalid selector: '{selector}'; can't understand '{raw}'")
        if m[1] not in allowed:
            raise _bad_request(f"field label not supported: {m[1]}")
        terms.append((m[1], m[2] != "!=", m[3]))
    return terms


class FakeKubernetes(LocalServer):
    """A fake kube-apiserver. ``with FakeKubernetes() as kube: kube.add(*objs)``; point the client at it with
    ``kube.write_kubeconfig(path)``."""

    def __init__(self) -> None:
        self._objects: dict[tuple[str, str, str, str], Obj] = {}  # (group, plural, namespace, name)
        self._types: dict[tuple[str, str], ResourceType] = {}
        self._resource_version = 812000
        self._reset_types()
        super().__init__("fake-kubernetes")

    # -- configuration ----------------------------------------------------------------------------------------

    def _reset_types(self) -> None:
        self._types = {(t.group, t.plural): t for t in BUILTIN_TYPES}

    def add(self, *objs: Obj) -> None:
        """Store objects (``kind: List`` flattened). Their types become served; a CustomResourceDefinition also
        installs the type it defines. An object with the same group, kind, namespace and name is replaced."""
        with self._lock:
            for obj in objs:
                if str(obj.get("kind", "")).endswith("List") and isinstance(obj.get("items"), list):
                    self.add(*obj["items"])
                    continue
                rtype = self._register(obj)
                meta = obj.get("metadata") or {}
                namespace = str(meta.get("namespace") or "") if rtype.namespaced else ""
                self._resource_version += 1
                self._objects[(rtype.group, rtype.plural, namespace, str(meta.get("name", "")))] = copy.deepcopy(obj)
                if obj.get("kind") == "CustomResourceDefinition":
                    self._install_crd(obj)

    def write_kubeconfig(self, path: Path, context: str = "fake") -> Path:
        """A kubeconfig whose ``context`` reaches this server over plain HTTP with the bearer token."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": {"server": self.url}}],
            "users": [{"name": f"{context}-argo-why", "user": {"token": self.token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": f"{context}-argo-why"}}],
            "current-context": context,
            "preferences": {},
        }
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        return path

    def _register(self, obj: Obj) -> ResourceType:
        group, version = split_api_version(str(obj.get("apiVersion", "")))
        kind = str(obj.get("kind", ""))
        known = next((t for t in self._types.values() if t.group == group and t.kind == kind), None)
        if known is None:
            namespaced = bool((obj.get("metadata") or {}).get("namespace"))
            known = ResourceType(group, kind, plural(kind), namespaced, (version,))
        elif version not in known.versions:
            known = replace(known, versions=(*known.versions, version))
        self._types[(known.group, known.plural)] = known
        return known

    def _install_crd(self, crd: Obj) -> None:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        versions = tuple(v["name"] for v in spec.get("versions") or [] if v.get("served", True) and v.get("name"))
        if spec.get("group") and names.get("plural") and names.get("kind") and versions:
            rtype = ResourceType(
                spec["group"], names["kind"], names["plural"], spec.get("scope", "Namespaced") == "Namespaced", versions
            )
            self._types.setdefault((rtype.group, rtype.plural), rtype)

    # -- HTTP --------------------------------------------------------------------------------------------------

    def _json(self, body: Any, code: int = 200) -> Response:
        return Response(code, json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())

    def handle(self, request: Request) -> Response:
        token = self.bearer(request)
        if token is None or token != self.token:
            return self._json(status(401, "Unauthorized", "Unauthorized"), 401)
        if request.method != "GET":
            message = "the server does not allow this method on the requested resource"
            return self._json(status(405, "MethodNotAllowed", message, {}), 405)
        try:
            with self._lock:
                return self._json(self._get(request))
        except KubeError as err:
            return self._json(err.body, int(err.body["code"]))

    def _get(self, request: Request) -> Obj:
        parts = [p for p in request.path.split("/") if p]
        if parts == ["version"]:
            return dict(KUBERNETES_VERSION)
        if parts[:1] == ["api"]:
            if len(parts) == 1:
                return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"]:
            if len(parts) == 1:
                return {"kind": "APIGroupList", "apiVersion": "v1", "groups": self._groups()}
            if len(parts) == 2:
                found = [g for g in self._groups() if g["name"] == parts[1]]
                if not found:
                    raise _not_served()
                return {"kind": "APIGroup", "apiVersion": "v1", **found[0]}
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise _not_served()
        if not rest:
            return self._resource_list(group, version)
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        resource, name = rest[0], (rest[1] if len(rest) > 1 else None)
        verb = "get" if name else "list"
        self._check_forbidden(group, resource, verb, namespace, name)
        rtype = self._types.get((group, resource))
        if rtype is None or version not in rtype.versions or len(rest) > 2:
            raise _not_served()  # not installed, or a subresource (scale, status, log) this fake does not serve
        if (namespace is not None and not rtype.namespaced) or (name and namespace is None and rtype.namespaced):
            raise _not_served()
        if request.arg("watch") in ("true", "1"):
            raise _bad_request("watch is not supported by the fake API server")
        if name is not None:
            obj = self._objects.get((group, resource, namespace or "", name))
            if obj is None:
                raise KubeError(status(404, "NotFound", f'{rtype.qualified} "{name}" not found', _details(rtype, name)))
            return obj
        return self._list(request, rtype, version, namespace)

    def _check_forbidden(self, group: str, resource: str, verb: str, namespace: str | None, name: str | None) -> None:
        """Raise the 403 of a read the account may not make (RBAC runs before routing in kube-apiserver, so this comes
        first); here every read is allowed."""

    def _list(self, request: Request, rtype: ResourceType, version: str, namespace: str | None) -> Obj:
        try:
            labels = parse_label_selector(request.arg("labelSelector"))
        except ValueError as err:
            raise _bad_request(str(err)) from None
        allowed = frozenset({"metadata.name", "metadata.namespace"}) | _EXTRA_FIELDS.get(
            (rtype.group, rtype.plural), frozenset()
        )
        fields = parse_field_selector(request.arg("fieldSelector"), allowed)
        items = [
            obj
            for (group, resource, ns, _), obj in sorted(self._objects.items())
            if (group, resource) == (rtype.group, rtype.plural)
            and (namespace is None or ns == namespace)
            and labels_match(labels, (obj.get("metadata") or {}).get("labels"))
            and all((_dig(obj, f) == value) == equal for f, equal, value in fields)
        ]
        metadata: Obj = {"resourceVersion": str(self._resource_version)}
        offset = 0
        if token := request.arg("continue"):
            try:
                offset = int(json.loads(base64.urlsafe_b64decode(token.encode()))["offset"])
            except (ValueError, KeyError, TypeError):
                raise _bad_request("continue key is not valid: invalid continue token") from None
        limit = int(request.arg("limit") or 0)
        page = items[offset : offset + limit] if limit > 0 else items[offset:]
        rest = len(items) - offset - len(page)
        if rest > 0:
            metadata["continue"] = base64.urlsafe_b64encode(
                json.dumps({"offset": offset + len(page)}).encode()
            ).decode()
            metadata["remainingItemCount"] = rest
        api_version = f"{rtype.group}/{version}" if rtype.group else version
        return {"kind": f"{rtype.kind}List", "apiVersion": api_version, "metadata": metadata, "items": page}

    # -- discovery ---------------------------------------------------------------------------------------------

    def _groups(self) -> list[Obj]:
        versions: dict[str, list[str]] = {}
        for rtype in self._types.values():
            if rtype.group:
                known = versions.setdefault(rtype.group, [])
                known.extend(v for v in rtype.versions if v not in known)
        groups = []
        for name, served in sorted(versions.items()):
            entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in served]
            groups.append({"name": name, "versions": entries, "preferredVersion": entries[0]})
        return groups

    def _resource_list(self, group: str, version: str) -> Obj:
        served = [t for t in self._types.values() if t.group == group and version in t.versions]
        if not served:
            raise _not_served()
        resources = [
            {
                "name": t.plural,
                "singularName": t.kind.lower(),
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            }
            for t in sorted(served, key=lambda t: t.plural)
        ]
        group_version = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}


def context_from_case(case_dir: Path) -> list[Obj]:
    """The cluster context of a casebook scenario (its context.yaml), [] when it has none."""
    path = case_dir / "context.yaml"
    return load_manifests(path) if path.exists() else []
