"""The fake argocd-server: a real HTTP server on 127.0.0.1 that answers the read-only calls argo-why makes.

It exists so that ``argo-why why APP`` and the bot run their real httpx client against something that speaks
argocd-server 3.x's wire format (its REST API, ``server/application/application.proto`` in argoproj/argo-cd:
``managed-resources`` items, Application status), not against mocks of our own code.

What it guarantees:

* Routes (GET): ``/api/v1/projects`` and ``/api/v1/projects/{name}`` (AppProjects as ``ProjectService`` answers
  them: the ``default`` project always exists, an unknown one answers 404 ``appprojects.argoproj.io "X" not found``),
  ``/api/v1/applications``, ``/api/v1/applications/{name}`` and its ``managed-resources``,
  ``resource``, ``manifests``, ``resource-tree`` and ``events`` sub-paths, ``/api/v1/applicationsets/{name}``, and the
  anonymous ``/api/version``.
  Any other path answers the HTTP mux's plain-text ``404 Not Found`` before authentication, as the real server
  does. ``/api/version`` says only ``Version`` without a session, the build's details with one.
* Authentication: ``Authorization: Bearer <token>`` (a JWT, as Argo CD's API keys are) on every route under
  ``/api/v1``, else 401 with gRPC code 16 (``no session information`` without a JWT, ``invalid session: token
  signature is invalid: signature is invalid`` for another one).
* Bodies are what Argo CD's gateway marshaller writes (Go ``encoding/json`` over generated structs): an empty
  ``items`` (managed-resources), ``nodes`` (resource-tree) or ``manifests`` list is omitted, not ``[]``; the
  application list always has ``items`` (``null`` when nothing matches).
* Errors are always ``{"error","code","message"}`` (same text twice) with the HTTP status grpc-gateway derives from
  the gRPC code: 3→400, 5→404, 7→403, 8→429, 2→500, 14→503, 16→401.
* Access rules of ``getAppEnforceRBAC``: an unknown app answers 403 ``permission denied``; with ``?project=`` an
  unknown app (or one in another project) answers 404 ``applications.argoproj.io "X" not found``.
* ResourceDiffs carry their four states as JSON strings encoded like Go's ``json.Marshal`` (compact, keys sorted,
  ``<>&`` escaped), ``"null"`` for a missing side, and omit ``group`` (core), ``namespace`` (cluster-scoped),
  ``modified`` (false) and ``hook`` (false).
* Secrets never leave the fake unmasked: ``data`` (``stringData`` folded in first) is replaced as Argo CD's
  ``HideSecretData`` does (``++++++++`` for the first distinct value of a key, four ``+`` more for each further one),
  in all four states, in ``/resource`` and in ``/manifests``, the last-applied-configuration annotation included.
* Read-only: any other method under ``/api/v1/`` answers 401 without a valid token, else 403 ``permission denied``
  (what a read-only account gets), and is recorded in ``.calls``, so a test can assert that nothing was written.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from bot.demo.fake_argocd.applications import _diff_key, build_tree, default_project_meta, listed_app
from bot.demo.fake_argocd.masking import _is_secret, _mask_resource_diff, hide_secret_data
from bot.demo.fake_argocd.objects import Key, Obj, _loads_state, go_json, labels_match, parse_label_selector, plural
from bot.demo.serving import LocalServer, Request, Response


class ApiError(Exception):
    """An answer in grpc-gateway's error shape."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _permission_denied() -> ApiError:
    return ApiError(403, 7, "permission denied")


def _app_not_found(name: str) -> ApiError:
    return ApiError(404, 5, f'applications.argoproj.io "{name}" not found')


