"""The running bot's parts as the worker sees them, built once by the composition root (``bot.app``).

:class:`Services` is the handlers' :class:`bot.intake.Intake` plus the Slack poster and the outbound
sources (Argo CD, the clusters). The factories here turn a settings group into a client with plain
arguments. Nothing reads globals or the environment after start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config import ArgoCDSettings, required
from bot.intake import Intake
from bot.sources.argocd import ArgoCDClient, tls_verify
from bot.sources.cluster import Clusters, ClusterSource

if TYPE_CHECKING:
    from bot.slack.poster import SlackPoster


@dataclass
class Services(Intake):
    poster: SlackPoster
    argocd: Callable[[], ArgoCDClient]
    """A new Argo CD client per analysis (each is closed after use)."""
    cluster: Clusters | ClusterSource | None
    """The clusters of the apps' destinations (kubeconfig or in-cluster), one given cluster, or ``None``: none."""


def argocd_factory(cfg: ArgoCDSettings) -> Callable[[], ArgoCDClient]:
    """Argo CD clients built from the ``argocd`` settings; :class:`bot.config.ConfigError` if URL or token is unset."""
    url = required(cfg.url, "ARGOCD_URL")
    token = required(cfg.token, "ARGOCD_TOKEN").get_secret_value()
    verify = tls_verify(cfg.ca_file, cfg.insecure)
    return lambda: ArgoCDClient(url, token, timeout=cfg.timeout, retries=cfg.retries, verify=verify)


def clusters(cfg: ArgoCDSettings) -> Clusters:
    """The destination clusters, from ``KUBECONFIG`` and ``ARGOCD_CLUSTER_CONTEXTS``."""
    return Clusters(cfg.kubeconfig, cfg.cluster_contexts)
