"""The fake Argo CD API server of ``bot.demo`` (the offline demo runs against it), with the controls only tests use:
``fail_next``/``drop_next`` (tests/fakes/injection.py), ``deny``, ``drop_cached_managed_fields`` and ``reset``;
and :func:`argocd_diffs`, the diff source that makes its ``managed-resources`` Argo CD's own computation
(``app_from_case(folder, diffs=argocd_diffs(argocd_diff))``) instead of the demo's Python reading of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from bot.demo import fake_argocd
from bot.demo.fake_argocd import (  # noqa: F401  (the demo's names, re-exported)
    CREATED_AT,
    FINISHED_AT,
    IN_CLUSTER,
    LAST_APPLIED,
    PREVIOUS_DEPLOYED_AT,
    PREVIOUS_REVISION,
    RECONCILED_AT,
    REPO_URL,
    REVISION,
    STARTED_AT,
    TRACKING_ID,
    ApiError,
    Call,
    DiffSource,
    LocalServer,
    Obj,
    Request,
    Response,
    _App,
    _loads_state,
    _permission_denied,
    _state,
    app_from_case,
    build_application,
    build_tree,
    case_pairs,
    go_json,
    hide_secret_data,
    labels_match,
    list_semantics,
    load_manifests,
    normalize_secret,
    object_key,
    parse_label_selector,
    plural,
    predict_live,
    python_diffs,
    resource_diff,
    split_api_version,
)
from bot.demo.fake_argocd.diffs import is_argocd_hook
from tests.fakes.injection import FailureInjection

if TYPE_CHECKING:
    from tests.harness.argocd_diff import ArgoDiff, Mode


def argocd_diffs(
    helper: ArgoDiff, *, mode: Mode = "legacy", kubeconfig: Path | str | None = None, argocd_cm: Obj | None = None
) -> DiffSource:
    """A diff source computed by Argo CD's own code (tests/tools/argodiff): ``modified``, ``normalizedLiveState``
    and ``predictedLiveState`` exactly as Argo CD's controller computes them in ``mode`` (server-side: a dry-run
    on the API server of ``kubeconfig``), served in the ResourceDiff shape of :func:`resource_diff`."""

    def source(pairs: list[tuple[Obj, Obj | None]]) -> list[Obj]:
        answer = helper.diff(pairs, mode=mode, kubeconfig=kubeconfig, argocd_cm=argocd_cm)
        out: list[Obj] = []
        for (target, live), r in zip(pairs, answer.resources, strict=True):
            diff: Obj = {}
            if r.group:
                diff["group"] = r.group
            diff["kind"] = r.kind
            if r.namespace:
                diff["namespace"] = r.namespace
            diff["name"] = r.name
            diff["targetState"] = _state(target)
            diff["liveState"] = _state(live)
            diff["normalizedLiveState"] = _state(r.normalized_live)
            diff["predictedLiveState"] = _state(r.predicted_live)
            if live is not None and (live.get("metadata") or {}).get("resourceVersion"):
                diff["resourceVersion"] = live["metadata"]["resourceVersion"]
            if r.modified:
                diff["modified"] = True
            if is_argocd_hook(live if live is not None else target or {}):
                diff["hook"] = True  # the controller's managedResource.Hook: managed-resources never serves these
            out.append(json.loads(json.dumps(diff)))
        return out

    return source


class FakeArgoCD(FailureInjection, fake_argocd.FakeArgoCD):
    def __init__(self) -> None:
        self._denied: set[str] = set()
        self._lost: set[str] = set()
        super().__init__()

    def drop_cached_managed_fields(self, app_name: str, app_namespace: str = "argocd") -> None:
        """``managed-resources`` serves ``liveState`` without managedFields from now on (a cache that lost them);
        ``/resource`` still reads the full live object, as Argo CD's does from the cluster."""
        with self._lock:
            for diff in self._apps[(app_namespace, app_name)].resources:
                live = _loads_state(diff.get("liveState"))
                if live is not None:
                    live.get("metadata", {}).pop("managedFields", None)
                    diff["liveState"] = _state(live)

    def lose_resources(self, app_name: str) -> None:
        """``managed-resources`` of ``app_name`` answers what Argo CD answers when its controller's cache has lost
        the app (500 ``cache: key is missing``); the app is still listed and read."""
        with self._lock:
            self._lost.add(app_name)

    def deny(self, app_name: str) -> None:
        """Every call about ``app_name`` answers 403 ``permission denied``; lists leave it out (RBAC-filtered)."""
        with self._lock:
            self._denied.add(app_name)

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self._apps.clear()
            self._projects.clear()
            self._denied.clear()
            self._lost.clear()

    def failure(self, status: int, message: str | None) -> Response:
        code, default = {
            429: (8, "rate limit exceeded"),
            500: (2, "error getting cached app managed resources: cache: key is missing"),
            503: (
                14,
                'connection error: desc = "transport: Error while dialing: dial tcp 10.96.41.7:8081: '
                'connect: connection refused"',
            ),
        }[status]
        return self._error(ApiError(status, code, message or default))

    def _lookup(self, request: Request, name: str) -> _App:
        if name in self._denied:
            raise _permission_denied()
        return super()._lookup(request, name)

    def _managed_resources(self, request: Request, app: _App) -> Obj:
        if app.name in self._lost:
            raise ApiError(500, 2, "error getting cached app managed resources: cache: key is missing")
        return super()._managed_resources(request, app)

    def _list(self, request: Request) -> Obj:
        body = super()._list(request)
        body["items"] = [app for app in body["items"] or [] if app["metadata"]["name"] not in self._denied] or None
        return body
