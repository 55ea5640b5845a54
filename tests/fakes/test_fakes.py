"""The test doubles answer as the real servers do: FakeArgoCD through plain httpx, FakeKubernetes through the
official ``kubernetes`` client. If these fail, tests built on the fakes prove nothing."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import httpx
import kubernetes
import pytest
from kubernetes.client import ApiClient, V1ObjectMeta
from kubernetes.client.exceptions import ApiException

from tests.builders import deployment, entry, explain_case, live_of
from tests.fakes.argocd import (
    REVISION,
    FakeArgoCD,
    app_from_case,
    build_application,
    go_json,
    resource_diff,
)
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.paths import CASEBOOK

Obj = dict[str, Any]

CASES = sorted(p for p in (CASEBOOK / "cases").iterdir())

GIT_PASSWORD = "s3cret-from-git"
LIVE_PASSWORD = "s3cret-in-cluster"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# ---------------------------------------------------------------------------------------------------------------
# A small app: Deployment scaled by an HPA, unchanged ConfigMap, Secret rotated in the cluster, cluster-scoped
# ClusterRole, and a Service that is missing live.
# ---------------------------------------------------------------------------------------------------------------


def _live(desired: Obj, uid: str, **extra: Any) -> Obj:
    live = copy.deepcopy(desired)
    live["metadata"].update(uid=uid, resourceVersion="5000", creationTimestamp="2026-10-01T00:00:00Z")
    live["metadata"]["managedFields"] = [
        {
            "apiVersion": desired["apiVersion"],
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {}}},
            "manager": "argocd-controller",
            "operation": "Apply",
            "time": "2026-10-01T00:00:00Z",
        }
    ]
    live.update(extra)
    return live


def small_app() -> tuple[Obj, list[Obj]]:
    web = deployment()
    web_live = live_of(web, entry("kube-controller-manager", {"f:spec": {"f:replicas": {}}}, subresource="scale"))
    web_live["spec"]["replicas"] = 7
    cfg = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "shop"},
        "data": {"a": "1"},
    }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds", "namespace": "shop"},
        "type": "Opaque",
        "data": {"password": b64(GIT_PASSWORD), "user": b64("admin")},
    }
    secret_live = _live(secret, "7d1f0b6e-0000-4000-8000-000000000003")
    secret_live["data"]["password"] = b64(LIVE_PASSWORD)
    secret_live["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(secret)}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "shop-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    }
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"ports": [{"port": 80}]},
    }
    diffs = [
        resource_diff(web, web_live),
        resource_diff(cfg, _live(cfg, "7d1f0b6e-0000-4000-8000-000000000002")),
        resource_diff(secret, secret_live),
        resource_diff(role, _live(role, "7d1f0b6e-0000-4000-8000-000000000004")),
        resource_diff(svc, None),
    ]
    app = build_application("shop", "shop", diffs, self_heal=True)
    app["metadata"]["labels"] = {"team": "shop", "tier": "web"}
    return app, diffs


@pytest.fixture(scope="module")
def argo_server() -> Iterator[FakeArgoCD]:
    with FakeArgoCD() as server:
        yield server


@pytest.fixture
def argo(argo_server: FakeArgoCD) -> FakeArgoCD:
    argo_server.reset()
    app, diffs = small_app()
    argo_server.add_app(app, diffs)
    return argo_server


@pytest.fixture
def client(argo: FakeArgoCD) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {argo.token}"}
    with httpx.Client(base_url=argo.url, headers=headers, timeout=5) as c:
        yield c


def managed(client: httpx.Client, app: str = "shop", **params: str) -> list[Obj]:
    response = client.get(f"/api/v1/applications/{app}/managed-resources", params=params)
    assert response.status_code == 200, response.text
    items: list[Obj] = response.json()["items"]
    return items


def error(response: httpx.Response) -> tuple[int, Obj]:
    assert response.headers["content-type"] == "application/json"
    body: Obj = response.json()
    assert set(body) == {"error", "code", "message"} and body["error"] == body["message"]
    return response.status_code, body


# ---------------------------------------------------------------------------------------------------------------
# FakeArgoCD
# ---------------------------------------------------------------------------------------------------------------


def test_argocd_requires_a_bearer_token(argo: FakeArgoCD) -> None:
    path = f"{argo.url}/api/v1/applications/shop"
    assert error(httpx.get(path)) == (
        401,
        {"error": "no session information", "code": 16, "message": "no session information"},
    )
    # What argocd-server v3.2.12 answers (tests/e2e/test_argocd_contract.py compares them with the real one).
    not_a_jwt = httpx.get(path, headers={"Authorization": "Bearer not-the-token"})
    assert error(not_a_jwt) == (
        401,
        {"error": "no session information", "code": 16, "message": "no session information"},
    )
    header, claims, _ = argo.token.split(".")
    wrong = httpx.get(path, headers={"Authorization": f"Bearer {header}.{claims}.c2lnbmF0dXJl"})
    message = "invalid session: token signature is invalid: signature is invalid"
    assert error(wrong) == (401, {"error": message, "code": 16, "message": message})
    # the HTTP mux rejects unknown routes before authentication, in plain text
    unknown = httpx.get(f"{argo.url}/api/v1/clusters-nope")
    assert (unknown.status_code, unknown.text) == (404, "Not Found\n")
    assert httpx.get(f"{argo.url}/api/version").json() == {"Version": argo.VERSION}
    with_session = httpx.get(f"{argo.url}/api/version", headers={"Authorization": f"Bearer {argo.token}"}).json()
    assert with_session["Version"] == argo.VERSION and "KubectlVersion" in with_session


def test_argocd_hides_missing_apps_behind_403_unless_the_project_is_given(
    argo: FakeArgoCD, client: httpx.Client
) -> None:
    assert client.get("/api/v1/applications/shop").json()["metadata"]["name"] == "shop"
    assert error(client.get("/api/v1/applications/ghost")) == (
        403,
        {"error": "permission denied", "code": 7, "message": "permission denied"},
    )
    not_found = 'applications.argoproj.io "ghost" not found'
    for params in ({"project": "default"}, {"project": "default", "appNamespace": "argocd"}):
        assert error(client.get("/api/v1/applications/ghost", params=params)) == (
            404,
            {"error": not_found, "code": 5, "message": not_found},
        )
    assert error(client.get("/api/v1/applications/shop", params={"project": "payments"}))[0] == 404
    assert error(client.get("/api/v1/applications/shop/managed-resources", params={"appNamespace": "team-a"}))[0] == 403

    argo.deny("shop")
    for params in ({}, {"project": "default"}):
        assert error(client.get("/api/v1/applications/shop", params=params))[0] == 403
    assert error(client.get("/api/v1/applications/shop/resource-tree"))[0] == 403
    assert client.get("/api/v1/applications").json()["items"] is None  # Argo CD: `null`, not `[]`


def test_argocd_lists_apps_by_selector_and_project(argo: FakeArgoCD, client: httpx.Client) -> None:
    other, _ = small_app()
    other["metadata"].update(name="billing", labels={"team": "billing"})
    other["spec"]["project"] = "payments"
    argo.add_app(other, [])

    def names(**params: Any) -> list[str]:
        body = client.get("/api/v1/applications", params=params).json()
        assert body["metadata"]["resourceVersion"]
        return [item["metadata"]["name"] for item in body["items"] or []]  # `null` when nothing matches

    assert names() == ["billing", "shop"]
    assert names(selector="team=shop") == ["shop"]
    assert names(selector="team=shop,tier!=web") == []
    assert names(selector="team in (shop,billing),!tier") == ["billing"]
    assert names(projects="payments") == ["billing"]
    assert names(projects=["payments", "default"]) == ["billing", "shop"]
    assert argo.calls[-1].query == {"projects": "payments"} and "projects=default" in argo.calls[-1].raw_query


def test_managed_resources_are_resource_diffs_with_json_string_states(client: httpx.Client) -> None:
    items = {item["name"] if item["kind"] != "Service" else "svc": item for item in managed(client)}
    web, cfg, role, svc = items["web"], items["cfg"], items["shop-reader"], items["svc"]

    for item in items.values():
        for state in ("targetState", "liveState", "normalizedLiveState", "predictedLiveState"):
            assert isinstance(item[state], str)
        assert "hook" not in item
    assert "group" not in cfg and web["group"] == "apps" and role["group"] == "rbac.authorization.k8s.io"
    assert "namespace" not in role and cfg["namespace"] == "shop"
    assert "modified" not in cfg and "modified" not in role and web["modified"] is True
    assert web["resourceVersion"] == "81234"
    # Go's json.Marshal of an unstructured object: compact and key-sorted.
    assert cfg["targetState"] == go_json(json.loads(cfg["targetState"]))

    live, normalized = json.loads(web["liveState"]), json.loads(web["normalizedLiveState"])
    predicted = json.loads(web["predictedLiveState"])
    assert [e["manager"] for e in live["metadata"]["managedFields"]] == ["argocd-controller", "kube-controller-manager"]
    # As gitops-engine's Normalize: managedFields kept on both sides, creationTimestamp removed from both.
    assert (
        normalized["metadata"]["managedFields"]
        == predicted["metadata"]["managedFields"]
        == live["metadata"]["managedFields"]
    )
    assert "creationTimestamp" not in normalized["metadata"] and "creationTimestamp" not in predicted["metadata"]
    assert "status" in live and "status" not in normalized  # Argo CD 3.x: ignoreResourceStatusField: all
    assert (normalized["spec"]["replicas"], predicted["spec"]["replicas"]) == (7, 2)
    # Merge-keyed lists keep the defaults live has (ports matched by containerPort+protocol).
    port = predicted["spec"]["template"]["spec"]["containers"][0]["ports"][0]
    assert port == {"name": "http", "containerPort": 8080, "protocol": "TCP"}

    assert svc["liveState"] == "null" and svc["normalizedLiveState"] == "null" and svc["modified"] is True
    assert json.loads(svc["predictedLiveState"])["kind"] == "Service" and "resourceVersion" not in svc

    assert [i["name"] for i in managed(client, kind="Deployment", group="apps")] == ["web"]
    assert [i["name"] for i in managed(client, namespace="shop", name="cfg")] == ["cfg"]
    # Empty repeated fields are omitted by Argo CD's marshaller: no "items" key at all.
    assert client.get("/api/v1/applications/shop/managed-resources", params={"kind": "Nope"}).json() == {}


def test_application_status_describes_the_last_sync(client: httpx.Client) -> None:
    app = client.get("/api/v1/applications/shop", params={"refresh": "normal"}).json()
    status = app["status"]
    assert app["apiVersion"] == "argoproj.io/v1alpha1" and app["spec"]["destination"]["namespace"] == "shop"
    assert status["sync"]["status"] == "OutOfSync" and status["sync"]["revision"] == REVISION
    assert app["spec"]["syncPolicy"]["automated"]["selfHeal"] is True
    operation = status["operationState"]
    assert operation["phase"] == "Succeeded" and operation["operation"]["initiatedBy"] == {"automated": True}
    assert operation["operation"]["sync"]["autoHealAttemptsCount"] == 3
    assert status["reconciledAt"] > operation["finishedAt"] > operation["startedAt"]
    assert status["history"][-1]["revision"] == REVISION
    by_kind = {r["kind"]: r for r in status["resources"]}
    assert by_kind["Deployment"]["status"] == "OutOfSync" and by_kind["ConfigMap"]["status"] == "Synced"
    assert "group" not in by_kind["ConfigMap"] and by_kind["Deployment"]["group"] == "apps"
    assert by_kind["Service"]["health"] == {"status": "Missing"} and "namespace" not in by_kind["ClusterRole"]


def test_secrets_are_masked_everywhere(argo: FakeArgoCD, client: httpx.Client) -> None:
    (secret,) = managed(client, kind="Secret")
    target, live = json.loads(secret["targetState"]), json.loads(secret["liveState"])
    predicted, normalized = json.loads(secret["predictedLiveState"]), json.loads(secret["normalizedLiveState"])
    # HideSecretData: per key, the first distinct value gets 8 "+", the next 12; equal values stay equal.
    assert target["data"] == {"password": "+" * 8, "user": "+" * 8}
    assert live["data"] == {"password": "+" * 12, "user": "+" * 8}
    assert predicted["data"] == target["data"] and normalized["data"] == live["data"]
    applied = json.loads(live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert applied["data"]["password"] == "+" * 8  # the Git value again, so the target's mask
    assert secret["modified"] is True

    params = {"resourceName": "creds", "namespace": "shop", "kind": "Secret", "version": "v1"}
    manifest = json.loads(client.get("/api/v1/applications/shop/resource", params=params).json()["manifest"])
    assert manifest["data"] == {"password": "+" * 8, "user": "+" * 8}
    assert "managedFields" in manifest["metadata"]
    rendered = [json.loads(m) for m in client.get("/api/v1/applications/shop/manifests").json()["manifests"]]
    assert next(m for m in rendered if m["kind"] == "Secret")["data"] == {"password": "+" * 8, "user": "+" * 8}

    bodies = [
        client.get(path).text
        for path in (
            "/api/v1/applications/shop/managed-resources",
            "/api/v1/applications/shop/manifests?noCache=true",
            "/api/v1/applications/shop/resource?resourceName=creds&namespace=shop&kind=Secret&version=v1",
        )
    ]
    for value in (GIT_PASSWORD, LIVE_PASSWORD, b64(GIT_PASSWORD), b64(LIVE_PASSWORD), b64("admin")):
        assert all(value not in body for body in bodies)


def test_string_data_is_folded_into_data_before_masking(argo: FakeArgoCD, client: httpx.Client) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "x"},
        "stringData": {"k": "v"},
    }
    live = {**copy.deepcopy(secret), "data": {"k": b64("v")}}
    del live["stringData"]
    argo.add_app(build_application("x", "x", []), [resource_diff(secret, live)])
    (item,) = managed(client, "x")
    target = json.loads(item["targetState"])
    assert "stringData" not in target and target["data"] == {"k": "+" * 8}
    assert json.loads(item["liveState"])["data"] == {"k": "+" * 8} and "modified" not in item


def test_uncached_renders_advance_and_stay_on_the_last(argo: FakeArgoCD, client: httpx.Client) -> None:
    def cron(schedule: str) -> Obj:
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"schedule": schedule}}

    app, diffs = small_app()
    argo.add_app(app, diffs, renders=[[cron("1 * * * *")], [cron("2 * * * *")], [cron("3 * * * *")]])

    def schedule(**params: str) -> str:
        body = client.get("/api/v1/applications/shop/manifests", params=params).json()
        assert set(body) == {"manifests"}  # as the real Argo CD answers (tests/e2e/test_argocd_contract.py)
        return str(json.loads(body["manifests"][0])["spec"]["schedule"])

    seen = [schedule(), schedule(noCache="true"), schedule(), schedule(noCache="true"), schedule(noCache="true")]
    assert seen == ["1 * * * *", "2 * * * *", "1 * * * *", "3 * * * *", "3 * * * *"]
    # another revision is rendered only when the stand-in was given its render: never today's in its place
    assert client.get("/api/v1/applications/shop/manifests", params={"revision": "abc"}).status_code == 500
    argo.add_app(app, diffs, renders=[[cron("1 * * * *")]], revision_renders={"abc": [cron("9 * * * *")]})
    assert schedule(revision="abc") == "9 * * * *" and argo.calls[-1].query == {"revision": "abc"}


def test_default_render_is_the_target_states(client: httpx.Client) -> None:
    kinds = [json.loads(m)["kind"] for m in client.get("/api/v1/applications/shop/manifests").json()["manifests"]]
    assert kinds == ["Deployment", "ConfigMap", "Secret", "ClusterRole", "Service"]


def test_resource_needs_version_and_must_belong_to_the_app(client: httpx.Client) -> None:
    path = "/api/v1/applications/shop/resource"
    base = {"resourceName": "web", "namespace": "shop", "kind": "Deployment", "group": "apps"}
    status, body = error(client.get(path, params=base))
    assert (status, body["code"]) == (500, 13) and "version" in body["message"]  # the gateway fails to marshal it
    status, body = error(client.get(path, params={**base, "version": "v1", "resourceName": "nope"}))
    assert (status, body["message"]) == (400, "Deployment apps nope not found as part of application shop")
    live = json.loads(client.get(path, params={**base, "version": "v1"}).json()["manifest"])
    assert live["spec"]["replicas"] == 7 and len(live["metadata"]["managedFields"]) == 2
    role = {"resourceName": "shop-reader", "kind": "ClusterRole", "group": "rbac.authorization.k8s.io", "version": "v1"}
    assert json.loads(client.get(path, params=role).json()["manifest"])["kind"] == "ClusterRole"


def test_resource_tree_and_events(argo: FakeArgoCD, client: httpx.Client) -> None:
    nodes = client.get("/api/v1/applications/shop/resource-tree").json()["nodes"]
    web = next(n for n in nodes if n["name"] == "web")
    assert web["group"] == "apps" and web["version"] == "v1"
    # gitops-engine's health of a Deployment whose status shows no replica rolled out (as the real one says it)
    rolling = "Waiting for rollout to finish: 0 out of 7 new replicas have been updated..."
    assert web["health"] == {"status": "Progressing", "message": rolling}
    assert web["uid"] == "0b7a3c52-1b7e-4a53-9d0c-1f2e3d4c5b6a" and web["resourceVersion"] == "81234"
    assert "group" not in next(n for n in nodes if n["name"] == "cfg")
    assert "svc" not in {n["name"] for n in nodes} and all(n["kind"] != "Service" for n in nodes)

    app, diffs = small_app()
    uid = app["metadata"]["uid"]
    events = [
        {"involvedObject": {"kind": "Application", "name": "shop", "namespace": "argocd", "uid": uid}, "reason": "x"},
        {
            "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "shop", "uid": web["uid"]},
            "reason": "y",
        },
    ]
    argo.add_app(app, diffs, events=events)
    own = client.get("/api/v1/applications/shop/events").json()
    assert set(own["metadata"]) == {"resourceVersion"} and [e["reason"] for e in own["items"]] == ["x"]
    params = {"resourceName": "web", "resourceNamespace": "shop", "resourceUID": web["uid"]}
    assert [e["reason"] for e in client.get("/api/v1/applications/shop/events", params=params).json()["items"]] == ["y"]
    status, _ = error(client.get("/api/v1/applications/shop/events", params={**params, "resourceUID": "other"}))
    assert status == 400


@pytest.mark.parametrize(
    ("status", "code"),
    [(503, 14), (500, 2), (429, 8)],
)
def test_failures_can_be_injected(argo: FakeArgoCD, client: httpx.Client, status: int, code: int) -> None:
    argo.fail_next(2, status=status, retry_after=7 if status != 500 else None)
    for _ in range(2):
        response = client.get("/api/v1/applications/shop")
        assert error(response)[0] == status and response.json()["code"] == code
        assert response.headers.get("retry-after") == (None if status == 500 else "7")
    assert client.get("/api/v1/applications/shop").status_code == 200


def test_dropped_connections_reset_and_then_recover(argo: FakeArgoCD, client: httpx.Client) -> None:
    argo.drop_next(1)
    with pytest.raises(httpx.TransportError):
        client.get("/api/v1/applications/shop")
    assert client.get("/api/v1/applications/shop").status_code == 200
    assert [c.status for c in argo.calls] == [0, 200]


def test_writes_are_refused_and_recorded(argo: FakeArgoCD, client: httpx.Client) -> None:
    assert error(client.post("/api/v1/applications/shop/sync", json={}))[0] == 403
    assert error(httpx.post(f"{argo.url}/api/v1/applications/shop/sync", json={}))[0] == 401
    assert error(client.delete("/api/v1/applications/shop"))[0] == 403
    assert error(client.put("/api/v1/applications/shop", json={}))[0] == 403
    assert [(c.method, c.status) for c in argo.calls] == [("POST", 403), ("POST", 401), ("DELETE", 403), ("PUT", 403)]
    assert argo.errors == []


def test_go_json_escapes_like_go() -> None:
    assert go_json({"b": "<a&b>", "a": "é"}) == '{"a":"é","b":"\\u003ca\\u0026b\\u003e"}'


def test_every_casebook_case_reports_modified_exactly_where_argocd_shows_findings() -> None:
    """``modified`` where the case expects a finding that Argo CD's diff shows (explain's ``shown_by_argocd``: a
    notation Argo CD's Go-type round trip makes equal is a finding it never reports)."""
    for case_dir in CASES:
        case = json.loads((case_dir / "case.json").read_text())
        app, diffs, renders = app_from_case(case_dir)
        report = explain_case(case_dir, case["app"])
        shown = {(f.resource.kind, f.resource.namespace, f.resource.name, f.pointer) for f in report.findings
                 if f.shown_by_argocd}  # fmt: skip
        expected = {
            (e["resource"]["kind"], e["resource"].get("namespace", ""), e["resource"]["name"])
            for e in case["expect"]
            if (e["resource"]["kind"], e["resource"].get("namespace", ""), e["resource"]["name"], e["pointer"]) in shown
        }
        modified = {(d["kind"], d.get("namespace", ""), d["name"]) for d in diffs if d.get("modified")}
        assert modified == expected, case_dir.name
        assert app["metadata"]["name"] == case["app"]
        assert app["status"]["sync"]["status"] == ("OutOfSync" if expected else "Synced"), case_dir.name
        assert len(renders) == (2 if (case_dir / "desired-again.yaml").exists() else 1)
        assert all(
            (r["status"] == "OutOfSync") == ((r["kind"], r.get("namespace", ""), r["name"]) in expected)
            for r in app["status"]["resources"]
        ), case_dir.name


