"""A fake Argo CD API server: a real HTTP server on 127.0.0.1 that answers the read-only calls argo-why makes.

It exists so that ``argo-why why APP`` and the bot run their real httpx client against something that speaks
argocd-server 3.x's wire format (../shared/notes/argocd.md §2-§4), not against mocks of our own code.

What it guarantees:

* Routes (GET): ``/api/v1/applications``, ``/api/v1/applications/{name}`` and its ``managed-resources``,
  ``resource``, ``manifests``, ``resource-tree`` and ``events`` sub-paths, ``/api/v1/applicationsets/{name}``, and the
  anonymous ``/api/version``.
  Any other path answers grpc-gateway's 404 ``{"error":"Not Found","code":5,"message":"Not Found"}`` (the gateway
  answers it before authentication, as the real server does).
* Authentication: ``Authorization: Bearer <token>`` on every route under ``/api/v1``, else 401 with gRPC code 16
  (``no session information`` / ``invalid session: token signature is invalid``).
* Bodies are what Argo CD's gateway marshaller writes (Go ``encoding/json`` over generated structs): an empty
  ``items`` (managed-resources), ``nodes`` (resource-tree) or ``manifests`` list is omitted, not ``[]``; the
  application list always has ``items`` (``[]`` when nothing matches).
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

``app_from_case`` turns a casebook scenario into what Argo CD would report for it. ``load_manifests`` and the label
selectors are shared with ``fake_kube``; the HTTP plumbing (``LocalServer``, ``Call``, ``Request``, ``Response``) lives
in ``bot.demo.serving``. What only tests need (failure injection, RBAC denials, ``reset``) is added by the
subclasses in ``tests/fakes/``.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import secrets
import uuid
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

# The HTTP plumbing of every fake, in bot.demo.serving since fake_git and fake_kube use it too; still importable here.
from bot.demo.serving import Call as Call
from bot.demo.serving import LocalServer as LocalServer
from bot.demo.serving import Request as Request
from bot.demo.serving import Response as Response

Obj = dict[str, Any]
Key = tuple[str, str, str, str]  # (group, kind, namespace, name), "" for core group / cluster scope

MERGEKEYS = Path(__file__).resolve().parents[1] / "analysis" / "data" / "mergekeys.json"

#: The revision every Application built by ``app_from_case`` is synced to (the example of DESIGN.md §4).
REVISION = "9f3c2a1d5be4c1a0e2f7b8c9d0a1b2c3d4e5f607"
PREVIOUS_REVISION = "4b1e0c7d2a9f8e3b6c5d4a1f0e9d8c7b6a5f4e3d"
IN_CLUSTER = "https://kubernetes.default.svc"
REPO_URL = "https://git.example.com/platform/deploy.git"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
TRACKING_ID = "argocd.argoproj.io/tracking-id"
# Fixed times keep the Applications deterministic; reconciledAt lies after finishedAt, as after a sync that did not
# settle the app (the notifications trigger of notes §1 relies on exactly that).
CREATED_AT = "2026-01-15T08:30:00Z"
PREVIOUS_DEPLOYED_AT = "2026-11-01T16:42:10Z"
STARTED_AT = "2026-11-02T10:00:00Z"
FINISHED_AT = "2026-11-02T10:00:07Z"
RECONCILED_AT = "2026-11-02T10:00:31Z"

# Kinds Argo CD has a built-in health check for; others get no "health" in the tree and in status.resources.
_HEALTH_KINDS = frozenset(
    [
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Pod",
        "Service",
        "Ingress",
        "PersistentVolumeClaim",
        "HorizontalPodAutoscaler",
        "Job",
        "Application",
        "Rollout",
    ]
)

# ---------------------------------------------------------------------------------------------------------------
# JSON and object helpers
# ---------------------------------------------------------------------------------------------------------------


def go_json(value: Any, *, sort_keys: bool = True) -> str:
    """JSON as Go's ``json.Marshal`` writes it: compact, map keys sorted (unstructured objects are maps), UTF-8 kept,
    and ``<``, ``>``, ``&``, U+2028, U+2029 escaped (Go's HTML-safe default)."""
    text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028")):
        text = text.replace(char, escaped)
    return text.replace("\u2029", "\\u2029")


def split_api_version(api_version: str) -> tuple[str, str]:
    """("apps", "v1") for "apps/v1", ("", "v1") for the core "v1"."""
    group, _, version = api_version.rpartition("/")
    return group, version


def object_key(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    group, _ = split_api_version(str(obj.get("apiVersion", "")))
    return group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))


