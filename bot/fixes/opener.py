"""Open the pull request of a fix: edit the definition, push one branch, open (or link) one PR.

The only writes argo-why ever makes are here, and they are three: a branch ``argo-why/APP/HASH`` created from the
base branch's current head, one commit on it, and one pull request (GitLab: merge request). Never a push to the
base branch, never a merge, nothing to Argo CD or the cluster. Guarantees:

* the same fix is the same branch, so an open PR for it is linked instead of a second one (double clicks, Slack
  retries and two replicas are also serialised by the caller's lock; this is the second line of defence);
* the edit is the round-trip editor's (:mod:`bot.fixes.edit`, :mod:`bot.fixes.setfield`): lines are added (or,
  for a source fix, the field's own line removed; for a commit of the live value, that value's line changed) and
  nothing else changes; what it cannot edit safely is never half-edited but
  answered with :class:`Paste` (the reason and the YAML to paste by hand);
* a rule already in the file is :class:`AlreadyPresent`: no branch, no PR;
* a Git host error reaches the caller as :class:`bot.sources.git.GitHostError` with a sentence to show.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.fixes.edit import EditResult, add_ignore_rules, drop_field, rules_yaml
from bot.fixes.locate import Definition
from bot.fixes.proposal import Proposal
from bot.fixes.setfield import set_field
from bot.sources.git import GitHost, GitHostError, PullRequest
from bot.wording import pr as wording


@dataclass(frozen=True)
class Opened:
    pr: PullRequest
    existing: bool
    """``True``: the PR for this fix was already open; it is linked, not opened again."""
    diff: str = ""


@dataclass(frozen=True)
class AlreadyPresent:
    pass


@dataclass(frozen=True)
class Paste:
    reason: str
    snippet: str
    """The YAML to paste by hand ("" for a source fix: there is nothing to paste)."""


Outcome = Opened | AlreadyPresent | Paste


def paste_snippet(p: Proposal) -> str:
    return rules_yaml(list(p.rules), list(p.sync_options)) if p.kind == "ignore" else ""


def edit(p: Proposal, d: Definition, text: str) -> EditResult:
    """The definition's file with the proposal applied (pure)."""
    if p.kind == "ignore":
        return add_ignore_rules(text, app_name=d.name, app_namespace=d.namespace, rules=list(p.rules),
                                sync_options=list(p.sync_options), applicationset=d.applicationset is not None,
                                path=d.file.path)  # fmt: skip
    result = EditResult("already-present")
    for f in p.findings:
        r = f.resource
        if p.kind == "commit":
            assert isinstance(f.live, str | int | float | bool)  # commit_fixable chose it
            step = set_field(text, kind=r.kind, name=r.name, namespace=r.namespace or None, pointer=f.pointer,
                             git=f.desired, live=f.live, path=d.file.path)  # fmt: skip
        else:
            step = drop_field(text, kind=r.kind, name=r.name, namespace=r.namespace or None, pointer=f.pointer,
                              path=d.file.path)  # fmt: skip
        if step.status == "refused":
            return step
        if step.status == "changed" and step.text is not None:
            text = step.text
            result = EditResult("changed", text=text, diff=result.diff + step.diff,
                                removed=(*result.removed, *step.removed))  # fmt: skip
    return result


async def open_fix(p: Proposal, d: Definition, git: GitHost, *, title: str, body: str) -> Outcome:
    """Link the fix's open PR, or edit, branch, commit and open it (see the module docstring)."""
    existing = await git.find_open_pr(d.repo, p.branch)
    if existing is not None:
        return Opened(existing, existing=True)
    result = edit(p, d, d.file.text)
    if result.status == "refused" or result.text is None:
        if result.status == "already-present":
            return AlreadyPresent()
        return Paste(result.reason or wording.PR_CANNOT_EDIT, paste_snippet(p))
    on_branch = d.file
    try:
        await git.create_branch(d.repo, p.branch, d.head)
    except GitHostError as e:
        if e.kind != "branch-exists":
            raise
        # left by an earlier attempt or a closed PR: put the edit of the base's file on top of it
        on_branch = await git.get_file(d.repo, d.file.path, p.branch)
    if on_branch.text != result.text:
        await git.commit_file(d.repo, p.branch, d.file.path, result.text, title, on_branch.version)
    pr = await git.open_pr(d.repo, p.branch, d.base, title, body)
    return Opened(pr, existing=False, diff=result.diff)
