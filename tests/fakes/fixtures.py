"""The stand-in servers as fixtures (registered for every test by ``pytest_plugins`` in tests/conftest.py).

Each is shared by a test module and ``reset()`` (or cleared) per test by its users: starting one is a thread and a
loopback port, no process, so a test that uses only these is still a pure test (tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # the fakes are imported when a fixture first needs them (Bolt and the clients take a while)
    from tests.fakes.argocd import FakeArgoCD
    from tests.fakes.kube import FakeKubernetes
    from tests.fakes.slack import FakeSlack


@pytest.fixture(scope="module")
def argocd() -> Iterator[FakeArgoCD]:
    """A fake Argo CD API server shared by a test module (``reset()`` it per test)."""
    from tests.fakes.argocd import FakeArgoCD

    with FakeArgoCD() as fake:
        yield fake


@pytest.fixture(scope="module")
def kube() -> Iterator[FakeKubernetes]:
    """A fake Kubernetes API server shared by a test module (``reset()`` it per test)."""
    from tests.fakes.kube import FakeKubernetes

    with FakeKubernetes() as fake:
        yield fake


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    """A fake Slack Web API shared by a test module (the service tests clear it per test)."""
    from tests.fakes.slack import FakeSlack

    with FakeSlack() as fake:
        yield fake
