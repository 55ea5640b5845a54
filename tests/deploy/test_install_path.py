"""deploy/README.md followed to the letter, and what the chart guarantees on that path (issue 22, items 11-14).

The README's own commands are read from its code blocks, not copied here: the ``helm upgrade --install`` of step 5
is turned into values (``--set`` semantics) and rendered by real Helm (helm-python-sdk, as in ``test_chart``), the
Secret of step 3 gives the keys that exist, the smoke-test webhook of step 7 is sent to the real bot, and the Slack
message the README says will appear must be the one the bot posts. So a README edit that breaks an install fails
here, and so does a chart change the README does not follow.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from bot.config import load_settings
from bot.fixes.locate import DEFINITION_ANNOTATION
from tests.deploy.test_chart import REQUIRED, SECRETS, VALUES, bot_container, env_of, one, render, selects, with_
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings
from tests.paths import ROOT

DEPLOY = ROOT / "deploy"
README = (DEPLOY / "README.md").read_text()
PUBLIC = "https://argocd.example.com"


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def shell_words(block: str) -> list[str]:
    """The words of a shell block as the shell reads them: continuations joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", block)
    return [w for line in joined.splitlines() for w in shlex.split(line, comments=True)]


def _scalar(text: str) -> Any:
    if text.startswith("{") and text.endswith("}"):
        return [_scalar(v) for v in text[1:-1].split(",")]
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isdigit() else text


def set_values(words: list[str]) -> dict[str, Any]:
    """The values of ``--set``/``--set-string`` flags as Helm builds them (dotted keys, ``\\.`` kept, ``{a,b}``)."""
    values: dict[str, Any] = {}
    for flag, arg in itertools.pairwise(words):
        if flag not in ("--set", "--set-string"):
            continue
        key, _, raw = arg.partition("=")
        path = [p.replace("\0", ".") for p in key.replace("\\.", "\0").split(".")]
        node = values
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = raw if flag == "--set-string" else _scalar(raw)
    return values


def step(number: int) -> str:
    start = README.index(f"## {number}. ")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def documented_install() -> dict[str, Any]:
    [block] = [b for b in blocks(step(5), "sh") if "helm upgrade --install" in b]
    return set_values(shell_words(block))


def documented_secret() -> tuple[str, set[str]]:
    [block] = [b for b in blocks(step(3), "sh") if "create secret generic" in b]
    words = shell_words(block)
    name = words[words.index("generic") + 1]
    keys = {w.split("=", 2)[1] for w in words if w.startswith("--from-literal=")}
    return name, keys


# --- the README's install renders a pod that starts, with PRs on and links to the public URL -----------------


