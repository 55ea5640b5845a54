"""Benchmark: how fast does the analysis explain a large, realistically drifted application?

The script builds, in memory, one Argo CD application of N resources (Deployments, Services and
ConfigMaps in a dozen team namespaces, as a platform "monorepo" app would hold) the way the cluster
would show it: rendered manifests with the tracking annotation, live objects with defaults filled in,
allocated Service IPs, Deployment status, and complete ``metadata.managedFields`` from several managers
(``argocd-controller`` with client-side apply (Update plus last-applied-configuration) or server-side
apply (Apply), ``kube-controller-manager`` through the ``status`` and ``scale`` subresources,
``kubectl-edit``, ``kubectl-annotate``, a team-ownership operator), and a cluster context with the
HorizontalPodAutoscalers, the Namespaces and the Application.

A share ``--drift`` of the resources (5 % by default) gets exactly one drifted field each, the four
kinds in turn:

* ``/spec/replicas`` raised by an HPA of the context (kube-controller-manager, subresource scale);
* a container image hot-fixed with ``kubectl edit`` (manager kubectl-edit);
* an ``ownership.example.com/team`` annotation rewritten by the ``team-ownership-operator``;
* a memory limit written ``1024Mi`` in Git and stored as ``1Gi`` (quantity normalisation).

Everything else is in sync, so a correct analysis reports exactly one finding per injected drift.

It then times, in-process, (1) a bare ``json.loads`` of the three JSON texts and (2) the full explanation,
parse included: ``bot.analysis.load_documents`` on each text and ``bot.analysis.explain``. It prints the
best and median wall time of ``--repeat`` runs next to the goals (2,000 resources in under 2 s, within
10x of the bare parse), and checks that the findings match the injected drifts cause by cause (exit
status 1 when they do not; missed speed goals are only reported, machines differ).

Last, the whole process, as a user runs it: the three texts written to files, ``argo-why explain --desired
... --live ... --context ... --format json`` (interpreter start, imports, parse, analysis, the JSON report on
stdout) against its floor, a process of the same interpreter doing a bare ``json.load`` of the same files;
after one untimed run that writes the bytecode cache, ``--process-runs`` rounds, the two alternating so that
both see the same load. It prints the best and median of each, the ratio of the bests (goal <= 2x) and of the
medians, and the ratio of their CPU times (user + system), which a busy machine inflates less.

Usage (from the project root)::

    .venv/bin/python bench/analysis.py                        # 2,000 resources, 5 % drift
    .venv/bin/python bench/analysis.py --resources 10000 --repeat 3 --seed 7

``build_app(n, drift, seed)`` is the generator (``generate`` also says which drifts it injected),
importable on its own (tests use it); it needs nothing from ``bot``.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

APP = "commerce-platform"
GOAL_SECONDS = 2.0
GOAL_RESOURCES = 2000
GOAL_RATIO = 10.0
GOAL_PROCESS_RATIO = 2.0

TEAMS = (
    "cart",
    "catalog",
    "checkout",
    "search",
    "payments",
    "pricing",
    "promotions",
    "reviews",
    "shipping",
    "identity",
    "notifications",
    "inventory",
)
WORDS = (
    "api",
    "worker",
    "gateway",
    "sync",
    "indexer",
    "scheduler",
    "events",
    "reporting",
    "export",
    "admin",
    "webhooks",
    "ledger",
    "feed",
    "rules",
    "quotes",
    "sessions",
)
Obj = dict[str, Any]
Tree = dict[str, Any]
EPOCH = datetime(2026, 1, 12, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# List semantics the generated objects need (path pattern -> merge keys); other lists are atomic.
MAP_LISTS: dict[str, tuple[str, ...]] = {
    "spec.template.spec.containers": ("name",),
    "spec.template.spec.containers[].ports": ("containerPort", "protocol"),
    "spec.template.spec.containers[].env": ("name",),
    "spec.template.spec.containers[].volumeMounts": ("mountPath",),
    "spec.template.spec.volumes": ("name",),
    "spec.ports": ("port", "protocol"),
    "status.conditions": ("type",),
}
ATOMIC = frozenset(
    {
        "spec.selector",
        "spec.template.spec.containers[].env[].valueFrom.fieldRef",
        "spec.template.spec.containers[].env[].valueFrom.configMapKeyRef",
    }
)
# Maps that exist in the zero value of the kind, so an Update creator does not own them with ".".
PREEXISTING = {
    "Deployment": frozenset(
        {
            "metadata",
            "spec",
            "spec.strategy",
            "spec.template",
            "spec.template.metadata",
            "spec.template.spec",
            "spec.template.spec.containers",
            "status",
        }
    ),
    "Service": frozenset({"metadata", "spec", "status"}),
    "ConfigMap": frozenset({"metadata"}),
}


# ---------------------------------------------------------------------------------------------- FieldsV1


def _key(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    found = {k: item.get(k, "TCP" if k == "protocol" else None) for k in keys}
    return "k:" + json.dumps(found, sort_keys=True, separators=(",", ":"))


def fields_tree(value: Any, pattern: str, mode: str, kind: str) -> Tree:
    """The FieldsV1 tree of ``value`` as its creator owns it (``mode``: ``update`` or ``apply``).

    Update creators own every field they sent (defaults included) and ``.`` on each map or list they
    created; Apply managers own exactly their configuration, with ``.`` on list items only.
    """
    if pattern in ATOMIC or not isinstance(value, dict | list) or not value:
        return {}
    out: Tree = {}
    if mode == "update" and pattern and pattern not in PREEXISTING[kind]:
        out["."] = {}
    if isinstance(value, dict):
        for k in sorted(value):
            out["f:" + k] = fields_tree(value[k], f"{pattern}.{k}" if pattern else k, mode, kind)
        return out
    keys = MAP_LISTS.get(pattern)
    if keys is None:
        return {}
    for item in value:  # list items always carry "." (the item itself is owned)
        out[_key(item, keys)] = {".": {}, **fields_tree(item, pattern + "[]", mode, kind)}
    return out


def take(tree: Tree, path: list[str]) -> None:
    """Remove ``path`` from an entry's tree (another manager took the field)."""
    node = tree
    for step in path[:-1]:
        node = node[step]
    del node[path[-1]]