def test_casebook_secrets_never_leave_the_fake(argo_server: FakeArgoCD) -> None:
    argo_server.reset()
    case_dir = CASEBOOK / "cases" / "helm-randalphanum-secret"
    case = json.loads((case_dir / "case.json").read_text())
    app, diffs, renders = app_from_case(case_dir)
    argo_server.add_app(app, diffs, renders)
    name = app["metadata"]["name"]
    headers = {"Authorization": f"Bearer {argo_server.token}"}
    with httpx.Client(base_url=f"{argo_server.url}/api/v1/applications/{name}", headers=headers) as c:
        bodies = [c.get(p).text for p in ("", "/managed-resources", "/manifests", "/manifests?noCache=true")]
        bodies.append(c.get("/resource", params={"resourceName": "harbor-core", "namespace": "harbor",
                                                 "kind": "Secret", "version": "v1"}).text)  # fmt: skip
    for forbidden in case["forbid_strings"]:
        assert all(forbidden not in body for body in bodies), forbidden


# ---------------------------------------------------------------------------------------------------------------
# FakeKubernetes
# ---------------------------------------------------------------------------------------------------------------


HPA: Obj = {
    "apiVersion": "autoscaling/v2",
    "kind": "HorizontalPodAutoscaler",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"team": "shop"}},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 10,
    },
}
WEBHOOK: Obj = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "kyverno-resource-mutating-webhook-cfg"},
    "webhooks": [
        {
            "name": "mutate.kyverno.svc",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "kyverno-svc", "namespace": "kyverno", "path": "/mutate"}},
            "sideEffects": "None",
            "rules": [],
        }
    ],
}
NAMESPACE: Obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"env": "prod"}}}


