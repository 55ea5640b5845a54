"""The running bot's parts, built once by the composition root (``bot.app``) and passed explicitly.

Handlers and the worker receive this object; nothing reads globals or the
environment after start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.config import Settings
from bot.metrics import Metrics

if TYPE_CHECKING:
    from bot.queue import WorkQueue
    from bot.slack.poster import SlackPoster
    from bot.sources.argocd import ArgoCDClient
    from bot.sources.cluster import ClusterSource
    from bot.store import Store


@dataclass
class Services:
    settings: Settings
    store: Store
    queue: WorkQueue
    poster: SlackPoster
    argocd: Callable[[], ArgoCDClient]
    """A new Argo CD client per analysis (each is closed after use)."""
    cluster: ClusterSource | bool = True
    """``True``: the cluster of the app's destination (kubeconfig or in-cluster); ``False``: no cluster context."""
    metrics: Metrics = field(default_factory=Metrics)
