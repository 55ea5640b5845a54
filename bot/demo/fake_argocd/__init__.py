"""A fake Argo CD API server and what it serves, for the offline demo and the tests (``FakeArgoCD``).

One module a job: ``server`` is the fake argocd-server (its routes, authentication, errors and read-only rules are
listed there), ``applications`` builds the Applications it serves from casebook scenarios (``app_from_case``),
``diffs`` computes ResourceDiffs as Argo CD does, ``masking`` hides Secret values as Argo CD does, and ``objects``
holds the object helpers ``fake_kube`` shares. The HTTP plumbing every fake uses lives in ``bot.demo.serving``.

Every name this package had as a single module is still importable from ``bot.demo.fake_argocd``: what only tests
need (failure injection, RBAC denials, ``reset``) is added by the subclasses in ``tests/fakes/``, which import from
here.
"""

from bot.demo.fake_argocd.applications import (
    CREATED_AT,
    FINISHED_AT,
    IN_CLUSTER,
    PREVIOUS_DEPLOYED_AT,
    PREVIOUS_REVISION,
    RECONCILED_AT,
    REPO_URL,
    REVISION,
    STARTED_AT,
    TRACKING_ID,
    app_from_case,
    build_application,
    build_tree,
)
from bot.demo.fake_argocd.diffs import MERGEKEYS, list_semantics, predict_live, resource_diff
from bot.demo.fake_argocd.masking import LAST_APPLIED, hide_secret_data, normalize_secret
from bot.demo.fake_argocd.objects import (
    Key,
    Obj,
    go_json,
    labels_match,
    load_manifests,
    object_key,
    parse_label_selector,
    plural,
    split_api_version,
)
from bot.demo.fake_argocd.objects import _loads_state as _loads_state
from bot.demo.fake_argocd.objects import _state as _state
from bot.demo.fake_argocd.server import ApiError, FakeArgoCD, app_project
from bot.demo.fake_argocd.server import _App as _App
from bot.demo.fake_argocd.server import _permission_denied as _permission_denied
from bot.demo.serving import Call, LocalServer, Request, Response

# Also importable from here (the ``X as X`` imports above): the private helpers tests/fakes/argocd.py uses.
__all__ = [
    "CREATED_AT",
    "FINISHED_AT",
    "IN_CLUSTER",
    "LAST_APPLIED",
    "MERGEKEYS",
    "PREVIOUS_DEPLOYED_AT",
    "PREVIOUS_REVISION",
    "RECONCILED_AT",
    "REPO_URL",
    "REVISION",
    "STARTED_AT",
    "TRACKING_ID",
    "ApiError",
    "Call",
    "FakeArgoCD",
    "Key",
    "LocalServer",
    "Obj",
    "Request",
    "Response",
    "app_from_case",
    "app_project",
    "build_application",
    "build_tree",
    "go_json",
    "hide_secret_data",
    "labels_match",
    "list_semantics",
    "load_manifests",
    "normalize_secret",
    "object_key",
    "parse_label_selector",
    "plural",
    "predict_live",
    "resource_diff",
    "split_api_version",
]
