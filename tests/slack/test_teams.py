"""Two teams on one bot, end to end: real HTTP (uvicorn, Bolt, signed requests), real Redis, the worker; fake Slack,
Argo CD (with AppProjects), cluster and GitHub.

Team A owns the AppProjects ``team-a*`` and the channel #team-a; team B ``team-b*`` and #team-b; ``SLACK_CHANNEL`` is
the platform team's. Every message must land in its team's channel (each routing source in its order), a storm in
one channel must leave the other alone, approvers of one team may not approve the other's fixes, and ``/argo why``,
``/argo diff``, ``/argo mute`` and the buttons answer only where the app is visible.
"""

from __future__ import annotations

import asyncio
import copy
import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from pydantic import SecretStr

from bot.app import build_services
from bot.config import GitSettings, Settings
from bot.demo import EXAMPLES
from bot.demo.fake_argocd import app_from_case, app_project
from bot.demo.fake_kube import context_from_case
from bot.demo.gitops import REPO, gitops_files, root_application, tracked_by
from bot.demo.runner import webhook_body
from bot.runtime.reminders import Reminders
from bot.runtime.routes import Router, RoutesUnresolved, check_channel_routes
from bot.slack.channels import Channels
from bot.slack.poster import SlackPoster, make_client
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.git import FakeGitHub
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack, block_action_body, slash_command_body
from tests.harness.service_kit import CHANNEL, Bot, running, service_settings, until
from tests.paths import CASEBOOK

TEAM_A, TEAM_B, TEAM_C = "C0TEAMA", "C0TEAMB", "C0TEAMC"
ALICE, BOB = "U0ALICE", "U0BOB"  # Alice approves for team A, Bob for team B
SUBSCRIBE = "notifications.argoproj.io/subscribe.on-drift-after-sync.argo-why"
CASE = "hpa-replicas-csa"
GIT_TOKEN = "ghp_" + "t3ams" * 8


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    s = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    for cid, name in ((TEAM_A, "team-a"), (TEAM_B, "team-b"), (TEAM_C, "team-c")):
        slack.add_channel(cid, name)
    s.slack.channel_routes = {"team-a*": "#team-a", "team-b*": TEAM_B}
    return s


def team_app(argocd: FakeArgoCD, kube: FakeKubernetes, name: str, project: str,
             annotations: dict[str, str] | None = None, case: str = CASE) -> dict[str, Any]:  # fmt: skip
    """A casebook scenario served as the Application ``name`` of ``project``."""
    folder = CASEBOOK / "cases" / case
    app, resources, renders = app_from_case(folder)
    app = copy.deepcopy(app)
    app["metadata"]["name"] = name
    app["metadata"]["annotations"] = {**(app["metadata"].get("annotations") or {}), **(annotations or {})}
    app["spec"]["project"] = project
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(folder))
    return app


def parents(slack: FakeSlack, channel: str) -> list[dict[str, Any]]:
    return slack.messages(channel)


def texts(slack: FakeSlack, channel: str) -> str:
    """Every message of a channel, threads included, as one string."""
    out = []
    for m in slack.messages(channel):
        out.append(json.dumps(m))
        out += [json.dumps(r) for r in slack.thread(channel, m["ts"])]
    return "\n".join(out)


def ephemerals(slack: FakeSlack, user: str) -> list[str]:
    return [str(c.params.get("text")) for c in slack.calls_to("chat.postEphemeral") if c.params.get("user") == user]


# --- routing ----------------------------------------------------------------------------------------------------