def nest(path: list[str]) -> Tree:
    tree: Tree = {}
    for step in reversed(path):
        tree = {step: tree}
    return tree


def entry(
    api_version: str, fields: Tree, manager: str, operation: str, when: str, subresource: str | None = None
) -> dict[str, Any]:
    e: dict[str, Any] = {
        "apiVersion": api_version,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
    }
    if subresource:
        e["subresource"] = subresource
    e["time"] = when
    return e


def sort_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda e: (e["operation"], e["time"], e["manager"], e.get("subresource", "")))


# ---------------------------------------------------------------------------------------------- objects


class Gen:
    """Deterministic builder of one application's desired, live and context objects."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.rv = 31_000_000 + self.rng.randrange(1_000_000)

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def stamp(self, day_from: int, day_to: int) -> datetime:
        """A moment between ``day_from`` and ``day_to`` days after the cluster's first day."""
        return EPOCH + timedelta(days=day_from, seconds=self.rng.randrange((day_to - day_from) * 86400))

    def resource_version(self) -> str:
        self.rv += self.rng.randrange(1, 4000)
        return str(self.rv)

    def pod_hash(self) -> str:
        return "".join(self.rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(self.rng.choice((9, 10))))


def tracking(group: str, kind: str, ns: str, name: str) -> str:
    return f"{APP}:{group}/{kind}:{ns}/{name}"


