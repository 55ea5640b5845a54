"""A click on Open PR or Approve, from the worker: who may, how many approved, then the pull request.

The flow of README's "Fixes from chat: Open PR", for one :class:`bot.intake.jobs.FixJob`:

1. the button's value is an opaque :class:`bot.store.state.FixState` id; the approver is the job's ``user`` (the signed
   payload's ``user.id``), never anything the button carries;
2. without a Git provider there is nothing to do; a PR already opened for the same fix is linked, not repeated;
3. :func:`bot.fixes.approvals.decide`, with the approvers of the app's AppProject as Argo CD shows it at click time
   (``APPROVER_ROUTES``, else ``APPROVERS``; :class:`bot.runtime.routes.Router`): nobody may approve, not allowed
   (the refusal names who may, for that project), the same person twice, "approved 1 of 2" (posted with an Approve
   button), or approved. A click where the app is not visible (another team's channel) is refused the same way;
4. approved: under a lock per fix (``lock:pr:<fix_id>``, so double clicks, Slack retries and two replicas open
   one PR) the definition is located, edited, pushed and the PR opened (:mod:`bot.fixes`); the button block of
   the message that carried it (and of the first approver's message) becomes "PR #N opened by @user", the thread
   says what was proposed, and the PR is remembered for the follow-up job.

Every decision, allowed or refused, is said in the thread and appended to ``argo-why:audit``. Errors of the Git
host or Argo CD are said in the thread in the host's own sentence; nothing is retried behind the person's back
(their approvals stay valid for 24 h, so a second click retries).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from bot.errors import ArgoWhyError
from bot.fixes.approvals import Decision, audit_record, decide
from bot.fixes.locate import Definition, Locator, NoDefinition
from bot.fixes.pr_text import Target, change_yaml, pr_body, pr_title
from bot.fixes.proposal import Proposal, commit_fixable, proposal, source_fixable
from bot.intake.jobs import FixJob
from bot.model import Alert, Finding, Report
from bot.routing import first_match
from bot.runtime.routes import Router
from bot.runtime.serial import leased
from bot.runtime.services import Services
from bot.slack.directory import Directory
from bot.slack.poster import SlackUnavailable
from bot.slack.render import Message, error_message
from bot.slack.render.fixes import (
    SLOT_ALL,
    FixButtons,
    PRLink,
    approval_message,
    approvers_text,
    ephemeral_notice,
    fix_block_id,
    fix_notice,
    paste_message,
    pr_link_block,
    pr_opened_message,
    replace_block,
    slot_finding,
)
from bot.sources.git import GitHost
from bot.store.state import FixState
from bot.wording import slack as wording

if TYPE_CHECKING:  # the editors and ruamel.yaml load with the first Open PR, not in every replica at start
    from bot.fixes.opener import Opened

log = logging.getLogger("argo_why.fixes")
LEASE_S = 30  # the lock of one fix's PR, renewed while the PR is opened (bot.runtime.serial.leased)
MESSAGE_TTL_S = 14 * 24 * 3600


def proposal_of(state: FixState) -> Proposal | None:
    return proposal(state.kind, state.app, state.app_namespace, state.parsed_findings())


class FixFlow:
    def __init__(self, services: Services, directory: Directory, git: Callable[[], GitHost] | None,
                 owner: str) -> None:  # fmt: skip
        self.s = services
        self.directory = directory
        self.git = git
        self.owner = owner
        self.router = Router(services)

    # --- saying things ------------------------------------------------------------------------------------
    async def _thread(self, job: FixJob, message: Message) -> str:
        _, ts = await self.s.outbox.post(job.channel, message, thread_ts=job.thread_ts or job.message_ts)
        return ts

    async def _audit(self, job: FixJob, p: Proposal | None, decision: str, **extra: str) -> None:
        record = audit_record(user=job.user, action=job.type, decision=decision, app=p.app_key if p else "",
                              fix_id=p.fix_id if p else "", at=time.time(), **extra)  # fmt: skip
        await self.s.store.append_audit(record)

    async def remember(self, channel: str, ts: str, message: Message, fixes: FixButtons | None = None) -> None:
        """Keep a posted message with fix buttons, and where each fix's button is, so that every button of a fix
        becomes the PR's link once it is open."""
        await self.s.store.remember_message(channel, ts, message.to_dict(), MESSAGE_TTL_S)
        if fixes is None:
            return
        present = {b.get("block_id") for b in message.blocks}
        for slot, fix_id in fixes.fix_ids.items():
            if slot in fixes.states and fix_block_id(slot) in present:
                place = {"channel": channel, "ts": ts, "block_id": fix_block_id(slot)}
                await self.s.store.add_fix_button(fix_id, place, MESSAGE_TTL_S)

    async def replace_button(self, channel: str, ts: str, block_id: str, new: dict[str, Any],
                             fallback: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:  # fmt: skip
        """Replace one block of a message the bot posted; the block it replaced, or ``None`` when the message or
        the block is unknown (nothing is changed then)."""
        kept = await self.s.store.recall_message(channel, ts)
        blocks = (kept or {}).get("blocks") or fallback or []
        old = next((b for b in blocks if isinstance(b, dict) and b.get("block_id") == block_id), None)
        replaced = replace_block(blocks, block_id, new)
        if replaced is None or old is None:
            return None
        text = str((kept or {}).get("text") or "argo-why")
        message = Message(text=text, blocks=replaced)
        await self.s.outbox.update(channel, ts, message)
        await self.remember(channel, ts, message)
        return old

    # --- the buttons --------------------------------------------------------------------------------------
    async def buttons(self, key: str, name: str, ns: str | None, alert: Alert, report: Report
                      ) -> tuple[FixButtons | None, FixButtons | None]:  # fmt: skip
        """The Open PR buttons of the parent (all findings with a rule) and of the thread (one per finding, and
        "fix the source" where that is the better fix and the source is plain YAML, "commit the live value to Git"
        for a field changed by hand in a plain YAML source); a slot whose fix already has
        a PR shows its link instead. ``(None, None)`` without a Git provider."""
        if self.git is None or not report.findings:
            return None, None
        required = self.s.settings.git.approvals_required

        async def slot(slot: str, kind: Literal["ignore", "source", "commit"], findings: list[Finding],
                       states: dict[str, str], prs: dict[str, PRLink]) -> None:  # fmt: skip
            p = proposal(kind, name, ns, findings)
            if p is None:
                return
            fix_ids[slot] = p.fix_id
            record = await self.s.store.get_pr(p.fix_id)
            if record is not None:
                prs[slot] = _link(record)
                return
            state = FixState(app_key=key, app=name, app_namespace=ns, kind=kind, slot=slot, alert=alert,
                             findings=[f.to_dict() for f in p.findings])  # fmt: skip
            states[slot] = await state.save(self.s.store, MESSAGE_TTL_S)

        fix_ids: dict[str, str] = {}
        parent_states: dict[str, str] = {}
        parent_prs: dict[str, PRLink] = {}
        await slot(SLOT_ALL, "ignore", report.findings, parent_states, parent_prs)
        states: dict[str, str] = {}
        prs: dict[str, PRLink] = {}
        plain_yaml = "Directory" in ((report.application or {}).get("source_types") or [])
        for i, f in enumerate(report.findings):
            await slot(slot_finding(i), "ignore", [f], states, prs)
            if plain_yaml and source_fixable(f):
                await slot(slot_finding(i, "source"), "source", [f], states, prs)
            if plain_yaml and commit_fixable(f):  # a hand-made change that may be the right value: keep it
                await slot(slot_finding(i, "commit"), "commit", [f], states, prs)
        return (FixButtons(parent_states, parent_prs, required, fix_ids),
                FixButtons(states, prs, required, fix_ids))  # fmt: skip

    # --- the click ----------------------------------------------------------------------------------------
    async def click(self, job: FixJob) -> None:
        state = await FixState.load(self.s.store, job.state)
        p = proposal_of(state) if state is not None else None
        if state is None or p is None:
            await self.s.outbox.ephemeral(job.channel, job.user, error_message(wording.STATE_EXPIRED))
            return
        if self.git is None:
            await self._audit(job, p, "refused", reason="no Git provider configured")
            await self.s.outbox.ephemeral(job.channel, job.user, error_message(wording.SLACK_PR_NO_GIT))
            return
        app = await self.router.application(state.app, state.app_namespace)
        routed = await self.router.route_of(state.app, app, state.alert.project)
        allowed = self.router.approvers(routed.project)
        if job.channel != routed.channel and not (job.channel.startswith("D") and app is not None
                                                  and await self.directory.may_approve(job.user, allowed)):  # fmt: skip
            await self._audit(job, p, "refused", reason="not visible in this channel")
            notice = ephemeral_notice(wording.NOT_VISIBLE, app=state.app)
            await self.s.outbox.ephemeral(job.channel, job.user, notice)
            return
        if await self._already_open(job, p):
            return
        git = self.s.settings.git
        decision = await decide(self.s.store, self.directory, allowed=allowed, required=git.approvals_required,
                                fix_id=p.fix_id, user=job.user, now=time.time())  # fmt: skip
        if decision.outcome == "approved":
            await self._open(job, p, decision)
            return
        await self._not_yet(job, p, decision, allowed, routed.project)

    async def _already_open(self, job: FixJob, p: Proposal) -> bool:
        record = await self.s.store.get_pr(p.fix_id)
        if record is None:
            return False
        pr = _link(record)
        await self._audit(job, p, "already-open", pr=str(pr.number))
        await self._thread(job, fix_notice(wording.SLACK_PR_EXISTING, app=p.app, pr=pr, user=pr.by))
        if job.block_id:
            await self.replace_button(job.channel, job.message_ts, job.block_id,
                                      pr_link_block(job.block_id, pr), job.blocks)  # fmt: skip
        return True

    async def _not_yet(self, job: FixJob, p: Proposal, d: Decision, allowed: list[str], project: str | None) -> None:
        routed = first_match(project, self.s.settings.git.approver_routes) is not None  # say the project's approvers
        if d.outcome == "nobody-may":
            reason = "APPROVER_ROUTES gives nobody" if routed else "APPROVERS is empty"
            await self._audit(job, p, "refused", reason=reason, project=project or "")
            await self._thread(job, fix_notice(wording.SLACK_PR_REFUSED, app=p.app, user=job.user))
            nobody = (ephemeral_notice(wording.SLACK_PR_NOBODY_PROJECT, project=f"`{project}`") if routed
                      else ephemeral_notice(wording.SLACK_PR_NOBODY))  # fmt: skip
            await self.s.outbox.ephemeral(job.channel, job.user, nobody)
        elif d.outcome == "not-allowed":
            await self._audit(job, p, "refused", reason="not an approver", project=project or "")
            await self._thread(job, fix_notice(wording.SLACK_PR_REFUSED, app=p.app, user=job.user))
            notice = (ephemeral_notice(wording.SLACK_PR_ONLY_PROJECT, approvers=approvers_text(allowed),
                                       project=f"`{project}`") if routed
                      else ephemeral_notice(wording.SLACK_PR_ONLY, approvers=approvers_text(allowed)))  # fmt: skip
            await self.s.outbox.ephemeral(job.channel, job.user, notice)
        elif d.outcome == "twice":
            await self._audit(job, p, "refused", reason="the same approver twice", approvals=str(len(d.approvers)))
            await self._thread(job, fix_notice(wording.SLACK_PR_TWICE_THREAD, app=p.app, user=job.user))
            await self.s.outbox.ephemeral(job.channel, job.user, ephemeral_notice(wording.SLACK_PR_TWICE))
        else:  # partial
            await self._audit(job, p, "approved", approvals=f"{len(d.approvers)} of {d.required}")
            message = approval_message(p.app, p.kind, p.findings, d.approvers, d.required, job.state)
            ts = await self._thread(job, message)
            await self.remember(job.channel, ts, message)
            place = {"channel": job.channel, "ts": ts, "block_id": fix_block_id("approve")}
            await self.s.store.add_fix_button(p.fix_id, place, MESSAGE_TTL_S)

    async def _open(self, job: FixJob, p: Proposal, d: Decision) -> None:
        async with leased(self.s.store, f"pr:{p.fix_id}", self.owner, LEASE_S) as held:
            if not held:
                await self._audit(job, p, "busy")
                await self.s.outbox.ephemeral(job.channel, job.user, ephemeral_notice(wording.SLACK_PR_BUSY))
                return
            if await self._already_open(job, p):  # the other replica finished while we waited for the lock
                return
            await self._audit(job, p, "approved", approvals=f"{len(d.approvers)} of {d.required}")
            try:
                await self._open_locked(job, p, d)
            except SlackUnavailable:
                raise  # the job stays pending; the branch and the PR are found again on the retry
            except ArgoWhyError as e:  # Git host and Argo CD errors carry a sentence for people
                await self._audit(job, p, "failed", reason=getattr(e, "kind", type(e).__name__))
                await self._thread(job, fix_notice(wording.SLACK_PR_FAILED, app=p.app, icon=":warning:",
                                                   reason=str(e)))  # fmt: skip

    async def _definition(self, locator: Locator, app: dict[str, Any], p: Proposal) -> Definition | NoDefinition:
        if p.kind == "ignore":
            return await locator.application(app)
        r = p.findings[0].resource
        return await locator.manifest(app, r.kind, r.name, r.namespace or None)

    async def _open_locked(self, job: FixJob, p: Proposal, d: Decision) -> None:
        from bot.fixes.opener import AlreadyPresent, Paste, open_fix, paste_snippet

        assert self.git is not None
        settings = self.s.settings.git
        async with self.s.argocd() as argocd, self.git() as git:
            app = await argocd.application(p.app, p.app_namespace)
            locator = Locator(argocd, git, provider=settings.provider or "github", api_url=settings.api_url)
            where = await self._definition(locator, app, p)
            if isinstance(where, NoDefinition):
                await self._audit(job, p, "no-pr", reason=where.reason)
                await self._thread(job, paste_message(p.app, where.reason, paste_snippet(p)))
                return
            names = [(u, await self.directory.name(u)) for u in d.approvers]
            thread_url = await self._permalink(job.channel, job.thread_ts or job.message_ts)
            target = Target(str(where.repo), where.file.path, where.base,
                            "spec.template.spec" if where.applicationset else "spec", where.applicationset)  # fmt: skip
            title = pr_title(p)
            body = pr_body(p, target, approvers=names, thread_url=thread_url)
            outcome = await open_fix(p, where, git, title=title, body=body)
        if isinstance(outcome, Paste):
            await self._audit(job, p, "no-pr", reason=outcome.reason)
            await self._thread(job, paste_message(p.app, outcome.reason, outcome.snippet))
            return
        if isinstance(outcome, AlreadyPresent):
            await self._audit(job, p, "already-present")
            await self._thread(job, fix_notice(wording.SLACK_PR_ALREADY_PRESENT, app=p.app, path=where.file.path,
                                               repo=str(where.repo), base=where.base))  # fmt: skip
            await self.s.store.clear_approvals(p.fix_id)
            return
        await self._opened(job, p, d, where, outcome, title)

    async def _opened(self, job: FixJob, p: Proposal, d: Decision, where: Definition, outcome: Opened,
                      title: str) -> None:  # fmt: skip
        pr = PRLink(outcome.pr.number, outcome.pr.url, job.user, outcome.pr.title or title)
        clicked = {"channel": job.channel, "ts": job.message_ts, "block_id": job.block_id or ""}
        places = {
            (w["channel"], w["ts"], w["block_id"]): w for w in [clicked, *await self.s.store.fix_buttons(p.fix_id)]
        }
        origins: list[dict[str, Any]] = []
        for o in places.values():  # every button of this fix becomes the PR's link; kept to come back on close
            if not o.get("block_id"):
                continue
            fallback = job.blocks if o["ts"] == job.message_ts else None
            old = await self.replace_button(o["channel"], o["ts"], o["block_id"], pr_link_block(o["block_id"], pr),
                                            fallback)  # fmt: skip
            origins.append({**o, "button": old})
        record = {"number": pr.number, "url": pr.url, "by": job.user, "title": pr.title, "approvers": list(d.approvers),
                  "app": p.app, "app_namespace": p.app_namespace, "app_key": p.app_key, "kind": p.kind,
                  "repo": where.repo.path, "host": where.repo.host, "provider": where.repo.provider,
                  "branch": p.branch, "channel": job.channel, "thread_ts": job.thread_ts or job.message_ts,
                  "origins": origins, "opened": time.time(), "merged_said": False}  # fmt: skip
        await self.s.store.save_pr(p.fix_id, record)
        await self.s.store.clear_approvals(p.fix_id)
        await self._audit(job, p, "already-open" if outcome.existing else "opened", pr=str(pr.number), url=pr.url)
        rules, options = change_yaml(p)
        change = rules + (f"# syncPolicy.syncOptions:\n{options}" if options else "")
        message = pr_opened_message(p.app, pr, approvers=d.approvers, path=where.file.path, repo=str(where.repo),
                                    base=where.base, change=change.rstrip(), fields=p.pointers,
                                    committed=p.kind == "commit")  # fmt: skip
        await self._thread(job, message)

    async def _permalink(self, channel: str, ts: str) -> str | None:
        try:
            resp = await self.s.poster.call("chat.getPermalink", channel=channel, message_ts=ts)
        except ArgoWhyError:
            return None  # the PR is still worth opening without the link
        link = resp.get("permalink")
        return str(link) if isinstance(link, str) else None


def _link(record: dict[str, Any]) -> PRLink:
    return PRLink(
        int(record["number"]), str(record["url"]), str(record.get("by") or ""), str(record.get("title") or "")
    )