async def test_every_source_routes_in_its_order(settings: Settings, slack: FakeSlack, argocd: FakeArgoCD,
                                               kube: FakeKubernetes) -> None:  # fmt: skip
    argocd.add_project(app_project("team-a-platform", {"argo-why.io/channel": TEAM_C}))
    argocd.add_project(app_project("misc"))
    apps = {
        "by-app-annotation": team_app(
            argocd, kube, "by-app-annotation", "team-a-platform", {"argo-why.io/channel": "#team-b"}
        ),
        "by-project-annotation": team_app(argocd, kube, "by-project-annotation", "team-a-platform"),
        "by-subscription": team_app(argocd, kube, "by-subscription", "misc", {SUBSCRIBE: "#team-a"}),
        "by-channel-routes": team_app(argocd, kube, "by-channel-routes", "team-b-web", {SUBSCRIBE: ""}),
        "by-default": team_app(argocd, kube, "by-default", "default"),
        "unknown-name": team_app(argocd, kube, "unknown-name", "misc", {"argo-why.io/channel": "#no-such-team"}),
    }
    async with running(settings) as bot:
        for app in apps.values():
            await bot.webhook(webhook_body(app))
        await bot.settle()
    where = {name: [c for c in (TEAM_A, TEAM_B, TEAM_C, CHANNEL) if name in json.dumps(parents(slack, c))]
             for name in apps}  # fmt: skip
    assert where == {"by-app-annotation": [TEAM_B], "by-project-annotation": [TEAM_C], "by-subscription": [TEAM_A],
                     "by-channel-routes": [TEAM_B], "by-default": [CHANNEL], "unknown-name": [CHANNEL]}  # fmt: skip
    # the alert that could not go to its channel says why, in its thread: never a silent drop
    [lost] = [m for m in parents(slack, CHANNEL) if "unknown-name" in json.dumps(m)]
    note = " ".join(r["text"] for r in slack.thread(CHANNEL, lost["ts"]))
    assert "#no-such-team" in note and "no channel" in note and "argo-why.io/channel" in note


