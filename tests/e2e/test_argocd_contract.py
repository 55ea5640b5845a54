"""The stand-in Argo CD (bot/demo/fake_argocd, tests/fakes/argocd.py) against the real one: the same requests, the
paths and parameters the bot's client (bot/sources/argocd.py) sends, to both; the answers must have the same shape
(status code, keys, types, how absent values and empty lists come back, error bodies).

The stand-in serves the real Application, its real ``managed-resources`` items and its real rendered manifests (as
the real API server answered them); everything it derives itself (resource tree, ``/resource``, ``/manifests``,
events, lists, projects, errors) is compared with what the real server answers for the same request. Values that
differ by nature (uids, times, versions) are not compared; keys and types are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.fakes.argocd import FakeArgoCD
from tests.harness.argocd_e2e import E2E, namespace_for
from tests.harness.argocd_objects import configmap, deployment, hpa, ref

pytestmark = pytest.mark.argocd

NAME = "contract"


def shape(value: Any) -> Any:
    """Keys and types of a JSON value: dicts by key, a list as ``{"[]": <the union of its items' shapes>}``."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        merged: dict[str, Any] = {}
        kinds: set[str] = set()
        for item in value:
            s = shape(item)
            if isinstance(s, dict):
                for k, v in s.items():
                    merged.setdefault(k, v)
                kinds.add("object")
            else:
                kinds.add(str(s))
        return {"[]": merged if merged else sorted(kinds)}
    return type(value).__name__


def differences(fake: Any, real: Any, path: str = "") -> list[str]:
    if isinstance(fake, dict) and isinstance(real, dict):
        out: list[str] = []
        for key in sorted(set(fake) | set(real)):
            where = f"{path}.{key}"
            if key not in real:
                out.append(f"{where}: only the stand-in has it")
            elif key not in fake:
                out.append(f"{where}: only the real Argo CD has it")
            else:
                out += differences(fake[key], real[key], where)
        return out
    return [] if fake == real else [f"{path}: stand-in {fake}, real {real}"]


# Differences that are the test stack's, not the stand-in's: the build from the module proxy has no commit to stamp.
NOT_THE_STAND_INS = {".GitCommit: only the stand-in has it"}


@pytest.fixture(scope="module")
def pair(e2e: E2E) -> Iterator[tuple[httpx.Client, httpx.Client, dict[str, str]]]:
    """(stand-in, real) clients with the bot's token, and the request parameters of the app's Deployment."""
    ns = namespace_for(NAME)
    e2e.stack.kube.create_namespace(ns)
    web = deployment(NAME, replicas=2)
    e2e.add_files({f"apps/{NAME}/deployment.yaml": web, f"apps/{NAME}/hpa.yaml": hpa(NAME),
                   f"apps/{NAME}/configmap.yaml": configmap(f"{NAME}-settings", {"a": "1"})})  # fmt: skip
    e2e.create_app(NAME, f"apps/{NAME}", ns)
    e2e.sync(NAME)
    e2e.cluster.autoscale(ref(web, ns), 4)
    e2e.wait_app(NAME, lambda a: a["status"]["sync"]["status"] == "OutOfSync", "OutOfSync after the autoscaler")
    real = httpx.Client(base_url=e2e.stack.url, headers={"Authorization": f"Bearer {e2e.stack.bot_token}"})
    app = real.get(f"/api/v1/applications/{NAME}").json()
    items = real.get(f"/api/v1/applications/{NAME}/managed-resources").json()["items"]
    manifests = [json.loads(m) for m in real.get(f"/api/v1/applications/{NAME}/manifests").json()["manifests"]]
    events = real.get(f"/api/v1/applications/{NAME}/events").json()["items"]
    with FakeArgoCD() as stand_in:
        stand_in.add_app(app, items, renders=[manifests], events=events)
        fake = httpx.Client(base_url=stand_in.url, headers={"Authorization": f"Bearer {stand_in.token}"})
        params = {"namespace": ns, "resourceName": NAME, "group": "apps", "kind": "Deployment", "version": "v1"}
        try:
            yield fake, real, params
        finally:
            fake.close()
            real.close()


def deployment_uid(client: httpx.Client) -> str:
    tree = client.get(f"/api/v1/applications/{NAME}/resource-tree").json()
    return str(next(n.get("uid", "") for n in tree["nodes"] if n["kind"] == "Deployment"))


REQUESTS: list[tuple[str, str, dict[str, str] | str | None]] = [
    # (id, path, params: a dict, "deployment" for the Deployment's parameters, or None)
    ("version", "/api/version", None),
    ("app", f"/api/v1/applications/{NAME}", None),
    ("app-missing", "/api/v1/applications/no-such-app", None),
    ("app-missing-in-project", "/api/v1/applications/no-such-app", {"project": "default"}),
    ("app-other-project", f"/api/v1/applications/{NAME}", {"project": "other"}),
    ("list", "/api/v1/applications", None),
    ("list-no-match", "/api/v1/applications", {"selector": "team=nobody"}),
    ("list-bad-selector", "/api/v1/applications", {"selector": "a b"}),
    ("managed-resources", f"/api/v1/applications/{NAME}/managed-resources", None),
    ("managed-resources-none", f"/api/v1/applications/{NAME}/managed-resources", {"kind": "CronJob"}),
    ("resource", f"/api/v1/applications/{NAME}/resource", "deployment"),
    ("resource-no-version", f"/api/v1/applications/{NAME}/resource",
     {"resourceName": NAME, "kind": "Deployment", "group": "apps"}),
    ("resource-not-in-app", f"/api/v1/applications/{NAME}/resource",
     {"resourceName": "nope", "kind": "Deployment", "group": "apps", "version": "v1", "namespace": "x"}),
    ("manifests", f"/api/v1/applications/{NAME}/manifests", None),
    ("resource-tree", f"/api/v1/applications/{NAME}/resource-tree", None),
    ("events", f"/api/v1/applications/{NAME}/events", None),
    ("project", "/api/v1/projects/default", None),
    ("project-missing", "/api/v1/projects/no-such-project", None),
    ("applicationset-missing", "/api/v1/applicationsets/no-such-appset", None),
    ("unknown-route", "/api/v1/no-such-route", None),
    ("applicationset-missing-elsewhere", "/api/v1/applicationsets/no-such-appset", {"appsetNamespace": "apps"}),
]  # fmt: skip


@pytest.mark.parametrize(("path", "params"), [(p, q) for _, p, q in REQUESTS], ids=[i for i, _, _ in REQUESTS])
def test_the_stand_in_answers_like_the_real_argocd(
    pair: tuple[httpx.Client, httpx.Client, dict[str, str]], path: str, params: dict[str, str] | str | None
) -> None:
    fake, real, deployment_params = pair
    query = deployment_params if params == "deployment" else params if isinstance(params, dict) else None
    a, b = fake.get(path, params=query), real.get(path, params=query)
    assert a.status_code == b.status_code, (a.text[:500], b.text[:500])
    assert a.headers["content-type"].split(";")[0] == b.headers["content-type"].split(";")[0]
    if not b.headers["content-type"].startswith("application/json"):
        assert a.text == b.text
        return
    fa, rb = a.json(), b.json()
    if b.status_code >= 400:
        if "selector" in fa["message"]:  # the label parser's own words for the error are not the stand-in's
            fa["error"] = fa["message"] = rb["message"].split(": ")[0]
            rb["error"] = rb["message"] = rb["message"].split(": ")[0]
        assert fa == rb, (fa, rb)  # error bodies: same gRPC code and the same words
        return
    assert set(differences(shape(fa), shape(rb))) - NOT_THE_STAND_INS == set()


# A JWT of the right form whose signature is not the server's.
FORGED = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhcmdvY2QiLCJzdWIiOiJhcmdvLXdoeTphcGlLZXkifQ.c2lnbmF0dXJl"


@pytest.mark.parametrize("token", ["", "not-a-token", FORGED], ids=["no-token", "not-a-jwt", "forged-jwt"])
@pytest.mark.parametrize("path", [f"/api/v1/applications/{quote(NAME)}", "/api/version"], ids=["app", "version"])
def test_the_stand_in_refuses_a_request_like_the_real_argocd(
    pair: tuple[httpx.Client, httpx.Client, dict[str, str]], token: str, path: str
) -> None:
    fake, real, _ = pair
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    a = httpx.get(str(fake.base_url) + path, headers=headers)
    b = httpx.get(str(real.base_url) + path, headers=headers)
    assert a.status_code == b.status_code and set(a.json()) == set(b.json()), (a.text, b.text)
    if a.status_code != 200:
        assert a.json() == b.json()


def test_a_write_with_the_bots_read_only_token_is_refused_alike(
    pair: tuple[httpx.Client, httpx.Client, dict[str, str]],
) -> None:
    fake, real, _ = pair
    for name in (NAME, "no-such-app"):
        a = fake.post(f"/api/v1/applications/{name}/sync", json={})
        b = real.post(f"/api/v1/applications/{name}/sync", json={})
        iat = re.compile(r"iat: \S+")  # the token's issue time: each server's own token
        assert (a.status_code, iat.sub("iat: T", a.text)) == (b.status_code, iat.sub("iat: T", b.text))


def test_events_of_a_resource_are_answered_alike(pair: tuple[httpx.Client, httpx.Client, dict[str, str]]) -> None:
    fake, real, params = pair
    for client in (fake, real):
        query = {"resourceUID": deployment_uid(client), "resourceName": NAME, "resourceNamespace": params["namespace"]}
        assert client.get(f"/api/v1/applications/{NAME}/events", params=query).status_code == 200