def plural(kind: str) -> str:
    """The resource name of a kind as Kubernetes' default RESTMapper guesses it."""
    lower = kind.lower()
    if lower == "endpoints":
        return lower
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: the casebook is big


class _NoTimestampLoader(_BaseLoader):  # type: ignore[misc]
    """SafeLoader that keeps RFC 3339 times as strings, as the API serves them (PyYAML would build datetimes)."""


_NoTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_manifests(path: Path) -> list[Obj]:
    """Every object of a YAML or JSON file: all documents, ``kind: List`` (and ``*List``) flattened."""
    objs: list[Obj] = []
    for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_NoTimestampLoader):
        if not isinstance(doc, dict):
            continue
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            objs.extend(item for item in doc["items"] if isinstance(item, dict))
        else:
            objs.append(doc)
    return objs


def parse_label_selector(selector: str) -> list[tuple[str, str, frozenset[str]]]:
    """Kubernetes label selector syntax: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``, ``k in (a,b)``,
    ``k notin (a,b)``, comma-separated. Returns (key, operator, values); raises ValueError on bad syntax."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(selector):
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(selector[start:i])
            start = i + 1
    parts.append(selector[start:])
    requirements: list[tuple[str, str, frozenset[str]]] = []
    name = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
    value = r"[-A-Za-z0-9_.]*"
    for raw in parts:
        part = raw.strip()
        if not part:
            if selector.strip():
                raise ValueError(f"invalid empty requirement in {selector!r}")
            continue
        if m := re.fullmatch(rf"({name})\s+(in|notin)\s*\(([^)]*)\)", part):
            values = frozenset(v.strip() for v in m[3].split(","))
            requirements.append((m[1], m[2], values))
        elif m := re.fullmatch(rf"!\s*({name})", part):
            requirements.append((m[1], "!", frozenset()))
        elif m := re.fullmatch(rf"({name})\s*(==|!=|=)\s*({value})", part):
            requirements.append((m[1], "!=" if m[2] == "!=" else "=", frozenset({m[3]})))
        elif re.fullmatch(name, part):
            requirements.append((part, "exists", frozenset()))
        else:
            raise ValueError(f"unable to parse requirement: {part!r}")
    return requirements


def labels_match(requirements: list[tuple[str, str, frozenset[str]]], labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    for key, op, values in requirements:
        present = key in labels
        ok = {
            "=": present and labels.get(key) in values,
            "in": present and labels.get(key) in values,
            "!=": not present or labels.get(key) not in values,
            "notin": not present or labels.get(key) not in values,
            "exists": present,
            "!": not present,
        }[op]
        if not ok:
            return False
    return True


# ---------------------------------------------------------------------------------------------------------------
# Secret masking: gitops-engine pkg/diff HideSecretData
# ---------------------------------------------------------------------------------------------------------------


def _is_secret(obj: Obj | None) -> bool:
    return (
        obj is not None and obj.get("kind") == "Secret" and split_api_version(str(obj.get("apiVersion", "")))[0] == ""
    )


def normalize_secret(obj: Obj | None) -> None:
    """Argo CD's NormalizeSecret, in place: ``stringData`` moves into ``data``, base64-encoded."""
    if obj is None or not isinstance(obj.get("stringData"), dict):
        return
    data: Obj = obj["data"] if isinstance(obj.get("data"), dict) else {}
    for key, value in obj["stringData"].items():
        data[key] = base64.b64encode(value.encode()).decode() if isinstance(value, str) else value
    obj["data"] = data
    del obj["stringData"]


