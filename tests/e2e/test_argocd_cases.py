"""What Argo CD's notifications controller sends with the shipped trigger when an app is OutOfSync after a
successful sync although no field was rewritten (tests/harness/argocd_cases.py builds each case on the real Argo CD),
and what the bot does with it. The verdicts themselves are asserted where they are built; these tests pin what the
real controller sends. ``ARGO_WHY_RECORD=folder`` saves each recording as JSON fixtures."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.harness import argocd_cases
from tests.harness.argocd_cases import Recording
from tests.harness.argocd_e2e import E2E

pytestmark = pytest.mark.argocd

WEBHOOK_KEYS = {"app", "sync", "operationState", "health", "outOfSyncResources", "argocdUrl"}


def recorded(e2e: E2E, build: Callable[[E2E, str], Recording], name: str) -> Recording:
    rec = build(e2e, name)
    if os.environ.get("ARGO_WHY_RECORD"):
        rec.save(Path(os.environ["ARGO_WHY_RECORD"]))
    return rec


@pytest.fixture(scope="module")
def git_ahead(e2e: E2E) -> Recording:
    return recorded(e2e, argocd_cases.git_ahead, "git-ahead")


@pytest.fixture(scope="module")
def removed(e2e: E2E) -> Recording:
    return recorded(e2e, argocd_cases.removed_from_git, "pruned-in-git")


@pytest.fixture(scope="module")
def missing(e2e: E2E) -> Recording:
    return recorded(e2e, argocd_cases.missing_after_sync, "left-missing")


def sent_once(rec: Recording) -> dict[str, Any]:
    """The case's webhook, in the contract's shape. Argo CD's notifications controller delivers at least once: its
    ``oncePer`` record is an annotation on the Application, and an update that races with the application
    controller's can lose it (argoproj-labs/argocd-notifications#183, #338), so the same episode may come twice;
    every copy must be of the one episode (the bot answers the copies as duplicates, see below)."""
    assert rec.webhooks, f"no webhook for {rec.name}"
    body = rec.webhooks[0]
    assert len({w["operationState"]["finishedAt"] for w in rec.webhooks}) == 1, rec.webhooks
    assert set(body) == WEBHOOK_KEYS, body
    assert body["app"] == {"name": rec.name, "namespace": "argocd", "project": "default"}
    assert body["operationState"]["phase"] == "Succeeded" and body["sync"]["status"] == "OutOfSync"
    assert body["sync"]["revision"] == rec.application["status"]["sync"]["revision"]
    return dict(body)


def test_git_ahead_after_a_sync_is_left_to_argo_cd_by_the_shipped_trigger(git_ahead: Recording) -> None:
    # the comparison is against the newer commit; the live object is what the sync applied: not drift, no alert
    status = git_ahead.application["status"]
    assert status["sync"]["status"] == "OutOfSync"
    assert status["operationState"]["syncResult"]["revision"] != status["sync"]["revision"]
    assert git_ahead.webhooks == []


def test_a_resource_removed_from_git_with_prune_off_is_sent_as_out_of_sync(removed: Recording) -> None:
    body = sent_once(removed)
    # the template's `toJson .group` of a core kind: Argo CD's ResourceStatus omits an empty group, so `null`
    assert body["outOfSyncResources"] == [{"group": None, "version": "v1", "kind": "ConfigMap",
                                           "namespace": removed.namespace, "name": "pruned-in-git-old"}]  # fmt: skip
    [item] = [r for r in removed.application["status"]["resources"] if r["kind"] == "ConfigMap"]
    assert item["requiresPruning"] is True
    [diff] = [r for r in removed.managed_resources if r["kind"] == "ConfigMap"]
    assert diff["targetState"] == "null" and diff["liveState"] != "null"


def test_a_sync_that_leaves_a_resource_missing_is_sent_with_it(missing: Recording) -> None:
    body = sent_once(missing)
    expected = {"group": None, "version": "v1", "kind": "ConfigMap", "namespace": missing.namespace,
                "name": "left-missing-settings"}  # fmt: skip
    assert body["outOfSyncResources"] == [expected]
    [item] = [r for r in missing.application["status"]["resources"] if r["kind"] == "ConfigMap"]
    assert item["status"] == "OutOfSync" and item["health"]["status"] == "Missing"
    [diff] = [r for r in missing.managed_resources if r["kind"] == "ConfigMap"]
    assert diff["liveState"] == "null" and diff["targetState"] != "null"


@pytest.mark.parametrize("case", ["missing", "removed"])
def test_the_bot_answers_the_case_in_the_channel(e2e: E2E, case: str, request: pytest.FixtureRequest) -> None:
    rec: Recording = request.getfixturevalue(case)
    # one accepted; a copy of the same episode from an at-least-once delivery (see sent_once) is a duplicate
    [first, *copies] = [s.status for s in e2e.tap.for_app(rec.name)]
    assert first == 202 and all(status == 200 for status in copies), (first, copies)
    [_parent] = e2e.wait_parents(rec.name, f"the bot's answer about {rec.name}")
