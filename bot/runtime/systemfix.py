"""The system-level rule of a fleet-wide drift, from its check to its pull request to argocd-cm.

* :meth:`SystemFix.prepare`: reads every app Argo CD lists (``managed-resources``: desired and live of each
  resource; an app that cannot be read is counted as not checked), runs :func:`bot.analysis.systemrule.system_rule`
  and, when the rule is offered, saves the state its Open PR button points at (the rule, the apps it covers and
  their threads);
* :meth:`SystemFix.click` (``open_pr`` and ``approve`` of a ``sysfix:`` state): always **two different approvers**
  from ``APPROVERS``, whatever ``APPROVALS_REQUIRED`` says (the rule changes every app of the instance); then,
  under the lock ``pr:<fix_id>``, the file holding argocd-cm is located (``ARGOCD_CM_DEFINITION``, else the
  Application whose destination is the Argo CD namespace: its plain YAML directory or its Helm values), edited
  (:mod:`bot.fixes.cmedit`: a ConfigMap manifest or argo-helm ``configs.cm``), and the PR opened with every covered
  app and a link to each thread in its body; the PR is remembered for the follow-up;
* :meth:`SystemFix.merged`: the follow-up's call once the PR is merged: each covered app's thread is told, once.

Every decision is said in the thread and appended to ``argo-why:audit``. Errors of the Git host or Argo CD are said
in the thread in their own sentence.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from bot.analysis.fleet import AppObjects, FleetGroup, SystemRule
from bot.analysis.systemrule import system_rule
from bot.errors import ArgoWhyError
from bot.fixes.approvals import audit_record, decide
from bot.fixes.cmedit import Form, add_system_rule
from bot.intake.jobs import FixJob, app_key
from bot.runtime.fixflow import FixFlow
from bot.runtime.services import Services
from bot.slack.render import error_message
from bot.slack.render.fixes import PRLink, ephemeral_notice, fix_notice, paste_message, pr_link_block, pr_opened_message
from bot.slack.render.fleet import system_approval_message
from bot.sources.argocd import ArgoCDClient
from bot.sources.git import (
    FileContent,
    GitHost,
    GitHostError,
    RepoRef,
    UnsupportedRepo,
    check_repo_path,
    parse_repo_url,
    web_url_candidates,
)
from bot.store.state import SystemFixState
from bot.wording import pr as pr_wording
from bot.wording import slack as wording

log = logging.getLogger("argo_why.systemfix")
STATE_TTL_S = 14 * 24 * 3600
LOCK_TTL_S = 300
APPROVERS_NEEDED = 2
MAX_FILES = 200


@dataclass(frozen=True)
class CMFile:
    repo: RepoRef
    base: str
    head: str
    file: FileContent
    form: Form


def _form(text: str) -> Form | None:
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError:
        return None
    for d in docs:
        if (
            isinstance(d, dict)
            and d.get("kind") == "ConfigMap"
            and (d.get("metadata") or {}).get("name") == "argocd-cm"
        ):
            return "configmap"
    if len(docs) == 1 and isinstance(docs[0], dict) and "kind" not in docs[0]:
        return "helm"
    return None


class SystemFix:
    def __init__(self, services: Services, fixes: FixFlow, owner: str) -> None:
        self.s = services
        self.fixes = fixes
        self.owner = owner

    # --- the check --------------------------------------------------------------------------------------
    async def known_apps(self, argocd: ArgoCDClient) -> dict[str, AppObjects]:
        """Every app Argo CD lists, with (desired, live) of each resource; ``AppObjects(None)`` when unreadable."""
        out: dict[str, AppObjects] = {}
        for app in await argocd.applications():
            meta = app.get("metadata") or {}
            name, ns = str(meta.get("name") or ""), meta.get("namespace")
            if not name:
                continue
            try:
                diffs = await argocd.managed_resources(name, ns)
                out[app_key(name, ns)] = AppObjects([(d.target, d.live) for d in diffs])
            except ArgoWhyError as e:
                log.info("fleet check: %s could not be read: %s", name, e)
                out[app_key(name, ns)] = AppObjects(None)
        return out

    async def prepare(self, group: FleetGroup, threads: dict[str, list[str]]) -> tuple[SystemRule | None, str | None]:
        """The group's system-level rule and the state of its Open PR button (``None`` when not offered); no rule
        at all when Argo CD cannot be read."""
        try:
            async with self.s.argocd() as argocd:
                known = await self.known_apps(argocd)
        except ArgoWhyError as e:
            log.warning("fleet check of %s skipped: %s", group.signature, e)
            return None, None
        rule = system_rule(group, known)
        if not rule.offered or self.s.git is None:
            return rule, None
        what = f"{group.path} of {group.group_kind} written by {group.writer}"
        state = SystemFixState(sig_id=group.sig_id, key=rule.key, rule=rule.value, what=what, apps=list(group.apps),
                               threads=threads, radius=list(rule.radius.fields))  # fmt: skip
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
            await self.s.outbox.post(job.channel, fix_notice(wording.SLACK_PR_REFUSED, app="argocd-cm", user=job.user),
                                     thread_ts=where)  # fmt: skip
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

    async def _open(self, job: FixJob, state: SystemFixState, approvers: list[str]) -> None:
        assert self.s.git is not None
        where = job.thread_ts or job.message_ts
        snippet = yaml.safe_dump({state.key: yaml.safe_dump(state.rule, sort_keys=False)}, sort_keys=False)
        async with self.s.argocd() as argocd, self.s.git() as git:
            found = await self.locate(argocd, git)
            if isinstance(found, str):
                await self._audit(job, state.fix_id, "no-pr", reason=found)
                await self.s.outbox.post(job.channel, paste_message("argocd-cm", found, snippet), thread_ts=where)
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
                await self.s.outbox.post(job.channel, paste_message("argocd-cm", reason, snippet), thread_ts=where)
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
        change = yaml.safe_dump({state.key: yaml.safe_dump(state.rule, sort_keys=False)}, sort_keys=False)
        message = pr_opened_message("argocd-cm", link, approvers=approvers, path=found.file.path,
                                    repo=str(found.repo), base=found.base, change=change.rstrip())  # fmt: skip
        await self.s.outbox.post(job.channel, message, thread_ts=where)

    async def _body(self, state: SystemFixState, approvers: list[str], found: CMFile) -> str:
        names = [await self.s.directory.name(u) for u in approvers]
        lines = [
            pr_wording.PR_SYSTEM_INTRO.format(count=len(state.apps), what=state.what, key=state.key),
            "",
            "```yaml",
            yaml.safe_dump({state.key: yaml.safe_dump(state.rule, sort_keys=False)}, sort_keys=False).rstrip(),
            "```",
            "",
            pr_wording.PR_SYSTEM_APPS,
        ]
        for app in state.apps:
            thread = state.threads.get(app)
            url = await self._permalink(thread[0], thread[1]) if thread and thread[1] else None
            lines.append(f"- [{app}]({url})" if url else "- " + pr_wording.PR_SYSTEM_NO_THREAD.format(app=app))
        lines += ["", pr_wording.PR_SYSTEM_RADIUS]
        lines += [f"- {f}" for f in state.radius] or [pr_wording.PR_SYSTEM_RADIUS_NONE.format(checked="all")]
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

    # --- where argocd-cm lives ------------------------------------------------------------------------------
    async def locate(self, argocd: ArgoCDClient, git: GitHost) -> CMFile | str:
        """The file holding argocd-cm, or why it was not found (a sentence)."""
        settings = self.s.settings.git
        provider = settings.provider or "github"
        if settings.argocd_cm_definition:
            try:
                repo, candidates = web_url_candidates(settings.argocd_cm_definition, provider, settings.api_url)
            except UnsupportedRepo as e:
                return str(e)
            for branch, path in candidates:
                try:
                    head = await git.branch_head(repo, branch)
                except GitHostError as e:
                    if e.kind == "not-found":
                        continue
                    raise
                file = await git.get_file(repo, path, head)
                form = _form(file.text)
                if form is None:
                    return wording.SLACK_CM_NOT_IN_FILE.format(path=path, repo=repo)
                return CMFile(repo, branch, head, file, form)
            return wording.SLACK_CM_NO_BRANCH.format(url=settings.argocd_cm_definition)
        return await self._self_managed(argocd, git, provider)

    async def _self_managed(self, argocd: ArgoCDClient, git: GitHost, provider: str) -> CMFile | str:
        apps = await argocd.applications()
        namespaces = {str((a.get("metadata") or {}).get("namespace") or "argocd") for a in apps} or {"argocd"}
        managing = [a for a in apps if ((a.get("spec") or {}).get("destination") or {}).get("namespace") in namespaces]
        if not managing:
            return wording.SLACK_CM_NO_APP.format(namespace=", ".join(sorted(namespaces)))
        app = managing[0]
        spec = app.get("spec") or {}
        sources = spec.get("sources") or [spec.get("source") or {}]
        for source in sources:
            try:
                repo = parse_repo_url(str(source.get("repoURL") or ""), provider, self.s.settings.git.api_url)
                raw = str(source.get("path") or "").strip().strip("/")
                base_path = "" if raw in ("", ".") else check_repo_path(raw, directory=True)
            except UnsupportedRepo:
                continue
            revision = str(source.get("targetRevision") or "HEAD")
            base = await git.default_branch(repo) if revision == "HEAD" else revision
            head = await git.branch_head(repo, base)
            helm = source.get("helm") if isinstance(source.get("helm"), dict) else None
            files = await git.list_files(repo, base_path, head, recursive=True)
            kind: Literal["helm", "dir"] = "helm" if helm is not None or any(
                f.rsplit("/", 1)[-1] == "Chart.yaml" for f in files) else "dir"  # fmt: skip
            if kind == "helm":
                wanted = [str(v) for v in (helm or {}).get("valueFiles") or []] or ["values.yaml"]
                candidates = [f"{base_path}/{v}".lstrip("/") for v in wanted if not v.startswith(("$", "/"))]
            else:
                candidates = sorted(f for f in files if f.endswith((".yaml", ".yml")))[:MAX_FILES]
            for path in candidates:
                if path not in files:
                    continue
                file = await git.get_file(repo, path, head)
                form = _form(file.text)
                if form == "configmap" or (form == "helm" and kind == "helm"):
                    return CMFile(repo, base, head, file, form)
        name = str((app.get("metadata") or {}).get("name") or "")
        return wording.SLACK_CM_NOT_FOUND.format(app=name)

    # --- the follow-up ----------------------------------------------------------------------------------
    async def merged(self, fix_id: str, record: dict[str, Any]) -> None:
        """Tell each covered app's thread that the system-level rule was merged (once each)."""
        pr = PRLink(int(record["number"]), str(record["url"]), str(record.get("by") or ""))
        threads = record.get("threads") or {}
        for app, place in sorted(threads.items()):
            if not (isinstance(place, list) and len(place) == 2 and place[1]):
                continue
            message = fix_notice(wording.SLACK_SYSTEM_MERGED, app=app, pr=pr, icon=wording.SLACK_ICON_SYNCED,
                                 key=str(record.get("key") or ""))  # fmt: skip
            await self.s.outbox.post(str(place[0]), message, thread_ts=str(place[1]),
                                     key=f"system-merged:{fix_id}:{pr.number}:{app}")  # fmt: skip


def rule_text_of(state: SystemFixState) -> str:
    return "; ".join(f"{k}: {v}" for k, v in state.rule.items())
