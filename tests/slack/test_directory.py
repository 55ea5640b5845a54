"""bot.slack.directory against the fake Slack Web API: user-group members (cached) and approvers' names."""

from __future__ import annotations

import pytest

from bot.metrics import Metrics
from bot.slack.directory import Directory
from bot.slack.poster import SlackPoster, SlackUnavailable, make_client
from tests.fakes.clock import FakeClock
from tests.fakes.slack import FakeSlack


def directory(slack: FakeSlack, clock: FakeClock) -> Directory:
    metrics = Metrics()
    return Directory(SlackPoster(make_client(slack.token, slack.url, metrics, retries=0), metrics), clock=clock)


@pytest.fixture
def fake(slack: FakeSlack) -> FakeSlack:
    slack.up()
    slack.calls.clear()
    slack.set_usergroup("S0PLATFORM", ["U0CAROL", "U0DAVE"])
    return slack


async def test_members_of_a_group_may_approve_and_are_cached_for_minutes(fake: FakeSlack) -> None:
    clock = FakeClock(100.0)
    d = directory(fake, clock)
    approvers = ["U0ALICE", "S0PLATFORM"]
    assert await d.may_approve("U0ALICE", approvers)  # listed: no call at all
    assert await d.may_approve("U0CAROL", approvers) and await d.may_approve("U0DAVE", approvers)
    assert not await d.may_approve("U0MALLORY", approvers)
    assert len(fake.calls_to("usergroups.users.list")) == 1
    fake.set_usergroup("S0PLATFORM", ["U0MALLORY"])
    assert not await d.may_approve("U0MALLORY", approvers)  # still the cached members
    clock.now += 301
    assert await d.may_approve("U0MALLORY", approvers) and not await d.may_approve("U0CAROL", approvers)


async def test_a_group_id_is_never_a_person_and_an_unknown_group_has_no_members(fake: FakeSlack) -> None:
    d = directory(fake, FakeClock(100.0))
    assert not await d.may_approve("S0PLATFORM", ["S0PLATFORM"])
    assert not await d.may_approve("U0CAROL", ["S0UNKNOWN"])


async def test_slack_down_while_reading_a_group_is_an_outage_not_a_refusal(fake: FakeSlack) -> None:
    fake.down()
    try:
        with pytest.raises(SlackUnavailable):
            await directory(fake, FakeClock(100.0)).may_approve("U0CAROL", ["S0PLATFORM"])
    finally:
        fake.up()


async def test_names_for_a_pr_body_fall_back_to_the_id(fake: FakeSlack) -> None:
    fake.add_user("U0ALICE", "alice", real_name="Alice Liddell", display_name="alice")
    d = directory(fake, FakeClock(100.0))
    assert await d.name("U0ALICE") == "alice"
    fake.down()
    try:
        assert await d.name("U0ALICE") == "alice"  # cached
        assert await d.name("U0BOB") is None
    finally:
        fake.up()
