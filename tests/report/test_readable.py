"""Values and paths as people read them (issue 22, item 8): a multi-line text by the lines that changed, a long
opaque value by its length and hash, a path by item names rather than indices and escapes; the JSON pointer stays
RFC 6901. The text report through the real CLI; Slack end to end (real HTTP, Redis, the worker, the fakes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from bot.cli import main
from bot.demo import EXAMPLES
from bot.demo.fake_argocd import app_from_case
from bot.demo.fake_kube import context_from_case
from bot.demo.runner import webhook_body
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings

CABUNDLE = EXAMPLES / "cert-manager-cabundle"


def _explain(case: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    args = ["explain", "--desired", str(case / "desired.yaml"), "--live", str(case / "live.yaml"), "--format", fmt]
    if (case / "context.yaml").exists():
        args += ["--context", str(case / "context.yaml")]
    assert main(args) == 1
    return capsys.readouterr().out


def _bundle(case: Path) -> str:
    live = yaml.safe_load((case / "live.yaml").read_text())
    items = live.get("items") or [live]
    hooks = next(i for i in items if i["kind"].endswith("WebhookConfiguration"))
    return str(hooks["webhooks"][0]["clientConfig"]["caBundle"])


def test_a_ca_bundle_is_its_length_and_hash_and_paths_name_items(capsys: pytest.CaptureFixture[str]) -> None:
    text = _explain(CABUNDLE, "text", capsys)
    bundle = _bundle(CABUNDLE)
    assert len(bundle) > 1000 and bundle[:40] not in text  # never printed, not even cut short
    assert f"{len(bundle):,} characters, sha256 " in text
    assert "webhooks[name=" in text and "].clientConfig.caBundle of " in text
    report = json.loads(_explain(CABUNDLE, "json", capsys))
    [f] = [f for f in report["findings"] if f["pointer"].endswith("/caBundle")]
    assert f["pointer"].startswith("/webhooks/") and f["live"] == bundle  # the JSON keeps the pointer and the value
    assert f["path"].startswith("webhooks[name=") and f["path"].endswith("].clientConfig.caBundle")


@pytest.fixture
def configmap_case(tmp_path: Path) -> Path:
    """The checkout example, with one line of the ConfigMap's application.yaml changed live."""
    case = tmp_path / "case"
    shutil.copytree(EXAMPLES / "checkout-hpa-and-hotfix", case)
    live = yaml.safe_load((case / "live.yaml").read_text())
    config = next(i for i in live["items"] if i["kind"] == "ConfigMap" and i["metadata"]["name"] == "checkout-config")
    assert "batch-size: 200" in config["data"]["application.yaml"]
    config["data"]["application.yaml"] = config["data"]["application.yaml"].replace(
        "batch-size: 200", "batch-size: 500"
    )
    (case / "live.yaml").write_text(yaml.safe_dump(live, sort_keys=False))
    return case


def test_a_changed_line_of_an_embedded_text_is_said_not_both_texts(
    configmap_case: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _explain(configmap_case, "text", capsys)
    block = text.split('data["application.yaml"]  (/data/application.yaml)', 1)[1].split("\n\n", 1)[0]
    assert "changed:  batch-size: 200 → 500" in block
    assert "why:      data[\"application.yaml\"] of ConfigMap checkout/checkout-config differs from Git in its text " \
           "(batch-size: 200 → 500)" in block  # fmt: skip
    assert "cart-service-url" not in block  # the unchanged lines are not printed, once or twice


async def test_slack_says_the_changed_line_and_readable_paths(
    configmap_case: Path, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    app, resources, renders = app_from_case(configmap_case)
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(configmap_case))
    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
    [parent] = slack.messages(CHANNEL)
    thread = str([m["blocks"] for m in slack.thread(CHANNEL, parent["ts"])])
    assert "Changed lines: `batch-size: 200 → 500`" in thread
    assert "cart-service-url" not in thread and "cart-service-url" not in str(parent["blocks"])
    assert "`spec.template.spec.containers[name=worker].image` of Deployment" in str(parent["blocks"])
    assert "/containers/0/" not in str(parent["blocks"])
