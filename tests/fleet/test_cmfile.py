"""Where argocd-cm lives in Git when ``ARGOCD_CM_DEFINITION`` is unset: the source of the Application that manages the
Argo CD namespace. In an app of apps the parent's destination is the Argo CD namespace too (it applies Application
manifests there), as in the e2e tests on the real Argo CD: the file is looked for in each such app's source, not only
in the first one Argo CD lists.

The fake Argo CD and the fake GitHub (a real bare repository) as servers, the bot's own clients.
"""

from __future__ import annotations

import copy
from typing import Any

from bot.demo.fake_argocd.applications import build_application
from bot.runtime.cmfile import CMFile, locate
from bot.sources.argocd import ArgoCDClient
from bot.sources.git import make_git_host
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.git import FakeGitHub

PLATFORM = "acme/platform"
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  url: https://argocd.example.com
"""
CHILD = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
  namespace: argocd
spec:
  project: default
  source: {repoURL: "https://github.com/acme/platform.git", path: apps/shop, targetRevision: main}
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
"""


def managing(name: str, path: str) -> dict[str, Any]:
    """An Application whose destination is the Argo CD namespace, of ``path`` in the platform repository."""
    app = build_application(name, "argocd", [])
    app["spec"]["source"] = {"repoURL": f"https://github.com/{PLATFORM}.git", "path": path, "targetRevision": "main"}
    return copy.deepcopy(app)


async def test_the_file_is_found_in_the_app_managing_argocd_cm_not_in_an_app_of_apps_listed_first(
    argocd: FakeArgoCD,
) -> None:
    argocd.reset()
    with FakeGitHub(web_url="https://github.com") as github:
        github.add_repo(PLATFORM, {"apps/root/shop.yaml": CHILD, "argocd/config/argocd-cm.yaml": CONFIGMAP})
        argocd.add_app(managing("apps-root", "apps/root"), [], [[]])  # listed first: its name sorts first
        argocd.add_app(managing("argocd-config", "argocd/config"), [], [[]])
        async with ArgoCDClient(argocd.url, argocd.token, retries=0) as client, \
                make_git_host("github", github.api_url, github.token) as git:  # fmt: skip
            found = await locate(None, "github", github.api_url, client, git)
    assert isinstance(found, CMFile), found
    assert found.file.path == "argocd/config/argocd-cm.yaml" and found.form == "configmap"


async def test_when_no_app_managing_the_argocd_namespace_holds_it_the_answer_names_them(argocd: FakeArgoCD) -> None:
    argocd.reset()
    with FakeGitHub(web_url="https://github.com") as github:
        github.add_repo(PLATFORM, {"apps/root/shop.yaml": CHILD, "apps/other/shop.yaml": CHILD})
        argocd.add_app(managing("apps-root", "apps/root"), [], [[]])
        argocd.add_app(managing("other-root", "apps/other"), [], [[]])
        argocd.add_app(managing("argocd-gone", "argocd/removed"), [], [[]])  # its path is no longer in Git
        async with ArgoCDClient(argocd.url, argocd.token, retries=0) as client, \
                make_git_host("github", github.api_url, github.token) as git:  # fmt: skip
            found = await locate(None, "github", github.api_url, client, git)
    assert isinstance(found, str) and all(a in found for a in ("apps-root", "other-root", "argocd-gone")), found
    assert "ARGOCD_CM_DEFINITION" in found


async def test_a_source_whose_repository_argo_why_cannot_use_is_named_with_why_not_skipped(argocd: FakeArgoCD) -> None:
    argocd.reset()
    with FakeGitHub(web_url="https://github.com") as github:
        github.add_repo(PLATFORM, {"apps/root/shop.yaml": CHILD})
        argocd.add_app(managing("apps-root", "apps/root"), [], [[]])
        local = managing("argocd-config", "argocd/config")
        local["spec"]["source"]["repoURL"] = "file:///srv/git/platform.git"  # Argo CD reads it; no Git host serves it
        argocd.add_app(local, [], [[]])
        async with ArgoCDClient(argocd.url, argocd.token, retries=0) as client, \
                make_git_host("github", github.api_url, github.token) as git:  # fmt: skip
            found = await locate(None, "github", github.api_url, client, git)
    assert isinstance(found, str), found
    assert found.endswith(".") and "Not looked in: argocd-config (" in found, found
    assert "file:///srv/git/platform.git" in found and "apps-root (" not in found, found
