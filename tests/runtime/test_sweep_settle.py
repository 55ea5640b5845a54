"""The sweep queues an alert Argo CD did not send only once the sync's comparison can be trusted: the same wait as
the shipped trigger (deploy/argocd-notifications), 5 seconds after the sync finished. The real Argo CD showed why
(tests/e2e/test_argocd_trigger.py): the comparison it starts as a sync finishes can see a created resource Missing,
and an alert queued then would take the idempotency key of the sync's real alert."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.runtime.sweep import SETTLE_S, settled_after_sync

ROOT = Path(__file__).resolve().parents[2]
FINISHED = datetime(2026, 12, 3, 8, 32, 51, tzinfo=UTC).timestamp()


def app(reconciled: str = "2026-12-03T08:32:51Z") -> dict[str, Any]:
    op = {"phase": "Succeeded", "startedAt": "2026-12-03T08:32:51Z", "finishedAt": "2026-12-03T08:32:51Z"}
    return {"status": {"sync": {"status": "OutOfSync"}, "reconciledAt": reconciled, "operationState": op}}


def test_a_comparison_in_the_seconds_after_the_sync_is_not_trusted_yet() -> None:
    assert settled_after_sync(app(), FINISHED + 0.5) is False
    assert settled_after_sync(app(), FINISHED + SETTLE_S - 0.1) is False


def test_after_the_wait_a_post_sync_comparison_is_trusted() -> None:
    assert settled_after_sync(app(), FINISHED + SETTLE_S) is True
    assert settled_after_sync(app(reconciled="2026-12-03T08:32:50Z"), FINISHED + 60) is False  # compared before


def test_the_wait_is_the_shipped_triggers() -> None:
    trigger = (ROOT / "deploy" / "argocd-notifications" / "argocd-notifications-cm.patch.yaml").read_text()
    [seconds] = re.findall(r"finishedAt\)\)\.Seconds\(\) >= (\d+)", trigger)
    assert float(seconds) == SETTLE_S
