"""Benchmark: webhook intake throughput and latency, and webhook-to-Slack latency.

1. Intake: the real bot (uvicorn, Starlette, the webhook handler, a real ``redis-server`` on loopback for
   dedupe and the durable stream; no worker) runs in its own process, served as ``argo-why serve`` serves it
   (:func:`bot.app.serve`: its uvicorn settings, ``METRICS_PORT`` set as the chart sets it, the heap of the start
   frozen out of the collector); this process sends ``--webhooks`` distinct, valid, authenticated Argo CD webhooks
   with ``--concurrency`` connections and prints the throughput and the p50/p99 latency, then the same at a steady
   1,000 webhooks/s. Its floor, in the same run: a bare Starlette endpoint doing one ``XADD`` of the body per
   request with the bot's keep-alive, in a process that imports no part of the bot, against the same Redis with
   the same load generator; the two servers alternate for ``--rounds`` rounds. Goals: at least 1,000 webhooks/s
   and p99 under 25 ms at 1,000/s on 2 cores; at least 80 % of the floor's rate and a saturated p99 within 1.5x the
   floor's (the ratios of the medians over the rounds). The server CPU time per request is printed as a ratio too:
   what a machine busy with other work inflates least.

   Measured (issue 29; 2 cores shared with other work, load average 5.6-10.9; nine runs): rate 84, 72, 76, 118, 90,
   66, 88, 89, 124 % of the floor's (the rounds' own ratios 42-193 %: the machine's noise), saturated p99 1.40, 0.74,
   2.10, 0.71, 1.22, 0.97, 0.94, 1.78, 0.64x (both goals in 5 of the 9 runs), server CPU time per request 1.14, 1.23,
   1.24, 1.05, 1.23, 1.20, 1.24, 1.19, 1.11x the floor's. Before (the endpoint behind Starlette's request wrapper,
   ``BlockingConnectionPool``, the script called through redis-py's ``Script``, no frozen heap): 59-67 %, p99
   1.1-2.0x, CPU 1.64-1.81x. Where the time went (py-spy): Starlette's
   per-request wrappers and routing, the blocking pool's condition and timer, redis-py's script shim, full
   collections walking the ~100,000 objects of the bot's imports; what the bot still does beyond the floor is the
   contract's work (the token, the body's validation, the job's JSON, the dedupe script: 1.05-1.24x).
2. End to end: the bot with one worker, the in-memory store, a fake Argo CD serving a 50-resource app
   (5 % drifted), a fake cluster and a fake Slack; for ``--alerts`` apps in turn, the time from the
   webhook's POST to the parent message accepted by Slack. Goal: p50 under 500 ms.

Usage: ``.venv/bin/python bench/intake.py [--webhooks 5000] [--concurrency 32] [--rounds 3] [--alerts 20]
[--no-end-to-end]``
(``redis-server`` must be installed; ``make test`` installs it.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    # here, not bot.demo.runner's: the floor's process imports this module, and a bare endpoint must not carry the
    # bot's modules (a heap four times the size makes every full garbage collection of the floor slower)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def body(i: int) -> dict[str, Any]:
    return {
        "app": {"name": f"app-{i % 500}", "namespace": "argocd", "project": "default"},
        "sync": {"status": "OutOfSync", "revision": "9f3c2a1d5be4c1a0e2f7b8c9d0a1b2c3d4e5f607"},
        "operationState": {"phase": "Succeeded", "startedAt": "2026-11-30T08:00:00Z",
                           "finishedAt": f"2026-11-30T08:00:{i:06d}Z"},
        "health": {"status": "Healthy"},
        "outOfSyncResources": [{"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop",
                                "name": "web"}],
        "argocdUrl": "https://argocd.example.com",
    }  # fmt: skip


def serve_intake(port: int, redis_url: str, token: str) -> None:
    """The server process of part 1: the real app, no worker (only intake is measured), served as ``argo-why serve``
    serves it (:func:`bot.app.serve`: its uvicorn settings, ``METRICS_PORT`` set as the chart sets it)."""
    from pydantic import SecretStr

    from bot.app import build_app, build_services, serve
    from bot.config import ArgoCDSettings, RedisSettings, RuntimeSettings, Settings, SlackSettings
    from bot.runtime import Runtime

    runtime = RuntimeSettings(webhook_token=SecretStr(token), port=port, metrics_port=free_port())
    settings = Settings(slack=SlackSettings(bot_token=SecretStr("xoxb-bench"), channel="C0BENCH"),
                        runtime=runtime, redis=RedisSettings(url=redis_url),
                        argocd=ArgoCDSettings(url="http://127.0.0.1:9", token=SecretStr("x")))  # fmt: skip
    # logged as `argo-why serve` logs (bot.cli.cmd_serve): a line the intake wrote per webhook would count here
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    services = build_services(settings)
    serve(build_app(services, runtime=Runtime(services, workers=0, tick_s=3600)), settings, host="127.0.0.1")


async def load(port: int, token: str, n: int, concurrency: int, rate: float | None = None, offset: int = 0
               ) -> tuple[float, list[float], dict[int, int]]:  # fmt: skip
    """Send ``n`` webhooks: closed loop over ``concurrency`` keep-alive connections (the saturation throughput),
    or open loop at ``rate`` per second (the latency a steady load sees). aiohttp, because httpx's own
    overhead caps a load generator at a few hundred requests per second on this machine."""
    import aiohttp

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    pending = list(range(n))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    payloads = [json.dumps(body(offset + i)).encode() for i in range(n + 50)]
    url = f"http://127.0.0.1:{port}/webhooks/argocd"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as client:

        async def post(i: int) -> None:
            begin = time.perf_counter()
            async with client.post(url, data=payloads[i], headers=headers) as r:
                await r.read()
            latencies.append(time.perf_counter() - begin)
            statuses[r.status] = statuses.get(r.status, 0) + 1

        async def worker() -> None:
            while pending:
                await post(pending.pop())

        for i in range(n, n + 50):  # warm-up connections and caches, not measured
            await post(i)
        latencies.clear()
        statuses.clear()
        start = time.perf_counter()
        if rate is None:
            await asyncio.gather(*(worker() for _ in range(concurrency)))
        else:
            tasks = []
            for i in range(n):
                delay = start + i / rate - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(post(i)))
            await asyncio.gather(*tasks)
        return time.perf_counter() - start, latencies, statuses


def serve_floor(port: int, redis_url: str, keep_alive_s: int) -> None:
    """The floor of part 1: a bare Starlette endpoint doing one ``XADD`` of the body per request, on the same
    uvicorn settings as the bot (no authentication, validation, dedupe or metrics)."""
    import redis.asyncio
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    client = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)

    async def webhook(request: Request) -> JSONResponse:
        entry = await client.xadd("floor", {"job": await request.body()})
        return JSONResponse({"status": "queued", "id": entry}, status_code=202)

    app = Starlette(routes=[Route("/webhooks/argocd", webhook, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False,
                timeout_keep_alive=keep_alive_s)  # fmt: skip


class Phase:
    """One load phase against one server: throughput, latencies and the server's CPU time per request."""

    def __init__(self, n: int, seconds: float, latencies: list[float], statuses: dict[int, int], cpu_s: float) -> None:
        self.rate, self.statuses, self.cpu_us = n / seconds, statuses, cpu_s / n * 1e6
        self.p50, self.p99 = pct(latencies, 50) * 1000, pct(latencies, 99) * 1000


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def phase(pid: int, port: int, token: str, n: int, concurrency: int, offset: int, rate: float | None = None) -> Phase:
    before = cpu_seconds(pid)
    seconds, latencies, statuses = asyncio.run(load(port, token, n, concurrency, rate=rate, offset=offset))
    return Phase(n, seconds, latencies, statuses, cpu_seconds(pid) - before)


