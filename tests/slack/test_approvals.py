"""bot.fixes.approvals: who may approve a fix, and when enough different people have.

README, "Fixes from chat: Open PR", step 1 "Who may approve".
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bot.fixes.approvals import APPROVAL_TTL_S, audit_record, decide
from bot.store import MemoryStore
from tests.fakes.clock import FakeClock


class Groups:
    """User groups as Slack would answer ``usergroups.users.list`` (the real Directory is tested end to end)."""

    def __init__(self, groups: dict[str, set[str]]) -> None:
        self.groups = groups

    async def may_approve(self, user: str, approvers: Sequence[str]) -> bool:
        if not user.startswith(("U", "W")):
            return False
        return user in approvers or any(user in self.groups.get(a, set()) for a in approvers)


GROUPS = Groups({"S0PLATFORM": {"U0CAROL", "U0DAVE"}})
ALLOWED = ["U0ALICE", "U0BOB", "S0PLATFORM"]


async def test_nobody_may_approve_when_approvers_is_empty() -> None:
    d = await decide(MemoryStore(), GROUPS, allowed=[], required=1, fix_id="f", user="U0ALICE", now=1.0)
    assert d.outcome == "nobody-may"


@pytest.mark.parametrize("user", ["U0MALLORY", "S0PLATFORM", "W0ALICE", ""])
async def test_someone_not_listed_is_refused_and_nothing_is_recorded(user: str) -> None:
    store = MemoryStore()
    d = await decide(store, GROUPS, allowed=ALLOWED, required=1, fix_id="f", user=user, now=1.0)
    assert d.outcome == "not-allowed"
    assert set(await store.add_approval("f", "U0BOB", {}, 2.0, APPROVAL_TTL_S)) == {"U0BOB"}


@pytest.mark.parametrize("user", ["U0ALICE", "U0CAROL"])
async def test_one_approver_is_enough_by_default_listed_or_through_a_group(user: str) -> None:
    d = await decide(MemoryStore(), GROUPS, allowed=ALLOWED, required=1, fix_id="f", user=user, now=1.0)  # fmt: skip
    assert d.outcome == "approved" and d.approvers == (user,)


async def test_two_required_the_same_person_twice_never_counts_twice() -> None:
    store = MemoryStore()

    async def click(user: str, now: float) -> tuple[str, tuple[str, ...]]:
        d = await decide(store, GROUPS, allowed=ALLOWED, required=2, fix_id="f", user=user, now=now)  # fmt: skip
        return d.outcome, d.approvers

    assert await click("U0ALICE", 10.0) == ("partial", ("U0ALICE",))
    assert await click("U0ALICE", 20.0) == ("twice", ("U0ALICE",))
    assert await click("U0MALLORY", 25.0) == ("not-allowed", ())
    d = await decide(store, GROUPS, allowed=ALLOWED, required=2, fix_id="f", user="U0DAVE", now=30.0)
    assert (d.outcome, d.approvers) == ("approved", ("U0ALICE", "U0DAVE"))


async def test_an_approval_expires_after_24_hours() -> None:
    clock = FakeClock()
    store = MemoryStore(clock)
    t0 = clock.now
    await decide(store, GROUPS, allowed=ALLOWED, required=2, fix_id="f", user="U0ALICE", now=t0)
    clock.now = t0 + APPROVAL_TTL_S + 1
    d = await decide(store, GROUPS, allowed=ALLOWED, required=2, fix_id="f", user="U0BOB", now=clock.now)
    assert (d.outcome, d.approvers) == ("partial", ("U0BOB",))


async def test_approvals_of_one_fix_do_not_count_for_another() -> None:
    store = MemoryStore()
    await decide(store, GROUPS, allowed=ALLOWED, required=2, fix_id="a", user="U0ALICE", now=1.0)
    d = await decide(store, GROUPS, allowed=ALLOWED, required=2, fix_id="b", user="U0BOB", now=2.0)
    assert d.outcome == "partial"


def test_audit_records_say_who_when_what_and_the_decision() -> None:
    record = audit_record(user="U0ALICE", action="open_pr", decision="refused", app="argocd/shop", fix_id="f",
                          at=1.5, reason="not an approver")  # fmt: skip
    assert record == {"at": "1.500", "user": "U0ALICE", "action": "open_pr", "decision": "refused",
                      "app": "argocd/shop", "fix": "f", "reason": "not an approver"}  # fmt: skip
