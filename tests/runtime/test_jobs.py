"""bot.intake.jobs: every job kind round-trips through its JSON payload; other versions and shapes are rejected."""

from __future__ import annotations

from typing import Any

import pytest

from bot.intake.jobs import (
    JOB_VERSION,
    ActionId,
    ButtonJob,
    CommandJob,
    JobRejected,
    NoteJob,
    WebhookBody,
    WebhookJob,
    app_key,
    parse_job,
)

BODY = {"app": {"name": "shop", "namespace": "argocd", "project": "default"},
        "sync": {"status": "OutOfSync", "revision": "9f3c2a1"}, "operationState": None}  # fmt: skip


def _webhook() -> WebhookJob:
    body = WebhookBody.model_validate(BODY)
    return WebhookJob(body=body, received=1.5, key=body.idempotency_key())


@pytest.mark.parametrize(
    "job",
    [
        _webhook(),
        CommandJob(command="why", app="shop", app_namespace=None, channel="C1", user="U1", response_url=None),
        ButtonJob(type="show_diff", state="report:AAAAAAAAAAAAAAAA", channel="C1", thread_ts="1.2", user="U1"),
        ButtonJob(type="recheck", state="report:AAAAAAAAAAAAAAAA", channel="C1", thread_ts=None, user="U1"),
        NoteJob(channel="C1", thread_ts="1.2", text="muted"),
    ],
)
def test_every_job_round_trips_through_its_payload(job: Any) -> None:
    payload = job.payload()
    assert payload["version"] == JOB_VERSION and payload["type"]
    assert parse_job(payload) == job


def test_a_job_from_before_versions_reads_as_version_1() -> None:
    legacy = {"type": "note", "channel": "C1", "thread_ts": "1.2", "text": "hello"}
    assert parse_job(legacy) == NoteJob(channel="C1", thread_ts="1.2", text="hello")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({**_webhook().payload(), "version": 2}, "job version 2 (this replica reads version 1)"),
        ({**_webhook().payload(), "version": 0}, "job version 0"),
        ({"type": "launch_rockets", "version": 1}, "unreadable 'launch_rockets' job"),
        ({"version": 1}, "unreadable None job"),
        ({"type": "command", "command": "why"}, "unreadable 'command' job: command.app"),
        ({"type": "command", "command": "rm", "app": "a", "channel": "C", "user": "U"}, "command.command"),
    ],
)
def test_other_versions_and_shapes_are_rejected_with_a_reason(raw: dict[str, Any], reason: str) -> None:
    with pytest.raises(JobRejected) as e:
        parse_job(raw)
    assert reason in str(e.value)


def test_the_webhook_key_and_app_key() -> None:
    body = WebhookBody.model_validate(BODY)
    assert body.app_key == "argocd/shop" == app_key("shop", "argocd")
    assert app_key("shop", None) == "shop"
    later = WebhookBody.model_validate({**BODY, "operationState": {"finishedAt": "2026-11-02T10:00:00Z"}})
    assert later.idempotency_key() != body.idempotency_key()
    assert WebhookBody.model_validate({**BODY, "extra": 1}).idempotency_key() == body.idempotency_key()


def test_action_ids_are_the_contract() -> None:
    assert [a.value for a in ActionId] == ["show_diff", "mute", "recheck", "open_pr", "approve"]
