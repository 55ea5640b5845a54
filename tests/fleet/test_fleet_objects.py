"""The fleet index's objects (bot/store/fleetobjects.py), in Redis and in memory: what every analysis keeps of an
app's resources, by kind, with the stamp of the Application it was read with (issue 29: the system-level rule's
check reads them instead of every app's managed-resources)."""

from __future__ import annotations

from typing import Any

from bot.store.fleetobjects import stamp_of
from tests.harness.fleet_kit import edited_objects, hpa_objects
from tests.runtime.test_store import StoreKit, kit  # noqa: F401  (kit: a fixture)


def app(revision: str, finished: str, status: str = "OutOfSync") -> dict[str, Any]:
    return {"metadata": {"name": "shop", "resourceVersion": "1"},
            "status": {"sync": {"status": status, "revision": revision}, "reconciledAt": "2026-12-03T08:00:00Z",
                       "operationState": {"startedAt": "2026-12-03T07:59:00Z", "finishedAt": finished}}}  # fmt: skip


def test_the_stamp_changes_with_a_sync_a_revision_or_the_status_never_with_a_refresh() -> None:
    base = app("abc", "2026-12-03T07:59:30Z")
    refreshed = {**base, "metadata": {"name": "shop", "resourceVersion": "2"},
                 "status": {**base["status"], "reconciledAt": "2026-12-03T08:03:00Z"}}  # fmt: skip
    assert stamp_of(refreshed) == stamp_of(base)
    assert stamp_of(app("def", "2026-12-03T07:59:30Z")) != stamp_of(base)
    assert stamp_of(app("abc", "2026-12-03T09:00:00Z")) != stamp_of(base)
    assert stamp_of(app("abc", "2026-12-03T07:59:30Z", "Synced")) != stamp_of(base)


async def test_objects_are_kept_by_kind_and_replaced_whole(kit: StoreKit) -> None:  # noqa: F811
    deployment = hpa_objects("shop")
    config = ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}}, None)
    async with kit.open() as store:
        objects = store.fleet_objects
        await objects.put("argocd/shop", "s1", [deployment, config])
        got = await objects.of_kind(["argocd/shop", "argocd/other"], "apps", "Deployment")
        assert list(got) == ["argocd/shop"] and got["argocd/shop"].stamp == "s1"
        assert got["argocd/shop"].pairs == [deployment]
        assert (await objects.of_kind(["argocd/shop"], "", "ConfigMap"))["argocd/shop"].pairs == [config]
        assert (await objects.of_kind(["argocd/shop"], "batch", "Job"))["argocd/shop"].pairs == []  # none: known
        edited = edited_objects("shop")
        await objects.put("argocd/shop", "s2", [edited])  # the next analysis replaces everything
        got = await objects.of_kind(["argocd/shop"], "", "ConfigMap")
        assert got["argocd/shop"].stamp == "s2" and got["argocd/shop"].pairs == []
        await objects.drop("argocd/shop")
        assert await objects.of_kind(["argocd/shop"], "apps", "Deployment") == {}
