"""The system-level rule of a fleet-wide drift: the narrowest argocd-cm rule, its fleet blast radius, its refusals.

Built on the stand-in fleet of ``tests/harness/fleet_kit.py`` (real Deployment objects with real managedFields): the
HPA's replicas drift in three apps, an app with a kubectl edit, an app whose HPA agrees with Git today (Git renders no
replicas), and apps the bot could not read.
"""

from __future__ import annotations

from typing import Any

import pytest

from bot.analysis.fleet import AppObjects, FleetGroup
from bot.analysis.systemrule import SystemRuleCheck, cm_key, owned_leaves, system_rule, whole_section
from tests.harness.fleet_kit import HPA_MANAGER, edited_objects, hpa_objects

SHARED = ("team-a", "team-b", "team-c")


def group(writer: str = HPA_MANAGER, path: str = "/spec/replicas") -> FleetGroup:
    return FleetGroup("apps", "Deployment", path, writer, "autoscaler", SHARED,
                      tuple((a, f"{a}/web") for a in SHARED), True)  # fmt: skip


def quiet_hpa(app: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """An app whose HPA owns replicas but Git renders none: no drift today, yet the rule hides its replicas."""
    desired, live = hpa_objects(app)
    del desired["spec"]["replicas"]
    return desired, live


def fleet(**extra: AppObjects) -> dict[str, AppObjects]:
    known = {a: AppObjects([hpa_objects(a)]) for a in SHARED}
    known["team-d"] = AppObjects([edited_objects("team-d")])
    return {**known, **extra}


def test_the_key_is_per_kind_never_all() -> None:
    assert cm_key("apps", "Deployment") == "resource.customizations.ignoreDifferences.apps_Deployment"
    assert cm_key("", "ConfigMap") == "resource.customizations.ignoreDifferences.ConfigMap"
    assert whole_section("/spec") and whole_section(".data") and not whole_section("/spec/replicas")


def test_the_writer_that_owns_only_leaves_gets_managed_fields_managers_with_no_blast_beyond_the_drift() -> None:
    rule = system_rule(group(), fleet())
    assert rule.offered, rule.refusal
    assert rule.key.endswith(".apps_Deployment") and rule.value == {"managedFieldsManagers": [HPA_MANAGER]}
    r = rule.radius
    assert r.covered == SHARED and r.apps == () and r.fields == () and r.checked == 4 and r.unchecked == ()


def test_the_blast_radius_names_what_it_hides_beyond_the_drift() -> None:
    rule = system_rule(group(), fleet(**{"team-e": AppObjects([quiet_hpa("team-e")])}))
    assert rule.offered  # Git renders no replicas in team-e: nothing Git manages is hidden
    assert rule.radius.apps == ("team-e",)
    assert rule.radius.objects == ("team-e: Deployment team-e/web",)
    assert rule.radius.fields == ("team-e: Deployment team-e/web /spec/replicas",)
    assert rule.radius.git_managed == ()


def test_a_path_rule_that_would_hide_a_git_managed_field_is_refused_and_says_which() -> None:
    # the writer owns no field live (it left no managedFields entry): the field path on every Deployment instead
    rule = system_rule(group(writer="some-operator"), fleet())
    assert rule.value == {"jsonPointers": ["/spec/replicas"]}
    assert not rule.offered and rule.refusal is not None
    assert rule.radius.git_managed == ("team-d: Deployment team-d/web /spec/replicas",)
    assert "Git-managed" in rule.refusal and "team-d: Deployment team-d/web /spec/replicas" in rule.refusal


def test_argocds_own_manager_never_gets_managed_fields_managers() -> None:
    rule = system_rule(group(writer="argocd-controller"), fleet())
    assert "managedFieldsManagers" not in rule.value


def test_never_offered_when_more_than_one_app_in_ten_could_not_be_read() -> None:
    unread = {f"x-{i}": AppObjects(None) for i in range(1)}
    rule = system_rule(group(), fleet(**unread))  # 1 of 5 apps
    assert not rule.offered and rule.refusal is not None and "1 of the 5 apps could not be checked" in rule.refusal
    many = {f"ok-{i}": AppObjects([edited_objects(f"ok-{i}")]) for i in range(6)}
    rule = system_rule(group(), fleet(**unread, **many))  # 1 of 11: checked enough
    assert rule.offered and rule.radius.unchecked == ("x-0",) and rule.radius.checked == 10


def test_owned_leaves_tell_a_list_item_from_a_scalar() -> None:
    live = {"spec": {"replicas": 3, "containers": [{"name": "istio-proxy", "image": "x"}]}}
    fields: dict[str, Any] = {
        "f:spec": {"f:replicas": {}, "f:containers": {'k:{"name":"istio-proxy"}': {".": {}, "f:image": {}}}}
    }
    assert sorted(owned_leaves(fields, live), key=str) == [
        (("spec", "containers", 0), False), (("spec", "containers", 0, "image"), True), (("spec", "replicas"), True),
    ]  # fmt: skip


@pytest.mark.parametrize("writer", [HPA_MANAGER, "argocd-controller"])
@pytest.mark.parametrize("path", ["/spec/replicas", "/spec/template"])
def test_the_check_fed_one_app_at_a_time_in_any_order_finds_what_the_whole_fleet_gives(writer: str, path: str) -> None:
    """The runtime feeds the check the fleet's kept objects a batch at a time, in Argo CD's order, then the apps it
    read from Argo CD and the pending ones: the rule, its radius and its refusal are those of the whole fleet."""
    known = fleet(**{"team-e": AppObjects([quiet_hpa("team-e")]), "team-f": AppObjects(None),
                     "team-g": AppObjects(None, pending=True)})  # fmt: skip
    whole = system_rule(group(writer=writer, path=path), known)
    for order in (sorted(known), sorted(known, reverse=True), ["team-g", "team-e", *SHARED, "team-f", "team-d"]):
        check = SystemRuleCheck(group(writer=writer, path=path))
        for app in order:
            check.add(app, known[app])
        assert check.result() == whole, order
    assert whole.radius.unchecked == ("team-f",) and whole.radius.pending == ("team-g",)
