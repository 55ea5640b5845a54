"""A burst longer than the digest's window is still one digest message (issue 29: a storm made 12 messages at the
top of the channel instead of the first 10 parents and 1 digest).

The burst that sends alerts to the digest is a sliding window (``DIGEST_WINDOW_SECONDS`` of alerts); the digest's
window slides with it: it closes a window after the last app joined it, not a window after its first post. A storm
whose analyses run late (a busy machine, a slow Argo CD) used to open a second digest message a minute after the
first, while the same burst went on.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings
from bot.demo.runner import webhook_body
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.cases import serve_case
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings, until

DIGEST = "__digest__"  # the thread-map key of SLACK_CHANNEL's digest (bot.runtime.digest)
CASES = ["hpa-replicas-csa", "hpa-replicas-ssa", "manual-kubectl-edit-image", "kubectl-rollout-restart",
         "flux-kustomize-image", "kubectl-apply-manual-args"]  # fmt: skip


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


def top(slack: FakeSlack) -> list[dict[str, Any]]:
    return slack.messages(CHANNEL)


async def test_a_digest_still_taking_apps_after_its_window_stays_one_message(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    settings.runtime.digest_threshold = 2
    settings.runtime.digest_window_s = 600
    apps = [serve_case(argocd, kube, c) for c in CASES]
    async with running(settings) as bot:
        for app in apps[:4]:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        await until(lambda: len(top(slack)) == 3, 10)  # two parents, one digest
        # the digest began more than a window ago, and apps kept joining it until now (a long storm)
        store = bot.services.store

        async def digest_saved() -> bool:  # the digest's thread is saved just after Slack accepted its message
            return await store.get_thread(DIGEST) is not None

        await until(digest_saved, 10)
        ref = await store.get_thread(DIGEST)
        assert ref is not None
        now = time.time()
        await store.save_thread(replace(ref, since=now - 700, updated=now), DIGEST)
        for app in apps[4:]:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        late = [a["metadata"]["name"] for a in apps[4:]]
        await until(lambda: len(top(slack)) > 3 or all(n in json.dumps(top(slack)[-1]) for n in late), 15)
        assert len(top(slack)) == 3, [m["text"][:60] for m in top(slack)]
        assert "4 apps went OutOfSync" in top(slack)[-1]["text"]
        # a window after the last app joined, the digest closes: the next burst gets a message of its own
        ref = await store.get_thread(DIGEST)
        assert ref is not None and ref.status == "drift"
        await store.save_thread(replace(ref, updated=time.time() - 601), DIGEST)
        await until(lambda: _closed(bot.services.store), 15)


async def _closed(store: Any) -> bool:
    ref = await store.get_thread(DIGEST)
    return ref is not None and ref.status == "synced"
