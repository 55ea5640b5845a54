"""The notifications configuration shipped in ``deploy/argocd-notifications/``, checked by the code Argo CD runs.

* ``notify`` (tests/tools/notify, built by scripts/build-go-tools.sh) parses the shipped argocd-notifications-cm and
  sends with Argo CD's notifications engine (github.com/argoproj/notifications-engine at the version argo-cd
  requires: its trigger, template and webhook services) and the variables Argo CD's controller gives templates
  (argo-cd util/notification/settings). For Applications of several shapes (core kinds, cluster-scoped objects,
  multi-source, no operation, no resources) every body goes over HTTP to the real bot (Redis), which answers 202;
  each is valid JSON and says what the contract says; the trigger fires exactly when the app drifted after a sync.
* ``install.sh`` adds the service, trigger, template and one subscription without touching anything else, against a
  stand-in ``kubectl`` that applies JSON merge patches the way the API server does.
* The argo-helm values carry exactly the same service, trigger and template.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import Settings
from bot.demo.runner import ARGOCD_PUBLIC_URL, webhook_body
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import Bot, running, service_settings
from tests.paths import ROOT

HERE = ROOT / "deploy" / "argocd-notifications"
PATCH = yaml.safe_load((HERE / "argocd-notifications-cm.patch.yaml").read_text())["data"]
SUBSCRIPTIONS = (HERE / "subscription.yaml").read_text()


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


# --- Argo CD's notifications engine ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def notify(go_tools: Path) -> Path:
    return go_tools / "notify"


async def run_notify(binary: Path, bot: Bot, app: dict[str, Any], *, context: dict[str, str] | None = None,
                     templates: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Argo CD's notifications engine on the shipped configuration, its webhook service pointed at ``bot`` (what
    install.sh does with ARGO_WHY_URL), the token in argocd-notifications-secret."""
    data = dict(PATCH)
    service = yaml.safe_load(data["service.webhook.argo-why"])
    service["url"] = bot.url
    data["service.webhook.argo-why"] = yaml.safe_dump(service)
    data["subscriptions"] = SUBSCRIPTIONS
    if context is not None:
        data["context"] = yaml.safe_dump(context)
    token = bot.settings.runtime.webhook_token
    assert token is not None
    request: dict[str, Any] = {"configMap": data, "secret": {"argo-why-token": token.get_secret_value()}, "app": app}
    if templates is not None:
        request["templates"] = templates
    # In a thread: the bot answering the engine's request runs on this event loop.
    proc = await asyncio.to_thread(subprocess.run, [str(binary)], input=json.dumps(request), capture_output=True,
                                   text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


def _check_contract(shape: str, app: dict[str, Any], body: dict[str, Any]) -> None:
    assert body == webhook_body(app), shape  # the demo's stand-in for the template says the same as the template
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


async def test_every_body_the_engine_sends_is_accepted_by_the_bot_and_says_what_the_contract_says(
    notify: Path, settings: Settings
) -> None:
    async with running(settings, workers=0) as bot:
        for shape, app in SHAPES.items():
            # What `argocd admin notifications template notify argo-why-drift APP` sends, whatever the trigger says.
            answer = await run_notify(notify, bot, app, context={"argocdUrl": ARGOCD_PUBLIC_URL},
                                      templates=["argo-why-drift"])  # fmt: skip
            # The engine's webhook service counts only a 2xx as sent (any other status is an error, exit 1).
            assert answer["sent"] == 1, shape
            [sent] = answer["notifications"]
            assert (sent["service"], sent["method"], sent["path"]) == ("argo-why", "POST", "/webhooks/argocd")
            _check_contract(shape, app, json.loads(sent["body"]))
        assert await bot.services.queue.depth() == len(SHAPES)


async def test_the_trigger_fires_when_a_sync_did_not_settle_the_app(notify: Path, settings: Settings) -> None:
    async with running(settings, workers=0) as bot:
        fired = set()
        for shape, app in SHAPES.items():
            answer = await run_notify(notify, bot, app, context={"argocdUrl": ARGOCD_PUBLIC_URL})
            [result] = answer["triggers"]["on-drift-after-sync"]
            if result["triggered"]:
                fired.add(shape)
                assert answer["sent"] == 1 and result["templates"] == ["argo-why-drift"]
            else:
                assert answer["sent"] == 0
        assert fired == set(SHAPES) - {"no-operation"}
        settled = json.loads(json.dumps(SHAPES["deployment"]))
        settled["status"]["reconciledAt"] = "2026-08-20T09:11:50Z"  # compared before the sync finished
        answer = await run_notify(notify, bot, settled)
        assert answer["triggers"]["on-drift-after-sync"][0]["triggered"] is False and answer["sent"] == 0
        assert await bot.services.queue.depth() == len(fired)


async def test_without_argocd_url_in_the_context_the_body_says_null(notify: Path, settings: Settings) -> None:
    async with running(settings, workers=0) as bot:
        answer = await run_notify(notify, bot, SHAPES["deployment"], templates=["argo-why-drift"])
        assert answer["sent"] == 1
        assert json.loads(answer["notifications"][0]["body"])["argocdUrl"] is None


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
