"""The whole bot against a real Argo CD: what the e2e tests (tests/e2e/) share, one per test session.

:class:`E2E` holds the running parts: the real Argo CD (:class:`~tests.harness.argocd_stack.ArgoCDStack`) on the
real kube-apiserver, the fake Slack, the fake GitHub serving ``acme/gitops`` (a real bare repository, which is also
the repository Argo CD reads: ``repo_url`` is its ``git://127.0.0.1:PORT/acme/gitops.git`` URL, served by the
stack's ``git daemon``, which Argo CD clones and the bot maps to the fake GitHub's ``acme/gitops``: a merged pull
request is what Argo CD reads next, and the bot can open one on it), the recording relay of the notifications
webhook (``tap``), and the real bot, ``argo-why serve`` in a process of its own, configured by its environment as a
Deployment configures it, with the Argo CD token deploy/README.md makes.

Helpers, all through Argo CD's API as a person or the controller would act (never by writing Argo CD's objects):
``add_files`` (a push to the repository), ``create_app`` (``POST /api/v1/applications``), ``sync``, ``refresh``,
``app``/``wait_app``; the cluster's writers come from ``tests.live.writers.Cluster`` (``cluster``); ``why`` sends
``/argo why`` as Slack does; ``parents``/``thread_text`` read what the bot posted for an app. Tests use their own
app names and destination namespaces, so they share one stack and one bot and never see each other's apps.

Reusable recordings (:mod:`tests.harness.argocd_cases`) build on these: Git ahead after a sync, a resource removed
from Git with prune off, a sync that leaves a resource missing.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import re
import secrets
import time
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import yaml
from pydantic import SecretStr

from bot.config import ArgoCDSettings, GitSettings, RedisSettings, RuntimeSettings, Settings, SlackSettings
from tests.fakes.git import FakeGitHub
from tests.fakes.slack import FakeSlack, block_action_body, signed_headers, slash_command_body
from tests.harness.argocd_stack import IN_CLUSTER, KUBE_CONTEXT, ArgoCDStack
from tests.harness.go_tools import ROOT
from tests.harness.service_kit import BotProcess
from tests.harness.webhook_tap import WebhookTap
from tests.live.writers import Cluster

CHANNEL = "C0ALERTS"
TRIGGER = ROOT / "deploy" / "argocd-notifications" / "argocd-notifications-cm.patch.yaml"
GRACE_S = float(re.search(r"Seconds\(\) >= (\d+)", TRIGGER.read_text()).group(1))  # type: ignore[union-attr]
"""The shipped trigger waits this long after a sync before it fires (a comparison that early may be stale)."""
REPO = "acme/gitops"
SYNC_NUDGE_S = 10.0
"""How long a sync may wait for Argo CD's controller to take it up before the harness refreshes the app (sync)."""
APPROVER = "U0ALICE"

Obj = dict[str, Any]


class Timeout(AssertionError):
    """A condition was not met in time; the message says what was awaited and what was last seen."""