@pytest.fixture(scope="module")
def kube_server() -> Iterator[FakeKubernetes]:
    with FakeKubernetes() as server:
        yield server


@pytest.fixture
def kube(kube_server: FakeKubernetes) -> FakeKubernetes:
    kube_server.reset()
    other = copy.deepcopy(HPA)
    other["metadata"].update(name="worker", labels={"team": "ops"})
    kube_server.add(HPA, other, WEBHOOK, NAMESPACE)
    return kube_server


@pytest.fixture
def api(kube: FakeKubernetes, tmp_path: Path) -> Iterator[ApiClient]:
    config = kube.write_kubeconfig(tmp_path / "kubeconfig", context="test-cluster")
    client: ApiClient = kubernetes.config.new_client_from_config(config_file=str(config), context="test-cluster")
    try:
        yield client
    finally:
        client.close()


def raw(response: Any) -> Obj:
    body: Obj = json.loads(response.data)
    return body


def status_body(error: ApiException) -> Obj:
    """The Kubernetes ``Status`` object an API error carries."""
    assert error.body is not None
    body: Obj = json.loads(error.body)
    return body


class Named(Protocol):
    @property
    def metadata(self) -> V1ObjectMeta | None: ...


def name_of(obj: Named) -> str:
    """``metadata.name`` of a typed object of the client (its models declare every field optional)."""
    assert obj.metadata is not None and obj.metadata.name is not None
    return obj.metadata.name