def labels(team: str, svc: str, version: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": svc,
        "app.kubernetes.io/instance": APP,
        "app.kubernetes.io/part-of": team,
        "app.kubernetes.io/version": version,
        "app.kubernetes.io/managed-by": "Helm",
        "helm.sh/chart": f"{svc}-1.{len(svc) % 7}.{len(team) % 5}",
    }


def desired_configmap(g: Gen, team: str, svc: str, version: str) -> Obj:
    data = {
        "LOG_LEVEL": g.rng.choice(["info", "warn", "debug"]),
        "HTTP_PORT": "8080",
        "UPSTREAM_TIMEOUT": f"{g.rng.choice([2, 5, 10, 30])}s",
        "application.yaml": (
            f"service:\n  name: {svc}\n  team: {team}\ncache:\n  ttl: {g.rng.randrange(30, 600)}s\n"
            f"  size: {g.rng.randrange(100, 5000)}\nfeatures:\n  async-writes: "
            f"{g.rng.choice(['true', 'false'])}\n"
        ),
    }
    for i in range(g.rng.randrange(0, 5)):
        data[f"FEATURE_FLAG_{i}"] = g.rng.choice(["on", "off"])
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{svc}-config",
            "namespace": team,
            "labels": labels(team, svc, version),
            "annotations": {
                "argocd.argoproj.io/tracking-id": tracking("", "ConfigMap", team, f"{svc}-config"),
                "ownership.example.com/team": team,
            },
        },
        "data": data,
    }


def desired_service(g: Gen, team: str, svc: str, version: str) -> Obj:
    ports: list[dict[str, Any]] = [{"name": "http", "port": 80, "targetPort": "http"}]
    if g.rng.random() < 0.4:
        ports.append({"name": "grpc", "port": 9090, "targetPort": "grpc"})
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": svc,
            "namespace": team,
            "labels": labels(team, svc, version),
            "annotations": {
                "argocd.argoproj.io/tracking-id": tracking("", "Service", team, svc),
                "ownership.example.com/team": team,
            },
        },
        "spec": {
            "type": "ClusterIP",
            "ports": ports,
            "selector": {"app.kubernetes.io/name": svc, "app.kubernetes.io/instance": APP},
        },
    }


def desired_deployment(g: Gen, team: str, svc: str, version: str, replicas: int | None, memory: str) -> Obj:
    env: list[dict[str, Any]] = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel-collector.observability:4317"},
        {"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": f"{svc}-config", "key": "LOG_LEVEL"}}},
    ]
    for i in range(g.rng.randrange(0, 4)):
        env.append({"name": f"{svc.upper().replace('-', '_')}_OPT_{i}", "value": str(g.rng.randrange(1, 500))})
    app: dict[str, Any] = {
        "name": "app",
        "image": f"registry.example.com/{team}/{svc}:{version}",
        "ports": [{"name": "http", "containerPort": 8080}],
        "envFrom": [{"configMapRef": {"name": f"{svc}-config"}}],
        "env": env,
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 5},
        "livenessProbe": {"httpGet": {"path": "/livez", "port": "http"}},
        "resources": {
            "requests": {"cpu": g.rng.choice(["100m", "250m", "500m", "1"]), "memory": "256Mi"},
            "limits": {"memory": memory},
        },
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
    }
    if g.rng.random() < 0.4:
        app["ports"].append({"name": "grpc", "containerPort": 9090})
    containers = [app]
    if g.rng.random() < 0.3:
        containers.append(
            {
                "name": "log-shipper",
                "image": "cr.fluentbit.io/fluent/fluent-bit:3.2.4",
                "args": ["--config=/fluent-bit/etc/fluent-bit.yaml"],
                "resources": {"requests": {"cpu": "20m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
            }
        )
    sel = {"app.kubernetes.io/name": svc, "app.kubernetes.io/instance": APP}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": sel},
        "template": {
            "metadata": {"labels": dict(sel), "annotations": {"prometheus.io/scrape": "true"}},
            "spec": {
                "serviceAccountName": svc,
                "containers": containers,
                "volumes": [{"name": "config", "configMap": {"name": f"{svc}-config"}}],
            },
        },
    }
    if replicas is not None:
        spec = {"replicas": replicas, **spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": svc,
            "namespace": team,
            "labels": labels(team, svc, version),
            "annotations": {
                "argocd.argoproj.io/tracking-id": tracking("apps", "Deployment", team, svc),
                "ownership.example.com/team": team,
            },
        },
        "spec": spec,
    }