def wait(check: Callable[[], Any], what: str, timeout: float = 60.0, interval: float = 0.2) -> Any:
    """Poll ``check`` until it returns something truthy; that value. Raises :class:`Timeout` naming ``what``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise Timeout(f"{what}: not within {timeout:.0f} s (last: {str(last)[:500]})")


def wait_for(fetch: Callable[[], Any], accept: Callable[[Any], bool], what: str, timeout: float = 60.0) -> Any:
    """Poll ``fetch`` until ``accept`` takes its value; that value. Raises :class:`Timeout` naming ``what``."""
    box: list[Any] = [None]

    def probe() -> bool:
        box[0] = fetch()
        return accept(box[0])

    try:
        wait(probe, what, timeout)
    except Timeout as e:
        raise Timeout(f"{e}; last value: {str(box[0])[:1500]}") from None
    return box[0]


def bot_settings(stack: ArgoCDStack, slack: FakeSlack, github: FakeGitHub, redis_url: str) -> Settings:
    """The bot as deploy/ configures it, pointed at the real Argo CD and the fakes."""
    return Settings(
        slack=SlackSettings(bot_token=SecretStr(slack.token), signing_secret=SecretStr(secrets.token_hex(16)),
                            channel=CHANNEL, api_url=slack.url, channel_interval_s=0),
        argocd=ArgoCDSettings(url=stack.url, token=SecretStr(stack.bot_token), retries=1,
                              kubeconfig=str(stack.kube.kubeconfig), cluster_contexts={IN_CLUSTER: KUBE_CONTEXT}),
        redis=RedisSettings(url=redis_url),
        git=GitSettings(provider="github", token=SecretStr(github.token), api_url=github.api_url,
                        approvers=[APPROVER], pr_poll_s=1),
        runtime=RuntimeSettings(webhook_token=SecretStr(stack.webhook_token), workers=2, sweep_s=0,
                                daily_summary_at=None, weekly_report_at=None, remind_after_h=0,
                                digest_threshold=10_000, fleet_min_apps=10_000),
    )  # fmt: skip


@dataclass
class E2E:
    stack: ArgoCDStack
    slack: FakeSlack
    github: FakeGitHub
    cluster: Cluster
    bot: BotProcess
    settings: Settings
    tap: WebhookTap
    repo: str = REPO
    """The repository on the fake GitHub (and, by the same name, in ``stack.git``) that the helpers push to."""

    @property
    def repo_url(self) -> str:
        return self.stack.git.url(self.repo)

    # -- Git and Argo CD ---------------------------------------------------------------------------------------------

    def add_files(self, files: dict[str, Obj | list[Obj] | str | None], message: str = "Update") -> str:
        """Push ``files`` (objects are written as YAML; None deletes) to main; the new commit."""
        text = {path: None if body is None else body if isinstance(body, str) else _yaml(body)
                for path, body in files.items()}  # fmt: skip
        return self.github.advance(self.repo, text, message=message)

    def create_app(self, name: str, path: str, dest_namespace: str, *, namespace: str = "argocd",
                   project: str = "default", sync_options: list[str] | None = None,
                   annotations: dict[str, str] | None = None, automated: bool = False) -> Obj:  # fmt: skip
        """An Application of ``path`` in the repository, created through the API as a person does."""
        spec: Obj = {"project": project, "destination": {"server": IN_CLUSTER, "namespace": dest_namespace},
                     "source": {"repoURL": self.repo_url, "targetRevision": "main", "path": path}}  # fmt: skip
        policy: Obj = {}
        if sync_options:
            policy["syncOptions"] = sync_options
        if automated:
            policy["automated"] = {"prune": False, "selfHeal": False}
        if policy:
            spec["syncPolicy"] = policy
        meta: Obj = {"name": name, "namespace": namespace, "annotations": annotations or {}}
        return dict(self.stack.api("POST", "/api/v1/applications", {"metadata": meta, "spec": spec}))

    def app(self, name: str, namespace: str = "argocd", *, refresh: str | None = None) -> Obj:
        query = f"?appNamespace={namespace}" + (f"&refresh={refresh}" if refresh else "")
        return dict(self.stack.api("GET", f"/api/v1/applications/{quote(name)}{query}"))

    def wait_app(self, name: str, check: Callable[[Obj], bool], what: str, *, namespace: str = "argocd",
                 timeout: float = 60.0) -> Obj:  # fmt: skip
        seen: dict[str, Obj] = {}

        def probe() -> Obj | None:
            seen["app"] = self.app(name, namespace)
            return seen["app"] if check(seen["app"]) else None

        try:
            return dict(wait(probe, f"{namespace}/{name}: {what}", timeout))
        except Timeout as e:
            status = seen.get("app", {}).get("status", {})
            raise Timeout(f"{e}\nstatus: {json.dumps(status)[:3000]}\n{self.stack.logs_tail(1500)}") from None

    def sync(self, name: str, namespace: str = "argocd", *, expect: str = "Synced",
             resources: list[Obj] | None = None) -> Obj:  # fmt: skip
        """``argocd app sync [--resource ...]``: POST .../sync, then wait until the operation finished and the status
        is ``expect``."""
        before = (self.app(name, namespace).get("status", {}).get("operationState") or {}).get("finishedAt")
        body: Obj = {"appNamespace": namespace, "prune": False}
        if resources:
            body["resources"] = resources
        self.stack.api("POST", f"/api/v1/applications/{quote(name)}/sync", body)
        # Argo CD's controller takes the operation up from its watch of the Application; on a loaded machine it was
        # seen to miss that update (nothing in its log for a minute, until its next resync, 2-3 minutes later).
        # The UI's answer is a refresh: an update of the Application that the controller does take up.
        nudge_at = [time.monotonic() + SYNC_NUDGE_S]

        def taken_up(app: Obj) -> bool:
            op = app.get("status", {}).get("operationState") or {}
            if op.get("finishedAt") != before or op.get("phase") == "Running":
                return True
            if time.monotonic() > nudge_at[0]:
                self.app(name, namespace, refresh="normal")
                nudge_at[0] += SYNC_NUDGE_S
            return False

        self.wait_app(name, taken_up, "sync taken up", namespace=namespace)
        return self.wait_app(name, lambda a: _finished(a, before) and a["status"]["sync"]["status"] == expect,
                             f"sync to {expect}", namespace=namespace)  # fmt: skip

    def past_grace(self, name: str, namespace: str = "argocd") -> None:
        """Wait until the shipped trigger may fire for the app's last sync (:data:`GRACE_S` after it finished; the
        time is in whole seconds), so that a drift made now is sent at once rather than at the next resync."""
        finished = self.app(name, namespace)["status"]["operationState"]["finishedAt"]
        at = datetime.datetime.fromisoformat(finished.replace("Z", "+00:00")).timestamp() + GRACE_S + 1.0
        time.sleep(max(0.0, at - time.time()))

    def quiet_after_sync(self, name: str, namespace: str = "argocd") -> Obj:
        """Past the trigger's grace after the last sync, a comparison (a refresh) and a moment for the notifications
        controller to evaluate the trigger on it (it reacts within a fraction of a second): the app as it then was.
        What "no alert" is checked after."""
        self.past_grace(name, namespace)
        before = self.app(name, namespace)["status"]["reconciledAt"]
        self.refresh(name, namespace)
        seen = self.wait_app(
            name, lambda a: a["status"]["reconciledAt"] > before, "compared again", namespace=namespace
        )
        time.sleep(1.5)
        return seen

    def refresh(self, name: str, namespace: str = "argocd") -> Obj:
        """A hard refresh (``argocd app get --hard-refresh``): Argo CD reads Git again."""
        return self.app(name, namespace, refresh="hard")

    def managed_resources(self, name: str, namespace: str = "argocd") -> list[Obj]:
        body = self.stack.api("GET", f"/api/v1/applications/{quote(name)}/managed-resources?appNamespace={namespace}")
        return list(body.get("items") or [])

    def answer(self, method: str, path: str, token: str | None) -> tuple[int, Any]:
        """Status and JSON body of a request with ``token``, whether it succeeds or fails."""
        try:
            return 200, self.stack.api(method, path, token=token)
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    # -- the bot and Slack -------------------------------------------------------------------------------------------

    def parents(self, app: str) -> list[Obj]:
        """The bot's top-level messages in the alert channel about ``app``."""
        return [m for m in self.slack.messages(CHANNEL) if re.search(rf"\b{re.escape(app)}\b", m.get("text", ""))]

    def wait_parents(self, app: str, what: str, count: int = 1, timeout: float = 60.0) -> list[Obj]:
        """The bot's parents about ``app`` once there are ``count``; on a timeout, what the webhook relay saw and
        the bot's log."""
        try:
            return list(wait_for(lambda: self.parents(app), lambda p: len(p) >= count, what, timeout))
        except Timeout as e:
            sent = [(s.status, s.body) for s in self.tap.sent if app in json.dumps(s.body)]
            raise Timeout(f"{e}\nwebhooks for {app} (status, body): {sent}\nargo-why serve's log:\n"
                          f"{self.bot.stderr()}") from None  # fmt: skip

    def thread_text(self, parent: Obj) -> str:
        """Everything said in a parent and its thread (texts and blocks), for assertions on words."""
        replies = self.slack.thread(CHANNEL, parent["ts"])
        return json.dumps([parent, *replies])

    def why(self, target: str, *, user: str = APPROVER, channel: str = CHANNEL) -> None:
        """``/argo why target`` as Slack POSTs it to the bot."""
        body = slash_command_body("/argo", f"why {target}", user_id=user, channel_id=channel,
                                  response_url=self.slack)  # fmt: skip
        self.slack_post(body)

    def slack_post(self, body: bytes) -> httpx.Response:
        secret = self.settings.slack.signing_secret
        assert secret is not None
        resp = httpx.post(f"{self.bot.url}/slack/events", content=body,
                          headers=signed_headers(secret.get_secret_value(), body), timeout=30)  # fmt: skip
        assert resp.status_code == 200, (resp.status_code, resp.text, self.bot.stderr())
        return resp

    def webhooks_received(self) -> int:
        """How many notifications webhooks the bot took (its own counter, ``argo_why_webhooks_total``)."""
        text = httpx.get(f"{self.bot.url}/metrics", timeout=10).text
        return int(sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                       if line.startswith("argo_why_webhooks_total")))  # fmt: skip

    def ready(self) -> None:
        asyncio.run(self.bot.ready(60))