def intake(n: int, concurrency: int, rounds: int) -> None:
    from bot.app import KEEP_ALIVE_S

    binary = shutil.which("redis-server")
    if not binary:
        raise SystemExit("redis-server is not installed (scripts/ensure-tools.sh redis-server)")
    rport, port, floor_port, token = free_port(), free_port(), free_port(), secrets.token_urlsafe(16)
    bot: dict[str, list[Phase]] = {"saturated": [], "steady": []}
    floor: dict[str, list[Phase]] = {"saturated": [], "steady": []}
    with tempfile.TemporaryDirectory() as tmp:
        redis = subprocess.Popen([binary, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                  "no", "--dir", tmp], stdout=subprocess.DEVNULL)  # fmt: skip
        servers: list[subprocess.Popen[bytes]] = []
        try:
            wait_port(rport)
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            url = f"redis://127.0.0.1:{rport}/0"
            servers.append(subprocess.Popen([sys.executable, __file__, "--serve", str(port), url, token], env=env))
            floor_args = ["--serve-floor", str(floor_port), url, str(KEEP_ALIVE_S)]  # the bot's keep-alive
            servers.append(subprocess.Popen([sys.executable, __file__, *floor_args], env=env))
            wait_port(port)
            wait_port(floor_port)
            for r in range(rounds):  # the two servers alternate, so that both see the machine's load alike
                for server, target, out in ((servers[1], floor_port, floor), (servers[0], port, bot)):
                    offset = 20 * n * r  # distinct idempotency keys in every phase
                    out["saturated"].append(phase(server.pid, target, token, n, concurrency, offset))
                    out["steady"].append(phase(server.pid, target, token, n, 64, offset + 10 * n, rate=1000.0))
        finally:
            for server in servers:
                server.terminate()
                server.wait()
            redis.terminate()
            redis.wait()
    for name, runs in (("bot", bot), ("floor", floor)):
        for what in ("saturated", "steady"):
            print(f"intake, {what:9} ({name:5}): " + "; ".join(
                f"{p.rate:,.0f}/s p50 {p.p50:.1f} ms p99 {p.p99:.1f} ms, {p.cpu_us:.0f} us CPU per request"
                for p in runs[what]))  # fmt: skip
    statuses: dict[int, int] = {}
    for p in bot["saturated"] + bot["steady"]:
        for status, count in p.statuses.items():
            statuses[status] = statuses.get(status, 0) + count
    print(f"  the bot's statuses: {statuses} ({n} webhooks per phase, {concurrency} connections when saturated, "
          f"real redis-server on loopback, {rounds} rounds)")  # fmt: skip
    med = statistics.median
    rate = med(p.rate for p in bot["saturated"]) / med(p.rate for p in floor["saturated"])
    p99 = med(p.p99 for p in bot["saturated"]) / med(p.p99 for p in floor["saturated"])
    steady = med(p.p99 for p in bot["steady"]) / med(p.p99 for p in floor["steady"])
    rates = ", ".join(f"{b.rate / f.rate:.0%}" for b, f in zip(bot["saturated"], floor["saturated"], strict=True))
    print(f"ratio to the floor (a bare Starlette endpoint, one XADD per request, same uvicorn, load and Redis): "
          f"rate {rate:.0%} (per round {rates}), p99 saturated {p99:.2f}x, p99 at a steady 1,000/s {steady:.2f}x"
          f"   goal >= 80 %, p99 <= 1.5x: {'ok' if rate >= 0.8 and p99 <= 1.5 else 'MISSED'} "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")  # fmt: skip
    cpu = med(p.cpu_us for p in bot["saturated"]) / med(p.cpu_us for p in floor["saturated"])
    print(f"  server CPU time per request, saturated: {cpu:.2f}x the floor's (what a busy machine inflates least)")
    bot_rate, bot_steady = med(p.rate for p in bot["saturated"]), med(p.p99 for p in bot["steady"])
    print(f"  goal >= 1,000/s: {'ok' if bot_rate >= 1000 else 'MISSED'}; goal p99 < 25 ms at 1,000/s: "
          f"{'ok' if bot_steady < 25 else 'MISSED'}")  # fmt: skip


async def end_to_end(alerts: int) -> list[float]:
    import httpx
    import uvicorn
    from pydantic import SecretStr

    from bench.analysis import generate
    from bot.app import KEEP_ALIVE_S, build_app, build_services
    from bot.config import ArgoCDSettings, RuntimeSettings, Settings, SlackSettings
    from bot.demo.fake_argocd import FakeArgoCD, build_application, resource_diff
    from bot.demo.fake_kube import FakeKubernetes
    from bot.demo.fake_slack import FakeSlack
    from bot.demo.runner import webhook_body
    from bot.runtime import Runtime

    desired_json, live_json, context_json, _ = generate(50, 0.05, 3)
    desired, live = _items(desired_json), _items(live_json)
    by_key = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in live}
    resources = [resource_diff(d, by_key[(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"])])
                 for d in desired]  # fmt: skip
    token = secrets.token_urlsafe(16)
    with FakeSlack() as slack, FakeArgoCD() as argocd, FakeKubernetes() as kube, tempfile.TemporaryDirectory() as tmp:
        kube.add(*[o for o in _items(context_json) if o.get("kind") != "Application"])
        apps = []
        for i in range(alerts):
            app = build_application(f"commerce-{i}", "cart", resources)
            argocd.add_app(app, resources, [desired])
            apps.append(app)
        settings = Settings(
            slack=SlackSettings(bot_token=SecretStr(slack.token), signing_secret=SecretStr("s"), channel="C0BENCH",
                                api_url=slack.url),
            argocd=ArgoCDSettings(url=argocd.url, token=SecretStr(argocd.token),
                                  kubeconfig=str(kube.write_kubeconfig(Path(tmp) / "kc", context="b")),
                                  cluster_contexts={"https://kubernetes.default.svc": "b"}),
            # one alert at a time is measured: no burst, no digest
            runtime=RuntimeSettings(webhook_token=SecretStr(token), workers=1, digest_threshold=10_000),
        )  # fmt: skip
        services = build_services(settings)
        port = free_port()
        # the keep-alive `argo-why serve` uses: with uvicorn's 5 s, an alert analysed slowly on a busy machine let the
        # connection idle out under the next POST (httpx.ReadError)
        server = uvicorn.Server(uvicorn.Config(build_app(services, runtime=Runtime(services, workers=1)),
                                               host="127.0.0.1", port=port, log_level="warning",
                                               timeout_keep_alive=KEEP_ALIVE_S))  # fmt: skip
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        latencies = []
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            for app in apps:
                before = len(slack.messages("C0BENCH"))
                start = time.perf_counter()
                await client.post(
                    "/webhooks/argocd", json=webhook_body(app), headers={"Authorization": f"Bearer {token}"}
                )
                deadline = time.monotonic() + 30
                while len(slack.messages("C0BENCH")) == before:
                    if time.monotonic() > deadline:
                        raise TimeoutError("no Slack message within 30 s")
                    await asyncio.sleep(0.002)
                latencies.append(time.perf_counter() - start)
                while await services.queue.depth() or await services.queue.pending():  # let the thread finish
                    await asyncio.sleep(0.01)
                # the next alert arrives after a quiet second, as separate alerts do: Slack's one message per
                # second and channel (the poster's spacing) is not what this measures
                await asyncio.sleep(settings.slack.channel_interval_s)
        server.should_exit = True
        await task
    return latencies


def _items(text: str) -> list[dict[str, Any]]:
    data = json.loads(text)
    return list(data["items"]) if isinstance(data, dict) else list(data)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        serve_intake(int(argv[1]), argv[2], argv[3])
        return 0
    if argv[:1] == ["--serve-floor"]:
        serve_floor(int(argv[1]), argv[2], int(argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--webhooks", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--alerts", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="load rounds on the bot and on its floor, alternating")
    ap.add_argument("--no-end-to-end", action="store_true", help="measure the intake only")
    args = ap.parse_args(argv)
    intake(args.webhooks, args.concurrency, args.rounds)
    if args.no_end_to_end:
        return 0
    lat = asyncio.run(end_to_end(args.alerts))
    p50 = statistics.median(lat) * 1000
    print(
        f"webhook -> Slack parent message, 50-resource app (5 % drifted), fakes: p50 {p50:.0f} ms, "
        f"max {max(lat) * 1000:.0f} ms over {len(lat)} alerts; goal p50 < 500 ms: {'ok' if p50 < 500 else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
