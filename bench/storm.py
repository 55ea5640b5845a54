"""Benchmark: a storm of drift, 1,000 apps OutOfSync within a minute, on two replicas sharing one Redis.

Two ``argo-why serve`` processes (the real entry point, configured from the environment as in production, four
workers each) share a real ``redis-server``; a fake Argo CD serves ``--apps`` Applications (the bundled example
``checkout-hpa-and-hotfix``, renamed), a fake cluster their context, a fake Slack takes the messages. This process
sends one webhook per app, spread evenly over ``--seconds`` and alternating between the replicas, plus
``--unknown`` webhooks for apps Argo CD does not have (each used to cost a full list of the applications). It
prints:

* Slack messages posted at the top of the channel beside their floor (the digest design: the first
  ``DIGEST_THRESHOLD`` parents, then one digest; goal: no more), replies in threads, message updates, files, and
  every HTTP request to Slack; when the digest's full list of apps reached its thread (its window closes a minute
  after the last app joined it);
* the time from the first webhook until every app is analysed (the replicas' ``argo_why_analyses_total``), and until
  the queue is empty;
* the peak RSS of each replica (``VmHWM``; goal < 100 MB);
* Argo CD requests per alert beside their floor (what the alerts need: the Application and its
  ``managed-resources`` once per app Argo CD has, the Application alone for an app it does not have; goal <= 2 per
  alert), and the requests by path, as a table.

Usage: ``.venv/bin/python bench/storm.py [--apps 1000] [--seconds 60] [--unknown 50] [--profile DIR] [--python PY]``
(``--profile``: the replicas run under tracemalloc, ``bench/replica_profile.py``, and each writes where its memory
went, at its peak and at the end, into DIR; their figures are then not the benchmark's; ``PROFILE_FRAMES=12`` also
charges each block to the bot's own line that led to it, much slower: use fewer ``--apps``.) ``--python``: the
replicas' interpreter, e.g. a venv made of ``requirements.lock`` alone (``python -m venv V && V/bin/pip install
--require-hashes --no-deps -r requirements.lock``; the bot itself comes from this tree through ``PYTHONPATH``): the RSS
line says which set the replicas ran with, since the dev venv's test extras add rich and pygments to every replica
(httpx loads them when installed). ``MALLOC_ARENA_MAX`` is passed on to the replicas as set, and the RSS line says its
value (2 made no difference in two runs: 157/152 MB against 157/150 MB unset, so neither the image nor the chart sets
it).
(``redis-server`` must be installed; ``make test`` installs it.)

Where a replica's memory goes (issue 29; README, "Benchmarks", has the figures): the imports of a started replica
(~72 MB with the deployed set), the kubernetes package at the first cluster read (~4 MB: ``bot.sources.kubeimport``
leaves out what it imports for OIDC refresh and websockets), the analysis' data tables
(~3 MB), then what a storm holds: per analysis one app's objects, and for the system-level rule's check each app's
kept objects one at a time (``bot.store.fleetobjects.StoredPairs``) and the list of applications one Application at
a time (``bot.sources.applist``, with at most ``READ_AHEAD_BYTES`` of it unread), and for the digest a summary per
app listed (``bot.store.state.DigestRow``).

A webhook whose connection fails is retried (as Argo CD's notifications controller would) and counted by the error's
name next to the statuses; a benchmark that cannot finish says why in one line on stderr (exit 1), with the last line
each replica logged, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.intake import wait_port  # noqa: E402
from bot.demo import EXAMPLES  # noqa: E402
from bot.demo.fake_argocd import FakeArgoCD, app_from_case  # noqa: E402
from bot.demo.fake_kube import FakeKubernetes, context_from_case  # noqa: E402
from bot.demo.fake_slack import FakeSlack  # noqa: E402
from bot.demo.runner import free_port  # noqa: E402
from bot.demo.serving import Call  # noqa: E402
from bot.intake.jobs import webhook_body_of  # noqa: E402

CHANNEL = "C0STORM"
CASE = EXAMPLES / "checkout-hpa-and-hotfix"
REPLICAS = 2
DIGEST_THRESHOLD = 10  # the default of DIGEST_THRESHOLD, which the replicas keep
RSS_GOAL_MB = 100


ATTEMPTS = 3


async def post_webhook(client: httpx.AsyncClient, body: dict[str, object], headers: dict[str, str],
                       outcomes: Counter[str]) -> None:  # fmt: skip
    """POST one webhook; a transport error (connection reset or closed, timeout) is counted and retried: the bot's
    intake is idempotent, so a retry of an entry already queued answers 200 duplicate."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            r = await client.post("/webhooks/argocd", json=body, headers=headers)
        except httpx.TransportError as e:
            outcomes[type(e).__name__] += 1
            if attempt == ATTEMPTS:
                return
            await asyncio.sleep(0.1 * attempt)
            continue
        outcomes[str(r.status_code)] += 1
        return


