"""Fixtures of the whole-bot runs against a real Argo CD (marker ``argocd``): one stack and one bot per session.

* ``argocd_stack`` (session): the real Argo CD of :mod:`tests.harness.argocd_stack` on ``kube_server``, its
  notifications webhook pointing at the port the bot will listen on. When it cannot be built or started, every test
  that uses it fails with the failing step and the components' logs (never a skip). When a test of the session
  failed, the logs' tails are printed and their folder kept.
* ``kube_server`` (session): an API server of the end-to-end tests' own (see its docstring).
* ``webhook_tap`` (session): where the notifications webhook goes, a recording relay to the bot.
* ``e2e`` (session): :class:`tests.harness.argocd_e2e.E2E`: the stack, the fake Slack and GitHub, and
  ``argo-why serve`` in a process of its own.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest

from tests.fakes.git import FakeGitHub
from tests.fakes.slack import FakeSlack
from tests.harness.argocd_e2e import APPROVER, CHANNEL, E2E, REPO, bot_settings
from tests.harness.argocd_stack import ArgoCDStack, ArgoCDStackError, start_argocd_stack
from tests.harness.go_tools import GoToolsError
from tests.harness.kube_server import KubeServer, start_kube_server
from tests.harness.redis_server import _redis_server_binary, _start_on_free_port, free_port
from tests.harness.service_kit import BotProcess
from tests.harness.webhook_tap import WebhookTap
from tests.live.writers import Cluster


@pytest.fixture(scope="session")
def kube_server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[KubeServer]:
    """The end-to-end tests' own API server (it overrides the harness's for this folder): Argo CD installs its CRDs by
    server-side apply, which must not meet the open-schema CRDs that other tests of the same pytest worker serve for
    the same kinds (``served_kinds``), and the controller watches everything the cluster holds."""
    try:
        server = start_kube_server(tmp_path_factory.mktemp("argocd-kube"))
    except GoToolsError as e:
        pytest.fail(f"the real API server could not be started: {e}", pytrace=False)
    try:
        yield server
    finally:
        server.stop()
        if request.session.testsfailed:
            sys.stderr.write(f"\nkube-apiserver and etcd logs kept in {server.log_dir}\n{server.logs_tail()}\n")


@pytest.fixture(scope="session")
def webhook_tap() -> Iterator[WebhookTap]:
    """Where Argo CD's notifications webhook goes: a recording relay to the bot (tests.harness.webhook_tap)."""
    tap = WebhookTap()
    try:
        yield tap
    finally:
        tap.stop()


@pytest.fixture(scope="session")
def argocd_stack(kube_server: KubeServer, tmp_path_factory: pytest.TempPathFactory, webhook_tap: WebhookTap,
                 request: pytest.FixtureRequest) -> Iterator[ArgoCDStack]:  # fmt: skip
    t0 = time.monotonic()
    try:
        stack = start_argocd_stack(kube_server, tmp_path_factory.mktemp("argocd"),
                                   bot_url=webhook_tap.url)  # fmt: skip
    except ArgoCDStackError as e:
        pytest.fail(f"the real Argo CD could not be started: {e}", pytrace=False)
    sys.stderr.write(f"\nreal Argo CD up in {time.monotonic() - t0:.1f} s ({stack.timings}); "
                     f"memory MiB {stack.memory_mib()}\n")  # fmt: skip
    try:
        yield stack
    finally:
        sys.stderr.write(f"\nreal Argo CD at the end of the session: memory MiB {stack.memory_mib()}\n")
        stack.stop()
        if request.session.testsfailed:
            sys.stderr.write(f"\nArgo CD logs kept in {stack.log_dir}\n{stack.logs_tail()}\n")


@pytest.fixture(scope="session")
def e2e(argocd_stack: ArgoCDStack, kube_server: KubeServer, webhook_tap: WebhookTap,
        tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[E2E]:  # fmt: skip
    # A Redis of its own: the shared one is emptied before every test that uses ``redis_url``.
    redis = _start_on_free_port(_redis_server_binary(), tmp_path_factory.mktemp("e2e-redis"))
    with FakeSlack() as slack, FakeGitHub() as github:
        slack.add_user(APPROVER, "alice")
        bare = github.add_repo(REPO, {"README.md": "The GitOps repository of the e2e tests.\n"})
        argocd_stack.git.serve(REPO, bare.path)  # Argo CD reads it over git://, the bot maps the URL to the fake
        settings = bot_settings(argocd_stack, slack, github, redis.url)
        cluster = Cluster(kube_server)
        bot = BotProcess(settings, serve=True, port=free_port())
        webhook_tap.target = bot.url
        world = E2E(argocd_stack, slack, github, cluster, bot, settings, webhook_tap)
        try:
            world.ready()
            yield world
        finally:
            if request.session.testsfailed:
                sys.stderr.write(f"\nargo-why serve's log (tail):\n{bot.stderr()}\n")
            bot.close()
            cluster.close()
            redis.stop()


__all__ = ["CHANNEL"]
