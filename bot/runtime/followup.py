"""The follow-up of the pull requests argo-why opened (a scheduled job, on one replica at a time).

For every PR the store remembers (``<p>prs``, written when the PR was opened), one Git host read:

* still open: nothing;
* merged, and the Application is Synced again (one Argo CD read): the thread says so, the parent turns green, the
  PR is forgotten;
* merged, the app not Synced yet: the thread says "merged, waiting for the sync" once, and the job looks again at
  its next run;
* a system-level rule (argocd-cm) merged (:meth:`PRFollowUp._system`): one list of the applications per run; each
  covered app Synced again has its thread told so and its parent turned green, the others are told once that the
  rule was merged and are looked at again at the next run (the record keeps them, ``waiting``): Argo CD's
  notifications send nothing when an app is Synced again, and argocd-cm reaches the cluster, and Argo CD compares
  the apps again, only after the merge. The PR is forgotten once no covered app is waiting (an app Argo CD no
  longer lists is not waited for);
* closed without merging: the thread says so, the Open PR button comes back where the PR's link replaced it, and
  the PR is forgotten (the approvals start again from zero).

A PR whose repository or Argo CD cannot be read this time is left for the next run. Every outcome is appended to
``argo-why:audit``. Reads only, apart from Slack messages; each is said once (an outbox key per PR and outcome),
and the parent turns green under the app's lock, as alerts do.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.errors import ArgoWhyError
from bot.fixes.approvals import audit_record
from bot.intake.jobs import app_key
from bot.model import Alert
from bot.runtime.fixflow import FixFlow
from bot.runtime.services import Services
from bot.runtime.systemfix import SystemFix
from bot.runtime.weekly import WeeklyReport
from bot.slack.render.fixes import PRLink, fix_notice
from bot.sources.applist import BRIEF
from bot.sources.git import GitHost, GitHostError, RepoRef
from bot.store.state import ReportState
from bot.wording import slack as wording

log = logging.getLogger("argo_why.followup")

TurnGreen = Callable[[str, Alert], Awaitable[None]]
"""Turn the parent of an app (its key) green, under the app's lock."""


class PRFollowUp:
    def __init__(self, services: Services, fixes: FixFlow, turn_green: TurnGreen) -> None:
        self.s = services
        self.fixes = fixes
        self.turn_green = turn_green

    async def run(self) -> int:
        """Look at every remembered PR once; how many were settled (merged and synced, or closed)."""
        if self.s.git is None:
            return 0
        records = await self.s.store.list_prs()
        if not records:
            return 0
        settled = 0
        async with self.s.git() as git:
            for fix_id, record in records.items():
                try:
                    settled += await self._one(git, fix_id, record)
                except (GitHostError, ArgoWhyError) as e:
                    log.warning("PR %s of %s not followed up this time: %s", record.get("number"), fix_id, e)
        return settled

    async def _say(self, fix_id: str, record: dict[str, Any], template: str, icon: str = "") -> None:
        """Say it in the fix's thread, once: a run that dies before it forgets the PR says it again otherwise."""
        pr = PRLink(int(record["number"]), str(record["url"]), str(record.get("by") or ""))
        message = fix_notice(template, app=str(record.get("app") or ""), icon=icon, pr=pr)
        key = f"follow-up:{fix_id}:{pr.number}:{hashlib.sha256(template.encode()).hexdigest()[:8]}"
        await self.s.outbox.post(str(record["channel"]), message, thread_ts=str(record["thread_ts"]), key=key)

    async def _audit(self, fix_id: str, record: dict[str, Any], decision: str) -> None:
        await self.s.store.append_audit(audit_record(user="argo-why", action="follow-up", decision=decision,
                                                     app=str(record.get("app_key") or ""), fix_id=fix_id,
                                                     at=time.time(), pr=str(record.get("number"))))  # fmt: skip

    async def _one(self, git: GitHost, fix_id: str, record: dict[str, Any]) -> int:
        repo = RepoRef(record["provider"], str(record["host"]), str(record["repo"]))
        pr = await git.get_pr(repo, int(record["number"]))
        if pr.state == "open":
            return 0
        if pr.state == "closed":
            for origin in record.get("origins") or []:  # the buttons first: the message says they are back
                if isinstance(origin, dict) and origin.get("button"):
                    await self.fixes.replace_button(str(origin["channel"]), str(origin["ts"]),
                                                    str(origin["block_id"]), origin["button"])  # fmt: skip
            await self._say(fix_id, record, wording.SLACK_PR_CLOSED)
            await self.s.store.forget_pr(fix_id)
            await self._audit(fix_id, record, "closed")
            return 1
        if record.get("kind") == "system":
            return await self._system(fix_id, record)
        app, ns = str(record["app"]), record.get("app_namespace")
        async with self.s.argocd() as argocd:
            application = await argocd.application(app, ns)
        if ((application.get("status") or {}).get("sync") or {}).get("status") != "Synced":
            if not record.get("merged_said"):
                await self._say(fix_id, record, wording.SLACK_PR_MERGED_WAITING)
                await self.s.store.save_pr(fix_id, {**record, "merged_said": True})
                await self._audit(fix_id, record, "merged")
            return 0
        await self._say(fix_id, record, wording.SLACK_PR_MERGED, wording.SLACK_ICON_SYNCED)
        await self._green(str(record.get("app_key") or app), app, ns)
        await WeeklyReport(self.s).record_merged(record, 1)
        await self.s.store.forget_pr(fix_id)
        await self._audit(fix_id, record, "merged and synced")
        return 1

    async def _green(self, key: str, app: str, ns: str | None) -> None:
        ref = await self.s.store.get_thread(key)
        state = await ReportState.load(self.s.store, ref.report_state) if ref is not None and ref.report_state else None
        await self.turn_green(key, state.alert if state is not None else Alert(app=app, app_namespace=ns))

    async def _system(self, fix_id: str, record: dict[str, Any]) -> int:
        """A merged system-level rule: each covered app still waiting is told once it is Synced again (see the
        module docstring); 1 once none is waiting."""
        first = record.get("waiting") is None  # the merge seen for the first time
        waiting = sorted(record.get("threads") or {}) if first else [str(k) for k in record.get("waiting") or []]
        async with self.s.argocd() as argocd:
            apps = await argocd.applications(keep=BRIEF)  # names, namespaces and sync status are all it reads
        listed = {app_key(str(a["metadata"]["name"]), a["metadata"].get("namespace")): a
                  for a in apps if (a.get("metadata") or {}).get("name")}  # fmt: skip
        system = SystemFix(self.s, self.fixes, self.fixes.owner)
        still: list[str] = []
        for key in waiting:
            application = listed.get(key)
            if application is None:  # deleted, or no longer readable: nothing to wait for
                continue
            if ((application.get("status") or {}).get("sync") or {}).get("status") != "Synced":
                still.append(key)
                if first:
                    await system.merged(fix_id, record, key, synced=False)
                continue
            await system.merged(fix_id, record, key, synced=True)
            meta = application["metadata"]
            await self._green(key, str(meta["name"]), meta.get("namespace"))
        if first:
            await WeeklyReport(self.s).record_merged(record, len(record.get("threads") or {}))
            await self._audit(fix_id, record, "merged")
        if still:
            if still != waiting or first:
                await self.s.store.save_pr(fix_id, {**record, "waiting": still})
            return 0
        await self.s.store.forget_pr(fix_id)
        await self._audit(fix_id, record, "merged and synced")
        return 1