def canonical(quantity: str) -> str:
    return {"1024Mi": "1Gi", "2048Mi": "2Gi"}.get(quantity, quantity)


def defaulted(obj: Obj) -> Obj:
    """``obj`` as the API server stores it (defaulting only; allocation and status come later)."""
    out = copy.deepcopy(obj)
    if out["kind"] == "Service":
        spec = out["spec"]
        spec.setdefault("sessionAffinity", "None")
        spec.setdefault("internalTrafficPolicy", "Cluster")
        for p in spec["ports"]:
            p.setdefault("protocol", "TCP")
    elif out["kind"] == "Deployment":
        spec = out["spec"]
        spec.setdefault("replicas", 1)
        spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        pod = spec["template"]["spec"]
        pod.update(
            {
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "terminationGracePeriodSeconds": 30,
                "serviceAccount": pod["serviceAccountName"],
            }
        )
        for c in pod["containers"]:
            c.update(
                {
                    "imagePullPolicy": "IfNotPresent",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            )
            for part in c["resources"].values():
                for k, v in part.items():
                    part[k] = canonical(v)
            for p in c.get("ports", []):
                p.setdefault("protocol", "TCP")
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("fieldRef")
                if ref is not None:
                    ref.setdefault("apiVersion", "v1")
            for probe in ("readinessProbe", "livenessProbe"):
                if probe in c:
                    c[probe]["httpGet"].setdefault("scheme", "HTTP")
                    for k, v in (
                        ("failureThreshold", 3),
                        ("periodSeconds", 10),
                        ("successThreshold", 1),
                        ("timeoutSeconds", 1),
                    ):
                        c[probe].setdefault(k, v)
        for v in pod.get("volumes", []):
            v["configMap"].setdefault("defaultMode", 420)
    return out


def owned_by_creator(obj: Obj, desired: Obj, ssa: bool) -> Tree:
    """Argo CD's entry right after it created ``obj`` (client-side apply: Update; server-side: Apply)."""
    src = desired if ssa else obj
    kind = obj["kind"]
    body = {k: v for k, v in src.items() if k not in ("apiVersion", "kind", "status", "metadata")}
    md = {k: src["metadata"][k] for k in ("labels", "annotations") if k in src["metadata"]}
    return fields_tree({"metadata": md, **body}, "", "apply" if ssa else "update", kind)


def dep_status(g: Gen, name: str, replicas: int, generation: int, created: datetime, when: str) -> dict[str, Any]:
    """Status as the Deployment controller leaves it after the last rollout or scale settled."""
    available = iso(created + timedelta(seconds=g.rng.randrange(20, 60)))
    return {
        "availableReplicas": replicas,
        "observedGeneration": generation,
        "readyReplicas": replicas,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "conditions": [
            {
                "lastTransitionTime": available,
                "lastUpdateTime": available,
                "message": "Deployment has minimum availability.",
                "reason": "MinimumReplicasAvailable",
                "status": "True",
                "type": "Available",
            },
            {
                "lastTransitionTime": iso(created),
                "lastUpdateTime": when,
                "message": f'ReplicaSet "{name}-{g.pod_hash()}" has successfully progressed.',
                "reason": "NewReplicaSetAvailable",
                "status": "True",
                "type": "Progressing",
            },
        ],
    }


STATUS_FIELDS: Tree = {"f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}}}


def build_live(g: Gen, desired: Obj, drift: str | None, hpa: bool) -> Obj:
    """The live object for ``desired``, with the history that ``drift`` and ``hpa`` describe."""
    ssa = g.rng.random() < 0.3
    created = g.stamp(0, 150)
    synced = g.stamp(150, 290)  # Argo CD's last sync that changed the object
    api = desired["apiVersion"]
    live = defaulted(desired)
    if not ssa:
        live["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = (
            json.dumps(desired, sort_keys=True, separators=(",", ":")) + "\n"
        )
    argo = owned_by_creator(live, desired, ssa)
    entries = [entry(api, argo, "argocd-controller", "Apply" if ssa else "Update", iso(synced))]
    kind = desired["kind"]
    md = live["metadata"]
    md.update({"creationTimestamp": iso(created), "resourceVersion": g.resource_version(), "uid": g.uid()})

    if kind == "Service":
        ip = f"10.96.{g.rng.randrange(256)}.{g.rng.randrange(1, 255)}"
        live["spec"].update(
            {"clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"}
        )
        live["status"] = {"loadBalancer": {}}
    if kind == "Deployment":
        spec = live["spec"]
        generation = g.rng.randrange(2, 40)
        last_change = synced
        if hpa:  # the HPA scales through /scale: kube-controller-manager takes spec.replicas from Argo CD
            spec["replicas"] = g.rng.randrange(5, 12) if drift == "hpa-replicas" else g.rng.randrange(2, 9)
            if "f:replicas" in argo.get("f:spec", {}):
                take(argo, ["f:spec", "f:replicas"])
            scaled = synced + timedelta(seconds=g.rng.randrange(15, 86400 * 5))
            last_change = max(last_change, scaled)
            entries.append(
                entry(api, {"f:spec": {"f:replicas": {}}}, "kube-controller-manager", "Update", iso(scaled), "scale")
            )
        if drift == "kubectl-edit-image":
            app = spec["template"]["spec"]["containers"][0]
            app["image"] += "-hotfix.1"
            path = ["f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"app"}', "f:image"]
            take(argo, path)
            edited = g.stamp(291, 300)
            last_change = max(last_change, edited)
            entries.append(entry(api, nest(path), "kubectl-edit", "Update", iso(edited)))
        md["generation"] = generation
        md["annotations"]["deployment.kubernetes.io/revision"] = str(generation - 1)
        settled = last_change + timedelta(seconds=g.rng.randrange(20, 90))
        live["status"] = dep_status(g, md["name"], spec["replicas"], generation, created, iso(settled))
        status_tree = copy.deepcopy(STATUS_FIELDS)
        status_tree["f:status"] = fields_tree(live["status"], "status", "update", "Deployment")
        entries.append(entry(api, status_tree, "kube-controller-manager", "Update", iso(settled), "status"))
    if drift == "controller-annotation":
        md["annotations"]["ownership.example.com/team"] = "platform-unassigned"
        path = ["f:metadata", "f:annotations", "f:ownership.example.com/team"]
        take(argo, path)
        entries.append(entry(api, nest(path), "team-ownership-operator", "Update", iso(g.stamp(291, 300))))
    if g.rng.random() < 0.03:  # someone annotated it by hand: a field only live has, not a finding
        md["annotations"]["kubernetes.io/change-cause"] = "investigating latency, see INC-4711"
        path = ["f:metadata", "f:annotations", "f:kubernetes.io/change-cause"]
        entries.append(entry(api, nest(path), "kubectl-annotate", "Update", iso(g.stamp(291, 300))))
    md["managedFields"] = sort_entries(entries)
    return live


def hpa_object(g: Gen, team: str, svc: str, replicas: int) -> Obj:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": svc,
            "namespace": team,
            "uid": g.uid(),
            "resourceVersion": g.resource_version(),
            "creationTimestamp": iso(g.stamp(0, 150)),
            "annotations": {
                "argocd.argoproj.io/tracking-id": f"platform-scaling:autoscaling/HorizontalPodAutoscaler:{team}/{svc}"
            },
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": svc},
            "minReplicas": 2,
            "maxReplicas": 20,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
                }
            ],
        },
        "status": {"currentReplicas": replicas, "desiredReplicas": replicas},
    }


