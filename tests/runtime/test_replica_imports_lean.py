"""A replica loads the editors of Open PR (bot.fixes' opener and argocd-cm editor, ruamel.yaml) with the first PR it
opens, not at start, and reads the cluster through the kubernetes client without its typed API classes (issue 29:
memory per replica; a storm's replicas analyse and post, and rarely open a PR)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runtime.test_replica_imports import ROOT, loaded_after


def test_starting_the_bot_loads_no_pr_editor() -> None:
    probe = "import bot.app, bot.cli, bot.runtime, bot.web.view\nimport sys\nprint(sorted(m for m in sys.modules))"
    loaded = loaded_after(probe)
    assert "ruamel" not in loaded


def test_the_pr_editors_still_load_when_a_pr_is_opened() -> None:
    loaded = loaded_after("import bot.app\nfrom bot.fixes.opener import open_fix\nfrom bot.fixes.cmedit import Form")
    assert "ruamel" in loaded


READ = """
import asyncio, json, sys, tempfile
from pathlib import Path
from bench.storm import CASE
from bot.demo.fake_kube import FakeKubernetes, context_from_case
from bot.sources.cluster import Clusters
with tempfile.TemporaryDirectory() as tmp, FakeKubernetes() as kube:
    kube.add(*context_from_case(CASE))
    clusters = Clusters(str(kube.write_kubeconfig(Path(tmp) / "kc", context="c")), {"in-cluster": "c"})
    source, why = clusters.for_destination({"server": "in-cluster"})
    ctx = asyncio.run(source.context_for(["checkout"], "argocd"))
print(json.dumps({"kinds": sorted({o["kind"] for o in ctx.objects}), "missing": ctx.missing, "typed": sorted(
    m for m in sys.modules if m.startswith("kubernetes.client.api.") or m == "pydantic._internal._validate_call"),
    "deferred": sorted(m for m in ("requests", "requests_oauthlib", "oauthlib", "charset_normalizer")
                       if m in sys.modules)}))
"""


def test_a_cluster_read_goes_through_the_kubernetes_client_without_its_typed_api_classes() -> None:
    # CoreV1Api and the others validate each of their hundreds of methods' arguments with pydantic: importing them
    # cost a replica ~30 MB at its first analysis, for the few GETs made through the client's own request path
    out = subprocess.run([sys.executable, "-c", READ], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=300)  # fmt: skip
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["typed"] == [] and seen["missing"] == []
    assert {"HorizontalPodAutoscaler", "Application"} <= set(seen["kinds"]), seen["kinds"]
    # kubernetes imports them for an OIDC auth-provider's refresh and websocket streams: 4.8 MB not loaded
    assert seen["deferred"] == []


def test_the_analyses_share_a_cluster_client_until_it_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each analysis built its own client (a kubeconfig parsed, a configuration, a connection pool and new
    connections); now one per kube context, built again after CLIENT_TTL_S (a changed kubeconfig is read again)."""
    from bot.demo.fake_kube import FakeKubernetes
    from bot.sources import cluster

    with FakeKubernetes() as kube:
        clusters = cluster.Clusters(str(kube.write_kubeconfig(tmp_path / "kc", context="c")), {"in-cluster": "c"})
        first, _ = clusters.for_destination({"server": "in-cluster"})
        again, _ = clusters.for_destination({"server": "in-cluster"})
        assert first is not None and again is not None and first._api is again._api
        monkeypatch.setattr(cluster, "CLIENT_TTL_S", 0.0)
        later, _ = clusters.for_destination({"server": "in-cluster"})
        assert later is not None and later._api is not first._api


OIDC = """
import asyncio, base64, json, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs
import yaml
from bench.storm import CASE
from bot.demo.fake_kube import FakeKubernetes, context_from_case
from bot.sources.cluster import Clusters

def jwt(exp):
    part = lambda claims: base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return part({"alg": "RS256"}) + "." + part({"sub": "argo-why", "exp": exp}) + ".c2lnbmF0dXJl"

fresh, refreshes = jwt(int(time.time()) + 3600), []

class IdP(BaseHTTPRequestHandler):
    def _json(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        self._json({"issuer": issuer, "token_endpoint": issuer + "/token"})
    def do_POST(self):
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        refreshes.append(form)
        self._json({"access_token": "at", "token_type": "Bearer", "expires_in": 3600, "id_token": fresh,
                    "refresh_token": "r2"})
    def log_message(self, *args):
        pass

idp = ThreadingHTTPServer(("127.0.0.1", 0), IdP)
issuer = f"http://127.0.0.1:{idp.server_address[1]}"
threading.Thread(target=idp.serve_forever, daemon=True).start()
with tempfile.TemporaryDirectory() as tmp, FakeKubernetes() as kube:
    kube.token = fresh
    kube.add(*context_from_case(CASE))
    path = kube.write_kubeconfig(Path(tmp) / "kc", context="c")
    config = yaml.safe_load(path.read_text())
    config["users"][0]["user"] = {"auth-provider": {"name": "oidc", "config": {
        "client-id": "argo-why", "client-secret": "s", "idp-issuer-url": issuer, "refresh-token": "r1",
        "id-token": jwt(int(time.time()) - 60)}}}
    path.write_text(yaml.safe_dump(config))
    before = sorted(m for m in ("requests_oauthlib", "oauthlib") if m in sys.modules)
    clusters = Clusters(str(path), {"in-cluster": "c"})
    source, why = clusters.for_destination({"server": "in-cluster"})
    ctx = asyncio.run(source.context_for(["checkout"], "argocd"))
print(json.dumps({"kinds": sorted({o["kind"] for o in ctx.objects}), "missing": ctx.missing, "before": before,
                  "refreshes": [{k: f[k] for k in ("grant_type", "refresh_token")} for f in refreshes],
                  "after": sorted(m for m in ("requests_oauthlib", "oauthlib") if m in sys.modules)}))
"""


def test_an_oidc_auth_provider_token_is_still_refreshed_with_its_libraries_deferred() -> None:
    """kubernetes refreshes an expired ``oidc`` id-token with requests-oauthlib, which a replica no longer imports
    with the package (``bot.sources.kubeimport``): the refresh imports it when it runs, against a local OpenID
    provider, and the cluster (accepting only the refreshed token) is read."""
    env = {**os.environ, "OAUTHLIB_INSECURE_TRANSPORT": "1"}  # the local provider speaks plain HTTP
    out = subprocess.run([sys.executable, "-c", OIDC], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=300, env=env)  # fmt: skip
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] == [] and seen["after"] == ["oauthlib", "requests_oauthlib"]
    assert seen["refreshes"] == [{"grant_type": ["refresh_token"], "refresh_token": ["r1"]}]
    assert seen["missing"] == [] and "HorizontalPodAutoscaler" in seen["kinds"], seen


FALLBACK = """
import json, sys
from bot.sources.kubeimport import import_deferring
module = import_deferring("subclasses_requests", ["requests", "requests.structures"])
print(json.dumps({"base": module.Headers.__mro__[1].__module__, "deferred": "requests" in sys.modules}))
"""


def test_a_package_that_uses_a_deferred_module_while_it_is_imported_is_imported_plainly(tmp_path: Path) -> None:
    """A release of kubernetes that subclassed a class of requests at import would fail with stand-ins: the
    package is then imported as usual (the memory is paid, the bot works)."""
    (tmp_path / "subclasses_requests.py").write_text(
        "from requests.structures import CaseInsensitiveDict\n\nclass Headers(CaseInsensitiveDict):\n    pass\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", FALLBACK], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=300, env=env)  # fmt: skip
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"base": "requests.structures", "deferred": True}
