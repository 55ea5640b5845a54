"""Golden tests of the fleet's Slack messages: the fleet line (with the system-level rule, and with the reason it is
not offered), the approval of a system-level rule, the drift overview and the App Home view."""

from __future__ import annotations

from bot.analysis.fleet import BlastRadius, FleetGroup, SystemRule
from bot.slack.render.fleet import fleet_line_message, system_approval_message
from bot.slack.render.overview import GROUPS_PER_PAGE, AppFacts, home_view, overview_message
from tests.slack.test_slack_render import check_golden

APPS = tuple(f"argocd/team-{c}" for c in "abcdefg")
HPA = FleetGroup("apps", "Deployment", "/spec/replicas", "kube-controller-manager", "autoscaler", APPS,
                 tuple((a, f"{a.split('/')[1]}/web") for a in APPS), True)  # fmt: skip
EDIT = FleetGroup("apps", "Deployment", '.spec.template.spec.containers[] | select(.name == "app") | .image',
                  "kubectl-edit", "manual-edit", ("argocd/shop",), (("argocd/shop", "shop/web"),), False)  # fmt: skip
RADIUS = BlastRadius(covered=APPS, apps=("argocd/quiet",), objects=("argocd/quiet: Deployment quiet/web",),
                     fields=("argocd/quiet: Deployment quiet/web /spec/replicas",), git_managed=(), checked=9,
                     unchecked=("argocd/broken",))  # fmt: skip
RULE = SystemRule(HPA, "resource.customizations.ignoreDifferences.apps_Deployment",
                  {"managedFieldsManagers": ["kube-controller-manager"]}, RADIUS, None)  # fmt: skip


def test_golden_fleet_line_with_the_system_rule_and_its_button() -> None:
    m = fleet_line_message(HPA, "argocd/team-a", RULE, "sysfix:AAAAAAAAAAAAAAAA")
    check_golden("fleet_line", m.to_dict())
    assert m.text.startswith("The same in 6 other apps: argocd/team-b")


def test_golden_fleet_line_when_no_rule_is_offered() -> None:
    refused = SystemRule(HPA, RULE.key, {"jsonPointers": ["/spec/replicas"]}, RADIUS,
                         "it would also hide 1 Git-managed field in other objects")  # fmt: skip
    m = fleet_line_message(HPA, "argocd/team-a", refused, None)
    check_golden("fleet_line_refused", m.to_dict())
    assert "open_pr" not in str(m.blocks)


def test_golden_system_approval() -> None:
    m = system_approval_message("/spec/replicas of apps/Deployment written by kube-controller-manager",
                                "managedFieldsManagers: ['kube-controller-manager']", ["U0ALICE"],
                                "sysfix:AAAAAAAAAAAAAAAA")  # fmt: skip
    check_golden("fleet_approval", m.to_dict())


def test_golden_overview_and_home() -> None:
    facts = {a: AppFacts(drifting_s=3600 * (i + 1), muted=i == 1, pr_open=i == 2) for i, a in enumerate(APPS)}
    facts["argocd/shop"] = AppFacts(drifting_s=90_000)
    m = overview_message([EDIT, HPA], facts)
    check_golden("overview", m.to_dict())
    assert m.text == "Drift overview: 8 apps OutOfSync, 2 causes"
    assert "Fleet-wide" in m.blocks[1]["text"]["text"]  # fleet-wide first, whatever the order given
    check_golden("home", home_view([EDIT, HPA], facts))


def test_the_overview_pages() -> None:
    many = [FleetGroup("", "ConfigMap", "/data/x", f"writer-{i}", "operator", (f"argocd/app-{i}",),
                       ((f"argocd/app-{i}", "ns/cm"),), False) for i in range(GROUPS_PER_PAGE + 2)]  # fmt: skip
    first, second = overview_message(many, {}, 1), overview_message(many, {}, 2)
    assert "Next: /argo drift 2" in str(first.blocks) and "Page 2 of 2." in str(second.blocks)
    assert str(overview_message(many, {}, 99).blocks) == str(second.blocks)  # clamped to the last page
