"""Routing rules (bot.routing), the route settings, and channel names resolved through the fake Slack.

The order of the channel sources, the route map formats and their errors in words (naming the setting and the entry),
approvers per project; fuzzed route maps, annotations and channel names give a route or a clear error, never a
crash; ``conversations.list`` is read page by page, once, and an unknown name is said, not guessed.
"""

from __future__ import annotations

import json
import string
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config import ConfigError, load_settings
from bot.metrics import Metrics
from bot.routing import (
    CHANNEL_ANNOTATION,
    RouteError,
    approvers_for,
    channel_ref,
    choose_channel,
    parse_approver_routes,
    parse_channel_routes,
    subscription_recipients,
)
from bot.slack.channels import Channels, UnknownChannel
from bot.slack.poster import SlackPoster, make_client
from tests.fakes.slack import FakeSlack
from tests.paths import ROOT

SUBSCRIBE = "notifications.argoproj.io/subscribe.on-drift-after-sync.argo-why"


def obj(annotations: dict[str, str] | None = None, project: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": "x", "annotations": annotations or {}}, "spec": {"project": project}}


# --- the route maps ---------------------------------------------------------------------------------------------


def test_channel_routes_read_both_formats_in_order() -> None:
    compact = parse_channel_routes("team-a-*=#team-a, team-b=C0TEAMB;\nplatform-?=team-p")
    assert list(compact.items()) == [("team-a-*", "#team-a"), ("team-b", "C0TEAMB"), ("platform-?", "#team-p")]
    assert parse_channel_routes('{"team-a-*": "#team-a", "team-b": "C0TEAMB"}') == {"team-a-*": "#team-a",
                                                                                     "team-b": "C0TEAMB"}  # fmt: skip
    assert parse_channel_routes("") == {} and parse_channel_routes("  ") == {}


def test_approver_routes_read_both_formats() -> None:
    assert parse_approver_routes("team-a-*=U0ALICE S0TEAMA; team-b=U0BOB,U0CAROL; closed=") == {
        "team-a-*": ["U0ALICE", "S0TEAMA"], "team-b": ["U0BOB", "U0CAROL"], "closed": []}  # fmt: skip
    assert parse_approver_routes('{"team-a": ["U0ALICE"], "team-b": "U0BOB S0B"}') == {
        "team-a": ["U0ALICE"], "team-b": ["U0BOB", "S0B"]}  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("team-a", "entry 'team-a' is not pattern=value"),
        ("team-a=Team A", "entry 'team-a': 'Team A' is neither a channel ID"),
        ("Team_A=#a", "'Team_A' is not an AppProject name or glob"),
        ("a=#x;a=#y", "pattern 'a' is given twice"),
        ('{"a": 3}', "entry 'a': the channel must be a string, got int"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "entry '[1' is not pattern=value"),  # a comma separates entries
        ('{"a": "#x"', "not valid JSON"),
    ],
)
def test_a_malformed_channel_route_map_is_refused_naming_the_entry(raw: str, said: str) -> None:
    with pytest.raises(RouteError, match=None) as e:
        parse_channel_routes(raw)
    assert said in str(e.value)


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("team-a=alice", "entry 'team-a': expected Slack user (U...) or user-group (S...) IDs, got alice"),
        ('{"team-a": [1]}', "entry 'team-a': approvers must be a string or a list of IDs"),
        ("=U0ALICE", "is not pattern=value"),
        ('"U0ALICE"', "is not pattern=value"),
    ],
)
def test_a_malformed_approver_route_map_is_refused_naming_the_entry(raw: str, said: str) -> None:
    with pytest.raises(RouteError) as e:
        parse_approver_routes(raw)
    assert said in str(e.value)


def test_the_settings_name_the_variable_and_the_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHANNEL_ROUTES", "team-a=#team-a,team-b=Team B")
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(e.value).startswith("CHANNEL_ROUTES: ") and "entry 'team-b'" in str(e.value)
    monkeypatch.setenv("CHANNEL_ROUTES", "team-a=#team-a")
    monkeypatch.setenv("APPROVER_ROUTES", "team-a=U0ALICE;team-b=bob")
    with pytest.raises(ConfigError) as e:
        load_settings()
    assert str(e.value).startswith("APPROVER_ROUTES: ") and "entry 'team-b'" in str(e.value)
    monkeypatch.setenv("APPROVER_ROUTES", "team-a=U0ALICE")
    s = load_settings()
    assert s.slack.channel_routes == {"team-a": "#team-a"} and s.git.approver_routes == {"team-a": ["U0ALICE"]}


