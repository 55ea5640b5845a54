"""The outbound clients, built from the settings groups: shared by the composition root (:mod:`bot.app`) and the CLI.

Each factory turns a settings group into clients with plain arguments, and raises
:class:`bot.config.ConfigError` naming the variable when one it needs is unset, before anything runs: the runtime
is given the clients, never the configuration's helpers.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable

from bot.config import ArgoCDSettings, GitSettings, required
from bot.sources.argocd import AppList, ArgoCDClient, tls_verify
from bot.sources.cluster import Clusters
from bot.sources.git import GitHost, make_git_host


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
