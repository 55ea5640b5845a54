"""The fleet index's objects are held compressed and decoded at each use (issue 29: a replica's memory in a storm).

The check of a system-level rule walks every app of the fleet; with every app's objects decoded at once, 1,000 apps'
Deployments were ~100 MB of a replica's peak (bench/storm.py --profile). Kept compressed and decoded app by app, the
check holds one app's objects at a time; what it finds is the same.
"""

from __future__ import annotations

from bot.analysis.fleet import AppObjects
from bot.analysis.systemrule import system_rule
from bot.store.fleetobjects import StoredPairs, by_kind
from tests.fleet.test_system_rule import fleet, group
from tests.harness.fleet_kit import hpa_objects
from tests.runtime.test_store import StoreKit, kit  # noqa: F401  (kit: a fixture)


async def test_kept_objects_are_decoded_at_each_use_never_held(kit: StoreKit) -> None:  # noqa: F811
    deployment = hpa_objects("shop")
    async with kit.open() as store:
        await store.fleet_objects.put("argocd/shop", "s1", [deployment])
        pairs = (await store.fleet_objects.of_kind(["argocd/shop"], "apps", "Deployment"))["argocd/shop"].pairs
    first, again = list(pairs), list(pairs)
    assert first == again == [deployment] and pairs == [deployment] and len(pairs) == 1
    assert first[0][1] is not again[0][1]  # a fresh decode each time: nothing decoded stays referenced


def test_the_system_rule_finds_the_same_over_kept_objects_as_over_decoded_ones() -> None:
    # the stand-in fleet of tests/fleet/test_system_rule.py: HPA drift in three apps, a kubectl edit in a fourth
    decoded = fleet()
    kept = {app: AppObjects(StoredPairs(by_kind(objs.pairs or ())["apps/Deployment"])) for app, objs in decoded.items()}
    assert system_rule(group(), kept) == system_rule(group(), decoded)
    assert system_rule(group(path="/spec/template"), kept) == system_rule(group(path="/spec/template"), decoded)
