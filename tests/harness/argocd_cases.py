"""OutOfSync after a successful sync without a rewritten field, made by the real Argo CD: reproducible cases for the
verdicts about them (the e2e ``e2e`` fixture runs them; ``tests/e2e/test_argocd_cases.py`` records what the shipped
trigger sends for each).

Each function takes the session's :class:`~tests.harness.argocd_e2e.E2E` and a fresh app name, builds the case with
the moves a person or Argo CD makes (a push to Git, a sync, a refresh), waits for the notifications webhook the
trigger sends, and returns a :class:`Recording`: the webhooks as Argo CD's notifications controller rendered them
(deploy/argocd-notifications' template), the Application, and ``managed-resources`` as the bot's account reads them.
``Recording.save(folder)`` writes them as JSON, to turn a run into fixtures (``ARGO_WHY_RECORD=folder`` in the
test does so).

* :func:`git_ahead`: synced, then Git moves on (auto-sync off) and Argo CD refreshes: the live object is what Argo
  CD last applied, Git has a newer value;
* :func:`removed_from_git`: a resource removed from Git with prune off: it stays live, ``requiresPruning``;
* :func:`missing_after_sync`: a sync that leaves a resource missing (a selective sync of the other resource, as
  ``argocd app sync --resource`` does).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness.argocd_e2e import E2E, namespace_for, wait_for
from tests.harness.argocd_objects import configmap, deployment

Obj = dict[str, Any]


@dataclass
class Recording:
    name: str
    namespace: str
    """The destination namespace."""
    webhooks: list[Any]
    application: Obj
    managed_resources: list[Obj]

    def save(self, folder: Path) -> Path:
        out = folder / self.name
        out.mkdir(parents=True, exist_ok=True)
        for file, value in (("webhooks.json", self.webhooks), ("application.json", self.application),
                            ("managed-resources.json", self.managed_resources)):  # fmt: skip
            (out / file).write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")
        return out


def _synced(e2e: E2E, name: str, files: dict[str, Obj]) -> str:
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    e2e.add_files({f"apps/{name}/{path}": body for path, body in files.items()}, f"add {name}")
    e2e.create_app(name, f"apps/{name}", ns)
    e2e.sync(name)
    e2e.past_grace(name)
    return ns


def _recorded(e2e: E2E, name: str, ns: str, *, fires: bool = True) -> Recording:
    if fires:
        sent = wait_for(lambda: e2e.tap.for_app(name), bool, f"the trigger's webhook for {name}")
    else:  # the trigger must stay silent: past its grace, a comparison and a moment to evaluate it
        e2e.past_grace(name)
        wait_for(lambda: e2e.app(name)["status"]["sync"]["status"], lambda s: s == "OutOfSync", f"{name} OutOfSync")
        time.sleep(3)  # the notifications controller reacts within a fraction of a second
        sent = e2e.tap.for_app(name)
    app = e2e.app(name)
    return Recording(name, ns, [s.body for s in sent], app, e2e.managed_resources(name))


def git_ahead(e2e: E2E, name: str) -> Recording:
    ns = _synced(e2e, name, {"deployment.yaml": deployment(name, replicas=2)})
    e2e.add_files({f"apps/{name}/deployment.yaml": deployment(name, replicas=3)}, "scale up in Git")
    e2e.refresh(name)
    return _recorded(e2e, name, ns, fires=False)  # the shipped trigger leaves Git ahead to Argo CD


def removed_from_git(e2e: E2E, name: str) -> Recording:
    files = {"deployment.yaml": deployment(name, replicas=1), "configmap.yaml": configmap(f"{name}-old", {"a": "1"})}
    ns = _synced(e2e, name, files)
    e2e.add_files({f"apps/{name}/configmap.yaml": None}, "remove the ConfigMap")
    e2e.refresh(name)
    # Git is ahead now, which the shipped trigger leaves to Argo CD; a sync of the new revision without prune (as an
    # automated sync with prune off does) leaves the ConfigMap behind, requiring pruning, after a successful sync
    e2e.sync(name, expect="OutOfSync")
    e2e.past_grace(name)
    e2e.refresh(name)  # a comparison now: the trigger is evaluated again (else at the controller's 60 s resync)
    return _recorded(e2e, name, ns)


def missing_after_sync(e2e: E2E, name: str) -> Recording:
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    files = {
        "deployment.yaml": deployment(name, replicas=1),
        "configmap.yaml": configmap(f"{name}-settings", {"a": "1"}),
    }
    e2e.add_files({f"apps/{name}/{path}": body for path, body in files.items()}, f"add {name}")
    e2e.create_app(name, f"apps/{name}", ns)
    only = {"group": "apps", "kind": "Deployment", "name": name, "namespace": ns}
    e2e.sync(name, expect="OutOfSync", resources=[only])
    e2e.past_grace(name)
    e2e.refresh(name)  # a comparison now: the trigger is evaluated again (else at the controller's 60 s resync)
    return _recorded(e2e, name, ns)
