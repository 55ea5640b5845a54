"""What every test needs: the fixtures of the harness and of the stand-ins, and a marker per kind of cost.

The fixtures that start a real process (``tests/harness/``) and the stand-in servers (``tests/fakes/fixtures.py``)
are registered here for the whole suite, so that any folder can use them; importing them starts and builds nothing
(the Go tools are built by the first fixture that needs them, never at collection).

Each test is marked by what it costs, from the fixtures it uses (directly or through other fixtures):

* ``redis``: a real ``redis-server`` (tests/harness/redis_server.py);
* ``live``: the Go test tooling: the real API server and etcd, Argo CD's own diff, the notifications engine
  (tests/harness/kube_server.py, argocd_diff.py, served_kinds.py, go_tools.py);
* ``browser``: Debian's chromium through Playwright (marked by its module);
* ``argocd``: a real Argo CD (reserved for the end-to-end tests of ``tests/e2e/``);
* ``pure``: none of them; Python only (the stand-in servers are threads of the test process). ``pytest -m pure``
  runs these alone, in seconds and without Go.

``make test`` runs the suite on every core (pytest-xdist, ``-n auto --dist loadfile``): each worker is a session of
its own, so the session fixtures (a redis-server, the API server, Argo CD's diff helpers) start once per worker that
needs them, each on free loopback ports and in its own temporary folder; a file's tests stay on one worker, so a
module fixture starts once.
"""

from __future__ import annotations

import pytest

pytest_plugins = [
    "tests.fakes.fixtures",
    "tests.harness.go_tools",
    "tests.harness.redis_server",
    "tests.harness.kube_server",
    "tests.harness.argocd_diff",
    "tests.harness.served_kinds",
]

COSTS = ("redis", "live", "browser", "argocd")
"""The markers of a kind of cost; a test with none of them is marked ``pure``."""
COST_OF_HARNESS = {
    "tests.harness.redis_server": "redis",
    "tests.harness.go_tools": "live",
    "tests.harness.kube_server": "live",
    "tests.harness.argocd_diff": "live",
    "tests.harness.served_kinds": "live",
}
"""The cost of a test that uses a fixture defined in one of these modules (wherever the fixture is imported)."""


def _costs(item: pytest.Item) -> set[str]:
    found = {mark.name for mark in item.iter_markers() if mark.name in COSTS}
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return found
    for name in getattr(item, "fixturenames", ()):  # the closure: the fixtures of the fixtures too
        definitions = info.name2fixturedefs.get(name)
        if definitions:  # the last definition is the one the test gets (a module may override a harness fixture)
            module = getattr(definitions[-1].func, "__module__", "")
            if module in COST_OF_HARNESS:
                found.add(COST_OF_HARNESS[module])
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        costs = _costs(item)
        for cost in sorted(costs - {m.name for m in item.iter_markers()}):
            item.add_marker(cost)
        if not costs:
            item.add_marker("pure")
