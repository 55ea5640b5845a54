"""Who may open a pull request, and when enough people have said yes (README, "Fixes from chat: Open PR", step 1).

The approver is always the ``user.id`` of the signed Slack payload; nothing a button carries can name one.
``APPROVERS`` lists user IDs and user-group IDs; unset or empty, nobody may approve. With
``APPROVALS_REQUIRED=2`` a second, *different* approver must agree: the same person twice never counts twice
(the store keeps each person's first approval), and an approval older than :data:`APPROVAL_TTL_S` no longer
counts. Approvals are kept per fix (:attr:`bot.fixes.proposal.Proposal.fix_id`), so the parent's button and a
finding's button for the same change share them. Every decision goes to the audit stream
(:func:`audit_record` builds the record) and is said in the thread by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from bot.store import Store

APPROVAL_TTL_S = 24 * 3600

Outcome = Literal["nobody-may", "not-allowed", "twice", "partial", "approved"]


class Approvers(Protocol):
    async def may_approve(self, user: str, approvers: Sequence[str]) -> bool: ...


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    approvers: tuple[str, ...] = ()
    """Who has approved so far, earliest first (for ``partial`` and ``approved``)."""
    required: int = 1


async def decide(store: Store, directory: Approvers, *, allowed: Sequence[str], required: int, fix_id: str,
                 user: str, now: float) -> Decision:  # fmt: skip
    """Record ``user``'s click on ``fix_id`` if ``user`` may approve, and say where the fix stands."""
    if not allowed:
        return Decision("nobody-may", required=required)
    if not await directory.may_approve(user, allowed):
        return Decision("not-allowed", required=required)
    approvals = await store.add_approval(fix_id, user, {}, now, APPROVAL_TTL_S)
    ordered = sorted(approvals, key=lambda u: float(approvals[u]["at"]))
    if len(ordered) >= required:
        return Decision("approved", tuple(ordered), required)
    seen_before = approvals.get(user, {}).get("at") != now
    return Decision("twice" if seen_before else "partial", tuple(ordered), required)


def audit_record(*, user: str, action: str, decision: str, app: str, fix_id: str, at: float,
                 **extra: str) -> dict[str, str]:  # fmt: skip
    """One line of ``argo-why:audit``: who, when, what, and what was decided (never a token or a value)."""
    return {"at": f"{at:.3f}", "user": user, "action": action, "decision": decision, "app": app, "fix": fix_id,
            **extra}  # fmt: skip
