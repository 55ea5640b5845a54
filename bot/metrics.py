"""Prometheus metrics of one bot process, on its own registry (so that tests and replicas never share state).

Exposed at ``GET /metrics``. Queue depth and pending entries are read from the
queue at scrape time by the app (``Metrics.set_queue``), not kept in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=lambda: CollectorRegistry(auto_describe=True))

    def __post_init__(self) -> None:
        r = self.registry
        self.webhooks = Counter("argo_why_webhooks_total", "Argo CD webhooks by outcome", ["outcome"], registry=r)
        self.analyses = Counter("argo_why_analyses_total", "Analyses by outcome", ["outcome"], registry=r)
        self.analysis_seconds = Histogram(
            "argo_why_analysis_duration_seconds", "Time from dequeue to Slack accepted", registry=r,
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60),
        )  # fmt: skip
        self.slack_calls = Counter("argo_why_slack_calls_total", "Slack Web API calls", ["method"], registry=r)
        self.slack_ratelimited = Counter("argo_why_slack_ratelimited_total", "Slack 429 answers", registry=r)
        self.slack_auth_ok = Gauge(
            "argo_why_slack_auth_ok", "Last Slack auth.test: 1 accepted, 0 refused or unreachable (not a readiness "
            "condition)", registry=r,
        )  # fmt: skip
        self.slack_auth_ok.set(float("nan"))  # not asked yet: neither accepted nor refused
        self.commands = Counter("argo_why_commands_total", "Slash commands and buttons", ["name"], registry=r)
        self.queue_depth = Gauge("argo_why_queue_depth", "Entries in the work stream", registry=r)
        self.queue_pending = Gauge("argo_why_queue_pending", "Delivered, not yet acknowledged", registry=r)
        self.dead_letters = Counter("argo_why_dead_letters_total", "Jobs given up after retries", registry=r)
        self._webhook_outcomes: dict[str, Any] = {}

    def webhook(self, outcome: str) -> None:
        """Count one webhook by outcome (the labelled counter kept: finding it costs more than the increment)."""
        child = self._webhook_outcomes.get(outcome)
        if child is None:
            child = self._webhook_outcomes[outcome] = self.webhooks.labels(outcome=outcome)
        child.inc()

    def set_queue(self, depth: int, pending: int) -> None:
        self.queue_depth.set(depth)
        self.queue_pending.set(pending)

    def render(self) -> bytes:
        return generate_latest(self.registry)
