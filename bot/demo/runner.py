"""``argo-why demo``: the whole bot, offline, on the bundled examples.

Starts in-process a fake Argo CD serving every example of ``bot/demo/examples/`` as an Application, a fake
Kubernetes API holding their cluster context, a fake Slack Web API, and the real bot (Starlette app,
Bolt, worker, in-memory store) on a local port. Then it does what Argo CD and a person would do:
the notifications webhook for every app (and one duplicate, which is dropped, and a malformed one, which
is refused) and a click on "Show diff". Two teams share the bot: the checkout app's AppProject ``shop`` is routed to
the shop team's channel (``CHANNEL_ROUTES``), the other apps go to the platform team's ``#alerts``. Then the fix from
chat, in #shop: a fake GitHub serves a real local git repository
(an app of apps whose folder holds each Application's commented manifest), Alice clicks "Open PR" on the checkout
alert, the bot asks for a second approver, Bob approves, and the PR is opened. Finally it prints what the bot
posted in Slack, threads included, and the pull request with its diff. Each thread carries a signed "Full diff"
link to the drift page the bot serves (``/view/<token>``): the demo opens each link while the bot runs, saves the
page it gets to a file and prints its path (``--hold`` keeps the bot serving the links until Ctrl-C). Nothing leaves
the machine; no account is needed.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import httpx
import uvicorn
from pydantic import SecretStr

from bot.app import KEEP_ALIVE_S, build_app, build_services
from bot.config import (
    ArgoCDSettings,
    GitSettings,
    RedisSettings,
    RuntimeSettings,
    Settings,
    SlackSettings,
    ViewSettings,
)
from bot.demo.fake_argocd import FakeArgoCD, app_from_case, app_project
from bot.demo.fake_git import FakeGitHub
from bot.demo.fake_kube import FakeKubernetes, context_from_case
from bot.demo.fake_slack import FakeSlack, block_action_body, signed_headers
from bot.demo.gitops import REPO, gitops_files, root_application, tracked_by
from bot.demo.transcript import render_message
from bot.intake.jobs import webhook_body_of

CHANNEL = "C0ALERTS"
SHOP_CHANNEL = "C0SHOP"
SHOP_PROJECT = "shop"
APPROVERS = ("U0ALICE", "U0BOB")
FIX_APP = "checkout"
ARGOCD_PUBLIC_URL = "https://argocd.example.com"


def webhook_body(app: dict[str, Any]) -> dict[str, Any]:
    """The JSON the notifications template of ``deploy/argocd-notifications/`` renders for an app."""
    return webhook_body_of(app, ARGOCD_PUBLIC_URL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _settle(services: Any, timeout: float = 30.0) -> None:
    """Wait until the worker has taken and acknowledged every job."""
    deadline = time.monotonic() + timeout
    await asyncio.sleep(0.2)
    while time.monotonic() < deadline:
        if await services.queue.depth() == 0 and await services.queue.pending() == 0:
            return
        await asyncio.sleep(0.1)
    raise TimeoutError("the demo's jobs did not finish in time")


def print_channel(slack: FakeSlack, channel: str, out: TextIO, name: str = "alerts") -> None:
    for msg in slack.messages(channel):
        edited = f" (updated {msg['updated']}x)" if msg.get("updated") else ""
        out.write(f"\n┏━ #{name} · argo-why{edited}\n")
        out.write(render_message(msg, indent="┃ ") + "\n")
        for reply in slack.thread(channel, msg["ts"]):
            out.write("┃\n┃   ↳ reply in thread\n")
            out.write(render_message(reply, indent="┃     ", width=96) + "\n")
        for up in [u for u in slack.uploads if u.thread_ts == msg["ts"]]:
            out.write(f"┃   ↳ file {up.filename} ({len(up.content)} bytes)\n")
        out.write("┗" + "━" * 60 + "\n")


def fakes_settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, github: FakeGitHub, tmp: Path, *,
                   signing_secret: str, webhook_token: str, channel: str, interval_s: float,
                   digest_threshold: int = 10, view_base_url: str | None = None,
                   channel_routes: dict[str, str] | None = None) -> Settings:  # fmt: skip
    """The bot's settings against the demo's fakes: the in-memory store, Alice and Bob as the two approvers; with
    ``view_base_url`` (the bot's own URL), "Full diff" links signed with a fresh key."""
    return Settings(
        slack=SlackSettings(bot_token=SecretStr(slack.token), signing_secret=SecretStr(signing_secret),
                            channel=channel, api_url=slack.url, channel_interval_s=interval_s,
                            channel_routes=channel_routes or {}),
        argocd=ArgoCDSettings(url=argocd.url, public_url=ARGOCD_PUBLIC_URL, token=SecretStr(argocd.token),
                              kubeconfig=str(kube.write_kubeconfig(tmp / "kubeconfig", context="demo")),
                              cluster_contexts={"https://kubernetes.default.svc": "demo"}),
        redis=RedisSettings(url=None),
        runtime=RuntimeSettings(webhook_token=SecretStr(webhook_token), workers=2, digest_threshold=digest_threshold),
        git=GitSettings(provider="github", token=SecretStr(github.token), api_url=github.api_url,
                        approvers=list(APPROVERS), approvals_required=2),
        view=ViewSettings(link_key=SecretStr(secrets.token_hex(32)) if view_base_url else None,
                          base_url=view_base_url),
    )  # fmt: skip


async def run(examples: Path, out: TextIO | None = None, *, hold: bool = False, pages: Path | None = None) -> int:
    """The demo; ``hold``: keep the bot serving (its "Full diff" links) until Ctrl-C; ``pages``: where the drift
    pages are saved (default: a new temporary folder, kept)."""
    out = out or sys.stdout
    folders = sorted(p for p in examples.iterdir() if (p / "case.json").exists())
    signing_secret = secrets.token_hex(16)
    with (
        FakeSlack() as slack,
        FakeArgoCD() as argocd,
        FakeKubernetes() as kube,
        FakeGitHub() as github,
        tempfile.TemporaryDirectory() as tmp,
    ):
        apps = []
        for folder in folders:
            app, resources, renders = app_from_case(folder)
            app = tracked_by(app)  # each app is applied by the app of apps
            if app["metadata"]["name"] == FIX_APP:  # the shop team's app, in the shop team's AppProject
                app["spec"]["project"] = SHOP_PROJECT
            argocd.add_app(app, resources, renders)
            kube.add(*context_from_case(folder))
            apps.append(app)
        argocd.add_app(root_application(), [], [[]])
        argocd.add_project(app_project(SHOP_PROJECT))
        slack.add_channel(SHOP_CHANNEL, "shop")
        github.add_repo(REPO, gitops_files(apps))
        webhook_token = secrets.token_urlsafe(24)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        settings = fakes_settings(slack, argocd, kube, github, Path(tmp), signing_secret=signing_secret,
                                  webhook_token=webhook_token, channel=CHANNEL, interval_s=0.2,
                                  view_base_url=base, channel_routes={SHOP_PROJECT: "#shop"})  # fmt: skip
        services = build_services(settings)
        # The same keep-alive as `serve`: httpx's pool must not reuse a connection the server is closing.
        config = uvicorn.Config(
            build_app(services), host="127.0.0.1", port=port, log_level="warning", timeout_keep_alive=KEEP_ALIVE_S
        )
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.02)
        out.write(f"argo-why is listening on {base} (in-memory store, fake Slack, Argo CD, cluster and GitHub)\n\n")
        try:
            async with httpx.AsyncClient(base_url=base, timeout=10) as http:
                auth = {"Authorization": f"Bearer {webhook_token}"}
                for app in apps:
                    r = await http.post("/webhooks/argocd", json=webhook_body(app), headers=auth)
                    out.write(f"POST /webhooks/argocd  app={app['metadata']['name']:<16} -> {r.status_code} "
                              f"{r.json().get('status')}\n")  # fmt: skip
                r = await http.post("/webhooks/argocd", json=webhook_body(apps[0]), headers=auth)
                out.write(f"POST /webhooks/argocd  app={apps[0]['metadata']['name']:<16} -> {r.status_code} "
                          f"{r.json().get('status')} (Argo CD's retry of the same alert)\n")  # fmt: skip
                r = await http.post("/webhooks/argocd", content=b'{"app": {}}', headers=auth)
                out.write(f"POST /webhooks/argocd  (malformed)            -> {r.status_code} {r.json().get('error')}\n")
                await _settle(services)
                first = slack.messages(CHANNEL)[0]
                click = block_action_body("show_diff", _button_value(first, "show_diff"), user_id="U0ALICE",
                                          channel_id=CHANNEL, message_ts=first["ts"], response_url=slack)  # fmt: skip
                r = await http.post("/slack/events", content=click, headers=signed_headers(signing_secret, click))
                out.write(f"click [Show diff] on the first alert            -> {r.status_code}\n")
                await _settle(services)
                await _fix_from_chat(http, slack, services, signing_secret, out)
                out.write("\nWhat argo-why posted in Slack, in the platform team's #alerts (the apps of no team):\n")
                print_channel(slack, CHANNEL, out)
                out.write(f"\nand in the shop team's #shop (AppProject {SHOP_PROJECT}, routed by CHANNEL_ROUTES):\n")
                print_channel(slack, SHOP_CHANNEL, out, "shop")
                print_pull_requests(github, out)
                out.write(
                    f"\n{len(slack.calls)} Slack API calls; Argo CD was read {len(argocd.calls)} times and "
                    f"never written to; {len(github.calls)} GitHub API calls (one branch, one commit, one PR).\n"
                )
                await _save_pages(http, slack, pages or Path(tempfile.mkdtemp(prefix="argo-why-demo-pages-")), out)
                if hold:
                    out.write(f"\nargo-why keeps serving on {base} (the Full diff links above work): Ctrl-C to stop\n")
                    out.flush()
                    await asyncio.Event().wait()  # until Ctrl-C cancels the run
        finally:
            server.should_exit = True
            await serving
    return 0


