"""Benchmark: from the last approval in Slack to the pull request opened, and Git API calls per PR.

The real bot (uvicorn, Starlette, Bolt, the worker, the in-memory store) against the demo's fakes: Slack, Argo CD, the
cluster and GitHub, the last one serving a real bare git repository: an app of apps whose ``apps/`` folder holds one
commented Application manifest per app, plus ``--filler`` unrelated files elsewhere in the repository. For
``--prs`` apps in turn: the webhook, Alice's click on Open PR (the bot asks for a second approver), then Bob's
Approve; the time measured is from Bob's signed POST to the PR existing on the fake GitHub. Runs twice, with
``--filler 0`` and with the given size, to show that the number of Git API calls does not depend on the size of
the repository (only the parent's path is listed). Goal: p50 under 2 s.

Usage: ``.venv/bin/python bench/pr.py [--prs 20] [--filler 2000]``
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

logging.getLogger("argo_why").setLevel(logging.ERROR)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.app import build_app, build_services  # noqa: E402
from bot.demo import EXAMPLES  # noqa: E402
from bot.demo.fake_argocd import FakeArgoCD, app_from_case  # noqa: E402
from bot.demo.fake_git import FakeGitHub  # noqa: E402
from bot.demo.fake_kube import FakeKubernetes, context_from_case  # noqa: E402
from bot.demo.fake_slack import FakeSlack, block_action_body, signed_headers  # noqa: E402
from bot.demo.gitops import REPO, gitops_files, root_application, tracked_by  # noqa: E402
from bot.demo.runner import APPROVERS, fakes_settings, free_port, webhook_body  # noqa: E402
from bot.runtime import Runtime  # noqa: E402

CASE = EXAMPLES / "checkout-hpa-and-hotfix"
CHANNEL = "C0BENCH"
GOAL_P50_S = 2.0


def _button(message: dict[str, Any], action_id: str) -> tuple[str, str]:
    for block in message.get("blocks") or []:
        for el in block.get("elements") or []:
            if el.get("action_id") == action_id:
                return str(el["value"]), str(block["block_id"])
    raise LookupError(f"{action_id} in {message}")


async def _wait(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        await asyncio.sleep(0.002)
    raise TimeoutError("the bot did not answer in time")


_TRACKING = "argocd.argoproj.io/tracking-id"


def _renamed(obj: dict[str, Any], name: str) -> dict[str, Any]:
    """``obj`` as applied by the Application ``name`` instead of checkout (its tracking id)."""
    out = copy.deepcopy(obj)
    annotations = (out.get("metadata") or {}).get("annotations") or {}
    if str(annotations.get(_TRACKING, "")).startswith("checkout:"):
        annotations[_TRACKING] = name + annotations[_TRACKING][len("checkout") :]
    return out


def _app(i: int) -> tuple[dict[str, Any], list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """The checkout example as a distinct Application ``checkout-i`` (so each gets a PR of its own)."""
    app, resources, renders = app_from_case(CASE)
    name = f"checkout-{i}"
    app = tracked_by(app)
    app["metadata"]["name"] = name
    for diff in resources:
        for key in ("targetState", "liveState", "normalizedLiveState", "predictedLiveState"):
            if diff.get(key) and diff[key] != "null":
                diff[key] = json.dumps(_renamed(json.loads(diff[key]), name))
    return app, resources, [[_renamed(o, name) for o in render] for render in renders]


async def run(prs: int, filler: int) -> dict[str, Any]:
    served = [_app(i) for i in range(prs)]
    apps = [app for app, _, _ in served]
    files = gitops_files(apps)
    files.update({f"services/svc-{i // 50}/file-{i}.yaml": f"n: {i}\n" for i in range(filler)})
    secret = secrets.token_hex(16)
    token = secrets.token_urlsafe(16)
    with (
        FakeSlack() as slack,
        FakeArgoCD() as argocd,
        FakeKubernetes() as kube,
        FakeGitHub() as github,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for app, resources, renders in served:
            argocd.add_app(app, resources, renders)
        argocd.add_app(root_application(), [], [[]])
        kube.add(*context_from_case(CASE))
        github.add_repo(REPO, files)
        settings = fakes_settings(slack, argocd, kube, github, Path(tmp), signing_secret=secret, webhook_token=token,
                                  channel=CHANNEL, interval_s=0, digest_threshold=10_000)  # fmt: skip
        services = build_services(settings)
        port = free_port()
        app_ = build_app(services, runtime=Runtime(services, workers=2, tick_s=0.5))
        server = uvicorn.Server(uvicorn.Config(app_, host="127.0.0.1", port=port, log_level="warning"))
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        latencies: list[float] = []
        calls: list[int] = []
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:

            async def click(message: dict[str, Any], action: str, user: str) -> None:
                value, block_id = _button(message, action)
                body = block_action_body(action, value, user_id=user, channel_id=CHANNEL, message_ts=message["ts"],
                                         block_id=block_id, response_url=slack, message=message)  # fmt: skip
                await http.post("/slack/events", content=body, headers=signed_headers(secret, body))

            for app in apps:
                name = app["metadata"]["name"]
                await http.post(
                    "/webhooks/argocd", json=webhook_body(app), headers={"Authorization": f"Bearer {token}"}
                )

                def parent_of(name: str = name) -> dict[str, Any] | None:
                    return next((m for m in slack.messages(CHANNEL) if f"|{name}>*" in m["text"] or
                                 f"/{name}|" in str(m["blocks"][:1])), None)  # fmt: skip

                parent = await _wait(parent_of)
                await click(parent, "open_pr", APPROVERS[0])
                approval = await _wait(lambda p=parent: next((m for m in slack.thread(CHANNEL, p["ts"])
                                                              if "Approved 1 of 2" in m["text"]), None))  # fmt: skip
                before = len(github.calls)
                started = time.perf_counter()
                await click(approval, "approve", APPROVERS[1])
                await _wait(lambda n=name: any(pr.head.startswith(f"argo-why/{n}/") for pr in github.pulls(REPO)))
                latencies.append(time.perf_counter() - started)
                await _wait(lambda p=parent: any("opened by" in m["text"] for m in slack.thread(CHANNEL, p["ts"])))
                calls.append(len(github.calls) - before)
        server.should_exit = True
        await task
    return {"filler": filler, "files": len(files), "latencies": latencies, "calls": calls}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--prs", type=int, default=20)
    ap.add_argument("--filler", type=int, default=2000)
    args = ap.parse_args(argv)
    ok = True
    seen: list[set[int]] = []
    for filler in (0, args.filler):
        r = asyncio.run(run(args.prs, filler))
        lat = sorted(r["latencies"])
        p50 = statistics.median(lat)
        p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
        print(f"repository of {r['files']:>5} files: last approval -> PR opened p50 {p50:.3f} s, p95 {p95:.3f} s, "
              f"max {lat[-1]:.3f} s over {len(lat)} PRs; GitHub API calls per PR: "
              f"{sorted(set(r['calls']))}")  # fmt: skip
        ok = ok and p50 < GOAL_P50_S
        seen.append(set(r["calls"]))
    ok = ok and seen[0] == seen[1]
    print(f"goal: p50 under {GOAL_P50_S:.0f} s, calls independent of the repository's size: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