def test_kubeconfig_loads_and_lists_are_kubernetes_lists(kube: FakeKubernetes, api: ApiClient, tmp_path: Path) -> None:
    configuration = kubernetes.client.Configuration()  # not the global default: other tests stay unaffected
    kubeconfig = kube.write_kubeconfig(tmp_path / "kc")
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), context="fake", client_configuration=configuration)
    assert configuration.host == kube.url and configuration.api_key["BearerToken"] == f"Bearer {kube.token}"
    hpas = raw(
        kubernetes.client.AutoscalingV2Api(api).list_namespaced_horizontal_pod_autoscaler(
            "shop", _preload_content=False
        )
    )
    assert hpas["kind"] == "HorizontalPodAutoscalerList" and hpas["apiVersion"] == "autoscaling/v2"
    assert hpas["metadata"]["resourceVersion"]
    assert [(i["kind"], i["metadata"]["name"]) for i in hpas["items"]] == [
        ("HorizontalPodAutoscaler", "web"),
        ("HorizontalPodAutoscaler", "worker"),
    ]
    typed = kubernetes.client.AutoscalingV2Api(api).list_namespaced_horizontal_pod_autoscaler("shop")
    assert typed.items[0].spec.scale_target_ref.name == "web"
    webhooks = kubernetes.client.AdmissionregistrationV1Api(api).list_mutating_webhook_configuration()
    assert [name_of(w) for w in webhooks.items] == ["kyverno-resource-mutating-webhook-cfg"]
    namespace = kubernetes.client.CoreV1Api(api).read_namespace("shop").metadata
    assert namespace is not None and namespace.labels == {"env": "prod"}
    assert kube.calls[0].path == "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers"


