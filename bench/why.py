"""Benchmark: ``argo-why why`` against a fake Argo CD (and a fake cluster) serving one large application.

The application is the one ``bench/analysis.py`` builds (Deployments, Services, ConfigMaps with
managedFields from several managers, 5 % drifted), served by ``bot.demo.fake_argocd.FakeArgoCD`` as
Argo CD's REST API serves it (``managed-resources`` with JSON-string states, ``manifests``, ...), and its
context (HPAs, Namespaces) by ``FakeKubernetes``. It prints, per analysis, the wall time and the number of
HTTP calls to each server, for two application sizes, so that one can see that the number of calls does
not grow with the number of in-sync resources. Goals: calls independent of in-sync resources; the
whole analysis under 1 s for 500 resources.

Usage: ``.venv/bin/python bench/why.py [--resources 500] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.analysis import generate
from bot.config import ArgoCDSettings
from bot.demo.fake_argocd import FakeArgoCD, build_application, resource_diff
from bot.demo.fake_kube import FakeKubernetes
from bot.sources.clients import argocd_factory, clusters
from bot.why import investigate

GOAL_SECONDS = 1.0


def _items(text: str) -> list[dict[str, Any]]:
    data = json.loads(text)
    return list(data["items"]) if isinstance(data, dict) and "items" in data else list(data)


def serve(argocd: FakeArgoCD, kube: FakeKubernetes, n: int, seed: int) -> tuple[str, int]:
    desired_json, live_json, context_json, injected = generate(n, 0.05, seed)
    desired, live, context = _items(desired_json), _items(live_json), _items(context_json)
    by_key = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in live}
    resources = [resource_diff(d, by_key.get((d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])))
                 for d in desired]  # fmt: skip
    app = build_application("commerce-platform", "cart", resources)
    argocd.add_app(app, resources, [desired])
    kube.add(*[o for o in context if o.get("kind") != "Application"])
    return str(app["metadata"]["name"]), sum(injected.values())


async def _once(settings: ArgoCDSettings, name: str) -> tuple[float, int]:
    start = time.perf_counter()
    async with argocd_factory(settings)() as client:
        report = await investigate(name, argocd=client, cluster=clusters(settings))
    return time.perf_counter() - start, len(report.findings)


def run(n: int, repeat: int, seed: int) -> dict[str, Any]:
    with FakeArgoCD() as argocd, FakeKubernetes() as kube, tempfile.TemporaryDirectory() as tmp:
        name, drifted = serve(argocd, kube, n, seed)
        kubeconfig = kube.write_kubeconfig(Path(tmp) / "kubeconfig", context="fake")
        settings = ArgoCDSettings(url=argocd.url, token=SecretStr(argocd.token), kubeconfig=str(kubeconfig),
                                  cluster_contexts={"https://kubernetes.default.svc": "fake"})  # fmt: skip
        asyncio.run(_once(settings, name))  # warm-up: imports, caches, connections
        times, findings = [], 0
        argocd_calls = kube_calls = 0
        for _ in range(repeat):
            a0, k0 = len(argocd.calls), len(kube.calls)
            seconds, findings = asyncio.run(_once(settings, name))
            times.append(seconds)
            argocd_calls, kube_calls = len(argocd.calls) - a0, len(kube.calls) - k0
        return {
            "resources": n,
            "drifted": drifted,
            "findings": findings,
            "best": min(times),
            "median": statistics.median(times),
            "argocd_calls": argocd_calls,
            "kube_calls": kube_calls,
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--resources", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    small = run(max(20, args.resources // 5), args.repeat, args.seed)
    big = run(args.resources, args.repeat, args.seed)
    for r in (small, big):
        print(f"{r['resources']:>6} resources ({r['drifted']} drifted, {r['findings']} findings): "
              f"best {r['best']:.3f} s, median {r['median']:.3f} s; HTTP calls per analysis: "
              f"Argo CD {r['argocd_calls']}, Kubernetes {r['kube_calls']}")  # fmt: skip
    same_argocd = small["argocd_calls"] == big["argocd_calls"]
    print(
        f"Argo CD calls independent of in-sync resources: {'yes' if same_argocd else 'NO'} "
        f"({small['argocd_calls']} vs {big['argocd_calls']}); Kubernetes calls: 4 per namespace of a drifted "
        "object up to 3 namespaces, else 6 cluster-wide lists"
    )
    ok = big["median"] < GOAL_SECONDS
    print(f"goal: {args.resources} resources under {GOAL_SECONDS:.0f} s: {'ok' if ok else 'MISSED'}")
    return 0 if big["findings"] == big["drifted"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