# The cause a correct analysis gives each kind of injected drift.
EXPECTED_CAUSE = {
    "hpa-replicas": "autoscaler",
    "kubectl-edit-image": "manual-edit",
    "controller-annotation": "operator",
    "quantity": "normalization",
}


def _drift_plan(rng: random.Random, n: int, count: int) -> dict[int, str]:
    """Which resource gets which drift: the four kinds in turn (three of them need a Deployment)."""
    deployments = [i for i in range(n) if i % 3 == 2]
    anything = list(range(n))
    rng.shuffle(deployments)
    rng.shuffle(anything)
    kinds = list(EXPECTED_CAUSE)
    plan: dict[int, str] = {}
    for j in range(count):
        how = kinds[j % len(kinds)]
        pool = anything if how == "controller-annotation" else deployments
        while pool and pool[-1] in plan:
            pool.pop()
        if not pool:  # no Deployment left: an annotation drift fits any resource
            how, pool = "controller-annotation", anything
            while pool[-1] in plan:
                pool.pop()
        plan[pool.pop()] = how
    return plan


def build_app(n: int, drift: float, seed: int) -> tuple[str, str, str, int]:
    """Generate one application of ``n`` resources, about ``drift`` of them drifted by one field each.

    Returns ``(desired_json, live_json, context_json, drifted_count)``: the rendered manifests as a JSON
    list, the live objects as a ``kind: List`` with managedFields, the context (HPAs, Namespaces, the
    Application) as a ``kind: List``, and the number of drifted resources (the findings a correct
    analysis reports). The same arguments always give the same texts.
    """
    desired, live, context, injected = generate(n, drift, seed)
    return desired, live, context, sum(injected.values())


