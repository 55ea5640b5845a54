"""What Argo CD's notifications controller sends with the shipped trigger when an app is OutOfSync after a
successful sync although no field was rewritten (tests/harness/argocd_cases.py builds each case on the real Argo CD),
and that the bot answers each in the channel. The verdicts themselves are asserted where they are built; these tests
pin what the real controller sends. ``ARGO_WHY_RECORD=folder`` saves each recording as JSON fixtures."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.harness import argocd_cases
from tests.harness.argocd_cases import Recording
from tests.harness.argocd_e2e import E2E

pytestmark = pytest.mark.argocd

WEBHOOK_KEYS = {"app", "sync", "operationState", "health", "outOfSyncResources", "argocdUrl"}


def checked(e2e: E2E, rec: Recording) -> dict[str, Any]:
    """The one webhook of the case, in the contract's shape; the bot answered it in the channel."""
    if os.environ.get("ARGO_WHY_RECORD"):
        rec.save(Path(os.environ["ARGO_WHY_RECORD"]))
    [body] = rec.webhooks
    assert set(body) == WEBHOOK_KEYS, body
    assert body["app"] == {"name": rec.name, "namespace": "argocd", "project": "default"}
    assert body["operationState"]["phase"] == "Succeeded" and body["sync"]["status"] == "OutOfSync"
    assert body["sync"]["revision"] == rec.application["status"]["sync"]["revision"]
    e2e.wait_parents(rec.name, f"the bot's answer about {rec.name}")
    return dict(body)


def test_git_ahead_after_a_sync_is_sent_with_the_resource_git_changed(e2e: E2E) -> None:
    rec = argocd_cases.git_ahead(e2e, "git-ahead")
    body = checked(e2e, rec)
    assert body["outOfSyncResources"] == [{"group": "apps", "version": "v1", "kind": "Deployment",
                                           "namespace": rec.namespace, "name": "git-ahead"}]  # fmt: skip
    # the comparison is against the newer commit; the live object is what the sync applied
    assert rec.application["status"]["operationState"]["syncResult"]["revision"] != body["sync"]["revision"]


def test_a_resource_removed_from_git_with_prune_off_is_sent_as_out_of_sync(e2e: E2E) -> None:
    rec = argocd_cases.removed_from_git(e2e, "pruned-in-git")
    body = checked(e2e, rec)
    assert body["outOfSyncResources"] == [{"group": "", "version": "v1", "kind": "ConfigMap",
                                           "namespace": rec.namespace, "name": "pruned-in-git-old"}]  # fmt: skip
    [item] = [r for r in rec.application["status"]["resources"] if r["kind"] == "ConfigMap"]
    assert item["requiresPruning"] is True
    [diff] = [r for r in rec.managed_resources if r["kind"] == "ConfigMap"]
    assert diff["targetState"] == "null" and diff["liveState"] != "null"


def test_a_sync_that_leaves_a_resource_missing_is_sent_with_it(e2e: E2E) -> None:
    rec = argocd_cases.missing_after_sync(e2e, "left-missing")
    body = checked(e2e, rec)
    assert body["outOfSyncResources"] == [{"group": "", "version": "v1", "kind": "ConfigMap",
                                           "namespace": rec.namespace, "name": "left-missing-settings"}]  # fmt: skip
    [item] = [r for r in rec.application["status"]["resources"] if r["kind"] == "ConfigMap"]
    assert item["status"] == "OutOfSync" and item["health"]["status"] == "Missing"
    [diff] = [r for r in rec.managed_resources if r["kind"] == "ConfigMap"]
    assert diff["liveState"] == "null" and diff["targetState"] != "null"