def _finished(app: Obj, before: str | None) -> bool:
    op = app.get("status", {}).get("operationState") or {}
    return op.get("phase") in ("Succeeded", "Failed", "Error") and op.get("finishedAt") != before


def _yaml(body: Obj | list[Obj]) -> str:
    docs = body if isinstance(body, list) else [body]
    return yaml.safe_dump_all(docs, sort_keys=False)


def namespace_for(test: str) -> str:
    """A destination namespace of its own for one test (``e2e-<test>-<random>``)."""
    return f"e2e-{test}-{secrets.token_hex(2)}"[:63]


def project(e2e: E2E, name: str, *, source_namespaces: list[str] | None = None) -> None:
    """An AppProject made through the API (any repository, any destination)."""
    spec = {"sourceRepos": ["*"], "destinations": [{"server": "*", "namespace": "*"}],
            "sourceNamespaces": source_namespaces or []}  # fmt: skip
    e2e.stack.api("POST", "/api/v1/projects", {"project": {"metadata": {"name": name}, "spec": spec}, "upsert": True})


def ephemeral_to(e2e: E2E, user: str, words: str) -> str:
    """The text of the ephemeral answer to ``user`` that contains ``words``."""

    def found() -> str | None:
        for call in e2e.slack.calls_to("chat.postEphemeral"):
            text = json.dumps(call.params)
            if call.params.get("user") == user and words in text:
                return text
        return None

    return str(wait(found, f"an ephemeral answer to {user} about {words}", 30))


def click(e2e: E2E, message: Obj, action_id: str, user: str = APPROVER, *, block_id: str | None = None) -> None:
    """``user`` clicks the button ``action_id`` of ``message`` (a confirmed click, as Slack sends it): the first
    one, or, with ``block_id``, the one button of that block (a thread message may hold several Open PR buttons,
    one per fix; the message must hold that block once, with one such button)."""
    found = [(block, element) for block in message.get("blocks") or []
             if block_id is None or block.get("block_id") == block_id
             for element in block.get("elements") or [] if element.get("action_id") == action_id]  # fmt: skip
    if not found:
        raise AssertionError(f"no {action_id} button{f' in {block_id}' if block_id else ''} in {message.get('text')!r}")
    if block_id is not None:
        blocks = [b for b in message.get("blocks") or [] if b.get("block_id") == block_id]
        assert len(blocks) == 1 and len(found) == 1, (block_id, blocks)
    block, element = found[0]
    e2e.slack_post(block_action_body(action_id, str(element["value"]), user_id=user, channel_id=CHANNEL,
                                     message_ts=message["ts"], block_id=str(block["block_id"]),
                                     response_url=e2e.slack, message=message))  # fmt: skip
