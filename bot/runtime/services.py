"""The running bot's parts as the worker sees them, built once by the composition root (``bot.app``).

:class:`Services` is the handlers' :class:`bot.intake.Intake` plus Slack (the poster, and the outbox every job
posts through, exactly once) and the outbound sources (Argo CD, the clusters, the Git host). The clients come
already built (:mod:`bot.sources.clients` turns a settings group into a client with plain arguments), and ``channel``
is the alert channel checked at start-up: nothing here reads globals, the environment or the configuration's helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.intake import Intake
from bot.sources.argocd import ArgoCDClient
from bot.sources.cluster import Clusters, ClusterSource
from bot.sources.git import GitHost

if TYPE_CHECKING:
    from bot.slack.channels import Channels
    from bot.slack.directory import Directory
    from bot.slack.outbox import Outbox
    from bot.slack.poster import SlackPoster


@dataclass
class Services(Intake):
    poster: SlackPoster
    outbox: Outbox
    """Every post of a job goes through it: once per key, whatever the crashes and redeliveries."""
    argocd: Callable[[], ArgoCDClient]
    """A new Argo CD client per analysis (each is closed after use)."""
    cluster: Clusters | ClusterSource | None
    """The clusters of the apps' destinations (kubeconfig or in-cluster), one given cluster, or ``None``: none."""
    directory: Directory
    """Slack users and user groups (approvers, names for PR bodies)."""
    channel: str
    """``SLACK_CHANNEL``, checked when built: where the alerts of apps no route sends elsewhere are posted."""
    channels: Channels
    """Channel names to IDs (routes may name channels)."""
    git: Callable[[], GitHost] | None = None
    """A new Git host client per pull request; ``None`` when ``GIT_PROVIDER`` is unset (no Open PR buttons)."""
