"""The running bot's parts as the worker sees them, built once by the composition root (``bot.app``).

:class:`Services` is the handlers' :class:`bot.intake.Intake` plus Slack (the poster, and the outbox every job
posts through, exactly once) and the outbound sources (Argo CD, the clusters, the Git host). The factories here
turn a settings group into a client with plain arguments. Nothing reads globals or the environment after start-up.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config import ArgoCDSettings, GitSettings, required
from bot.intake import Intake
from bot.sources.argocd import AppList, ArgoCDClient, tls_verify
from bot.sources.cluster import Clusters, ClusterSource
from bot.sources.git import GitHost, make_git_host

if TYPE_CHECKING:
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
    git: Callable[[], GitHost] | None = None
    """A new Git host client per pull request; ``None`` when ``GIT_PROVIDER`` is unset (no Open PR buttons)."""


def argocd_factory(cfg: ArgoCDSettings) -> Callable[[], ArgoCDClient]:
    """Argo CD clients built from the ``argocd`` settings, sharing one list of the applications (a minute);
    :class:`bot.config.ConfigError` if URL or token is unset."""
    url = required(cfg.url, "ARGOCD_URL")
    token = required(cfg.token, "ARGOCD_TOKEN").get_secret_value()
    # one TLS context for every client: loading the CA bundle costs ~20 ms, once per analysis otherwise
    verify = tls_verify(cfg.ca_file, cfg.insecure)
    verify = ssl.create_default_context() if verify is True else verify
    app_list = AppList()
    return lambda: ArgoCDClient(url, token, timeout=cfg.timeout, retries=cfg.retries, verify=verify,
                                app_list=app_list)  # fmt: skip


def clusters(cfg: ArgoCDSettings) -> Clusters:
    """The destination clusters, from ``KUBECONFIG`` and ``ARGOCD_CLUSTER_CONTEXTS``."""
    return Clusters(cfg.kubeconfig, cfg.cluster_contexts)


def git_factory(cfg: GitSettings) -> Callable[[], GitHost] | None:
    """Git host clients from the ``git`` settings, or ``None`` when no provider is configured."""
    if cfg.provider is None:
        return None
    token = required(cfg.token, "GIT_TOKEN").get_secret_value()
    provider, api_url = cfg.provider, cfg.api_url
    return lambda: make_git_host(provider, api_url, token)