def generate(n: int, drift: float, seed: int) -> tuple[str, str, str, Counter[str]]:
    """Like :func:`build_app`, with the number of injected drifts per kind instead of their total."""
    g = Gen(seed)
    injected: Counter[str] = Counter()
    plan = _drift_plan(g.rng, n, round(n * drift))
    desired: list[Obj] = []
    live: list[Obj] = []
    context: list[Obj] = []
    teams_used: set[str] = set()
    for i in range(n):
        unit, slot = divmod(i, 3)
        team = TEAMS[unit % len(TEAMS)]
        svc = f"{team}-{WORDS[(unit // len(TEAMS)) % len(WORDS)]}-{unit // (len(TEAMS) * len(WORDS))}"
        version = f"{1 + unit % 4}.{unit % 17}.{unit % 5}"
        teams_used.add(team)
        kind = ("ConfigMap", "Service", "Deployment")[slot]
        how = plan.get(i)
        hpa = False
        if kind == "Deployment":
            hpa = g.rng.random() < 0.2 or how == "hpa-replicas"
            replicas = None if hpa and how != "hpa-replicas" else g.rng.randrange(2, 4)
            memory = "1024Mi" if how == "quantity" else g.rng.choice(["512Mi", "768Mi", "1Gi"])
            d = desired_deployment(g, team, svc, version, replicas, memory)
        elif kind == "Service":
            d = desired_service(g, team, svc, version)
        else:
            d = desired_configmap(g, team, svc, version)
        obj = build_live(g, d, how, hpa)
        if how:
            injected[how] += 1
        if hpa:
            context.append(hpa_object(g, team, svc, obj["spec"]["replicas"]))
        desired.append(d)
        live.append(obj)
    for team in sorted(teams_used):
        context.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": team,
                    "uid": g.uid(),
                    "resourceVersion": g.resource_version(),
                    "labels": {"kubernetes.io/metadata.name": team, "team": team},
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )
    context.append(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": {"name": APP, "namespace": "argocd", "uid": g.uid()},
            "spec": {
                "project": "commerce",
                "destination": {"server": "https://kubernetes.default.svc", "namespace": "default"},
                "source": {
                    "repoURL": "https://git.example.com/commerce/platform.git",
                    "path": "apps",
                    "targetRevision": "main",
                },
                "syncPolicy": {"automated": {"prune": True, "selfHeal": False}},
            },
            "status": {"sync": {"status": "OutOfSync" if plan else "Synced"}},
        }
    )
    return json.dumps(desired), _as_list(live), _as_list(context), injected


