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
from bot.store import ThreadRef
from bot.store.state import DigestItem, DigestState
from bot.wording import slack as wording
from tests.builders import explain_case
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.cases import serve_case
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import CHANNEL, running, service_settings, until
from tests.paths import CASEBOOK

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
        ref = await _opened(bot, slack, apps[:4])
        # the digest began more than a window ago, and apps kept joining it until now (a long storm)
        store = bot.services.store
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
        later = await store.get_thread(DIGEST)
        assert later is not None and later.status == "drift"
        await store.save_thread(replace(later, updated=time.time() - 601), DIGEST)
        await until(lambda: _closed(bot.services.store), 15)


async def _opened(bot: Any, slack: FakeSlack, apps: list[dict[str, Any]]) -> ThreadRef:
    """Four alerts with a digest threshold of 2: two parents and a digest; the digest's thread record, once saved
    (just after Slack accepted its message)."""
    for app in apps:
        await bot.webhook(webhook_body(app))
    await bot.settle()
    await until(lambda: len(top(slack)) == 3, 10)  # two parents, one digest
    store = bot.services.store

    async def digest_saved() -> bool:
        return await store.get_thread(DIGEST) is not None

    await until(digest_saved, 10)
    ref: ThreadRef | None = await store.get_thread(DIGEST)
    assert ref is not None
    return ref


async def _closed(store: Any) -> bool:
    ref = await store.get_thread(DIGEST)
    return ref is not None and ref.status == "synced"


@pytest.mark.parametrize("extra", [0, 58], ids=["a-line-each", "grouped"])
async def test_a_digest_whose_state_the_previous_release_wrote_is_continued_and_kept_as_summaries(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, extra: int
) -> None:
    """Issue 29: the digest keeps a summary per app, not its report. A digest opened by a replica of the previous
    release (its state holds each app's report) is still updated in place after an upgrade, with every app's line and
    "Show details" button, and is written back as summaries; so is a grouped one (``extra`` more apps listed: no
    line, no button each), whose apps stay in their cause's group at the next flush."""
    settings.runtime.digest_threshold = 2
    settings.runtime.digest_window_s = 600
    apps = [serve_case(argocd, kube, c) for c in CASES]
    async with running(settings) as bot:
        await _opened(bot, slack, apps[:4])
        store = bot.services.store
        listed: list[DigestState] = []

        async def both_listed() -> bool:  # the digest may be posted with one app, then updated with the other
            now = await store.get_thread(DIGEST)
            state = await DigestState.load(store, now.fingerprint) if now is not None else None
            listed[:] = [state] if state is not None else []
            return state is not None and len(state.items) == 2

        await until(both_listed, 15)
        ref = await store.get_thread(DIGEST)
        [state] = listed
        assert ref is not None and "2 apps went OutOfSync" in top(slack)[-1]["text"]
        # what the previous release kept: each app's DigestItem, its report included, and no buttons
        case_of = {a["metadata"]["name"]: c for c, a in zip(CASES, apps, strict=True)}
        old = {key: DigestItem.of(row.alert, explain_case(CASEBOOK / "cases" / case_of[row.alert.app], row.alert.app))
               .model_dump(mode="json") for key, row in state.items.items()}  # fmt: skip
        assert len(old) == 2 and all(item["report"]["findings"] for item in old.values())
        first = next(iter(old.values()))
        for i in range(extra):  # more apps the previous release listed, with the same drift
            copy = json.loads(json.dumps(first))
            copy["alert"]["app"] = f"listed-{i:02d}"
            old[f"argocd/listed-{i:02d}"] = copy
        legacy = await store.put_state("digest", json.dumps({"items": old, "grouped": False}), 3600)
        await store.save_thread(replace(ref, fingerprint=legacy), DIGEST)
        for app in apps[4:]:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        names = [a["metadata"]["name"] for a in apps[2:]]
        await until(lambda: f"{4 + extra} apps went OutOfSync" in top(slack)[-1]["text"], 15)
        assert len(top(slack)) == 3, [m["text"][:60] for m in top(slack)]
        lines = [b for b in top(slack)[-1]["blocks"] if b["type"] == "section"][1:]
        if not extra:
            assert [next(n for n in names if f"|{n}>" in b["text"]["text"]) for b in lines] == sorted(names)
            assert all("top cause" in b["text"]["text"] and b["accessory"]["value"] for b in lines), lines
        else:  # grouped by cause: no app of the previous release is counted as still pending
            pending = wording.SLACK_DIGEST_STATES["pending"]
            assert pending not in json.dumps(top(slack)[-1]["blocks"]), top(slack)[-1]["text"]
        later = await store.get_thread(DIGEST)
        assert later is not None
        text = await store.get_state(later.fingerprint)
        assert text is not None and '"report"' not in str(text) and "findings" not in str(text)
        kept = DigestState.model_validate_json(text)
        assert len(kept.items) == 4 + extra
        assert all(r.summary is not None and r.summary.state == "drift" for r in kept.items.values())
        assert all((r.buttons is not None) == (not extra) for r in kept.items.values())
