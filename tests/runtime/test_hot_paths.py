"""The hot paths made cheaper for issue 29 (explain, webhook intake, fleet index) keep what they guarantee.

* the webhook's job is serialized once (``WebhookJob.payload_json``, stored as it is through ``queue.JobJSON``):
  the worker reads back exactly ``payload()``, non-ASCII text included, on both queues;
* ``Metrics.webhook`` counts into the same ``argo_why_webhooks_total{outcome}`` series;
* ``apply_rule`` copies only the containers on the way to what it hides: the object it is given never changes;
* merge keys compare as JSON values (``1``, ``1.0``, ``true`` and ``"1"`` are four keys);
* the fleet index reads a finding only when it is six strings, and shares equal findings between entries.
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest

from bot.analysis.diff import diff_objects
from bot.analysis.fleet import FleetFinding
from bot.analysis.schema import ListType
from bot.analysis.verify import apply_rule
from bot.intake.jobs import WebhookBody, WebhookJob
from bot.metrics import Metrics
from bot.queue import JobJSON, MemoryQueue, RedisQueue
from bot.store.fleet import FleetEntry
from tests.fakes.clock import FakeClock

BODY = {
    "app": {"name": "cafe", "namespace": "argocd", "project": "default"},
    "sync": {"status": "OutOfSync", "revision": "9f3c2a1"},
    "operationState": {"phase": "Succeeded — déjà", "finishedAt": "2026-11-30T08:00:00Z"},
    "outOfSyncResources": [{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop",
                            "name": "web"}],
    "argocdUrl": "https://argocd.example.com",
}  # fmt: skip


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_serialized_job_is_read_back_as_its_payload(kind: str, request: pytest.FixtureRequest) -> None:
    body = WebhookBody.model_validate_json(json.dumps(BODY))
    job = WebhookJob(body=body, received=1764489600.123456, key=body.idempotency_key())
    assert json.loads(job.payload_json()) == job.payload()
    queue = MemoryQueue(FakeClock()) if kind == "memory" else RedisQueue.from_url(request.getfixturevalue("redis_url"))
    try:
        await queue.ensure()
        assert await queue.enqueue_once(job.key, 60, JobJSON(job.payload_json())) is not None
        assert await queue.enqueue_once(job.key, 60, JobJSON(job.payload_json())) is None  # the mark holds
        [entry] = await queue.read("w", count=5, block_ms=0)
        assert entry.job == job.payload()
        assert WebhookJob.model_validate(entry.job) == job
    finally:
        if isinstance(queue, RedisQueue):
            await queue.close()


def test_webhook_outcomes_are_counted_in_the_labelled_series() -> None:
    metrics = Metrics()
    for outcome in ("accepted", "accepted", "duplicate"):
        metrics.webhook(outcome)
    samples = {s.labels["outcome"]: s.value for m in metrics.registry.collect() for s in m.samples
               if s.name == "argo_why_webhooks_total"}  # fmt: skip
    assert samples == {"accepted": 2.0, "duplicate": 1.0}


def test_apply_rule_leaves_its_object_unchanged_and_hides_what_the_rule_names() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"a": "1"}},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "app", "image": "web:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
            {"name": "istio-proxy", "image": "proxy:1"}]}}},
    }  # fmt: skip
    before = copy.deepcopy(obj)
    rule = {"jsonPointers": ["/spec/replicas", "/spec/template/spec/containers/0/env/1"],
            "jqPathExpressions": ['.spec.template.spec.containers[] | select(.name == "istio-proxy")']}  # fmt: skip
    out = apply_rule(rule, obj)
    assert obj == before
    assert "replicas" not in out["spec"]
    assert out["spec"]["template"]["spec"]["containers"] == [
        {"name": "app", "image": "web:1", "env": [{"name": "A", "value": "1"}]}
    ]
    assert out["metadata"] is obj["metadata"]  # what the rule does not touch is shared, not copied
    # the whole-copy result, for comparison
    assert diff_objects(out, apply_rule(rule, copy.deepcopy(obj))) == []


def test_merge_keys_compare_as_json_values() -> None:
    lt = ListType("map", ("port", "protocol"), {"protocol": "TCP"})
    keys = [lt.key_of({"port": p}) for p in (1, 1.0, True, "1")]
    assert len(set(keys)) == 4
    assert lt.key_of({"port": 80}) == lt.key_of({"port": 80, "protocol": "TCP"})
    assert lt.key_of({"port": 80, "protocol": None}) is None  # a null key field is no key, as before
    assert lt.key_of({"port": {"b": 1, "a": 2}}) == lt.key_of({"port": {"a": 2, "b": 1}})


def test_the_fleet_index_reads_six_strings_and_shares_equal_findings() -> None:
    good = ["apps", "Deployment", "/spec/replicas", "kube-controller-manager", "autoscaler", "shop/web"]
    raw = json.dumps({"f": [good, good[:5], [*good[:5], 7], "x", good], "at": time.time(), "since": 1.0,
                      "ch": "C1", "ts": "1.2"})  # fmt: skip
    interned: dict[FleetFinding, FleetFinding] = {}
    one = FleetEntry.from_json(raw, interned)
    other = FleetEntry.from_json(raw, interned)
    assert one is not None and other is not None
    assert one.findings == (FleetFinding(*good), FleetFinding(*good))
    assert type(one.findings[0]) is FleetFinding and one.findings[0].writer == "kube-controller-manager"
    assert other.findings[0] is one.findings[0]