def test_custom_resources_exist_only_when_added_or_installed(kube: FakeKubernetes, api: ApiClient) -> None:
    custom = kubernetes.client.CustomObjectsApi(api)
    with pytest.raises(ApiException) as caught:
        custom.list_namespaced_custom_object("keda.sh", "v1alpha1", "shop", "scaledobjects")
    assert caught.value.status == 404
    assert status_body(caught.value) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the server could not find the requested resource",
        "reason": "NotFound",
        "details": {},
        "code": 404,
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "scaledobjects.keda.sh"},
        "spec": {
            "group": "keda.sh",
            "names": {"kind": "ScaledObject", "plural": "scaledobjects"},
            "scope": "Namespaced",
            "versions": [{"name": "v1alpha1", "served": True, "storage": True}],
        },
    }
    kube.add(crd)
    empty = custom.list_namespaced_custom_object("keda.sh", "v1alpha1", "shop", "scaledobjects")
    assert isinstance(empty, dict) and empty["items"] == []
    scaled = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"name": "web"}},
    }
    kube.add(scaled)
    listed = custom.list_cluster_custom_object("keda.sh", "v1alpha1", "scaledobjects")
    assert isinstance(listed, dict) and listed["kind"] == "ScaledObjectList" and listed["items"] == [scaled]