def test_argo_why_serve_stops_on_a_malformed_route_map_with_one_line() -> None:
    env = {"PATH": "/usr/bin:/bin", "CHANNEL_ROUTES": "team-a=#Team A"}
    done = subprocess.run([sys.executable, "-m", "bot", "serve"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 2, done.stderr
    # every setting that needs fixing is said at once, one line each: the route map's line names the bad entry
    [line] = [x.strip() for x in done.stderr.splitlines() if "CHANNEL_ROUTES" in x]
    assert line.startswith("CHANNEL_ROUTES: ") and "entry 'team-a'" in line
    assert "Traceback" not in done.stderr


# --- the order of the sources -----------------------------------------------------------------------------------

ROUTES = {"team-b*": "#team-b", "*": "C0CATCHALL"}


def test_each_source_wins_over_the_next() -> None:
    project = obj({CHANNEL_ANNOTATION: "C0PROJECT", SUBSCRIBE: "#from-project-sub"}, "team-b-web")
    app = obj({CHANNEL_ANNOTATION: "#from-app", SUBSCRIBE: "#from-app-sub"}, "team-b-web")
    route = choose_channel(app, project, "team-b-web", routes=ROUTES, default="C0DEFAULT")
    assert (route.channel, route.source) == ("#from-app", "app-annotation")
    app = obj({SUBSCRIBE: "#from-app-sub"})
    route = choose_channel(app, project, "team-b-web", routes=ROUTES, default="C0DEFAULT")
    assert (route.channel, route.source) == ("C0PROJECT", "project-annotation")
    route = choose_channel(app, obj({SUBSCRIBE: "#from-project-sub"}), "team-b-web", routes=ROUTES, default="C0D")
    assert (route.channel, route.source) == ("#from-app-sub", "subscription")
    route = choose_channel(obj({SUBSCRIBE: ""}), obj({SUBSCRIBE: "#from-project-sub"}), "team-b-web", routes=ROUTES,
                           default="C0D")  # fmt: skip
    assert (route.channel, route.source) == ("#from-project-sub", "subscription")
    route = choose_channel(obj({SUBSCRIBE: ""}), None, "team-b-web", routes=ROUTES, default="C0D")
    assert (route.channel, route.source) == ("#team-b", "channel-routes")  # the first matching glob
    route = choose_channel(None, None, "other", routes=ROUTES, default="C0D")
    assert (route.channel, route.source) == ("C0CATCHALL", "channel-routes")
    route = choose_channel(None, None, None, routes=ROUTES, default="C0D")
    assert (route.channel, route.source, route.problems) == ("C0D", "default", ())


def test_a_value_that_is_not_a_channel_is_skipped_and_said() -> None:
    app = obj({CHANNEL_ANNOTATION: "Team A!"})
    route = choose_channel(app, obj({CHANNEL_ANNOTATION: "#team-a"}), "team-a", routes={}, default="C0D")
    assert route.channel == "#team-a" and route.source == "project-annotation"
    [problem] = route.problems
    assert "annotation argo-why.io/channel of the Application" in problem and "'Team A!'" in problem


def test_subscriptions_to_other_services_or_without_a_channel_are_not_routes() -> None:
    annotations = {
        "notifications.argoproj.io/subscribe.on-sync-failed.slack": "#elsewhere",
        "notifications.argoproj.io/subscribe.on-drift-after-sync.argo-why-other": "#elsewhere",
        "notifications.argoproj.io/subscribe.argo-why": "#all-triggers;C0SECOND",
    }
    assert subscription_recipients(annotations) == ["#all-triggers", "C0SECOND"]
    route = choose_channel(obj({SUBSCRIBE: "argo-why"}), None, "p", routes={}, default="C0D")
    assert route.source == "default" and route.problems == ()  # a recipient that names no channel: not a route


def test_approvers_per_project_fall_back_to_approvers() -> None:
    routes = {"team-a*": ["U0ALICE"], "closed": []}
    assert approvers_for("team-a-web", routes, ["U0ROOT"]) == ["U0ALICE"]
    assert approvers_for("closed", routes, ["U0ROOT"]) == []
    assert approvers_for("team-b", routes, ["U0ROOT"]) == ["U0ROOT"]
    assert approvers_for(None, routes, ["U0ROOT"]) == ["U0ROOT"]


# --- fuzzing: a route or a clear error, never a crash -----------------------------------------------------------

_TEXT = st.text(alphabet=string.printable + "é#=;,{}[]\"'*?", max_size=80)


@settings(max_examples=300, deadline=None)
@given(raw=st.one_of(_TEXT, st.dictionaries(_TEXT, st.one_of(_TEXT, st.integers(), st.none()), max_size=4)
                     .map(json.dumps)))  # fmt: skip
def test_fuzzed_route_maps_parse_or_say_why(raw: str) -> None:
    for parse in (parse_channel_routes, parse_approver_routes):
        try:
            parsed = parse(raw)
        except RouteError as e:
            assert str(e) and "\n" not in str(e)
        else:
            assert all(isinstance(k, str) and k for k in parsed)


@settings(max_examples=300, deadline=None)
@given(app=st.dictionaries(st.sampled_from([CHANNEL_ANNOTATION, SUBSCRIBE, "other"]), _TEXT, max_size=3),
       project=st.dictionaries(st.sampled_from([CHANNEL_ANNOTATION, SUBSCRIBE]), _TEXT, max_size=2),
       name=st.one_of(st.none(), _TEXT))  # fmt: skip
def test_fuzzed_annotations_always_give_a_channel(app: dict[str, str], project: dict[str, str],
                                                  name: str | None) -> None:  # fmt: skip
    route = choose_channel(obj(app), obj(project), name, routes=ROUTES, default="C0DEFAULT")
    assert route.channel == "C0DEFAULT" or channel_ref(route.channel) == route.channel


# --- channel names through conversations.list ------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fresh_slack() -> Any:
    with FakeSlack() as fake:
        yield fake


async def test_names_are_read_page_by_page_once_and_cached(fresh_slack: FakeSlack) -> None:
    for i in range(2500):
        fresh_slack.add_channel(f"C{i:08d}X", f"team-{i}")
    fresh_slack.add_channel("G0PRIVATE", "secret-team")
    clock = Clock()
    channels = Channels(SlackPoster(make_client(fresh_slack.token, fresh_slack.url, Metrics()), Metrics()), clock=clock)
    assert await channels.resolve("#team-2499") == "C00002499X"
    assert await channels.resolve("secret-team") == "G0PRIVATE"
    assert await channels.resolve("C0GIVENID") == "C0GIVENID"  # an ID costs no call
    assert len(fresh_slack.calls_to("conversations.list")) == 3  # 1000 a page
    with pytest.raises(UnknownChannel, match="no channel #no-such-team"):
        await channels.resolve("#no-such-team")
    with pytest.raises(UnknownChannel):
        await channels.resolve("#no-such-team")  # a typo costs one listing a minute, not one per alert
    assert len(fresh_slack.calls_to("conversations.list")) == 3
    fresh_slack.add_channel("C0NEWTEAM", "new-team")
    clock.now += 61
    assert await channels.resolve("#new-team") == "C0NEWTEAM"  # created after start-up: found again


@settings(max_examples=60, deadline=None)
@given(name=_TEXT)
async def test_fuzzed_channel_names_resolve_or_say_why(name: str) -> None:
    with FakeSlack() as fake:
        fake.add_channel("C0TEAMA", "team-a")
        channels = Channels(SlackPoster(make_client(fake.token, fake.url, Metrics()), Metrics()))
        try:
            got = await channels.resolve(name)
        except (RouteError, UnknownChannel) as e:
            assert str(e)
        else:
            assert got == "C0TEAMA" or got == name.strip()