def failure_line(e: BaseException) -> str:
    """Why the benchmark stopped, in one line (an httpx error's own message is often empty)."""
    if isinstance(e, httpx.RequestError):
        try:
            where = f" on {e.request.method} {e.request.url}"
        except RuntimeError:  # no request attached
            where = ""
        detail = str(e) or "the connection was closed before the answer"
        return f"storm: failed: {type(e).__name__}{where}: {detail}"
    return f"storm: failed: {type(e).__name__}: {e}" if str(e) else f"storm: failed: {type(e).__name__}"


def wait_replica(port: int, replica: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Until the replica listens on ``port``; a replica that exits first (a bad setting) is said at once."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if replica.poll() is not None:
            raise RuntimeError(f"the replica for port {port} exited with status {replica.returncode} before listening")
        try:
            wait_port(port, 0.2)
            return
        except TimeoutError:
            continue
    raise TimeoutError(f"nothing listens on port {port} after {timeout:.0f} s")


def last_line(path: Path) -> str:
    lines = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return lines[-1][:200] if lines else "(nothing logged)"


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    return int(match.group(1)) / 1024 if match else float("nan")


def metric(text: str, name: str) -> float:
    return sum(float(v) for v in re.findall(rf"^{re.escape(name)}(?:{{[^}}]*}})? (\S+)$", text, re.M))


def analysed(text: str) -> float:
    """Apps analysed by one replica: every outcome but the ones that did not analyse (muted, Slack unavailable)."""
    rows = re.findall(r'^argo_why_analyses_total\{outcome="([^"]+)"\} (\S+)$', text, re.M)
    return sum(float(v) for outcome, v in rows if outcome in ("drift", "clean", "failed"))


DEV_ONLY = ("rich", "pygments", "pytest")
"""Installed with the test extras, not in requirements.lock (the image): httpx loads rich and pygments (its command
line) whenever they are installed, ~3 MB per replica that a deployed replica does not have."""


def dependency_set(python: str) -> str:
    """Which packages the replicas ran with: the dev venv (test extras too) or the deployed set alone."""
    code = "import importlib.util as u, sys; print(' '.join(m for m in sys.argv[1:] if u.find_spec(m)))"
    found = subprocess.run([python, "-c", code, *DEV_ONLY], capture_output=True, text=True, check=False).stdout.split()
    if found:
        return f"replicas on {python}: the dev venv, with {', '.join(found)} (not deployed)"
    return f"replicas on {python}: the deployed dependency set (requirements.lock alone)"


def request_kind(method: str, path: str, query: dict[str, str]) -> str:
    """What an Argo CD request was for, as the table says it."""
    m = re.fullmatch(r"/api/v1/applications/[^/]+(?:/(?P<sub>[^/]+))?", path)
    if path == "/api/v1/applications":
        return f"{method} applications (list)"
    if m is None:
        named = re.sub(r"/api/v1/(projects|applicationsets)/[^/]+", r"/api/v1/\1/NAME", path)
        return f"{method} {named}"
    sub = m["sub"]
    if sub is None:
        return f"{method} application"
    if sub == "manifests":
        return f"{method} manifests (noCache)" if query.get("noCache") == "true" else f"{method} manifests"
    return f"{method} {sub}"


def requests_table(calls: Sequence[Call], alerts: int) -> str:
    """The storm's Argo CD requests by path: how many, per alert, and how many failed."""
    by_kind: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for c in calls:
        kind = request_kind(c.method, c.path, c.query)
        by_kind[kind] += 1
        failed[kind] += c.status >= 400 or c.status == 0
    rows = [("path", "requests", "per alert", "not 2xx")]
    rows += [(k, str(n), f"{n / alerts:.2f}", str(failed[k])) for k, n in by_kind.most_common()]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join(
        "    "
        + "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    )


class StormFailed(Exception):
    """The benchmark could not finish; ``str()`` is the one line that says why."""


async def storm(args: argparse.Namespace) -> None:
    binary = shutil.which("redis-server")
    if not binary:
        raise SystemExit("redis-server is not installed (scripts/ensure-tools.sh redis-server)")
    token = secrets.token_urlsafe(16)
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeSlack() as slack,
        FakeArgoCD() as argocd,
        FakeKubernetes() as kube,
    ):
        app, resources, renders = app_from_case(CASE)
        kube.add(*context_from_case(CASE))
        apps = []
        for i in range(args.apps):
            one = copy.deepcopy(app)
            one["metadata"]["name"] = f"storm-{i:04d}"
            argocd.add_app(one, resources, renders)
            apps.append(one)
        rport = free_port()
        redis = subprocess.Popen([binary, "--port", str(rport), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                  "no", "--dir", tmp], stdout=subprocess.DEVNULL)  # fmt: skip
        wait_port(rport)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "ARGOCD_", "GIT_"))},
               "SLACK_BOT_TOKEN": slack.token, "SLACK_SIGNING_SECRET": "s", "SLACK_CHANNEL": CHANNEL,
               "SLACK_API_URL": slack.url, "ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token,
               "KUBECONFIG": str(kube.write_kubeconfig(Path(tmp) / "kubeconfig", context="storm")),
               "ARGOCD_CLUSTER_CONTEXTS": "https://kubernetes.default.svc=storm",
               "REDIS_URL": f"redis://127.0.0.1:{rport}/0", "WEBHOOK_TOKEN": token, "WORKERS": "4",
               "DAILY_SUMMARY_AT": "off", "DIGEST_THRESHOLD": str(DIGEST_THRESHOLD),
               "PYTHONPATH": str(ROOT)}  # fmt: skip
        ports = [free_port() for _ in range(REPLICAS)]
        logs = [open(Path(tmp) / f"replica-{i}.log", "wb") for i in range(REPLICAS)]  # noqa: SIM115
        command = [args.python, "-m", "bot", "serve"]
        envs = [{**env, "PORT": str(p)} for p in ports]
        if args.profile:  # under tracemalloc (bench/replica_profile.py): slower, so its figures are not the run's
            args.profile.mkdir(parents=True, exist_ok=True)
            command = [args.python, str(ROOT / "bench" / "replica_profile.py")]
            frames = os.environ.get("PROFILE_FRAMES", "1")  # > 1: each block charged to the bot's code (slower)
            envs = [{**e, "PYTHONTRACEMALLOC": frames, "PROFILE_OUT": str(args.profile / f"replica-{i}.txt")}
                    for i, e in enumerate(envs)]  # fmt: skip
        replicas = [subprocess.Popen(command, env=e, stdout=subprocess.DEVNULL, stderr=log)
                    for e, log in zip(envs, logs, strict=True)]  # fmt: skip
        try:
            for p, replica in zip(ports, replicas, strict=True):
                wait_replica(p, replica, timeout=180.0 if args.profile else 30.0)  # tracemalloc slows the start
            await run(args, apps, ports, token, slack, argocd, replicas)
        except Exception as e:
            for log in logs:
                log.flush()
            said = "; ".join(f"replica {i}: {last_line(Path(tmp) / f'replica-{i}.log')}" for i in range(REPLICAS))
            raise StormFailed(f"{failure_line(e)} (last log lines: {said})") from e
        finally:
            if args.profile:
                for i, r in enumerate(replicas):
                    r.send_signal(signal.SIGUSR1)
                    deadline = time.monotonic() + 60
                    while not (args.profile / f"replica-{i}.txt").exists() and time.monotonic() < deadline:
                        time.sleep(0.5)
                print(f"  profiles of the replicas: {args.profile}/replica-*.txt")
            for r in replicas:
                r.terminate()
                r.wait()
            for log in logs:
                log.close()
            redis.terminate()
            redis.wait()