async def _save_pages(http: httpx.AsyncClient, slack: FakeSlack, folder: Path, out: TextIO) -> None:
    """Open the "Full diff" link of each thread, as a person would, and save the page it answers to a file."""
    folder.mkdir(parents=True, exist_ok=True)
    out.write("\nThe drift page of each alert (its thread's Full diff link, opened while the bot runs):\n")
    for channel, message in [(c, m) for c in (CHANNEL, SHOP_CHANNEL) for m in slack.messages(c)]:
        replies = slack.thread(channel, message["ts"])
        found = re.search(r"<(http://127\.0\.0\.1:\d+/view/[^|>]+)\|Full diff>", json.dumps(replies[:1]))
        if not found:
            continue
        r = await http.get(found.group(1))
        named = re.search(r'<code class="app">([^<]+)</code>', r.text)
        app = re.sub(r"[^A-Za-z0-9_.-]", "_", named.group(1) if named else message["ts"])
        path = folder / f"{app}.html"
        path.write_text(r.text, encoding="utf-8")
        out.write(f"  {found.group(1)} -> {r.status_code}, saved as {path}\n")
    out.write("(the links work while the demo runs: `argo-why demo --hold` keeps it serving them until Ctrl-C)\n")


async def _fix_from_chat(http: httpx.AsyncClient, slack: FakeSlack, services: Any, signing_secret: str,
                         out: TextIO) -> None:  # fmt: skip
    """Alice asks for the PR of the checkout alert, the bot wants a second approver, Bob approves."""
    parent = next(m for m in slack.messages(SHOP_CHANNEL) if FIX_APP in m["text"])
    clicks = [(parent, "open_pr", APPROVERS[0], "[Open PR] on the checkout alert, by Alice")]
    for message, action, user, what in clicks:
        value, block_id = _button(message, action)
        body = block_action_body(action, value, user_id=user, channel_id=SHOP_CHANNEL, message_ts=message["ts"],
                                 block_id=block_id, response_url=slack, message=message)  # fmt: skip
        r = await http.post("/slack/events", content=body, headers=signed_headers(signing_secret, body))
        out.write(f"click {what:<42} -> {r.status_code}\n")
        await _settle(services)
        if action == "open_pr":
            approval = slack.thread(SHOP_CHANNEL, parent["ts"])[-1]
            clicks.append((approval, "approve", APPROVERS[1], "[Approve] in the thread, by Bob"))


def print_pull_requests(github: FakeGitHub, out: TextIO) -> None:
    """Every PR of the demo repository: number, title, body, and the diff of its branch against the base."""
    for pr in github.pulls(REPO):
        out.write(f"\nThe pull request on GitHub: #{pr.number} {pr.title}\n")
        out.write(f"{pr.head} -> {pr.base}\n\n")
        out.write("\n".join(f"  │ {line}" for line in pr.body.splitlines()) + "\n")
        out.write(f"\ngit diff {pr.base}...{pr.head}\n")
        out.write(github.repo(REPO).diff(pr.base, pr.head))


def _button(message: dict[str, Any], action_id: str) -> tuple[str, str]:
    """(value, block_id) of the button ``action_id`` in ``message``."""
    for block in message.get("blocks") or []:
        for el in block.get("elements") or []:
            if isinstance(el, dict) and el.get("action_id") == action_id:
                return str(el.get("value")), str(block.get("block_id"))
    raise LookupError(f"no {action_id} button in {json.dumps(message)[:200]}")


def _button_value(message: dict[str, Any], action_id: str) -> str:
    return _button(message, action_id)[0]


__all__ = ["print_channel", "run", "webhook_body"]
