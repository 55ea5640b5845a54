"""The notifications configuration shipped in ``deploy/argocd-notifications/``, checked the way Argo CD uses it.

* The template is rendered by Go's ``text/template`` with the Sprig functions, as the notifications controller
  renders it (``tests/gotemplate/main.go``, built against Debian's golang-go and golang-github-masterminds-sprig-dev),
  for Applications of several shapes (core kinds, cluster-scoped objects, multi-source, no operation, no resources),
  and every body is posted to the real bot (HTTP, Redis): each one is valid JSON and answered 202.
* ``install.sh`` adds the service, trigger, template and one subscription without touching anything else, against a
  stand-in ``kubectl`` that applies JSON merge patches the way the API server does.
* The argo-helm values carry exactly the same service, trigger and template.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import Settings
from bot.demo.runner import ARGOCD_PUBLIC_URL, webhook_body
from tests.conftest import ROOT
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.service_kit import running, service_settings

HERE = ROOT / "deploy" / "argocd-notifications"
PATCH = yaml.safe_load((HERE / "argocd-notifications-cm.patch.yaml").read_text())["data"]
SPRIG = Path("/usr/share/gocode/src/github.com/Masterminds/sprig")
GO_TOOLS = ("go=golang-go", f"{SPRIG}=golang-github-masterminds-sprig-dev")


def _template_body() -> str:
    body: str = yaml.safe_load(PATCH["template.argo-why-drift"])["webhook"]["argo-why"]["body"]
    return body


# --- Application shapes -----------------------------------------------------------------------------------------


def _app(name: str, *, resources: list[dict[str, Any]] | None = None, operation: bool = True,
         multi_source: bool = False, namespace: str = "argocd") -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {"project": "payments", "destination": {"server": "https://kubernetes.default.svc"}}
    sync: dict[str, Any] = {"status": "OutOfSync"}
    if multi_source:
        spec["sources"] = [
            {"repoURL": "https://git.example.com/charts.git", "chart": "api", "targetRevision": "1.2.3"},
            {"repoURL": "https://git.example.com/values.git", "path": "api", "ref": "values"},
        ]
        sync["revisions"] = ["1.2.3", "9f3c2a1d5be4c1a0e2f7b8c9d0a1b2c3d4e5f607"]  # no "revision" for multi-source
    else:
        spec["source"] = {"repoURL": "https://git.example.com/apps.git", "path": name, "targetRevision": "HEAD"}
        sync["revision"] = "9f3c2a1d5be4c1a0e2f7b8c9d0a1b2c3d4e5f607"
    status: dict[str, Any] = {"sync": sync, "health": {"status": "Healthy"}, "reconciledAt": "2026-08-20T09:12:03Z"}
    if operation:
        status["operationState"] = {"phase": "Succeeded", "startedAt": "2026-08-20T09:11:51Z",
                                    "finishedAt": "2026-08-20T09:11:58Z", "message": "successfully synced"}  # fmt: skip
    if resources is not None:
        status["resources"] = resources
    meta = {"name": name, "namespace": namespace, "uid": "5d1c1a7e-0000-4000-8000-000000000000"}
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": meta, "spec": spec,
            "status": status}  # fmt: skip


def _res(kind: str, name: str, *, group: str | None = None, namespace: str | None = "payments",
         status: str = "OutOfSync", version: str = "v1") -> dict[str, Any]:  # fmt: skip
    # Argo CD's ResourceStatus: group and namespace are omitted when empty (core kinds, cluster-scoped objects)
    out: dict[str, Any] = {"version": version, "kind": kind, "name": name, "status": status, "health": {}}
    if group:
        out["group"] = group
    if namespace:
        out["namespace"] = namespace
    return out


SHAPES: dict[str, dict[str, Any]] = {
    "deployment": _app("payments-api", resources=[_res("Deployment", "api", group="apps"),
                                                  _res("Service", "api", status="Synced")]),
    "core-kinds": _app("payments-config", resources=[_res("ConfigMap", "settings"), _res("Secret", "db"),
                                                     _res("Service", "api")]),
    "cluster-scoped": _app("platform-rbac", resources=[
        _res("ClusterRole", "reader", group="rbac.authorization.k8s.io", namespace=None),
        _res("Namespace", "payments", namespace=None),
        _res("MutatingWebhookConfiguration", "inject", group="admissionregistration.k8s.io", namespace=None),
    ]),
    "multi-source": _app("payments-chart", multi_source=True,
                         resources=[_res("Deployment", "api", group="apps")]),
    "no-operation": _app("payments-never-synced", operation=False, resources=[]),
    "no-resources": _app("payments-empty"),
    "apps-in-any-namespace": _app("team-a.api", namespace="team-a",
                                  resources=[_res("HorizontalPodAutoscaler", "api", group="autoscaling",
                                                  version="v2")]),
}  # fmt: skip


# --- Go's text/template + Sprig ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def go_render(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The renderer, built once per module (GOPATH mode: Debian's Go sources, nothing downloaded)."""
    if shutil.which("go") is None or not SPRIG.exists():
        subprocess.run([str(ROOT / "scripts" / "ensure-tools.sh"), *GO_TOOLS], check=False)
    if shutil.which("go") is None or not SPRIG.exists():
        pytest.fail("Go and Sprig are missing and scripts/ensure-tools.sh could not install them: "
                    "apt-get install golang-go golang-github-masterminds-sprig-dev")  # fmt: skip
    gopath = tmp_path_factory.mktemp("gopath")
    (gopath / "src" / "render").mkdir(parents=True)
    shutil.copy2(ROOT / "tests" / "gotemplate" / "main.go", gopath / "src" / "render" / "main.go")
    binary = gopath / "render"
    env = {**os.environ, "GO111MODULE": "off", "GOPATH": f"{gopath}:/usr/share/gocode", "CGO_ENABLED": "0",
           "GOFLAGS": "", "GOCACHE": os.environ.get("GOCACHE") or str(Path.home() / ".cache" / "go-build")}  # fmt: skip
    build = subprocess.run(["go", "build", "-o", str(binary), "render"], cwd=gopath, env=env, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    assert build.returncode == 0, build.stderr
    yield binary


def render_template(binary: Path, template: str, app: dict[str, Any], context: dict[str, str]) -> str:
    # notifications-engine's vars: the Application as an unstructured map, the `context` of the ConfigMap, ...
    vars_ = {"app": app, "context": context, "serviceType": "webhook", "recipient": ""}
    proc = subprocess.run([str(binary)], input=json.dumps({"template": template, "vars": vars_}),
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


async def test_every_rendered_body_is_accepted_by_the_bot(go_render: Path, settings: Settings) -> None:
    context = {"argocdUrl": ARGOCD_PUBLIC_URL}
    bodies = {shape: render_template(go_render, _template_body(), app, context) for shape, app in SHAPES.items()}
    async with running(settings, workers=0) as bot:
        for shape, raw in bodies.items():
            answer = await bot.webhook(None, raw=raw.encode())
            assert answer.status_code == 202, f"{shape}: {answer.status_code} {answer.text}\n{raw}"
        assert await bot.services.queue.depth() == len(SHAPES)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_rendered_body_says_what_the_contract_says(go_render: Path, shape: str) -> None:
    app = SHAPES[shape]
    body = json.loads(render_template(go_render, _template_body(), app, {"argocdUrl": ARGOCD_PUBLIC_URL}))
    assert body == webhook_body(app)  # the demo's stand-in for the template says the same as the template
    for ref in body["outOfSyncResources"]:
        assert set(ref) == {"group", "version", "kind", "namespace", "name"}
    if shape == "core-kinds":
        assert {r["group"] for r in body["outOfSyncResources"]} == {None}
    if shape == "cluster-scoped":
        assert {r["namespace"] for r in body["outOfSyncResources"]} == {None}
    if shape == "multi-source":
        assert body["sync"]["revision"] is None
    if shape == "no-operation":
        assert body["operationState"] is None


def test_without_argocd_url_in_the_context_the_body_says_null(go_render: Path) -> None:
    body = json.loads(render_template(go_render, _template_body(), SHAPES["deployment"], {}))
    assert body["argocdUrl"] is None


# --- install.sh adds, never replaces ------------------------------------------------------------------------------

FAKE_KUBECTL = '''#!{python}
"""kubectl stand-in: get -o jsonpath={{.data.KEY}} and patch --type merge --patch-file on one state file."""
import base64, json, sys, yaml
state_file = {state!r}
args = sys.argv[1:]
state = json.load(open(state_file))
ns = args[args.index("-n") + 1]
verb, kind, name = [a for a in args if not a.startswith("-") and a != ns][:3]
obj = state[ns][kind][name]
def merge(target, patch):
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        elif isinstance(v, dict) and isinstance(target.get(k), dict):
            merge(target[k], v)
        else:
            target[k] = v
if verb == "get":
    key = args[args.index("-o") + 1].split(".data.")[1].rstrip("}}")
    sys.stdout.write(obj.get("data", {{}}).get(key, ""))
elif verb == "patch":
    patch = yaml.safe_load(open(args[args.index("--patch-file") + 1]))
    for k, v in (patch.pop("stringData", None) or {{}}).items():  # the API server stores stringData in data
        patch.setdefault("data", {{}})[k] = base64.b64encode(v.encode()).decode()
    merge(obj, patch)
    json.dump(state, open(state_file, "w"))
'''

EXISTING = {
    "argocd": {
        "configmap": {"argocd-notifications-cm": {"data": {
            "context": "argocdUrl: https://argocd.example.com\nenvironment: prod\n",
            "service.slack": "token: $slack-token\n",
            "template.app-deployed": "message: deployed\n",
            "trigger.on-deployed": "- when: app.status.health.status == 'Healthy'\n  send: [app-deployed]\n",
            "subscriptions": "# the team's alerts\n- recipients: [slack:deploys]\n  triggers: [on-deployed]\n",
        }}},
        "secret": {"argocd-notifications-secret": {"data": {"slack-token": "eG94Yi0x"}}},
    }
}  # fmt: skip


def _install(tmp_path: Path, state: dict[str, Any], **env: str) -> subprocess.CompletedProcess[str]:
    state_file = tmp_path / "state.json"
    if not state_file.exists():
        state_file.write_text(json.dumps(state))
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(FAKE_KUBECTL.format(python=sys.executable, state=str(state_file)))
    kubectl.chmod(0o755)
    run_env = {**os.environ, "KUBECTL": str(kubectl), "WEBHOOK_TOKEN": "0123abcd", **env}
    return subprocess.run([str(HERE / "install.sh")], env=run_env, capture_output=True, text=True, timeout=60)


def _state(tmp_path: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((tmp_path / "state.json").read_text())["argocd"]
    return state


def test_install_adds_the_service_trigger_template_and_one_subscription_and_keeps_the_rest(tmp_path: Path) -> None:
    done = _install(tmp_path, EXISTING, ARGO_WHY_URL="http://bot.tools.svc:8080")
    assert done.returncode == 0, done.stderr
    data = _state(tmp_path)["configmap"]["argocd-notifications-cm"]["data"]
    before = EXISTING["argocd"]["configmap"]["argocd-notifications-cm"]["data"]
    for key in ("context", "service.slack", "template.app-deployed", "trigger.on-deployed"):
        assert data[key] == before[key]
    assert data["trigger.on-drift-after-sync"] == PATCH["trigger.on-drift-after-sync"]
    assert data["template.argo-why-drift"] == PATCH["template.argo-why-drift"]
    assert yaml.safe_load(data["service.webhook.argo-why"])["url"] == "http://bot.tools.svc:8080"
    assert yaml.safe_load(data["subscriptions"]) == [
        {"recipients": ["slack:deploys"], "triggers": ["on-deployed"]},
        {"recipients": ["argo-why"], "triggers": ["on-drift-after-sync"]},
    ]
    assert data["subscriptions"].startswith("# the team's alerts\n")  # comments kept too
    secret = _state(tmp_path)["secret"]["argocd-notifications-secret"]["data"]
    assert secret == {"slack-token": "eG94Yi0x", "argo-why-token": "MDEyM2FiY2Q="}
    assert "argocdUrl" not in done.stdout

    again = _install(tmp_path, EXISTING)
    assert again.returncode == 0 and "already subscribed" in again.stdout
    assert len(yaml.safe_load(_state(tmp_path)["configmap"]["argocd-notifications-cm"]["data"]["subscriptions"])) == 2


def test_install_on_an_empty_configuration_creates_the_list_and_asks_for_no_context(tmp_path: Path) -> None:
    """Links in Slack come from the bot's ARGOCD_PUBLIC_URL: asking for context.argocdUrl would send people to set a
    value nothing uses for links."""
    nothing: dict[str, Any] = {}
    empty = {"argocd": {"configmap": {"argocd-notifications-cm": nothing},
                        "secret": {"argocd-notifications-secret": nothing}}}  # fmt: skip
    done = _install(tmp_path, empty)
    assert done.returncode == 0, done.stderr
    data = _state(tmp_path)["configmap"]["argocd-notifications-cm"]["data"]
    assert yaml.safe_load(data["subscriptions"]) == [{"recipients": ["argo-why"], "triggers": ["on-drift-after-sync"]}]
    assert "argocdUrl" not in done.stdout and "template notify argo-why-drift" in done.stdout


def test_install_refuses_to_edit_a_flow_style_subscription_list(tmp_path: Path) -> None:
    flow = json.loads(json.dumps(EXISTING))
    flow["argocd"]["configmap"]["argocd-notifications-cm"]["data"]["subscriptions"] = "[{recipients: [slack:x]}]\n"
    done = _install(tmp_path, flow)
    assert done.returncode == 3 and "add this entry by hand" in done.stderr
    data = _state(tmp_path)["configmap"]["argocd-notifications-cm"]["data"]
    assert data["subscriptions"] == "[{recipients: [slack:x]}]\n"


def test_argo_helm_values_carry_the_same_configuration() -> None:
    values = yaml.safe_load((HERE / "argo-helm-values.yaml").read_text())["notifications"]
    assert values["notifiers"]["service.webhook.argo-why"] == PATCH["service.webhook.argo-why"]
    assert values["triggers"]["trigger.on-drift-after-sync"] == PATCH["trigger.on-drift-after-sync"]
    assert values["templates"]["template.argo-why-drift"] == PATCH["template.argo-why-drift"]
    assert values["subscriptions"] == yaml.safe_load((HERE / "subscription.yaml").read_text())