def test_missing_objects_and_forbidden_resources(kube: FakeKubernetes, api: ApiClient) -> None:
    with pytest.raises(ApiException) as caught:
        kubernetes.client.AppsV1Api(api).read_namespaced_deployment("web", "shop")
    body = status_body(caught.value)
    assert (caught.value.status, body["reason"], body["message"]) == (
        404,
        "NotFound",
        'deployments.apps "web" not found',
    )
    assert body["details"] == {"name": "web", "group": "apps", "kind": "deployments"}
    with pytest.raises(ApiException) as caught:
        kubernetes.client.CoreV1Api(api).read_namespaced_config_map("cfg", "shop")
    assert status_body(caught.value)["message"] == 'configmaps "cfg" not found'

    kube.forbid("horizontalpodautoscalers")
    with pytest.raises(ApiException) as caught:
        kubernetes.client.AutoscalingV2Api(api).list_horizontal_pod_autoscaler_for_all_namespaces()
    body = status_body(caught.value)
    assert (caught.value.status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        'horizontalpodautoscalers.autoscaling is forbidden: User "system:serviceaccount:argocd:argo-why" cannot list '
        'resource "horizontalpodautoscalers" in API group "autoscaling" at the cluster scope'
    )
    with pytest.raises(ApiException) as caught:
        kubernetes.client.AutoscalingV2Api(api).list_namespaced_horizontal_pod_autoscaler("shop")
    assert status_body(caught.value)["message"].endswith('in the namespace "shop"')


