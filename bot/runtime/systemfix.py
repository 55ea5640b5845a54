"""The system-level rule of a fleet-wide drift, from its check to its pull request to argocd-cm.

* :meth:`SystemFix.prepare`: lists every app Argo CD has (one request) and takes the desired and live objects of
  each from the fleet index (:mod:`bot.store.fleetobjects`, kept by every analysis; Argo CD's ``managed-resources``
  only for an app with nothing current kept, see :meth:`SystemFix.known_apps`; an app that cannot be read is counted
  as not checked), checks the rule on them (:class:`bot.analysis.systemrule.SystemRuleCheck`, fed
  :data:`READ_BATCH` apps at a time: a fleet's kept objects are never held all at once) and, when the rule is
  offered, saves the state its Open PR button points at (the rule and the signature of its drift);
* :meth:`SystemFix.covered`: when the PR opens, the apps that have the drift then (the fleet index), their threads,
  and the rule checked again: the PR covers, lists and (after the merge) tells exactly those;
* :meth:`SystemFix.click` (``open_pr`` and ``approve`` of a ``sysfix:`` state): always **two different approvers**
  from ``APPROVERS``, whatever ``APPROVALS_REQUIRED`` says (the rule changes every app of the instance); then,
  under the lock ``pr:<fix_id>``, the file holding argocd-cm is located (:mod:`bot.runtime.cmfile`), edited
  (:mod:`bot.fixes.cmedit`: a ConfigMap manifest or argo-helm ``configs.cm``), and the PR opened with every covered
  app and a link to each thread in its body; the PR is remembered for the follow-up;
* :meth:`SystemFix.merged`: the follow-up's call once the PR is merged, for each covered app: its thread is told,
  once, that the rule was merged and argo-why will say when the app is Synced, and once that it is Synced again.

Every decision is said in the thread and appended to ``argo-why:audit``. Errors of the Git host or Argo CD are said
in the thread in their own sentence.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import yaml

from bot.analysis.fleet import AppObjects, FleetGroup, SystemRule, group_findings
from bot.analysis.schema import group_of
from bot.analysis.systemrule import SystemRuleCheck
from bot.errors import ArgoWhyError
from bot.fixes.approvals import audit_record, decide
from bot.intake.jobs import FixJob, app_key
from bot.runtime.cmfile import CMFile, locate
from bot.runtime.fixflow import FixFlow
from bot.runtime.services import Services
from bot.slack.render import error_message
from bot.slack.render.blocks import Message
from bot.slack.render.fixes import (
    PRLink,
    approvers_text,
    ephemeral_notice,
    fix_notice,
    paste_message,
    pr_link_block,
    pr_opened_message,
)
from bot.slack.render.fleet import system_approval_message
from bot.sources.applist import BRIEF
from bot.sources.argocd import ArgoCDClient
from bot.sources.git import (
    GitHost,
    GitHostError,
)
from bot.store.fleetobjects import stamp_of
from bot.store.state import SystemFixState
from bot.wording import pr as pr_wording
from bot.wording import slack as wording

log = logging.getLogger("argo_why.systemfix")
STATE_TTL_S = 14 * 24 * 3600
LOCK_TTL_S = 300
APPROVERS_NEEDED = 2
PENDING_READ = 10
"""Up to this many drifting apps not analysed yet are read by the check; more are left for their analyses."""
READ_BATCH = 100
"""The check reads the kept objects of this many apps at a time (one Redis pipeline)."""


_Listed = tuple[str, str, str | None, str, bool]
"""An app Argo CD lists, as the check uses it: its key, name, namespace, stamp and whether it is OutOfSync."""


class SystemFix:
    def __init__(self, services: Services, fixes: FixFlow, owner: str) -> None:
        self.s = services
        self.fixes = fixes
        self.owner = owner

    # --- the check --------------------------------------------------------------------------------------
    async def known_apps(self, argocd: ArgoCDClient, check: SystemRuleCheck) -> None:
        """Every app Argo CD lists (one request) into ``check``, with (desired, live) of each of its resources of the
        group's kind as the fleet index's objects keep them (:mod:`bot.store.fleetobjects`: what the app's last
        analysis read), :data:`READ_BATCH` apps at a time. Argo CD is asked only for an app with nothing current kept
        (its sync changed since, or it was never analysed): its ``managed-resources``, kept for the next check. An
        app that drifts and is not analysed yet is ``pending`` (its alert, under way, keeps its objects) when there
        are more than :data:`PENDING_READ` such apps (a storm: reading them would read every app twice), else it is
        read too (a muted app among many stays pending until its mute ends and it is analysed). ``AppObjects(None)``
        when unreadable."""
        group, kind = check.group.group, check.group.kind
        # what the check uses of each listed app, not its Application (held while every app is read)
        listed: list[_Listed] = []
        for item in await argocd.applications(keep=BRIEF):
            meta = item.get("metadata") or {}
            if meta.get("name"):
                name, ns = str(meta["name"]), meta.get("namespace")
                drifting = ((item.get("status") or {}).get("sync") or {}).get("status") == "OutOfSync"
                listed.append((app_key(name, ns), name, ns, stamp_of(item), drifting))
        to_read: list[_Listed] = []
        pending: list[_Listed] = []
        for start in range(0, len(listed), READ_BATCH):
            batch = listed[start : start + READ_BATCH]
            kept = await self.s.store.fleet_objects.of_kind([k for k, *_ in batch], group, kind)
            for app in batch:
                key, _, _, stamp, drifting = app
                hit = kept.get(key)
                if hit is not None and hit.stamp == stamp:
                    check.add(key, AppObjects(hit.pairs))
                    continue
                (pending if drifting else to_read).append(app)
        if len(pending) <= PENDING_READ:  # a few: read them now (a small fleet, the end of a storm)
            to_read, pending = to_read + pending, []
        for key, *_ in pending:
            check.add(key, AppObjects(None, pending=True))
        for key, name, ns, stamp, _ in to_read:
            try:
                diffs = await argocd.managed_resources(name, ns)
            except ArgoWhyError as e:
                log.info("fleet check: %s could not be read: %s", name, e)
                check.add(key, AppObjects(None))
                continue
            pairs = [(d.target, d.live) for d in diffs]
            await self.s.store.fleet_objects.put(key, stamp, pairs)
            check.add(key, AppObjects([p for p in pairs if _of(p, group, kind)]))

    async def check(self, group: FleetGroup) -> SystemRule | None:
        """The group's system-level rule checked against the fleet now; ``None`` when Argo CD cannot be read."""
        check = SystemRuleCheck(group)
        try:
            async with self.s.argocd() as argocd:
                await self.known_apps(argocd, check)
        except ArgoWhyError as e:
            log.warning("fleet check of %s skipped: %s", group.signature, e)
            return None
        return check.result()

    async def prepare(self, group: FleetGroup, threads: dict[str, list[str]]) -> tuple[SystemRule | None, str | None]:
        """The group's system-level rule and the state of its Open PR button (``None`` when not offered); no rule
        at all when Argo CD cannot be read. The state names the signature: the apps it covers are the group's when
        the PR opens (:meth:`_open`), not the ones of this check."""
        rule = await self.check(group)
        if rule is None:
            return None, None
        if not rule.offered or self.s.git is None:
            return rule, None
        what = f"{group.path} of {group.group_kind} written by {group.writer}"
        state = SystemFixState(sig_id=group.sig_id, key=rule.key, rule=rule.value, what=what, apps=list(group.apps),
                               threads=threads, radius=list(rule.radius.fields),
                               unchecked=[*rule.radius.unchecked, *rule.radius.pending],
                               checked=rule.radius.checked)  # fmt: skip
        return rule, await state.save(self.s.store, STATE_TTL_S)

    # --- the click ----------------------------------------------------------------------------------------
    async def _thread(self, job: FixJob, template: str, *, path: str, repo: str, base: str) -> None:
        message = fix_notice(template, app=wording.SLACK_ARGOCD_CM, path=path, repo=repo, base=base)
        await self.s.outbox.post(job.channel, message, thread_ts=job.thread_ts or job.message_ts)

    async def _audit(self, job: FixJob, fix_id: str, decision: str, **extra: str) -> None:
        await self.s.store.append_audit(
            audit_record(
                user=job.user,
                action=job.type,
                decision=decision,
                app="argocd-cm",
                fix_id=fix_id,
                at=time.time(),
                **extra,
            )
        )

    async def click(self, job: FixJob) -> None:
        state = await SystemFixState.load(self.s.store, job.state)
        if state is None:
            await self.s.outbox.ephemeral(job.channel, job.user, error_message(wording.STATE_EXPIRED))
            return
        fix_id = state.fix_id
        if self.s.git is None:
            await self._audit(job, fix_id, "refused", reason="no Git provider configured")
            await self.s.outbox.ephemeral(job.channel, job.user, error_message(wording.SLACK_PR_NO_GIT))
            return
        record = await self.s.store.get_pr(fix_id)
        if record is not None:
            pr = PRLink(int(record["number"]), str(record["url"]), str(record.get("by") or ""))
            await self.s.outbox.post(
                job.channel,
                fix_notice(wording.SLACK_PR_EXISTING, app="argocd-cm", pr=pr, user=pr.by),
                thread_ts=job.thread_ts or job.message_ts,
            )
            return
        d = await decide(self.s.store, self.s.directory, allowed=self.s.settings.git.approvers,
                         required=APPROVERS_NEEDED, fix_id=fix_id, user=job.user, now=time.time())  # fmt: skip
        where = job.thread_ts or job.message_ts
        if d.outcome in ("nobody-may", "not-allowed"):
            await self._audit(job, fix_id, "refused", reason=d.outcome)
            await self.s.outbox.post(job.channel, fix_notice(wording.SLACK_SYSTEM_REFUSED, app="argocd-cm",
                                                             user=job.user), thread_ts=where)  # fmt: skip
            # like an app fix: the person who clicked is told who may approve (a project's approvers may approve
            # its app fixes, never a rule that changes every app of the instance)
            allowed = self.s.settings.git.approvers
            notice = (ephemeral_notice(wording.SLACK_SYSTEM_ONLY, approvers=approvers_text(allowed)) if allowed
                      else ephemeral_notice(wording.SLACK_PR_NOBODY))  # fmt: skip
            await self.s.outbox.ephemeral(job.channel, job.user, notice)
            return
        if d.outcome == "twice":
            await self._audit(job, fix_id, "refused", reason="the same approver twice")
            await self.s.outbox.ephemeral(job.channel, job.user, ephemeral_notice(wording.SLACK_PR_TWICE))
            return
        if d.outcome == "partial":
            await self._audit(job, fix_id, "approved", approvals=f"{len(d.approvers)} of {APPROVERS_NEEDED}")
            message = system_approval_message(state.what, rule_text_of(state), d.approvers, job.state)
            await self.s.outbox.post(job.channel, message, thread_ts=where)
            return
        lock = f"pr:{fix_id}"
        if not await self.s.store.acquire_lock(lock, self.owner, LOCK_TTL_S):
            await self.s.outbox.ephemeral(job.channel, job.user, ephemeral_notice(wording.SLACK_PR_BUSY))
            return
        try:
            if await self.s.store.get_pr(fix_id) is None:
                await self._audit(job, fix_id, "approved", approvals=f"{len(d.approvers)} of {APPROVERS_NEEDED}")
                await self._open(job, state, list(d.approvers))
        except ArgoWhyError as e:
            await self._audit(job, fix_id, "failed", reason=getattr(e, "kind", type(e).__name__))
            await self.s.outbox.post(job.channel, fix_notice(wording.SLACK_PR_FAILED, app="argocd-cm", icon=":warning:",
                                                             reason=str(e)), thread_ts=where)  # fmt: skip
        finally:
            await self.s.store.release_lock(lock, self.owner)

    async def covered(self, state: SystemFixState) -> tuple[SystemFixState, SystemRule | None]:
        """The state with the apps that have the drift now (the fleet index), their threads and the blast radius
        checked now; the rule as checked (``None``: the group is gone, or Argo CD could not be read)."""
        now = time.time()
        keys = sorted(await self.s.store.fleet.apps_with(state.sig_id))
        entries = await self.s.store.fleet.get(keys, now)
        by_app = {a: [f for f in e.findings if f.sig_id == state.sig_id] for a, e in entries.items()}
        group = next((g for g in group_findings(by_app, 1) if g.sig_id == state.sig_id), None)
        if group is None:
            return state, None
        rule = await self.check(group)
        if rule is None:
            return state, None
        threads = {a: [entries[a].channel, entries[a].thread_ts] for a in group.apps}
        return state.model_copy(update={"apps": list(group.apps), "threads": threads,
                                        "radius": list(rule.radius.fields),
                                        "unchecked": [*rule.radius.unchecked, *rule.radius.pending],
                                        "checked": rule.radius.checked}), rule  # fmt: skip

    async def _open(self, job: FixJob, state: SystemFixState, approvers: list[str]) -> None:
        from bot.fixes.cmedit import add_system_rule  # the editors load with the first system PR, not at start

        assert self.s.git is not None
        where = job.thread_ts or job.message_ts
        state, rule = await self.covered(state)
        if rule is None or rule.value != state.rule or rule.key != state.key:
            await self._audit(job, state.fix_id, "no-pr", reason="the drift or its rule changed")
            await self.s.outbox.post(job.channel, fix_notice(wording.SLACK_SYSTEM_CHANGED, app="argocd-cm"),
                                     thread_ts=where)  # fmt: skip
            return
        if rule.refusal is not None:
            await self._audit(job, state.fix_id, "no-pr", reason=rule.refusal)
            await self.s.outbox.post(job.channel, fix_notice(wording.SLACK_SYSTEM_REFUSED_NOW, app="argocd-cm",
                                                             reason=rule.refusal), thread_ts=where)  # fmt: skip
            return
        snippet = cm_snippet(state.key, state.rule)
        async with self.s.argocd() as argocd, self.s.git() as git:
            found = await self.locate(argocd, git)
            if isinstance(found, str):
                await self._audit(job, state.fix_id, "no-pr", reason=found)
                await self.s.outbox.post(job.channel, _cm_paste(found, snippet), thread_ts=where)
                return
            result = add_system_rule(found.file.text, form=found.form, key=state.key, rules=state.rule,
                                     path=found.file.path)  # fmt: skip
            if result.status == "already-present":
                await self._audit(job, state.fix_id, "already-present")
                await self._thread(job, wording.SLACK_PR_ALREADY_PRESENT, path=found.file.path,
                                   repo=str(found.repo), base=found.base)  # fmt: skip
                return
            if result.text is None:
                reason = result.reason or pr_wording.PR_CANNOT_EDIT
                await self._audit(job, state.fix_id, "no-pr", reason=reason)
                await self.s.outbox.post(job.channel, _cm_paste(reason, snippet), thread_ts=where)
                return
            title = pr_wording.PR_SYSTEM_TITLE.format(what=state.what, count=len(state.apps))
            body = await self._body(state, approvers, found)
            branch = f"argo-why/argocd-cm/{state.fix_id.split(':')[1]}"
            existing = await git.find_open_pr(found.repo, branch)
            if existing is None:
                try:
                    await git.create_branch(found.repo, branch, found.head)
                    version = found.file.version
                except GitHostError as e:
                    if e.kind != "branch-exists":
                        raise
                    version = (await git.get_file(found.repo, found.file.path, branch)).version
                await git.commit_file(found.repo, branch, found.file.path, result.text, title, version)
                pr = await git.open_pr(found.repo, branch, found.base, title, body)
            else:
                pr = existing
        link = PRLink(pr.number, pr.url, job.user, pr.title or title)
        record = {"number": pr.number, "url": pr.url, "by": job.user, "title": link.title, "approvers": approvers,
                  "app": "argocd-cm", "app_namespace": None, "app_key": "argocd-cm", "kind": "system",
                  "key": state.key, "threads": state.threads, "repo": found.repo.path, "host": found.repo.host,
                  "provider": found.repo.provider, "branch": branch, "channel": job.channel, "thread_ts": where,
                  "origins": [], "opened": time.time(), "merged_said": False}  # fmt: skip
        await self.s.store.save_pr(state.fix_id, record)
        await self.s.store.clear_approvals(state.fix_id)
        await self._audit(job, state.fix_id, "opened", pr=str(pr.number), url=pr.url)
        if job.block_id:
            await self.fixes.replace_button(job.channel, job.message_ts, job.block_id,
                                            pr_link_block(job.block_id, link), job.blocks)  # fmt: skip
        message = pr_opened_message("argocd-cm", link, approvers=approvers, path=found.file.path,
                                    repo=str(found.repo), base=found.base, change=snippet.rstrip())  # fmt: skip
        await self.s.outbox.post(job.channel, message, thread_ts=where)

    async def _body(self, state: SystemFixState, approvers: list[str], found: CMFile) -> str:
        names = [await self.s.directory.name(u) for u in approvers]
        lines = [
            pr_wording.PR_SYSTEM_INTRO.format(count=len(state.apps), what=state.what, key=state.key),
            "",
            "```yaml",
            cm_snippet(state.key, state.rule).rstrip(),
            "```",
            "",
            pr_wording.PR_SYSTEM_APPS,
        ]
        for app in state.apps:
            thread = state.threads.get(app)
            url = await self._permalink(thread[0], thread[1]) if thread and thread[1] else None
            lines.append(f"- [{app}]({url})" if url else "- " + pr_wording.PR_SYSTEM_NO_THREAD.format(app=app))
        lines += ["", pr_wording.PR_SYSTEM_RADIUS]
        lines += [f"- {f}" for f in state.radius] or [pr_wording.PR_SYSTEM_RADIUS_NONE.format(checked=state.checked)]
        if state.unchecked:
            lines += ["", pr_wording.PR_SYSTEM_UNCHECKED.format(apps=", ".join(state.unchecked))]
        who = ", ".join(n or u for n, u in zip(names, approvers, strict=True))
        lines += ["", pr_wording.PR_APPROVED.format(approvers=who), "", pr_wording.PR_FOOTER]
        return "\n".join(lines)

    async def _permalink(self, channel: str, ts: str) -> str | None:
        try:
            resp = await self.s.poster.call("chat.getPermalink", channel=channel, message_ts=ts)
        except ArgoWhyError:
            return None
        link = resp.get("permalink")
        return str(link) if isinstance(link, str) else None

    async def locate(self, argocd: ArgoCDClient, git: GitHost) -> CMFile | str:
        """The file holding argocd-cm, or why it was not found (a sentence): :func:`bot.runtime.cmfile.locate`."""
        g = self.s.settings.git
        return await locate(g.argocd_cm_definition, g.provider, g.api_url, argocd, git)

    # --- the follow-up ----------------------------------------------------------------------------------
    async def merged(self, fix_id: str, record: dict[str, Any], app: str, *, synced: bool) -> None:
        """Tell ``app``'s thread (a covered app) that the system-level rule was merged: that it is Synced again, or
        that argo-why will say when it is (once each)."""
        place = (record.get("threads") or {}).get(app)
        if not (isinstance(place, list) and len(place) == 2 and place[1]):
            return
        pr = PRLink(int(record["number"]), str(record["url"]), str(record.get("by") or ""))
        template, icon = ((wording.SLACK_SYSTEM_SYNCED, wording.SLACK_ICON_SYNCED) if synced
                          else (wording.SLACK_SYSTEM_MERGED, ""))  # fmt: skip
        message = fix_notice(template, app=app, pr=pr, icon=icon, key=str(record.get("key") or ""))
        said = "synced" if synced else "merged"
        await self.s.outbox.post(str(place[0]), message, thread_ts=str(place[1]),
                                 key=f"system-{said}:{fix_id}:{pr.number}:{app}")  # fmt: skip


def cm_snippet(key: str, rule: dict[str, list[str]]) -> str:
    """The argocd-cm entry as a person pastes it under ``data:`` (or argo-helm's ``configs.cm:``): the key and the
    rule as a literal block, never a quoted string."""
    body = yaml.safe_dump(rule, sort_keys=False, default_flow_style=False)
    return f"{key}: |\n" + "".join(f"  {line}\n" for line in body.splitlines())


def _of(pair: tuple[dict[str, Any] | None, dict[str, Any] | None], group: str, kind: str) -> bool:
    obj = pair[1] if pair[1] is not None else pair[0]
    return obj is not None and obj.get("kind") == kind and group_of(str(obj.get("apiVersion") or "")) == group


def rule_text_of(state: SystemFixState) -> str:
    return "; ".join(f"{k}: {v}" for k, v in state.rule.items())


def _cm_paste(reason: str, snippet: str) -> Message:
    """No PR for a system-level rule: why, and the block to paste into the ConfigMap argocd-cm by hand."""
    return paste_message("argocd-cm", reason, snippet, template=wording.SLACK_PR_PASTE_CM)