@dataclass
class _App:
    app: Obj
    resources: list[Obj]  # ResourceDiffs as served (Secrets masked)
    lives: dict[Key, Obj]  # unmasked live objects, for /resource
    renders: list[list[Obj]]
    events: list[Obj]
    tree: Obj
    uncached_renders: int = 0
    revision_renders: dict[str, list[Obj]] = field(default_factory=dict)
    """Renders of other revisions than the app's (``?revision=``): what an older synced revision renders."""

    @property
    def name(self) -> str:
        return str(self.app["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.app["metadata"].get("namespace") or "argocd")

    @property
    def project(self) -> str:
        return str((self.app.get("spec") or {}).get("project") or "default")


_SYNC_ROUTE = re.compile(r"/api/v1/applications/(?P<name>[^/]+)/sync")
_BUILD_INFO = {
    "BuildDate": "2026-10-20T12:00:00Z", "GitCommit": "becb020a0b5ef3ef1d7ba6f23c5a7b1f68c1a6a3", "GitTag": "v3.1.8",
    "GitTreeState": "clean", "GoVersion": "go1.25", "Compiler": "gc", "Platform": "linux/amd64",
    "KustomizeVersion": "v5.7.0 2025-06-28T07:00:07Z", "HelmVersion": "v3.18.4+gd80839c",
    "KubectlVersion": "v0.33.1", "JsonnetVersion": "v0.21.0",
}  # fmt: skip
"""What argocd-server's ``/api/version`` adds for a caller with a session (``VersionMessage``)."""
_APPSET_ROUTE = re.compile(r"/api/v1/applicationsets/(?P<name>[^/]+)")
_PROJECT_ROUTE = re.compile(r"/api/v1/projects(?:/(?P<name>[^/]+))?")


def app_project(name: str, annotations: dict[str, str] | None = None) -> Obj:
    """An AppProject as Argo CD stores it (the ``default`` project's permissive spec), with ``annotations``."""
    meta: Obj = {"name": name, "namespace": "argocd"}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"metadata": meta, "spec": {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
                                       "clusterResourceWhitelist": [{"group": "*", "kind": "*"}]},
            "status": {}}  # fmt: skip


_APP_ROUTE = re.compile(
    r"/api/v1/applications/(?P<name>[^/]+)(?:/(?P<sub>managed-resources|resource|manifests|resource-tree|events))?"
)


class FakeArgoCD(LocalServer):
    """A fake argocd-server. Start it with ``with FakeArgoCD() as argo:``; ``argo.url``, ``argo.token``,
    ``argo.calls``. Add Applications with ``add_app`` (see ``app_from_case`` to build them from the casebook)."""

    VERSION = "v3.1.8+becb020"

    def __init__(self) -> None:
        self._apps: dict[tuple[str, str], _App] = {}
        self._appsets: dict[tuple[str, str], Obj] = {}
        self._projects: dict[str, Obj] = {}
        self._resource_version = 70000
        super().__init__("fake-argocd")
        # An API key as `argocd account generate-token` makes one: a JWT (argocd-server tells a token that is not a
        # JWT, "no session information", from one whose signature does not verify).
        issued = int(time.time())
        self.issued_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(issued))
        claims = {"iss": "argocd", "sub": "argo-why:apiKey", "nbf": issued, "iat": issued, "jti": str(uuid.uuid4())}
        header = json.dumps({"alg": "HS256", "typ": "JWT"}).encode()
        self.token = ".".join(_b64(part) for part in (header, json.dumps(claims).encode(), secrets.token_bytes(32)))

    # -- configuration ----------------------------------------------------------------------------------------

    def add_app(
        self,
        app: Obj,
        resources: list[Obj],
        renders: list[list[Obj]] | None = None,
        events: list[Obj] | None = None,
        tree: Obj | None = None,
        revision_renders: dict[str, list[Obj]] | None = None,
    ) -> None:
        """Serve ``app`` (a full Application) with ``resources`` (ResourceDiffs, states as JSON strings).

        ``renders`` are the manifests of successive renders: ``/manifests`` answers ``renders[0]`` (the cached
        render the last comparison used); each ``noCache=true`` call answers the next entry, staying on the last.
        Default: the target states. ``events`` are Kubernetes Events (see ``/events``). ``tree`` is a full
        ``{"nodes": [...]}``; default: one node per live resource. ``revision_renders``: the manifests of other
        revisions, answered to ``/manifests?revision=<that revision>`` (an older revision the app last synced).
        """
        app = copy.deepcopy(app)
        app.setdefault("metadata", {}).setdefault("namespace", "argocd")
        served: list[Obj] = []
        lives: dict[Key, Obj] = {}
        for diff in resources:
            diff = copy.deepcopy(diff)
            live = _loads_state(diff.get("liveState"))
            if live is not None:
                lives[_diff_key(diff)] = live
            if diff.get("kind") == "Secret" and not diff.get("group"):
                _mask_resource_diff(diff)
            served.append(diff)
        if renders is None:
            renders = [[t for d in resources if (t := _loads_state(d.get("targetState"))) is not None]]
        entry = _App(
            app=app,
            resources=served,
            lives=lives,
            renders=[copy.deepcopy(r) for r in renders] or [[]],
            events=copy.deepcopy(events or []),
            tree=copy.deepcopy(tree) if tree is not None else build_tree(served, lives),
            revision_renders=copy.deepcopy(revision_renders or {}),
        )
        with self._lock:
            self._resource_version += 1
            entry.app["metadata"].setdefault("resourceVersion", str(self._resource_version))
            self._apps[(entry.namespace, entry.name)] = entry

    def add_appset(self, appset: Obj) -> None:
        """Serve an ApplicationSet at ``/api/v1/applicationsets/{name}`` (``appsetNamespace``, default argocd)."""
        appset = copy.deepcopy(appset)
        meta = appset.setdefault("metadata", {})
        meta.setdefault("namespace", "argocd")
        with self._lock:
            self._resource_version += 1
            meta.setdefault("resourceVersion", str(self._resource_version))
            self._appsets[(meta["namespace"], meta["name"])] = appset

    def add_project(self, project: Obj) -> None:
        """Serve an AppProject at ``/api/v1/projects/{name}`` (see :func:`app_project`); replaces one of that name."""
        project = copy.deepcopy(project)
        meta = project.setdefault("metadata", {})
        meta.setdefault("namespace", "argocd")
        with self._lock:
            self._resource_version += 1
            meta["resourceVersion"] = str(self._resource_version)
            self._projects[meta["name"]] = project

    def _project(self, name: str) -> Obj:
        if name in self._projects:
            return self._projects[name]
        if name == "default":  # argocd-server creates it at start-up and keeps it
            return {**app_project("default"), "metadata": default_project_meta()}
        raise ApiError(404, 5, f'appprojects.argoproj.io "{name}" not found')

    # -- HTTP --------------------------------------------------------------------------------------------------

    def _json(self, body: Any, status: int = 200) -> Response:
        # grpc-gateway writes struct fields in declaration order, so the outer body is not key-sorted.
        return Response(status, go_json(body, sort_keys=False).encode())

    def _error(self, err: ApiError) -> Response:
        return self._json({"error": err.message, "code": err.code, "message": err.message}, err.status)

    def handle(self, request: Request) -> Response:
        path = request.path.rstrip("/") or "/"
        if path == "/api/version":  # anonymous in argocd-server: the version only; the build's details need a session
            token = self.bearer(request)
            if token is None or not secrets.compare_digest(token, self.token):
                return self._json({"Version": self.VERSION})
            return self._json({"Version": self.VERSION, **_BUILD_INFO})
        route = _APP_ROUTE.fullmatch(path)
        appset_route = _APPSET_ROUTE.fullmatch(path)
        project_route = _PROJECT_ROUTE.fullmatch(path)
        # Write routes (sync, delete, patch, ...) exist in argocd-server: they authenticate and then fail RBAC.
        writing = request.method != "GET" and path.startswith("/api/v1/")
        known = path == "/api/v1/applications" or any(r is not None for r in (route, appset_route, project_route))
        if not known and not writing:  # the HTTP mux's own 404, in plain text, before authentication
            return Response(404, b"Not Found\n", {"Content-Type": "text/plain; charset=utf-8"})
        token = self.bearer(request)
        if token is None or token.count(".") != 2:  # no token, or not a JWT: no session to verify
            return self._error(ApiError(401, 16, "no session information"))
        if not secrets.compare_digest(token, self.token):
            return self._error(ApiError(401, 16, "invalid session: token signature is invalid: signature is invalid"))
        if writing:  # the read-only account lacks create/update/sync/delete
            return self._error(self._write_denied(request, path))
        try:
            with self._lock:
                if project_route is not None:
                    if project_route["name"] is None:
                        names = sorted({*self._projects, "default"})
                        return self._json({"metadata": {}, "items": [self._project(n) for n in names]})
                    return self._json(self._project(project_route["name"]))
                if appset_route is not None:
                    appset = self._appsets.get((request.arg("appsetNamespace") or "argocd", appset_route["name"]))
                    if appset is None:  # with `applicationsets, get` (deploy/README.md), a missing one is a 404
                        name = appset_route["name"]
                        raise ApiError(404, 5, f'error getting ApplicationSet: applicationset.argoproj.io "{name}" '
                                               "not found")  # fmt: skip
                    return self._json(appset)
                if route is None:
                    return self._json(self._list(request))
                app = self._lookup(request, route["name"])
                sub = route["sub"]
                if sub is None:
                    return self._json(app.app)
                if sub == "managed-resources":
                    return self._json(self._managed_resources(request, app))
                if sub == "resource":
                    return self._json(self._resource(request, app))
                if sub == "manifests":
                    return self._json(self._manifests(request, app))
                if sub == "resource-tree":  # ApplicationTree.Nodes is omitempty too
                    return self._json({k: v for k, v in app.tree.items() if v not in ([], None)})
                return self._json(self._events(request, app))
        except ApiError as err:
            return self._error(err)

    # -- endpoints ---------------------------------------------------------------------------------------------

    def _write_denied(self, request: Request, path: str) -> ApiError:
        """A sync of an app that exists names the permission, the account and its token's issue time; anything else
        is a plain ``permission denied`` (server/application/application.go's enforcement)."""
        sync = _SYNC_ROUTE.fullmatch(path)
        with self._lock:
            app = self._apps.get((request.arg("appNamespace") or "argocd", sync["name"])) if sync else None
        if app is None:
            return _permission_denied()
        return ApiError(403, 7, f"permission denied: applications, sync, {app.project}/{app.name}, sub: argo-why, "
                                f"iat: {self.issued_at}")  # fmt: skip

    def _lookup(self, request: Request, name: str) -> _App:
        """getAppEnforceRBAC: 403 hides whether an app exists, unless the caller named the project."""
        project = request.arg("project")
        app = self._apps.get((request.arg("appNamespace") or "argocd", name))
        if app is None or (project and app.project != project):
            raise _app_not_found(name) if project else _permission_denied()
        return app

    def _list(self, request: Request) -> Obj:
        try:
            requirements = parse_label_selector(request.arg("selector"))
        except ValueError as err:
            raise ApiError(500, 2, f"error parsing the selector: {err}") from None
        projects = set(request.args("projects") + request.args("project"))
        name, namespace = request.arg("name"), request.arg("appNamespace")
        items = [
            listed_app(entry.app)
            for entry in sorted(self._apps.values(), key=lambda e: (e.name, e.namespace))
            if (not projects or entry.project in projects)
            and (not name or entry.name == name)
            and (not namespace or entry.namespace == namespace)
            and labels_match(requirements, entry.app["metadata"].get("labels"))
        ]
        # ApplicationList.Items is a plain slice: nothing matching is `null`, not `[]`
        return {"metadata": {"resourceVersion": str(self._resource_version)}, "items": items or None}

    def _managed_resources(self, request: Request, app: _App) -> Obj:
        # isMatchingResource: group/kind/namespace/name filter, "" = any; version is accepted and ignored
        # (ResourceDiff has no version); hooks are never listed.
        wanted = {k: request.arg(k) for k in ("group", "kind", "namespace", "name")}
        items = [
            diff
            for diff in app.resources
            if not diff.get("hook") and all(not v or str(diff.get(k, "")) == v for k, v in wanted.items())
        ]
        return {"items": items} if items else {}  # generated gogo structs: `json:"items,omitempty"`

    def _resource(self, request: Request, app: _App) -> Obj:
        for required in ("resourceName", "kind", "version"):
            if not request.arg(required):  # the gateway fails to marshal the request: Internal, not InvalidArgument
                raise ApiError(500, 13, f'grpc: error while marshaling: proto: required field "{required}" not set')
        group, kind, name = request.arg("group"), request.arg("kind"), request.arg("resourceName")
        namespace = request.arg("namespace")
        nodes = app.tree.get("nodes") or []
        node = next(
            (
                n
                for n in nodes
                if (n.get("group", ""), n.get("kind"), n.get("namespace", ""), n.get("name"))
                == (group, kind, namespace, name)
            ),
            None,
        )
        if node is None:  # tree.FindNode failed: InvalidArgument, not NotFound (server/application/application.go)
            raise ApiError(400, 3, f"{kind} {group} {name} not found as part of application {app.name}")
        live = app.lives.get((group, kind, namespace, name))
        if live is None:  # in the tree but gone from the cluster: the Kubernetes NotFound passed through
            resource = plural(kind) + (f".{group}" if group else "")
            raise ApiError(404, 5, f'{resource} "{name}" not found')
        live = copy.deepcopy(live)
        if _is_secret(live):
            hide_secret_data(None, live)
        return {"manifest": go_json(live)}

    def _manifests(self, request: Request, app: _App) -> Obj:
        revision = request.arg("revision")
        sync = (app.app.get("status") or {}).get("sync") or {}
        if revision in app.revision_renders:
            objs = app.revision_renders[revision]
        elif revision and revision != sync.get("revision") and revision not in (sync.get("revisions") or []):
            # an older revision this stand-in was given no render of: never answer with today's render instead
            raise ApiError(500, 2, f"rpc error: code = Unknown desc = Manifest generation error: unable to resolve "
                                   f"'{revision}' to a commit SHA")  # fmt: skip
        elif request.arg("noCache").lower() == "true":
            app.uncached_renders += 1
            objs = app.renders[min(app.uncached_renders, len(app.renders) - 1)]
        else:
            objs = app.renders[0]
        manifests = []
        for obj in objs:
            obj = copy.deepcopy(obj)
            if _is_secret(obj):
                hide_secret_data(obj)  # GetManifests masks every Secret on its own: all values become "++++++++"
            manifests.append(go_json(obj))
        # argocd-server answers a ManifestResponse of the manifests alone (its namespace, server, revision and
        # sourceType stay empty and are omitted), and Manifests is omitempty too
        return {"manifests": manifests} if manifests else {}

    def _events(self, request: Request, app: _App) -> Obj:
        """ListResourceEvents: without resource parameters the Application's own events; with them, the events of
        a node of the app's tree, which must match uid, name and namespace exactly."""
        uid, name = request.arg("resourceUID"), request.arg("resourceName")
        namespace = request.arg("resourceNamespace")
        if uid or name or namespace:
            nodes = app.tree.get("nodes") or []
            if not any(
                (n.get("uid", ""), n.get("name"), n.get("namespace", "")) == (uid, name, namespace) for n in nodes
            ):
                raise ApiError(400, 3, f"{name} not found as part of application {app.name}")
            wanted = {"name": name, "uid": uid, "namespace": namespace}
        else:
            meta = app.app["metadata"]
            wanted = {"name": app.name, "uid": str(meta.get("uid", "")), "namespace": app.namespace}
        items = [event for event in app.events if _involves(event, wanted)]
        return {"metadata": {"resourceVersion": str(self._resource_version)}, "items": items}


def _involves(event: Obj, wanted: dict[str, str]) -> bool:
    """The field selector involvedObject.{name,uid,namespace}; an event fixture without a uid matches by name and
    namespace alone, so tests need not invent uids."""
    involved = event.get("involvedObject") or {}
    return all(
        (key == "uid" and not involved.get("uid")) or str(involved.get(key, "")) == value
        for key, value in wanted.items()
    )
