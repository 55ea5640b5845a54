"""The kinds a scenario's objects need served by the test API server, so that Argo CD's structured-merge diff knows
their schema as the application controller knows it.

Argo CD's controller always diffs with the GVK parser of the destination cluster (controller/state.go
``CompareAppState``: ``WithGVKParser(m.getGVKParser(destCluster))``, built by its cluster cache from the server's
OpenAPI document). gitops-engine's ``StructuredMergeDiff`` reads from that schema which lists merge item by item (a
Deployment's ``containers`` by ``name``, a webhook configuration's ``webhooks`` by ``name``); without a parser it
falls back to ``DeducedParseableType``, where every list is atomic, which no controller ever does. So the
structured-merge judge always gives ``argodiff`` the kubeconfig of a real API server (tests/harness/kube_server.py), and
custom resources need their CustomResourceDefinition installed there first:

* the scenario's own CRD when its ``context.yaml`` carries it (the schema users run);
* otherwise a CRD with an open schema (``x-kubernetes-preserve-unknown-fields``): what the API server and
  structured-merge-diff make of a CRD that declares no list types, every list atomic. The scenario then says nothing
  about the real CRD's list markers, and neither does the verdict.

:class:`ServedKinds` installs each CRD once per server and waits until the server's OpenAPI document (what Argo CD's
parser is built from) describes the kind. Two scenarios that need different CRDs for the same kind are a conflict it
reports (the verdict of the second would depend on the order the tests ran in).

Fixture (registered in tests/conftest.py): ``served_kinds`` (session) -- a :class:`ServedKinds` on ``kube_server``.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import httpx
import pytest

from tests.harness.kube_server import KubeServer

Obj = Mapping[str, Any]
_CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
_OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


class ServedKindsError(AssertionError):
    """A kind could not be served as the scenario needs it."""


def _gvk(obj: Obj) -> tuple[str, str, str]:
    group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
    return group, version, str(obj.get("kind"))


def open_crd(obj: Obj) -> dict[str, Any]:
    """A CRD for ``obj``'s kind that declares nothing but an object: every field kept, every list atomic."""
    group, version, kind = _gvk(obj)
    plural = f"{kind.lower()}s"
    meta: dict[str, Any] = {"name": f"{plural}.{group}"}
    if group.endswith((".k8s.io", ".kubernetes.io")):  # the API server protects these groups (KEP 1111)
        meta["annotations"] = {"api-approved.kubernetes.io": "unapproved, argo-why tests only"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": meta,
        "spec": {
            "group": group,
            "scope": "Namespaced" if (obj.get("metadata") or {}).get("namespace") else "Cluster",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "versions": [{"name": version, "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": _OPEN}}],
        },
    }  # fmt: skip


class ServedKinds:
    """Makes the test API server serve the kinds of a scenario's objects (one per server, kept for the session)."""

    def __init__(self, server: KubeServer) -> None:
        self.server = server
        self.kubeconfig = server.kubeconfig
        self._installed: dict[str, str] = {}  # CRD name -> the JSON of the spec installed
        ctx = ssl.create_default_context(cafile=str(server.ca_file))
        self._http = httpx.Client(
            base_url=server.url, verify=ctx, headers={"Authorization": f"Bearer {server.token}"}, timeout=60
        )

    def close(self) -> None:
        self._http.close()

    def _published(self) -> set[tuple[str, str, str]]:
        """The group/version/kinds the server's OpenAPI v2 document describes (what Argo CD's GVK parser reads)."""
        r = self._http.get("/openapi/v2", headers={"Accept": "application/json"})
        r.raise_for_status()
        out: set[tuple[str, str, str]] = set()
        for definition in (r.json().get("definitions") or {}).values():
            for gvk in definition.get("x-kubernetes-group-version-kind") or []:
                out.add((gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")))
        return out

    def serve(self, objects: Iterable[Obj], context: Iterable[Obj] = ()) -> None:
        """Every kind of ``objects`` is described by the server's OpenAPI document when this returns."""
        wanted = {_gvk(o): o for o in objects}
        published = self._published()
        missing = {gvk: o for gvk, o in wanted.items() if gvk not in published}
        if not missing:
            return
        crds = {(c["spec"]["group"], c["spec"]["names"]["kind"]): c for c in context
                if (str(c.get("apiVersion")).split("/")[0], c.get("kind")) == _CRD}  # fmt: skip
        for (group, _version, kind), obj in missing.items():
            given = crds.get((group, kind))
            crd = open_crd(obj)
            if given:  # the scenario's own CRD, without what the server that served it wrote
                meta = given["metadata"]
                crd["metadata"] = {"name": meta["name"], "annotations": dict(meta.get("annotations") or {})}
                crd["spec"] = given["spec"]
            self.install(crd)
        deadline = time.monotonic() + 60
        while missing.keys() - published:
            if time.monotonic() > deadline:
                raise ServedKindsError(f"the API server never published {sorted(missing.keys() - published)}")
            time.sleep(0.2)
            published = self._published()

    def install(self, crd: Mapping[str, Any]) -> None:
        name = crd["metadata"]["name"]
        spec = json.dumps(crd["spec"], sort_keys=True)
        if name in self._installed:
            if self._installed[name] != spec:
                raise ServedKindsError(f"two scenarios need different CRDs {name}: give them one")
            return
        r = self._http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=dict(crd))
        if r.status_code != 201:
            raise ServedKindsError(f"installing the CRD {name}: {r.status_code} {r.text[:2000]}")
        self._installed[name] = spec


@pytest.fixture(scope="session")
def served_kinds(kube_server: KubeServer) -> Iterator[ServedKinds]:
    served = ServedKinds(kube_server)
    try:
        yield served
    finally:
        served.close()
