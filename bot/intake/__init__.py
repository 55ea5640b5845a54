"""What the inbound handlers (``handlers/``) are given: settings, store, queue and metrics, nothing more.

Handlers validate, acknowledge and enqueue; they never reach Argo CD, the cluster, a Git host or the Slack
Web API (the worker does, with :class:`bot.runtime.Services`). Keeping their view this small is what lets
the import contracts in ``pyproject.toml`` hold. Built once by the composition root (``bot.app``).

What they enqueue is typed in ``jobs`` (one model per job kind, versioned), which the runtime's worker reads back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.metrics import Metrics

if TYPE_CHECKING:
    from bot.queue import WorkQueue
    from bot.store import Store


@dataclass
class Intake:
    settings: Settings
    store: Store
    queue: WorkQueue
    metrics: Metrics
