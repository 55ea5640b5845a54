"""Benchmark: the fleet index at scale (5,000 OutOfSync apps, 20,000 findings).

Writes the findings of ``--apps`` apps (``--findings`` in all: a few signatures shared by hundreds of apps, as an
HPA or an injecting webhook is, and the rest each app's own) into a real ``redis-server`` through the bot's own
:class:`bot.store.RedisStore`, then prints:

* the Redis memory the index takes (``used_memory`` before and after, and per finding);
* the time to read the whole index back (``HGETALL``, parsing) and group it (:func:`group_findings`), against its
  floor in the same run: one ``HGETALL`` of the same hash with a plain client and ``json.loads`` of every value
  (``--rounds`` of each, alternating; goal: the medians within 1.5x), and the same two as CPU time of this process
  (the client's side of both; a machine busy with other work inflates it less than wall time);
* the time to render the first page of the ``/argo drift`` overview from the groups.

Usage: ``.venv/bin/python bench/fleet.py [--apps 5000] [--findings 20000] [--rounds 7]``
(``redis-server`` must be installed; ``make test`` installs it.)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis.asyncio
import redis.exceptions

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.analysis.fleet import FleetFinding, group_findings  # noqa: E402
from bot.demo.runner import free_port  # noqa: E402
from bot.slack.render.overview import AppFacts, overview_message  # noqa: E402
from bot.store import RedisStore  # noqa: E402
from bot.store.fleet import FleetEntry  # noqa: E402

SHARED = [
    ("apps", "Deployment", "/spec/replicas", "kube-controller-manager", "autoscaler"),
    ("apps", "Deployment", '.spec.template.spec.containers[] | select(.name == "istio-proxy")',
     "istio-sidecar-injector", "mutating-webhook"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", ".webhooks[] | select(.name == \"v\") | "
     ".clientConfig.caBundle", "cainjector", "operator"),
    ("", "Service", "/spec/clusterIP", "kube-apiserver", "api-defaulting"),
]  # fmt: skip


def fleet(apps: int, findings: int, seed: int = 7) -> dict[str, list[FleetFinding]]:
    rnd = random.Random(seed)
    out: dict[str, list[FleetFinding]] = {f"team-{i // 50}/app-{i:05d}": [] for i in range(apps)}
    keys = list(out)
    for n in range(findings):
        app = keys[n % apps]
        if rnd.random() < 0.5:
            g, k, p, w, c = SHARED[rnd.randrange(len(SHARED))]
        else:
            g, k, p, w, c = ("apps", "Deployment", f"/spec/template/spec/containers/*/env/{n % 7}/value",
                             f"kubectl-edit-{n % 97}", "manual-edit")  # fmt: skip
        out[app].append(FleetFinding(g, k, p, w, c, f"{app.split('/')[1]}/obj-{n % 3}"))
    return out


async def run(apps: int, findings: int, url: str, rounds: int) -> None:
    data = fleet(apps, findings)
    raw = redis.asyncio.Redis.from_url(url)
    before = int((await raw.info("memory"))["used_memory"])
    store = RedisStore.from_url(url)
    now = time.time()
    t0 = time.perf_counter()
    for app, recs in data.items():
        await store.fleet.put(app, FleetEntry(tuple(recs), at=now, since=now - 3600, channel="C0ALERTS",
                                              thread_ts="1700000000.000100"))  # fmt: skip
    written = time.perf_counter() - t0
    after = int((await raw.info("memory"))["used_memory"])
    timings, reads, floors = [], [], []
    cpu: dict[str, list[float]] = {"read": [], "floor": []}
    hash_key = store.fleet._hash  # the index's one hash
    for _ in range(rounds):  # the read and its floor alternate, so that both see the machine's load alike
        # each after a full collection (as bench/analysis.py times): what one read costs, not when the collector
        # gets to the previous rounds' garbage
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        values = [json.loads(v) for v in (await raw.hgetall(hash_key)).values()]
        floors.append(time.perf_counter() - t0)
        cpu["floor"].append(time.process_time() - c0)
        assert len(values) == len(data)
        del values
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        entries = await store.fleet.entries(time.time())
        reads.append(time.perf_counter() - t0)
        groups = group_findings({a: e.findings for a, e in entries.items()}, 3)
        timings.append(time.perf_counter() - t0)
        cpu["read"].append(time.process_time() - c0)
    t0 = time.perf_counter()
    group_findings({a: e.findings for a, e in entries.items()}, 3)
    pure = time.perf_counter() - t0
    facts = {a: AppFacts(drifting_s=now - e.since) for a, e in entries.items()}
    renders = []
    for _ in range(5):
        t0 = time.perf_counter()
        overview_message(groups, facts, 1)
        renders.append(time.perf_counter() - t0)
    total = sum(len(e.findings) for e in entries.values())
    fleet_wide = [g for g in groups if g.fleet_wide]
    print(f"fleet index: {len(entries)} apps, {total} findings written in {written:.2f} s (one script call each)")
    print(f"redis memory of the index: {(after - before) / 2**20:.1f} MiB ({(after - before) / total:.0f} bytes "
          f"per finding)")  # fmt: skip
    med = statistics.median
    print(
        f"read back + group: median {med(timings) * 1000:.0f} ms (reading the index "
        f"{med(reads) * 1000:.0f} ms, grouping alone {pure * 1000:.0f} ms); "
        f"{len(groups)} groups, {len(fleet_wide)} fleet-wide, largest {len(groups[0].apps)} apps "
        f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    ratios = ", ".join(f"{t / f:.2f}x" for t, f in zip(timings, floors, strict=True))
    ratio = med(timings) / med(floors)
    print(
        f"floor, one HGETALL of the same hash and json.loads of every value: median {med(floors) * 1000:.0f} ms; "
        f"read back + group / floor = {ratio:.2f}x (medians; per round {ratios})   goal <= 1.5x: "
        f"{'ok' if ratio <= 1.5 else 'MISSED'}"
    )
    print(
        f"cpu time of this process (the client's side, Redis's own apart): read back + group median "
        f"{med(cpu['read']) * 1000:.0f} ms, floor {med(cpu['floor']) * 1000:.0f} ms: "
        f"{med(cpu['read']) / med(cpu['floor']):.2f}x (what a busy machine inflates less)"
    )
    print(f"/argo drift overview, first page, rendered from those groups: median {sorted(renders)[2] * 1000:.1f} ms")
    await store.close()
    await raw.aclose()


async def ping(url: str) -> None:
    client = redis.asyncio.Redis.from_url(url)
    try:
        await client.ping()
    finally:
        await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=5000)
    parser.add_argument("--findings", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=7, help="reads of the index and of its floor, alternating")
    args = parser.parse_args()
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (scripts/ensure-tools.sh redis-server)")
    port = free_port()
    with tempfile.TemporaryDirectory() as work:
        server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                   "no", "--dir", work], stdout=subprocess.DEVNULL)  # fmt: skip
        try:
            url = f"redis://127.0.0.1:{port}/0"
            deadline = time.monotonic() + 10
            while True:
                try:
                    asyncio.run(ping(url))
                    break
                except redis.exceptions.ConnectionError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            asyncio.run(run(args.apps, args.findings, url, args.rounds))
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