def hide_secret_data(*objs: Obj | None) -> None:
    """Argo CD's HideSecretData, in place, over the objects in Argo CD's order (target, then live).

    Per key, the first distinct value seen is replaced by eight ``+``, every further distinct value by four more,
    so equal values stay equal and different values stay different (across objects, and across the
    last-applied-configuration annotation, which Argo CD masks with the same numbering).
    """
    present = [o for o in objs if o is not None]
    applied: list[tuple[Obj, Obj]] = []
    for obj in present:
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
        if isinstance(text, str):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                applied.append((obj, parsed))
    sequence = [*present, *(parsed for _, parsed in applied)]
    keys: set[str] = set()
    for obj in sequence:
        normalize_secret(obj)
        if isinstance(obj.get("data"), dict):
            keys.update(obj["data"])
    for key in keys:
        replacement = "+" * 8
        seen: dict[str, str] = {}
        for obj in sequence:
            data = obj.get("data")
            if not isinstance(data, dict) or key not in data:
                continue
            value = data[key]
            text = value if isinstance(value, str) else ("" if value is None else json.dumps(value))
            if text not in seen:
                seen[text] = replacement
                replacement += "++++"
            data[key] = seen[text]
    for obj, parsed in applied:
        obj["metadata"]["annotations"][LAST_APPLIED] = go_json(parsed)


def _loads_state(state: Any) -> Obj | None:
    if not isinstance(state, str) or state == "null":
        return None
    value = json.loads(state)
    return value if isinstance(value, dict) else None


def _state(obj: Obj | None) -> str:
    return "null" if obj is None else go_json(obj)


def _mask_resource_diff(diff: Obj) -> None:
    """Mask a Secret's four states as the controller does: target and live together, then the normalized and
    predicted states (computed by Argo CD from the masked pair) with the same numbering."""
    target, live = _loads_state(diff.get("targetState")), _loads_state(diff.get("liveState"))
    hide_secret_data(target, live)
    predicted = _loads_state(diff.get("predictedLiveState"))
    normalized = _loads_state(diff.get("normalizedLiveState"))
    hide_secret_data(predicted, normalized)
    for name, obj in (
        ("targetState", target),
        ("liveState", live),
        ("predictedLiveState", predicted),
        ("normalizedLiveState", normalized),
    ):
        if name in diff:
            diff[name] = _state(obj)


# ---------------------------------------------------------------------------------------------------------------
# The fake server
# ---------------------------------------------------------------------------------------------------------------


class ApiError(Exception):
    """An answer in grpc-gateway's error shape."""

    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _permission_denied() -> ApiError:
    return ApiError(403, 7, "permission denied")


def _app_not_found(name: str) -> ApiError:
    return ApiError(404, 5, f'applications.argoproj.io "{name}" not found')


def _diff_key(diff: Obj) -> Key:
    return str(diff.get("group", "")), str(diff["kind"]), str(diff.get("namespace", "")), str(diff["name"])