async def run(args: argparse.Namespace, apps: list[dict[str, object]], ports: list[int], token: str,
              slack: FakeSlack, argocd: FakeArgoCD, replicas: list[subprocess.Popen[bytes]]) -> None:  # fmt: skip
    bodies = [webhook_body_of(a) for a in apps]
    unknown = [{"app": {"name": f"gone-{i:03d}", "namespace": "argocd"}, "sync": {"status": "OutOfSync"}}
               for i in range(args.unknown)]  # fmt: skip
    load = bodies + unknown
    order = sorted(range(len(load)), key=lambda i: (i * 7919) % len(load))  # interleaved, deterministic
    headers = {"Authorization": f"Bearer {token}"}
    statuses: Counter[str] = Counter()
    clients = [httpx.AsyncClient(base_url=f"http://127.0.0.1:{p}", timeout=30) for p in ports]
    start = time.monotonic()
    try:

        async def send(n: int, body: dict[str, object]) -> None:
            await asyncio.sleep(n * args.seconds / len(load))
            await post_webhook(clients[n % len(clients)], body, headers, statuses)

        await asyncio.gather(*(send(n, load[i]) for n, i in enumerate(order)))
        sent = time.monotonic() - start
        done_at: float | None = None
        while True:
            texts = [(await c.get("/metrics")).text for c in clients]
            total = sum(analysed(t) for t in texts)
            depth = metric(texts[0], "argo_why_queue_depth")
            if done_at is None and total >= len(load):
                done_at = time.monotonic() - start
            if done_at is not None and depth == 0:
                break
            if time.monotonic() - start > args.seconds + 600:
                raise TimeoutError(f"{total:.0f} of {len(load)} analysed after {time.monotonic() - start:.0f} s")
            await asyncio.sleep(0.5)
        empty_at = time.monotonic() - start
        # the digest's window closes a minute after the last app joined it: then its full list goes into its thread
        while not slack.uploads and time.monotonic() - start < empty_at + 90:
            await asyncio.sleep(0.5)
        listed_at = time.monotonic() - start
    finally:
        for c in clients:
            await c.aclose()
    rss = [peak_rss_mb(r.pid) for r in replicas]
    posts = [c for c in slack.calls if c.method == "chat.postMessage"]
    updates = [c for c in slack.calls if c.method == "chat.update"]
    top = [c for c in posts if c.status == 200 and not c.params.get("thread_ts")]
    replies = [c for c in posts if c.status == 200 and c.params.get("thread_ts")]
    print(
        f"storm: {len(apps)} apps OutOfSync (+{len(unknown)} unknown to Argo CD) over {args.seconds:.0f} s, "
        f"{REPLICAS} replicas x 4 workers, one redis-server; webhooks {dict(statuses)} sent in {sent:.1f} s"
    )
    # the floor: the digest design, the first DIGEST_THRESHOLD parents, then one digest
    digest_floor = min(DIGEST_THRESHOLD, len(load)) + (len(load) > DIGEST_THRESHOLD)
    goal = "ok" if len(top) <= digest_floor else "MISSED"
    print(f"  Slack: {len(top)} messages at the top of the channel, floor {digest_floor} (the first "
          f"{DIGEST_THRESHOLD} parents + 1 digest): {len(top) / digest_floor:.2f}x ({goal}), "
          f"{len(replies)} thread replies, {len(updates)} updates, "
          f"files: {len(slack.uploads)}; {len(slack.calls)} HTTP requests to Slack in all")  # fmt: skip
    rows = [len(u.content.splitlines()) - 1 for u in slack.uploads]
    print(f"  full lists in the digest's thread, apps in each: {rows}, at {listed_at:.1f} s")
    print(f"  every app analysed {done_at or float('nan'):.1f} s after the first webhook "
          f"({(done_at or 0) - sent:+.1f} s after the last); queue empty at {empty_at:.1f} s")  # fmt: skip
    print(f"  peak RSS per replica: {', '.join(f'{r:.0f} MB' for r in rss)} "
          f"(goal < {RSS_GOAL_MB} MB: {'ok' if max(rss) < RSS_GOAL_MB else 'MISSED'}); {dependency_set(args.python)}, "
          f"MALLOC_ARENA_MAX={os.environ.get('MALLOC_ARENA_MAX', 'unset')}")  # fmt: skip
    # the floor: what the alerts need, the Application and its managed-resources once per app Argo CD has, the
    # Application alone (answered 404) for an app it does not have
    floor = 2 * len(apps) + len(unknown)
    print(f"  Argo CD: {len(argocd.calls)} requests, {len(argocd.calls) / len(load):.2f} per alert "
          f"(goal <= 2: {'ok' if len(argocd.calls) <= 2 * len(load) else 'MISSED'}); floor {floor} "
          f"(the Application and its managed-resources once per app, the Application of an unknown app): "
          f"{len(argocd.calls) / floor:.2f}x the floor")  # fmt: skip
    print(requests_table(argocd.calls, len(load)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--apps", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--unknown", type=int, default=50)
    ap.add_argument(
        "--python",
        default=sys.executable,
        help="the replicas' interpreter (default: this one); e.g. a venv of requirements.lock alone, as deployed",
    )
    ap.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="run the replicas under tracemalloc and write where their memory went into this folder",
    )
    try:
        asyncio.run(storm(ap.parse_args(argv)))
    except StormFailed as e:
        print(e, file=sys.stderr)
        return 1
    except Exception as e:  # before the replicas ran (redis-server, ports): still one line
        print(failure_line(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