def test_the_documented_secret_has_every_key_the_documented_install_references(monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:  # fmt: skip
    values = documented_install()
    assert values["git"]["provider"] == "github"  # the README's install opens pull requests
    objects = render(values)["objects"]
    secret, keys = documented_secret()
    env = env_of(bot_container(objects))
    referenced = {e["valueFrom"]["secretKeyRef"]["key"] for e in env.values()
                  if "valueFrom" in e and e["valueFrom"]["secretKeyRef"]["name"] == secret
                  and not e["valueFrom"]["secretKeyRef"].get("optional")}  # fmt: skip
    assert "GIT_TOKEN" in referenced
    assert referenced <= keys, f"the pod would wait on {referenced - keys} (CreateContainerConfigError)"
    for var in ("SLACK_APP_TOKEN", "REDIS_URL", "KUBECONFIG", "GIT_API_URL", "ARGOCD_PUBLIC_URL"):
        monkeypatch.delenv(var, raising=False)
    for name, entry in env.items():
        if "valueFrom" in entry:
            key = entry["valueFrom"]["secretKeyRef"]["key"]
            if key in keys or not entry["valueFrom"]["secretKeyRef"].get("optional"):
                monkeypatch.setenv(name, SECRETS[key])
        else:
            monkeypatch.setenv(name, str(entry["value"]))
    settings = load_settings()
    settings.check_serve()  # the bot starts with exactly this environment
    assert settings.argocd.link_url == PUBLIC and settings.git.provider == "github"


def test_the_documented_fleet_and_schedule_values_reach_the_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    [block] = [b for b in blocks(step(5), "yaml") if "fleet:" in b]
    documented = yaml.safe_load(block)  # YAML 1.1 as Helm reads a values file: the bare off is false
    env = env_of(bot_container(render(with_(REQUIRED, **documented))["objects"]))
    names = ("FLEET_MIN_APPS", "DAILY_SUMMARY_AT", "WEEKLY_REPORT_AT", "ARGOCD_CM_DEFINITION")
    for name in names:
        monkeypatch.setenv(name, env[name]["value"])
    settings = load_settings()
    assert settings.runtime.fleet_min_apps == documented["fleet"]["minApps"]
    assert settings.runtime.daily_summary_at is None  # "no daily summary", as the comment says
    assert settings.runtime.weekly_report_at == documented["schedule"]["weeklyReportAt"]
    assert settings.git.argocd_cm_definition == documented["argocd"]["cmDefinition"]


def test_links_in_slack_go_to_argo_cds_public_url() -> None:
    env = env_of(bot_container(render(REQUIRED)["objects"]))
    assert env["ARGOCD_PUBLIC_URL"] == {"name": "ARGOCD_PUBLIC_URL", "value": PUBLIC}
    assert env["ARGOCD_URL"]["value"] == "https://argocd-server.argocd.svc"
    public_argocd = render(with_(REQUIRED, argocd={"url": "https://argocd.example.com", "publicUrl": ""}))
    assert "ARGOCD_PUBLIC_URL" not in env_of(bot_container(public_argocd["objects"]))  # the one URL serves both


@pytest.mark.parametrize("url", ["https://argocd-server.argocd.svc", "http://argocd-server",
                                 "https://argocd-server.argocd.svc.cluster.local:443/"])  # fmt: skip
def test_an_in_cluster_argocd_url_without_a_public_one_fails_with_a_sentence(url: str) -> None:
    with pytest.raises(helm.HelmRenderError) as err:
        render(with_(REQUIRED, argocd={"url": url, "publicUrl": ""}))
    assert "argocd.publicUrl is required" in str(err.value) and url in str(err.value)


def test_a_public_url_that_is_not_a_url_is_refused_by_the_schema() -> None:
    with pytest.raises(helm.HelmValuesError):
        render(with_(REQUIRED, argocd={"publicUrl": "argocd.example.com"}))


def test_pull_requests_without_a_token_source_fail_at_render_with_a_sentence() -> None:
    with pytest.raises(helm.HelmRenderError) as err:
        render(with_(REQUIRED, git={"provider": "github"}))
    assert "git.tokenSecret is required with git.provider=github" in str(err.value)
    assert "GIT_TOKEN" in str(err.value) and "deploy/README.md, step 3" in str(err.value)
    objects = render(with_(REQUIRED, git={"provider": "github", "tokenSecret": "git-creds", "tokenKey": "token"}))
    token = env_of(bot_container(objects["objects"]))["GIT_TOKEN"]
    assert token["valueFrom"]["secretKeyRef"] == {"name": "git-creds", "key": "token"}


# --- Redis keeps the queue, the thread map and approvals ---------------------------------------------------


def test_the_in_chart_redis_persists_by_default_on_a_claim() -> None:
    rendered = render(REQUIRED)
    sts = one(rendered["objects"], "StatefulSet")
    [claim] = sts["spec"]["volumeClaimTemplates"]
    assert claim["metadata"]["name"] == "data" and claim["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert not [v for v in sts["spec"]["template"]["spec"].get("volumes") or [] if "emptyDir" in v]
    assert "WARNING" not in rendered["notes"] and "PersistentVolumeClaim" in rendered["notes"]


def test_without_persistence_the_install_says_loudly_what_is_lost() -> None:
    rendered = render(with_(REQUIRED, redis={"persistence": {"enabled": False}}))
    sts = one(rendered["objects"], "StatefulSet")
    assert "volumeClaimTemplates" not in sts["spec"]
    notes = rendered["notes"]
    assert "WARNING" in notes and "emptyDir" in notes
    for lost in ("the queue", "the thread map", "pending approvals", "draining"):
        assert lost in notes, lost


def test_the_redis_image_is_pinned_by_digest() -> None:
    redis = one(render(REQUIRED)["objects"], "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    assert re.fullmatch(r"docker\.io/library/redis@sha256:[0-9a-f]{64}", redis["image"]), redis["image"]


# --- values/ha.yaml works under any release name ------------------------------------------------------------


@pytest.mark.parametrize("release", ["argo-why", "chatops"])
def test_ha_topology_spread_counts_this_releases_pods_whatever_its_name(release: str) -> None:
    values = yaml.safe_load((VALUES / "ha.yaml").read_text())
    deployment = one(render(values, name=release)["objects"], "Deployment")
    pod = deployment["spec"]["template"]
    constraints = pod["spec"]["topologySpreadConstraints"]
    assert len(constraints) == 2
    for constraint in constraints:
        assert selects(constraint["labelSelector"]["matchLabels"], pod["metadata"]["labels"])
        assert constraint["labelSelector"]["matchLabels"]["app.kubernetes.io/instance"] == release
    assert "instance: argo-why" not in (VALUES / "ha.yaml").read_text()


def test_a_constraint_with_its_own_selector_keeps_it() -> None:
    own = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
           "labelSelector": {"matchLabels": {"team": "platform"}}}  # fmt: skip
    pod = one(render(with_(REQUIRED, topologySpreadConstraints=[own]))["objects"], "Deployment")["spec"]["template"]
    assert pod["spec"]["topologySpreadConstraints"] == [own]


# --- three request URLs, everywhere ----------------------------------------------------------------------------


def test_slack_has_three_request_urls_and_every_text_says_three() -> None:
    manifest_text = (DEPLOY / "slack-app-manifest.yaml").read_text()
    manifest = yaml.safe_load(manifest_text)
    urls = [c["url"] for c in manifest["features"]["slash_commands"]] + [
        manifest["settings"]["interactivity"]["request_url"],
        manifest["settings"]["event_subscriptions"]["request_url"],
    ]
    assert len(urls) == 3
    notes = [render(with_(REQUIRED, ingress={"enabled": True, "host": "argo-why.example.com"}))["notes"],
             render(REQUIRED)["notes"]]  # fmt: skip
    for text in (manifest_text, README, *notes):
        assert not re.search(r"\b(two|2)\b[^.]{0,30}\bURLs?\b", text), text[:80]
    for text in (manifest_text, README, *notes):
        assert re.search(r"\bthree\b[^.]{0,30}\bURLs\b", text)


# --- the README's order and its Argo CD configuration --------------------------------------------------------


def test_the_image_comes_before_the_step_that_needs_it() -> None:
    image = README.index("## 0. The image")
    assert image < README.index("## 1. ") < README.index("helm upgrade --install")
    assert "docker buildx build" in step(0)


def test_the_argo_cd_account_is_given_declaratively_too_with_applicationsets() -> None:
    policy = {
        "p, argo-why, applications, get, */*, allow",
        "p, argo-why, applicationsets, get, */*, allow",
        "p, argo-why, projects, get, *, allow",
    }  # AppProjects: routes and approvers per project (issue 17)
    docs = [d for b in blocks(step(2), "yaml") for d in yaml.safe_load_all(b) if d]
    configmaps = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "ConfigMap"}
    assert configmaps["argocd-cm"]["data"] == {"accounts.argo-why": "apiKey"}
    assert set(configmaps["argocd-rbac-cm"]["data"]["policy.csv"].splitlines()) == policy
    assert all(c["metadata"]["namespace"] == "argocd" for c in configmaps.values())
    [helm_values] = [d for d in docs if "configs" in d]  # argo-helm
    assert helm_values["configs"]["cm"] == {"accounts.argo-why": "apiKey"}
    assert set(helm_values["configs"]["rbac"]["policy.csv"].splitlines()) == policy
    imperative = "\n".join(b for b in blocks(step(2), "sh") if "patch" in b)
    assert all(line in imperative for line in policy)  # the patch path grants the same
    assert "reverted" in step(2)  # and says why a patch is not enough when Argo CD manages itself


def test_the_readme_says_how_open_pr_finds_an_applications_file() -> None:
    section = README[README.index("## Open PR") : README.index("## 7. ")]
    assert f"`{DEFINITION_ANNOTATION}`" in section
    for way in ("App of apps", "ApplicationSet", "tracking-id", "applicationsets, get", "shows the YAML to paste"):
        assert way in section, way


def test_the_readme_never_asks_for_the_notifications_argocd_url_for_links() -> None:
    assert "needs `argocdUrl" not in README
    assert "argocdUrl" not in (DEPLOY / "argocd-notifications" / "install.sh").read_text().split("# Links", 1)[0]


# --- what Slack shows after the verification's smoke test ----------------------------------------------------


async def test_the_smoke_test_webhook_posts_the_message_the_readme_shows(
    slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    verify = step(7)
    [curl] = [b for b in blocks(verify, "sh") if "/webhooks/argocd" in b]
    words = shell_words(curl)
    body = json.loads(words[words.index("-d") + 1])
    [shown] = [line.strip()[2:] for line in verify.splitlines() if line.strip().startswith("> ")]
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    settings = settings.model_copy(update={"argocd": settings.argocd.model_copy(update={"public_url": PUBLIC})})
    async with running(settings) as bot:
        assert (await bot.webhook(body)).status_code == 202
        await bot.settle()
    [message] = slack.messages(CHANNEL)
    posted = message["blocks"][0]["text"]["text"]
    assert posted.startswith(shown.removesuffix(".")), (shown, posted)
