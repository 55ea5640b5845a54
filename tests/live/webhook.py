"""A real HTTPS mutating admission webhook for the live casebook: a sidecar injector on 127.0.0.1.

The API server calls it (AdmissionReview v1) for Deployments of the namespaces it is registered for, by a
MutatingWebhookConfiguration with a ``url`` clientConfig and the ``caBundle`` of the CA generated here. For each
Deployment it answers a JSON patch that injects a ``proxy`` sidecar container, adds the label
``sidecar.example.com/injected: "true"``, and rewrites the first container's image tag to a digest: what istio's
or linkerd's injector and an image-digest policy do. It is idempotent (an UPDATE of an injected object changes
nothing) and declares ``sideEffects: None``, so that dry-run requests (Argo CD's server-side diff) call it too.
On ``/allow`` it changes nothing: the catch-all configuration of a policy engine (Gatekeeper's, Kyverno's) that
intercepts every resource whether or not a mutation applies.
"""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.harness.kube_server import write_certificates

SIDECAR = {"name": "proxy", "image": "registry.example.com/proxy:2.1", "args": ["--port", "15001"]}
INJECTED_LABEL = "sidecar.example.com/injected"
DIGEST = "sha256:" + "4f" * 32
CONFIGURATION = "sidecar-injector"
WEBHOOK = "inject.sidecar.example.com"
CATCH_ALL = "gatekeeper-mutating-webhook-configuration"


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def mutation(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON patch for one Deployment (empty when it is injected already)."""
    ops: list[dict[str, Any]] = []
    labels = (obj.get("metadata") or {}).get("labels")
    if labels is None:
        ops.append({"op": "add", "path": "/metadata/labels", "value": {INJECTED_LABEL: "true"}})
    elif INJECTED_LABEL not in labels:
        ops.append({"op": "add", "path": f"/metadata/labels/{_escape(INJECTED_LABEL)}", "value": "true"})
    containers = obj["spec"]["template"]["spec"]["containers"]
    image = str(containers[0].get("image", ""))
    name, _, tag = image.rpartition(":")
    if "@" not in image and name and "/" not in tag:
        ops.append({"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": f"{name}@{DIGEST}"})
    if not any(c.get("name") == SIDECAR["name"] for c in containers):
        ops.append({"op": "add", "path": "/spec/template/spec/containers/-", "value": SIDECAR})
    return ops


class _Handler(BaseHTTPRequestHandler):
    server: _WebhookServer

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        request = review["request"]
        response: dict[str, Any] = {"uid": request["uid"], "allowed": True}
        # /allow answers as a policy engine's catch-all webhook does when no mutation applies: allowed, no patch
        mutate = request["kind"]["kind"] == "Deployment" and not self.path.startswith("/allow")
        ops = mutation(request["object"]) if mutate else []
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
        # a cluster-scoped object's review has no namespace (omitempty): "" as the API server's own types say
        self.server.calls.append((request["operation"], bool(request.get("dryRun")), request.get("namespace", "")))
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: Any) -> None:  # the API server's retries would flood the output
        pass


class _WebhookServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.calls: list[tuple[str, bool, str]] = []


class SidecarInjector:
    """The running webhook: ``url``, ``ca_bundle`` (base64 PEM) and ``configuration(namespace)``."""

    def __init__(self, folder: Path) -> None:
        write_certificates(folder)
        self.ca_bundle = base64.b64encode((folder / "ca.crt").read_bytes()).decode()
        self._server = _WebhookServer()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(folder / "server.crt", folder / "server.key")
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="sidecar-injector", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._server.server_address[1]}/mutate"

    @property
    def calls(self) -> list[tuple[str, bool, str]]:
        """(operation, dry run, namespace) of every review answered."""
        return self._server.calls

    def configuration(self, namespace: str) -> dict[str, Any]:
        """The MutatingWebhookConfiguration that sends this namespace's Deployments here (CREATE and UPDATE)."""
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": f"{CONFIGURATION}-{namespace}"},
            "webhooks": [{
                "name": WEBHOOK,
                "clientConfig": {"url": self.url, "caBundle": self.ca_bundle},
                "rules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                           "resources": ["deployments"], "scope": "Namespaced"}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "reinvocationPolicy": "Never",
                "timeoutSeconds": 10,
            }],
        }  # fmt: skip

    def catch_all_configuration(self, namespace: str) -> dict[str, Any]:
        """A webhook configuration as Gatekeeper's stock install registers it (every group, version and resource,
        CREATE and UPDATE), answered by ``/allow``: it intercepts everything and changes nothing. Limited to
        ``namespace`` (Gatekeeper's exemption label, plus the name) so that the casebook's other namespaces stay
        untouched."""
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": f"{CATCH_ALL}-{namespace}"},
            "webhooks": [{
                "name": "mutation.gatekeeper.sh",
                "clientConfig": {"url": self.url.replace("/mutate", "/allow"), "caBundle": self.ca_bundle},
                "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                           "resources": ["*"], "scope": "*"}],
                "namespaceSelector": {"matchExpressions": [
                    {"key": "admission.gatekeeper.sh/ignore", "operator": "DoesNotExist"},
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [namespace]}]},
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "reinvocationPolicy": "Never",
                "timeoutSeconds": 10,
            }],
        }  # fmt: skip

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture(scope="session")
def sidecar_injector() -> Iterator[SidecarInjector]:
    with tempfile.TemporaryDirectory(prefix="argo-why-webhook-") as folder:
        injector = SidecarInjector(Path(folder))
        try:
            yield injector
        finally:
            injector.stop()