async def test_apps_of_one_project_routed_at_once_read_their_appproject_once(
    settings: Settings, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    argocd.add_project(app_project("team-a-web", {"argo-why.io/channel": TEAM_C}))
    names = [f"web-{i}" for i in range(6)]
    for name in names:
        team_app(argocd, kube, name, "team-a-web")
    services = build_services(settings)
    try:
        router = Router(services)
        routed = await asyncio.gather(*(router.route(name, "argocd") for name in names))  # a storm's workers
    finally:
        await services.store.close()
        await services.queue.close()
    assert {r.channel for r in routed} == {TEAM_C}  # every app routed by the project's annotation
    assert [c.path for c in argocd.calls if c.path.startswith("/api/v1/projects/")] == ["/api/v1/projects/team-a-web"]


async def test_a_channel_id_the_bot_cannot_post_in_sends_the_alert_to_slack_channel_saying_why(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = team_app(argocd, kube, "uninvited", "team-a", {"argo-why.io/channel": "C0NOTINVITED"})
    slack.error_next("chat.postMessage", "not_in_channel")
    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
    [parent] = parents(slack, CHANNEL)
    assert "uninvited" in parent["text"] and parents(slack, TEAM_A) == []
    note = " ".join(r["text"] for r in slack.thread(CHANNEL, parent["ts"]))
    assert "<#C0NOTINVITED>" in note and "not_in_channel" in note


async def test_alerts_in_a_burst_that_cannot_go_to_their_channel_say_why_in_the_digest(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    settings.runtime.digest_threshold = 1
    apps = [team_app(argocd, kube, f"lost-{i}", "misc", {"argo-why.io/channel": "#gone"}) for i in range(3)]
    async with running(settings) as bot:
        for app in apps:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        await until(lambda: len(parents(slack, CHANNEL)) == 2 and "lost-2" in json.dumps(parents(slack, CHANNEL)[1]))
        await until(lambda: len(slack.thread(CHANNEL, parents(slack, CHANNEL)[1]["ts"])) == 2)
    single, digest = parents(slack, CHANNEL)
    notes = [r["text"] for r in slack.thread(CHANNEL, digest["ts"])]
    assert all("#gone" in n for n in notes) and {"lost-1", "lost-2"} == {n.split()[3] for n in notes}
    assert any("#gone" in r["text"] for r in slack.thread(CHANNEL, single["ts"]))


async def test_a_name_in_channel_routes_that_slack_does_not_know_stops_the_start(settings: Settings,
                                                                                slack: FakeSlack) -> None:  # fmt: skip
    async with running(settings, workers=0) as bot:
        await check_channel_routes(bot.services)  # both known
        settings.slack.channel_routes = {"team-a*": "#team-a", "team-z": "#team-zz"}
        bot.services.channels = Channels(SlackPoster(make_client(slack.token, slack.url, bot.services.metrics),
                                                     bot.services.metrics))  # fmt: skip
        with pytest.raises(RoutesUnresolved, match=r"CHANNEL_ROUTES: entry team-z=#team-zz: Slack has no channel"):
            await check_channel_routes(bot.services)


async def test_a_storm_in_team_a_leaves_team_b_untouched(settings: Settings, slack: FakeSlack, argocd: FakeArgoCD,
                                                        kube: FakeKubernetes) -> None:  # fmt: skip
    settings.runtime.digest_threshold = 2
    storm = [team_app(argocd, kube, f"a-{i}", "team-a-web") for i in range(5)]
    calm = team_app(argocd, kube, "b-api", "team-b")
    async with running(settings) as bot:
        for app in storm:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        await bot.webhook(webhook_body(calm))
        await bot.settle()
        await until(lambda: "3 apps went OutOfSync" in json.dumps(parents(slack, TEAM_A)), 10)
    team_a, team_b = parents(slack, TEAM_A), parents(slack, TEAM_B)
    assert len(team_a) == 3  # two parents, then one digest for the other three
    assert [m for m in team_a if "b-api" in json.dumps(m)] == []
    [parent] = team_b  # team B's one alert has its own parent, buttons and thread
    assert "b-api" in parent["text"] and "actions" in json.dumps(parent["blocks"])
    assert slack.thread(TEAM_B, parent["ts"])
    assert parents(slack, CHANNEL) == []


async def test_an_app_moved_to_another_team_starts_a_thread_there_and_says_so(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = team_app(argocd, kube, "wanderer", "team-a")
    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
        [old] = parents(slack, TEAM_A)
        moved = team_app(argocd, kube, "wanderer", "team-a", {"argo-why.io/channel": "#team-b"})
        body = webhook_body(moved)
        body["operationState"] = {**body["operationState"], "finishedAt": "2026-12-01T10:00:00Z"}
        await bot.webhook(body)
        await bot.settle()
        ref = await bot.services.store.get_thread(f"{app['metadata']['namespace']}/wanderer")
    [new] = parents(slack, TEAM_B)
    assert len(parents(slack, TEAM_A)) == 1  # no new parent in the old channel
    assert any(f"<#{TEAM_B}>" in r["text"] for r in slack.thread(TEAM_A, old["ts"]))
    new_thread = slack.thread(TEAM_B, new["ts"])
    assert any(f"<#{TEAM_A}>" in r["text"] for r in new_thread)
    assert any("`spec.replicas`" in json.dumps(r) for r in new_thread)  # the explanation again, in the new thread
    assert ref is not None and (ref.channel, ref.ts) == (TEAM_B, new["ts"])


# --- visibility -------------------------------------------------------------------------------------------------


async def test_commands_answer_only_where_the_app_is_visible(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    settings.git = GitSettings(approver_routes={"team-a*": [ALICE], "team-b*": [BOB]})
    team_app(argocd, kube, "secret-sauce", "team-a")

    async def command(text: str, channel: str, user: str) -> None:
        r = await bot.slack_post(slash_command_body("/argo", text, channel_id=channel, user_id=user,
                                                    response_url=slack))  # fmt: skip
        assert r.status_code == 200
        await bot.settle()

    async with running(settings) as bot:
        await command("why secret-sauce", TEAM_B, BOB)
        await command("diff secret-sauce", TEAM_B, BOB)
        await command("mute secret-sauce 2h", TEAM_B, BOB)
        await command("why no-such-app", TEAM_B, BOB)
        await command("why secret-sauce", "D0BOB", BOB)  # a DM with someone who may not approve for team A
        assert await bot.services.store.mute_until("secret-sauce", 1e12) is None
        assert parents(slack, TEAM_B) == [] and slack.messages("D0BOB") == []
        refusals = ephemerals(slack, BOB)
        assert len(refusals) == 5 and all("is not visible here" in t for t in refusals)
        # the same words for an app that does not exist: nothing says which one exists
        assert refusals[0].replace("secret-sauce", "X") == refusals[3].replace("no-such-app", "X")
        await command("why secret-sauce", TEAM_A, ALICE)
        await command("why secret-sauce", "D0ALICE", ALICE)  # a DM with someone who may approve for it
        await command("mute secret-sauce 2h", TEAM_A, ALICE)
        assert await bot.services.store.mute_until("secret-sauce", 0)
    assert "`spec.replicas`" in texts(slack, TEAM_A) and "`spec.replicas`" in texts(slack, "D0ALICE")
    assert ephemerals(slack, ALICE) == []


async def test_buttons_answer_only_where_the_app_is_visible(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    app = team_app(argocd, kube, "button-app", "team-a")
    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
        [parent] = parents(slack, TEAM_A)
        values = {e["action_id"]: e["value"] for b in parent["blocks"] if b["type"] == "actions"
                  for e in b["elements"]}  # fmt: skip
        replies = len(slack.thread(TEAM_A, parent["ts"]))
        for action in ("show_diff", "mute", "recheck"):  # a copied payload, pointed at team B's channel
            body = block_action_body(action, values[action], user_id=BOB, channel_id=TEAM_B, message_ts=parent["ts"],
                                     response_url=slack)  # fmt: skip
            assert (await bot.slack_post(body)).status_code == 200
        await bot.settle()
        assert await bot.services.store.mute_until(f"{app['metadata']['namespace']}/button-app", 0) is None
    assert len(slack.thread(TEAM_A, parent["ts"])) == replies and parents(slack, TEAM_B) == []
    assert len(ephemerals(slack, BOB)) == 3 and all("not visible here" in t for t in ephemerals(slack, BOB))


# --- approvers per project --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(web_url="https://github.com") as fake:
        yield fake


def checkout(argocd: FakeArgoCD, kube: FakeKubernetes, project: str) -> dict[str, Any]:
    """The demo's checkout app in ``project``, routed to #team-a by its own annotation whatever its project."""
    folder = EXAMPLES / "checkout-hpa-and-hotfix"
    app, resources, renders = app_from_case(folder)
    app = tracked_by(app)
    app["spec"]["project"] = project
    app["metadata"].setdefault("annotations", {})["argo-why.io/channel"] = "#team-a"
    argocd.add_app(app, resources, renders)
    kube.add(*context_from_case(folder))
    return app


async def test_approvers_of_one_team_may_not_approve_the_others_fixes(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, github: FakeGitHub
) -> None:
    github.reset()
    github.token = GIT_TOKEN
    app = checkout(argocd, kube, "team-a")
    argocd.add_app(root_application(), [], [[]])
    github.add_repo(REPO, gitops_files([app]))
    routes = {"team-a*": [ALICE], "team-b*": [BOB]}
    settings.git = GitSettings(provider="github", token=SecretStr(GIT_TOKEN), api_url=github.api_url,
                               approvers=["U0ROOT"], approver_routes=routes)  # fmt: skip

    def open_pr(bot: Bot, parent: dict[str, Any], user: str, ts: str) -> bytes:
        value, block_id = next((e["value"], b["block_id"]) for b in parent["blocks"] if b["type"] == "actions"
                               for e in b["elements"] if e["action_id"] == "open_pr")  # fmt: skip
        return block_action_body("open_pr", value, user_id=user, channel_id=TEAM_A, message_ts=parent["ts"],
                                 block_id=block_id, action_ts=ts, response_url=slack, message=parent)  # fmt: skip

    async with running(settings) as bot:
        await bot.webhook(webhook_body(app))
        await bot.settle()
        [parent] = parents(slack, TEAM_A)
        await bot.slack_post(open_pr(bot, parent, BOB, "1.1"))  # team B's approver
        await bot.slack_post(open_pr(bot, parent, "U0ROOT", "1.2"))  # a global approver: team A has its own
        await bot.settle()
        assert github.pulls(REPO) == []
        [bob, root] = ephemerals(slack, BOB) + ephemerals(slack, "U0ROOT")
        assert f"<@{ALICE}>" in str(slack.calls_to("chat.postEphemeral")[-1].params)
        assert "`team-a`" in bob and "Only" in bob and "`team-a`" in root
        # the project is read from Argo CD at the click: the app moved to team B, Alice may no longer approve
        checkout(argocd, kube, "team-b")
        await bot.slack_post(open_pr(bot, parent, ALICE, "1.3"))
        await bot.settle()
        assert github.pulls(REPO) == [] and "`team-b`" in ephemerals(slack, ALICE)[0]
        await bot.slack_post(open_pr(bot, parent, BOB, "1.4"))
        await bot.settle()
        audit = await bot.services.store.read_audit()
    assert len(github.pulls(REPO)) == 1
    assert [(a["user"], a["decision"], a.get("project")) for a in audit if a["decision"] in ("refused", "opened")] == [
        (BOB, "refused", "team-a"), ("U0ROOT", "refused", "team-a"), (ALICE, "refused", "team-b"),
        (BOB, "opened", None)]  # fmt: skip


async def test_the_daily_summary_is_one_message_per_channel_about_its_own_apps(
    settings: Settings, slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    apps = [team_app(argocd, kube, "a-summary", "team-a"), team_app(argocd, kube, "b-summary", "team-b")]
    async with running(settings) as bot:
        for app in apps:
            await bot.webhook(webhook_body(app))
        await bot.settle()
        assert await Reminders(bot.services).summary() == 2
        assert await Reminders(bot.services).summary() == 2  # run again (another replica): nothing said twice
    team_a, team_b = parents(slack, TEAM_A), parents(slack, TEAM_B)
    assert len(team_a) == 2 and len(team_b) == 2 and parents(slack, CHANNEL) == []
    for summary, own, other in ((team_a[1], "a-summary", "b-summary"), (team_b[1], "b-summary", "a-summary")):
        assert "drifting longest" in summary["text"] and own in summary["text"] and other not in summary["text"]


# --- fuzzed channels: a channel or a line saying why, never a crash or a lost alert -------------------------------

_CHANNEL_TEXT = st.one_of(
    st.sampled_from(["#team-a", "team-b", TEAM_C, "#no-such-team", "", " ", "#", "C0", "G0PRIVATE0", "#Team-A"]),
    st.text(alphabet=string.ascii_letters + string.digits + "#-_ .,;é\n", max_size=40),
)


@hypothesis.settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_CHANNEL_TEXT, where=st.sampled_from(["argo-why.io/channel", SUBSCRIBE]))
async def test_fuzzed_channel_annotations_route_somewhere_and_say_why(
    settings: Settings, argocd: FakeArgoCD, kube: FakeKubernetes, value: str, where: str
) -> None:
    team_app(argocd, kube, "fuzzed", "default", {where: value})
    services = build_services(settings)
    try:
        routed = await Router(services).route("fuzzed", "argocd")
    finally:
        await services.store.close()
        await services.queue.close()
    # an ID is taken as given (no scope needed): if Slack refuses it, the post falls back (the next test)
    assert routed.channel in (TEAM_A, TEAM_B, TEAM_C, CHANNEL) or routed.channel == value.strip()
    if routed.channel == CHANNEL and where == "argo-why.io/channel":
        assert routed.note and "fuzzed" in routed.note  # the alert goes to SLACK_CHANNEL with a line saying why