def test_selectors_and_pagination(kube: FakeKubernetes, api: ApiClient) -> None:
    hpa = kubernetes.client.AutoscalingV2Api(api)

    def names(**kwargs: Any) -> list[str]:
        return [name_of(i) for i in hpa.list_namespaced_horizontal_pod_autoscaler("shop", **kwargs).items]

    assert names(label_selector="team=shop") == ["web"]
    assert names(label_selector="team!=shop") == ["worker"]
    assert names(label_selector="team in (ops, shop)") == ["web", "worker"]
    assert names(label_selector="!team") == []
    assert names(field_selector="metadata.name=worker") == ["worker"]
    with pytest.raises(ApiException) as caught:
        names(field_selector="spec.minReplicas=2")
    assert caught.value.status == 400
    assert status_body(caught.value)["message"] == "field label not supported: spec.minReplicas"

    first = hpa.list_namespaced_horizontal_pod_autoscaler("shop", limit=1)
    assert first.metadata is not None
    assert [name_of(i) for i in first.items] == ["web"] and first.metadata.remaining_item_count == 1
    rest = hpa.list_namespaced_horizontal_pod_autoscaler("shop", limit=1, _continue=first.metadata._continue)
    assert rest.metadata is not None
    assert [name_of(i) for i in rest.items] == ["worker"] and rest.metadata._continue is None