def _as_list(items: list[Obj]) -> str:
    """JSON text of a ``kind: List``, as ``kubectl get -o json`` prints several objects."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})


# ---------------------------------------------------------------------------------------------- timing


def _time(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    """Wall times of ``repeat`` calls (each after a full garbage collection) and the last result."""
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--resources", type=int, default=2000, help="resources in the application (default 2000)")
    ap.add_argument("--drift", type=float, default=0.05, help="share of drifted resources (default 0.05)")
    ap.add_argument("--seed", type=int, default=1, help="random seed of the generator (default 1)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each measurement (default 5)")
    ap.add_argument("--process-runs", type=int, default=5, help="runs of the whole process and its floor (0: none)")
    args = ap.parse_args(argv)
    if args.resources < 0 or not 0 <= args.drift <= 1 or args.repeat < 1:
        ap.error("--resources >= 0, 0 <= --drift <= 1 and --repeat >= 1")

    desired_json, live_json, context_json, injected = generate(args.resources, args.drift, args.seed)
    drifted = sum(injected.values())
    size_mb = (len(desired_json) + len(live_json) + len(context_json)) / 1e6
    n_context = len(json.loads(context_json)["items"])
    print(
        f"resources:       {args.resources} (+{n_context} context objects, {size_mb:.1f} MB of JSON), seed {args.seed}"
    )

    bare, _ = _time(lambda: [json.loads(t) for t in (desired_json, live_json, context_json)], args.repeat)
    bare_best = min(bare)
    print(f"bare json.loads: best {bare_best:.3f} s, median {statistics.median(bare):.3f} s")

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        from bot.analysis import explain, load_documents
    except ImportError as e:  # the generator above stays usable on its own
        print(f"bot.analysis is not importable ({e}); only the generator and json.loads were measured")
        return 0

    def run(texts: tuple[str, str, str] = (desired_json, live_json, context_json)) -> Any:
        desired = load_documents(texts[0], "desired")
        live = load_documents(texts[1], "live")
        context = load_documents(texts[2], "context")
        return explain(desired, live, context, app=APP)

    small = build_app(12, 0.5, args.seed)
    run(small[:3])  # warm-up: imports, schema tables and caches are not what is measured
    times, report = _time(run, args.repeat)
    best, median = min(times), statistics.median(times)
    findings = list(report.findings)
    causes = Counter(str(getattr(f, "cause", "?")) for f in findings)
    wanted = Counter({EXPECTED_CAUSE[k]: v for k, v in injected.items()})
    verdict = "match" if causes == wanted else "MISMATCH"
    print(f"drift injected:  {drifted} resources: {_counts(injected)}")
    print(f"findings:        {len(findings)}: {_counts(causes)} ({verdict})")
    goal_time = GOAL_SECONDS * args.resources / GOAL_RESOURCES
    ok_time = "ok" if best <= goal_time or not args.resources else "MISSED"
    print(
        f"explain:         best {best:.3f} s, median {median:.3f} s (parse included)   "
        f"goal < {goal_time:.2f} s ({GOAL_SECONDS:g} s per {GOAL_RESOURCES:,} resources): {ok_time}"
    )
    if best > 0:
        print(f"throughput:      {args.resources / best:,.0f} resources/s")
    if bare_best > 0:
        ratio = best / bare_best
        ok_ratio = "ok" if ratio <= GOAL_RATIO else "MISSED"
        print(f"ratio:           explain / json.loads = {ratio:.1f}x   goal <= {GOAL_RATIO:g}x: {ok_ratio}")
    if args.process_runs:
        whole = _whole_process((desired_json, live_json, context_json), args.process_runs)
        if whole is None or whole[0] != len(findings):
            print(f"whole process:   the JSON report has {whole and whole[0]} findings, not {len(findings)}")
            return 1
    return 0 if verdict == "match" else 1


_BARE = "import json, sys\nfor name in sys.argv[1:]:\n    with open(name, 'rb') as f:\n        json.load(f)\n"


def _whole_process(texts: tuple[str, str, str], runs: int) -> tuple[int, float] | None:
    """``argo-why explain`` as a process against a process doing a bare ``json.load`` of the same three files.

    Returns the number of findings of the JSON report and the ratio of the best times, after printing both."""
    import subprocess
    import tempfile

    script = Path(sys.executable).with_name("argo-why")
    cli = [str(script)] if script.exists() else [sys.executable, "-m", "bot"]
    with tempfile.TemporaryDirectory() as tmp:
        names = []
        for label, text in zip(("desired", "live", "context"), texts, strict=True):
            names.append(str(Path(tmp) / f"{label}.json"))
            Path(names[-1]).write_text(text)
        explain_cmd = [*cli, "explain", "--desired", names[0], "--live", names[1], "--context", names[2]]
        explain_cmd += ["--format", "json"]
        bare_cmd = [sys.executable, "-c", _BARE, *names]
        # One run first, untimed, that may write the bytecode cache (PYTHONDONTWRITEBYTECODE unset for it): as an
        # installed wheel has it, and any Python writes it at the first start, instead of compiling every module of
        # the bot at every start where the environment forbids the cache.
        warm_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run(explain_cmd, capture_output=True, check=False, env=warm_env)
        timed: dict[str, list[float]] = {"explain": [], "bare": []}
        cpu: dict[str, list[float]] = {"explain": [], "bare": []}
        out = b""
        for _ in range(runs):
            for what, cmd in (("bare", bare_cmd), ("explain", explain_cmd)):
                used = _children_cpu()
                start = time.perf_counter()
                done = subprocess.run(cmd, capture_output=True, check=False)
                timed[what].append(time.perf_counter() - start)
                cpu[what].append(_children_cpu() - used)
                if done.returncode not in (0, 1):
                    print(f"whole process:   {what} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
                    return None
                out = done.stdout if what == "explain" else out
    bare, whole = timed["bare"], timed["explain"]
    print(
        f"whole process:   argo-why explain --format json: best {min(whole):.3f} s, median "
        f"{statistics.median(whole):.3f} s; floor, a process doing a bare json.load of the same files: best "
        f"{min(bare):.3f} s, median {statistics.median(bare):.3f} s ({runs} runs each, alternating)"
    )
    ratio = min(whole) / min(bare)
    median_ratio = statistics.median(whole) / statistics.median(bare)
    ok = "ok" if ratio <= GOAL_PROCESS_RATIO else "MISSED"
    print(
        f"ratio:           whole process / bare json.load = {ratio:.2f}x (medians {median_ratio:.2f}x)   "
        f"goal <= {GOAL_PROCESS_RATIO:g}x: {ok} (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    cpu_ratio = statistics.median(cpu["explain"]) / statistics.median(cpu["bare"])
    print(
        f"cpu time:        whole process median {statistics.median(cpu['explain']):.3f} s, floor "
        f"{statistics.median(cpu['bare']):.3f} s: {cpu_ratio:.2f}x (user + system: what a busy machine does not "
        "inflate)"
    )
    return len(json.loads(out)["findings"]), ratio


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