@dataclass
class _App:
    app: Obj
    resources: list[Obj]  # ResourceDiffs as served (Secrets masked)
    lives: dict[Key, Obj]  # unmasked live objects, for /resource
    renders: list[list[Obj]]
    events: list[Obj]
    tree: Obj
    uncached_renders: int = 0

    @property
    def name(self) -> str:
        return str(self.app["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.app["metadata"].get("namespace") or "argocd")

    @property
    def project(self) -> str:
        return str((self.app.get("spec") or {}).get("project") or "default")


_APPSET_ROUTE = re.compile(r"/api/v1/applicationsets/(?P<name>[^/]+)")
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
        self._resource_version = 70000
        super().__init__("fake-argocd")

    # -- configuration ----------------------------------------------------------------------------------------

    def add_app(
        self,
        app: Obj,
        resources: list[Obj],
        renders: list[list[Obj]] | None = None,
        events: list[Obj] | None = None,
        tree: Obj | None = None,
    ) -> None:
        """Serve ``app`` (a full Application) with ``resources`` (ResourceDiffs, states as JSON strings).

        ``renders`` are the manifests of successive renders: ``/manifests`` answers ``renders[0]`` (the cached
        render the last comparison used); each ``noCache=true`` call answers the next entry, staying on the last.
        Default: the target states. ``events`` are Kubernetes Events (see ``/events``). ``tree`` is a full
        ``{"nodes": [...]}``; default: one node per live resource.
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

    # -- HTTP --------------------------------------------------------------------------------------------------

    def _json(self, body: Any, status: int = 200) -> Response:
        # grpc-gateway writes struct fields in declaration order, so the outer body is not key-sorted.
        return Response(status, go_json(body, sort_keys=False).encode())

    def _error(self, err: ApiError) -> Response:
        return self._json({"error": err.message, "code": err.code, "message": err.message}, err.status)

    def handle(self, request: Request) -> Response:
        path = request.path.rstrip("/") or "/"
        if path == "/api/version":  # anonymous in argocd-server, handy for readiness checks
            return self._json({"Version": self.VERSION, "BuildDate": "2026-10-20T12:00:00Z", "GoVersion": "go1.25"})
        route = _APP_ROUTE.fullmatch(path)
        appset_route = _APPSET_ROUTE.fullmatch(path)
        # Write routes (sync, delete, patch, ...) exist in argocd-server: they authenticate and then fail RBAC.
        writing = request.method != "GET" and path.startswith("/api/v1/")
        if path != "/api/v1/applications" and route is None and appset_route is None and not writing:
            return self._error(ApiError(404, 5, "Not Found"))
        token = self.bearer(request)
        if token is None:
            return self._error(ApiError(401, 16, "no session information"))
        if not secrets.compare_digest(token, self.token):
            return self._error(ApiError(401, 16, "invalid session: token signature is invalid"))
        if writing:
            return self._error(_permission_denied())  # the read-only account lacks create/update/sync/delete
        try:
            with self._lock:
                if appset_route is not None:
                    appset = self._appsets.get((request.arg("appsetNamespace") or "argocd", appset_route["name"]))
                    if appset is None:  # as for apps, RBAC hides whether it exists
                        raise _permission_denied()
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
            entry.app
            for entry in sorted(self._apps.values(), key=lambda e: (e.name, e.namespace))
            if (not projects or entry.project in projects)
            and (not name or entry.name == name)
            and (not namespace or entry.namespace == namespace)
            and labels_match(requirements, entry.app["metadata"].get("labels"))
        ]
        return {"metadata": {"resourceVersion": str(self._resource_version)}, "items": items}

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
            if not request.arg(required):
                raise ApiError(400, 3, f'proto: required field "{required}" not set')
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
        if request.arg("noCache").lower() == "true":
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
        spec, status = app.app.get("spec") or {}, app.app.get("status") or {}
        destination = spec.get("destination") or {}
        return {
            **({"manifests": manifests} if manifests else {}),  # ManifestResponse.Manifests is omitempty
            "namespace": destination.get("namespace", ""),
            "server": destination.get("server", IN_CLUSTER),
            "revision": request.arg("revision") or (status.get("sync") or {}).get("revision", ""),
            "sourceType": status.get("sourceType", "Helm"),
        }

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
        return {"metadata": {}, "items": [event for event in app.events if _involves(event, wanted)]}


def _involves(event: Obj, wanted: dict[str, str]) -> bool:
    """The field selector involvedObject.{name,uid,namespace}; an event fixture without a uid matches by name and
    namespace alone, so tests need not invent uids."""
    involved = event.get("involvedObject") or {}
    return all(
        (key == "uid" and not involved.get("uid")) or str(involved.get(key, "")) == value
        for key, value in wanted.items()
    )


def build_tree(resources: list[Obj], lives: dict[Key, Obj]) -> Obj:
    """The resource tree Argo CD shows for these resources: one node per live object (no children)."""
    nodes: list[Obj] = []
    for diff in resources:
        live = lives.get(_diff_key(diff))
        if live is None:
            continue
        group, version = split_api_version(str(live.get("apiVersion", "")))
        meta = live.get("metadata") or {}
        node: Obj = {}
        if group:
            node["group"] = group
        node.update(version=version, kind=live.get("kind"))
        if meta.get("namespace"):
            node["namespace"] = meta["namespace"]
        node["name"] = meta.get("name")
        node["uid"] = meta.get("uid") or str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(_diff_key(diff))))
        if meta.get("resourceVersion"):
            node["resourceVersion"] = meta["resourceVersion"]
        if live.get("kind") in _HEALTH_KINDS:
            node["health"] = {"status": "Healthy"}
        if meta.get("creationTimestamp"):
            node["createdAt"] = meta["creationTimestamp"]
        nodes.append(node)
    return {"nodes": nodes}


# ---------------------------------------------------------------------------------------------------------------
# Casebook → Application + ResourceDiffs + renders
# ---------------------------------------------------------------------------------------------------------------


@cache
def _merge_keys() -> Obj:
    # Read as plain JSON: the fake must not share code with the analysis it is used to test.
    data: Obj = json.loads(MERGEKEYS.read_text(encoding="utf-8"))
    return data


# Built-in kinds that mergekeys.json does not list but whose merge keys Argo CD's strategic merge knows.
_WEBHOOK_LISTS: dict[str, Obj] = {"webhooks": {"listType": "map", "keys": ["name"]}}
_EXTRA_BUILTIN: dict[tuple[str, str], dict[str, Obj]] = {
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _WEBHOOK_LISTS,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _WEBHOOK_LISTS,
}


def list_semantics(api_version: str, kind: str) -> dict[str, Obj] | None:
    """Path ("spec.template.spec.containers", "[]" for list items) → list semantics for a built-in kind; None for
    kinds without a schema (custom resources), whose lists a JSON merge patch replaces whole."""
    group, _ = split_api_version(api_version)
    entry = _merge_keys()["kinds"].get(kind)
    if entry is not None and split_api_version(entry["apiVersion"])[0] == group:
        lists: dict[str, Obj] = entry["lists"]
        return lists
    return _EXTRA_BUILTIN.get((group, kind))


def _merge(live: Any, desired: Any, path: str, lists: dict[str, Obj] | None) -> Any:
    """``desired`` applied onto ``live`` as kubectl apply's strategic merge (built-in kinds) or a JSON merge patch
    (custom resources) would: maps key by key, associative lists by merge key (live order kept, new items
    appended), sets as unions, every other list replaced. A null in ``desired`` deletes the key."""
    if isinstance(desired, dict) and isinstance(live, dict):
        out = dict(live)
        for key, value in desired.items():
            child = f"{path}.{key}" if path else key
            if value is None:
                out.pop(key, None)
            else:
                out[key] = _merge(out[key], value, child, lists) if key in out else value
        return out
    if isinstance(desired, list) and isinstance(live, list) and lists is not None:
        spec = lists.get(path) or {}
        if spec.get("listType") == "map":
            return _merge_map_list(live, desired, path, spec, lists)
        if spec.get("listType") == "set":
            return [*live, *(item for item in desired if item not in live)]
    return desired


def _merge_map_list(live: list[Any], desired: list[Any], path: str, spec: Obj, lists: dict[str, Obj]) -> list[Any]:
    keys: list[str] = spec.get("keys") or []
    defaults: Obj = spec.get("keyDefaults") or {}

    def key_of(item: Any) -> str | None:
        if not isinstance(item, dict):
            return None
        return json.dumps([item.get(k, defaults.get(k)) for k in keys], sort_keys=True)

    out = list(live)
    index = {k: i for i, item in enumerate(out) if (k := key_of(item)) is not None}
    for item in desired:
        k = key_of(item)
        if k is not None and k in index:
            out[index[k]] = _merge(out[index[k]], item, f"{path}[]", lists)
        else:
            out.append(item)
            if k is not None:
                index[k] = len(out) - 1
    return out


def predict_live(live: Obj, target: Obj) -> Obj:
    """The live object after Argo CD applied ``target`` to it (predictedLiveState, before normalization)."""
    target = copy.deepcopy(target)
    if _is_secret(target):
        normalize_secret(target)  # Argo CD compares a Secret's stringData as data
    lists = list_semantics(str(target.get("apiVersion", "")), str(target.get("kind", "")))
    merged: Obj = json.loads(json.dumps(_merge(live, target, "", lists)))  # one deep copy of the shared parts
    return merged


def _normalized(obj: Obj, ignore_status: bool) -> Obj:
    obj = copy.deepcopy(obj)
    (obj.get("metadata") or {}).pop("managedFields", None)
    if ignore_status:
        obj.pop("status", None)
    return obj


def resource_diff(target: Obj | None, live: Obj | None, *, ignore_status: bool = True) -> Obj:
    """A ResourceDiff as ``managed-resources`` returns it (unmasked: ``add_app`` masks Secrets).

    normalizedLiveState is live without managedFields, predictedLiveState the live object with ``target`` merged
    in (``predict_live``), also without managedFields; with ``ignore_status`` (Argo CD 3.x default
    ``ignoreResourceStatusField: all``) both lose ``status``. ``modified`` = predicted differs from normalized.
    """
    ref = target if target is not None else live
    if ref is None:
        raise ValueError("a ResourceDiff needs a target or a live object")
    group, kind, namespace, name = object_key(ref)
    diff: Obj = {}
    if group:
        diff["group"] = group
    diff["kind"] = kind
    if namespace:
        diff["namespace"] = namespace
    diff["name"] = name
    diff["targetState"] = _state(target)
    diff["liveState"] = _state(live)
    normalized = _normalized(live, ignore_status) if live is not None else None
    if target is None:
        predicted = None
    elif live is None:
        predicted = _normalized(target, ignore_status)
    else:
        predicted = _normalized(predict_live(live, target), ignore_status)
    diff["normalizedLiveState"] = _state(normalized)
    diff["predictedLiveState"] = _state(predicted)
    if live is not None and (live.get("metadata") or {}).get("resourceVersion"):
        diff["resourceVersion"] = live["metadata"]["resourceVersion"]
    if predicted != normalized:
        diff["modified"] = True
    return diff


def _destination_namespace(desired: list[Obj]) -> str:
    counts = Counter(ns for obj in desired if (ns := (obj.get("metadata") or {}).get("namespace")))
    if counts:
        return str(counts.most_common(1)[0][0])
    # Only cluster-scoped objects: their tracking id carries the destination namespace.
    for obj in desired:
        tracking = ((obj.get("metadata") or {}).get("annotations") or {}).get(TRACKING_ID, "")
        if (m := re.fullmatch(r"[^:]+:[^:]*:([^/]*)/.+", str(tracking))) and m[1]:
            return m[1]
    return "default"


def _tracking_app(live: Obj) -> str | None:
    meta = live.get("metadata") or {}
    tracking = (meta.get("annotations") or {}).get(TRACKING_ID)
    if isinstance(tracking, str) and ":" in tracking:
        return tracking.split(":", 1)[0].replace("_", "/")
    label = (meta.get("labels") or {}).get("app.kubernetes.io/instance")
    return label if isinstance(label, str) else None


def _uses_server_side_apply(lives: list[Obj]) -> bool:
    return any(
        entry.get("manager") in ("argocd-controller", "argocd-application-controller")
        and entry.get("operation") == "Apply"
        for live in lives
        for entry in (live.get("metadata") or {}).get("managedFields") or []
    )


def build_application(
    name: str,
    destination_namespace: str,
    resources: list[Obj],
    *,
    self_heal: bool = False,
    server_side_apply: bool = False,
    project: str = "default",
) -> Obj:
    """A synced Application as argocd-server returns it, with ``status`` derived from ``resources``."""
    source = {"repoURL": REPO_URL, "path": f"apps/{name}", "targetRevision": "main"}
    destination = {"server": IN_CLUSTER, "namespace": destination_namespace}
    sync_policy: Obj = {}
    if self_heal:
        sync_policy["automated"] = {"prune": True, "selfHeal": True}
    sync_policy["syncOptions"] = ["CreateNamespace=true"] + (["ServerSideApply=true"] * server_side_apply)
    initiated_by: Obj = {"automated": True} if self_heal else {"username": "admin"}
    sync_operation: Obj = {"revision": REVISION, "syncStrategy": {"hook": {}}}
    if self_heal:
        sync_operation["autoHealAttemptsCount"] = 3  # omitempty in Go: absent for manual syncs

    statuses, results, conditions = [], [], []
    out_of_sync = False
    for diff in resources:
        live = _loads_state(diff.get("liveState"))
        ref = _loads_state(diff.get("targetState")) or live or {}
        _, version = split_api_version(str(ref.get("apiVersion", "")))
        group, kind = str(diff.get("group", "")), str(diff["kind"])
        modified = bool(diff.get("modified"))
        out_of_sync |= modified
        status: Obj = {}
        if group:
            status["group"] = group
        status.update(version=version, kind=kind)
        if diff.get("namespace"):
            status["namespace"] = diff["namespace"]
        status.update(name=diff["name"], status="OutOfSync" if modified else "Synced")
        if kind in _HEALTH_KINDS:
            status["health"] = {"status": "Healthy" if live is not None else "Missing"}
        statuses.append(status)
        qualified = f"{kind.lower()}.{group}" if group else kind.lower()
        message = (
            "serverside-applied"
            if server_side_apply
            else f"{qualified}/{diff['name']} " + ("configured" if modified else "unchanged")
        )
        # ResourceResult has no omitempty on group/namespace: core and cluster-scoped show "".
        results.append(
            {
                "group": group,
                "version": version,
                "kind": kind,
                "namespace": diff.get("namespace", ""),
                "name": diff["name"],
                "status": "Synced",
                "message": message,
                "hookPhase": "Running",
                "syncPhase": "Sync",
            }
        )
        other = _tracking_app(live) if live is not None else None
        if other is not None and other != name and other != f"argocd/{name}":
            conditions.append(
                {
                    "type": "SharedResourceWarning",
                    "message": f"{kind}/{diff['name']} is part of applications argocd/{name} and {other}",
                    "lastTransitionTime": RECONCILED_AT,
                }
            )

    status_block: Obj = {
        "resources": statuses,
        "sync": {
            "status": "OutOfSync" if out_of_sync else "Synced",
            "comparedTo": {"source": source, "destination": destination},
            "revision": REVISION,
        },
        "health": {"status": "Healthy", "lastTransitionTime": FINISHED_AT},
        "history": [
            {
                "revision": PREVIOUS_REVISION,
                "deployedAt": PREVIOUS_DEPLOYED_AT,
                "id": 6,
                "source": source,
                "deployStartedAt": PREVIOUS_DEPLOYED_AT,
                "initiatedBy": {"username": "admin"},
            },
            {
                "revision": REVISION,
                "deployedAt": FINISHED_AT,
                "id": 7,
                "source": source,
                "deployStartedAt": STARTED_AT,
                "initiatedBy": initiated_by,
            },
        ],
        "reconciledAt": RECONCILED_AT,
        "operationState": {
            "operation": {"sync": sync_operation, "initiatedBy": initiated_by, "retry": {}},
            "phase": "Succeeded",
            "message": "successfully synced (all tasks run)",
            "syncResult": {"resources": results, "revision": REVISION, "source": source},
            "startedAt": STARTED_AT,
            "finishedAt": FINISHED_AT,
        },
        "sourceType": "Helm",
        "summary": {},
        "controllerNamespace": "argocd",
    }
    if conditions:
        status_block["conditions"] = conditions
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {
            "name": name,
            "namespace": "argocd",
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"argocd/applications/{name}")),
            "resourceVersion": "71234",
            "generation": 42,
            "creationTimestamp": CREATED_AT,
            "labels": {"app.kubernetes.io/part-of": name},
            "finalizers": ["resources-finalizer.argocd.argoproj.io"],
        },
        "spec": {"project": project, "source": source, "destination": destination, "syncPolicy": sync_policy},
        "status": status_block,
    }


def app_from_case(
    case_dir: Path, *, self_heal: bool = False, ignore_status: bool = True
) -> tuple[Obj, list[Obj], list[list[Obj]]]:
    """What Argo CD reports for a casebook scenario: (Application, ResourceDiffs, renders).

    Every desired object becomes a ResourceDiff against its live counterpart (same group, kind, namespace, name);
    live objects without a desired counterpart are not the app's resources. Renders are [desired, desired-again]
    when the case has a second render, else [desired].
    """
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    desired = load_manifests(case_dir / "desired.yaml")
    lives = load_manifests(case_dir / "live.yaml")
    again = case_dir / "desired-again.yaml"
    renders = [desired, load_manifests(again)] if again.exists() else [desired]
    destination = _destination_namespace(desired)
    by_key = {object_key(live): live for live in lives}
    diffs: list[Obj] = []
    for target in desired:
        key = object_key(target)
        live = by_key.get(key)
        if live is None and not key[2] and (key[0], key[1], destination, key[3]) in by_key:
            # Argo CD puts namespaced objects without a namespace into the destination namespace.
            target = copy.deepcopy(target)
            target["metadata"]["namespace"] = destination
            live = by_key[(key[0], key[1], destination, key[3])]
        diffs.append(resource_diff(target, live, ignore_status=ignore_status))
    matched = [_loads_state(d["liveState"]) for d in diffs]
    app = build_application(
        str(case["app"]),
        destination,
        diffs,
        self_heal=self_heal,
        server_side_apply=_uses_server_side_apply([m for m in matched if m is not None]),
    )
    return app, diffs, renders