def test_kubernetes_auth_and_writes(kube: FakeKubernetes, api: ApiClient) -> None:
    unauthorized = httpx.get(f"{kube.url}/api/v1/namespaces", headers={"Authorization": "Bearer wrong"})
    assert unauthorized.status_code == 401 and unauthorized.json()["reason"] == "Unauthorized"
    config_map = kubernetes.client.V1ConfigMap(metadata=V1ObjectMeta(name="x"))
    with pytest.raises(ApiException) as caught:
        kubernetes.client.CoreV1Api(api).create_namespaced_config_map("shop", config_map)
    assert caught.value.status == 405 and status_body(caught.value)["reason"] == "MethodNotAllowed"
    with pytest.raises(ApiException):
        kubernetes.client.AppsV1Api(api).patch_namespaced_deployment_scale("web", "shop", {"spec": {"replicas": 1}})
    writes = [c for c in kube.calls if c.method != "GET"]
    assert [(c.method, c.status) for c in writes] == [("POST", 405), ("PATCH", 405)]


def test_discovery_describes_what_is_served(kube: FakeKubernetes, api: ApiClient, tmp_path: Path) -> None:
    from kubernetes.dynamic import DynamicClient

    core = kubernetes.client.CoreApi(api).get_api_versions()
    assert core.versions == ["v1"]
    kube.add({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "a", "namespace": "shop"}})
    groups = {g.name: g for g in kubernetes.client.ApisApi(api).get_api_versions().groups}
    preferred = groups["autoscaling"].preferred_version
    assert preferred is not None and preferred.version == "v2" and "keda.sh" in groups
    resources = DynamicClient(api, cache_file=str(tmp_path / "discovery.json")).resources.get(
        api_version="keda.sh/v1alpha1", kind="ScaledObject"
    )
    assert resources.namespaced and [i.metadata.name for i in resources.get(namespace="shop").items] == ["a"]


def test_context_from_case_reads_context_yaml() -> None:
    case_dir = CASEBOOK / "cases" / "hpa-replicas-csa"
    assert [o["kind"] for o in context_from_case(case_dir)] == ["HorizontalPodAutoscaler"]
    assert context_from_case(CASEBOOK / "cases" / "clean-no-findings") == []
