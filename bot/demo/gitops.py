"""The GitOps repository of the demo: an app of apps whose Application manifests are written as people write them.

``gitops_files`` renders one commented YAML file per Application under ``apps/`` (the parent's path), plus a
second document in one of them, so that the fake Git host serves a real repository the bot must search;
``root_application`` is the parent Application as Argo CD returns it; ``tracked_by`` gives a child the tracking-id
annotation Argo CD writes on what it applies. Used by ``argo-why demo`` and by the tests of fixes from chat.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

Obj = dict[str, Any]
ROOT_APP = "platform-apps"
REPO = "acme/gitops"
REPO_URL = f"https://github.com/{REPO}.git"
APPS_PATH = "apps"

_HEADER = """\
# {name}: managed by the {team} team.
# Changes go through a pull request; Argo CD syncs main.
"""


def application_yaml(app: Obj, *, team: str = "platform") -> str:
    """An Application manifest as a person keeps it in Git: comments, the usual key order, no status."""
    meta, spec = app["metadata"], app.get("spec") or {}
    policy = spec.get("syncPolicy") or {}
    doc: Obj = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": meta["name"], "namespace": meta.get("namespace") or "argocd"},
        "spec": {
            "project": spec.get("project") or "default",
            "source": spec.get("source"),
            "destination": spec.get("destination"),
        },
    }
    if policy:
        doc["spec"]["syncPolicy"] = {k: v for k, v in policy.items() if k in ("automated", "syncOptions")}
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=1000)
    body = body.replace("  destination:\n", "  # where it runs\n  destination:\n", 1)
    return _HEADER.format(name=meta["name"], team=team) + body


def gitops_files(apps: list[Obj]) -> dict[str, str | bytes]:
    """``apps/<name>.yaml`` for every app, and a README, as the parent's source holds them."""
    files: dict[str, str | bytes] = {"README.md": "# GitOps\n\nOne Application per file under apps/.\n"}
    for app in apps:
        files[f"{APPS_PATH}/{app['metadata']['name']}.yaml"] = application_yaml(app)
    return files


def root_application(namespace: str = "argocd", *, repo_url: str = REPO_URL) -> Obj:
    """The app of apps: its source is the repository's ``apps/`` folder on the default branch."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": ROOT_APP, "namespace": namespace},
        "spec": {
            "project": "default",
            "source": {"repoURL": repo_url, "path": APPS_PATH, "targetRevision": "HEAD"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
        },
        "status": {"sync": {"status": "Synced"}, "health": {"status": "Healthy"}, "sourceType": "Directory"},
    }


def tracked_by(app: Obj, parent: str = ROOT_APP) -> Obj:
    """A copy of ``app`` with the tracking id Argo CD writes when ``parent`` applies it."""
    out = copy.deepcopy(app)
    meta = out.setdefault("metadata", {})
    ns = meta.get("namespace") or "argocd"
    meta.setdefault("annotations", {})["argocd.argoproj.io/tracking-id"] = (
        f"{parent}:argoproj.io/Application:{ns}/{meta['name']}"
    )
    return out
