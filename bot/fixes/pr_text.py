"""The title and body of a pull request (GitHub) or merge request (GitLab). Pure: a Proposal in, Markdown out.

What the body guarantees (README, "Fixes from chat: Open PR", step 4 "The PR"): the change itself (file, repository,
base branch, the YAML added or the field removed), then for every finding the evidence and the four things a reviewer
must see -- which controller changes the field, why it is the intended owner, why ignoring it is safe, and what real
drift is still detected (the rule's blast radius) -- and a link back to the Slack thread. An ApplicationSet edit says
that every generated Application gets the rule. Values are the Report's (Secret values already masked); no token or URL
credential is ever passed in. All sentences come from :mod:`bot.wording.pr`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from bot.analysis.managedfields import ARGOCD_MANAGERS
from bot.fixes.proposal import Proposal
from bot.model import Finding
from bot.wording import pr as wording

TITLE_LIMIT = 250  # GitHub refuses titles over 256 characters
WRITERS_SHOWN = 2
_WIDE_LEAVES = ("image", "command", "args")
_WIDE_SECTIONS = ("/spec", "/spec/template", "/spec/template/spec", "/data", "/stringData", "/metadata")


@dataclass(frozen=True)
class Target:
    """Where the change goes: the file, its repository as people name it, the base branch and the YAML path."""

    repo: str
    path: str
    base: str
    where: str = "spec"
    """``spec`` for an Application, ``spec.template.spec`` for an ApplicationSet."""
    applicationset: str | None = None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def writer_name(f: Finding) -> str:
    """Who changes the field, for a person: the object that acts (HPA, webhook configuration), the manager, or the
    API server for defaulting and normalization (Argo CD's own manager is only the requester there)."""
    if f.cause in ("api-defaulting", "normalization"):
        return wording.PR_API_SERVER
    if f.writer.object is not None:
        return f.writer.object.label
    if f.cause == "mutating-webhook" or f.writer.manager in ARGOCD_MANAGERS or f.writer.manager is None:
        return wording.PR_A_WEBHOOK if f.cause == "mutating-webhook" else wording.PR_NOBODY
    return f.writer.manager


def _writers(findings: Sequence[Finding]) -> str:
    names = list(dict.fromkeys(writer_name(f) for f in findings))
    shown = ", ".join(names[:WRITERS_SHOWN])
    rest = len(names) - WRITERS_SHOWN
    return wording.PR_WRITERS_MORE.format(writers=shown, count=rest) if rest > 0 else shown


def pr_title(p: Proposal) -> str:
    """``argo-why: ignore <field> of <Kind>/<name> rewritten by <writer>``, or the number of fields."""
    titles = {"ignore": (wording.PR_TITLE_ONE, wording.PR_TITLE_MANY),
              "source": (wording.PR_TITLE_SOURCE_ONE, wording.PR_TITLE_SOURCE_MANY),
              "commit": (wording.PR_TITLE_COMMIT_ONE, wording.PR_TITLE_COMMIT_MANY)}[p.kind]  # fmt: skip
    if len(p.findings) == 1:
        f = p.findings[0]
        template = titles[0]
        title = template.format(field=f.pointer, kind=f.resource.kind, name=f.resource.name, writer=writer_name(f))
    else:
        template = titles[1]
        title = template.format(count=len(p.findings), app=p.app, writers=_writers(p.findings))
    return _clip(" ".join(title.split()), TITLE_LIMIT)


def _yaml(value: object) -> str:
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)


def _fence(text: str, lang: str = "yaml") -> str:
    fence = "```"
    while fence in text:  # a value with a fence of its own cannot close ours
        fence += "`"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _inline(value: object, limit: int = 120) -> str:
    if value is None:
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return _clip(" ".join(text.split()), limit).replace("`", "'")


def _which(f: Finding) -> str:
    w = f.writer
    if w.manager is None:
        managed = wording.PR_WHICH_NOBODY
    else:
        sub = wording.PR_WHICH_SUBRESOURCE.format(subresource=w.subresource) if w.subresource else ""
        managed = wording.PR_WHICH_MANAGED.format(manager=w.manager, operation=w.operation or "?", subresource=sub,
                                                  time=w.time or "an unknown time")  # fmt: skip
    return wording.PR_WHICH.format(writer=f"{writer_name(f)} ({managed})")


def wide_fields(f: Finding) -> list[str]:
    """What the rule hides that Git keeps changing over time: images, commands, args, whole sections."""
    return [h for h in f.fix.hides if h.rsplit("/", 1)[-1] in _WIDE_LEAVES or h in _WIDE_SECTIONS]


def _finding(number: int, f: Finding, p: Proposal) -> str:
    r = f.resource
    name = f"{r.namespace}/{r.name}" if r.namespace else r.name
    fallback = p.kind == "ignore" and f.fix.fallback
    lines = [wording.PR_FINDING_TITLE.format(number=number, field=f.pointer, kind=r.kind, name=name,
                                             fallback=wording.PR_FALLBACK_TITLE if fallback else ""), ""]  # fmt: skip
    if fallback:
        lines += [wording.PR_FALLBACK_WHY, ""]
    if f.explanation:
        lines += [f.explanation, ""]
    bullets = [_which(f)]
    owner = wording.PR_OWNER_REASONS.get(f.cause, wording.PR_OWNER_REASONS["operator"])
    bullets.append(wording.PR_OWNER.format(reason=owner.format(writer=writer_name(f))))
    if p.kind == "ignore":
        safe = wording.PR_SAFE_REASONS.get(f.cause, wording.PR_SAFE_REASONS["operator"])
        bullets.append(wording.PR_SAFE.format(reason=safe, confidence=f.confidence))
        hides = ", ".join(f"`{h}`" for h in (f.fix.hides or [f.pointer]))
        group = wording.PR_GROUP.format(group=r.group) if r.group else ""
        bullets.append(wording.PR_STILL_DETECTED.format(kind=r.kind, name=name, group=group, hides=hides))
        wide = wide_fields(f)
        if wide:
            bullets.append(wording.PR_WIDE.format(fields=", ".join(f"`{w}`" for w in wide), kind=r.kind, name=name))
    elif p.kind == "commit":
        bullets += [wording.PR_SAFE_COMMIT, wording.PR_STILL_DETECTED_COMMIT.format(field=f.pointer)]
    else:
        bullets += [wording.PR_SAFE_SOURCE, wording.PR_STILL_DETECTED_SOURCE.format(field=f.pointer)]
    bullets.append(wording.PR_VALUES.format(desired=_inline(f.desired), live=_inline(f.live)))
    lines += [f"- {b}" for b in bullets]
    if f.evidence:
        lines += ["", wording.PR_EVIDENCE, *(f"  - {_clip(e, 400)}" for e in f.evidence[:8])]
    if f.fix.alternative and p.kind == "ignore":
        lines += ["", wording.PR_BETTER.format(alternative=f.fix.alternative)]
    return "\n".join(lines)


def _fallbacks(p: Proposal) -> str:
    """Which rules are only fallbacks (normalization, defaulting) and the fix in Git for each, or ""."""
    chosen = [f for f in p.findings if f.fix.fallback]
    if not chosen:
        return ""
    items = []
    for f in chosen:
        r = f.resource
        name = f"{r.namespace}/{r.name}" if r.namespace else r.name
        alternative = f.fix.alternative or wording.PR_FALLBACK_WHY
        items.append(wording.PR_FALLBACK_ITEM.format(field=f.pointer, kind=r.kind, name=name, cause=f.cause,
                                                     alternative=alternative))  # fmt: skip
    return "\n".join([wording.PR_FALLBACKS, *items])


def change_yaml(p: Proposal) -> tuple[str, str]:
    """The ``ignoreDifferences`` entries and the sync options this proposal adds, as YAML (either may be "")."""
    rules = _yaml(list(p.rules)) if p.rules else ""
    options = _yaml(list(p.sync_options)) if p.sync_options else ""
    return rules, options


Approver = tuple[str, str | None]
"""A Slack user ID and the name Slack gave for it (``None`` when it could not be read)."""


def approver_text(user: str, name: str | None) -> str:
    """``Alice Liddell (`<@U0ALICE>` in Slack)``: never ``@name``, which the Git host would read as a mention."""
    clean = " ".join((name or "").replace("`", "'").split()).lstrip("@")
    if clean:
        return wording.PR_APPROVER_NAMED.format(name=clean, user=user)
    return wording.PR_APPROVER_ID.format(user=user)


def pr_body(p: Proposal, target: Target, *, approvers: Sequence[Approver], thread_url: str | None) -> str:
    """The Markdown body: intro, approval, the change, then one section per finding, and the footer."""
    fields = f"`{p.findings[0].pointer}`" if len(p.findings) == 1 else f"{len(p.findings)} fields"
    intro = {"ignore": wording.PR_INTRO_IGNORE, "source": wording.PR_INTRO_SOURCE,
             "commit": wording.PR_INTRO_COMMIT}[p.kind]  # fmt: skip
    parts = [intro.format(app=p.app, fields=fields)]
    if target.applicationset:
        parts.append(wording.PR_APPLICATIONSET.format(appset=target.applicationset))
    named = ", ".join(approver_text(user, name) for user, name in approvers)
    approval = [wording.PR_APPROVED.format(approvers=named)] if approvers else []
    if thread_url:
        approval.append(wording.PR_THREAD.format(url=thread_url))
    if approval:
        parts.append(" ".join(approval))
    change = [wording.PR_CHANGE_TITLE, wording.PR_CHANGE_FILE.format(path=target.path, repo=target.repo,
                                                                     base=target.base)]  # fmt: skip
    if p.kind == "ignore":
        rules, options = change_yaml(p)
        change += [wording.PR_CHANGE_IGNORE.format(where=target.where), _fence(rules)]
        if options:
            change += [wording.PR_CHANGE_SYNC.format(where=target.where), _fence(options)]
        fallbacks = _fallbacks(p)
        if fallbacks:
            change.append(fallbacks)
    else:
        for f in p.findings:
            resource = f"{f.resource.kind} `{f.resource.name}`"
            if p.kind == "commit":
                values = {"desired": _inline(f.desired), "live": _inline(f.live)}
                change.append(wording.PR_CHANGE_COMMIT.format(resource=resource, field=f.pointer, **values))
            else:
                change.append(wording.PR_CHANGE_SOURCE.format(resource=resource, field=f.pointer))
    parts.append("\n\n".join(change))
    findings = [wording.PR_FINDINGS_TITLE, *(_finding(i, f, p) for i, f in enumerate(p.findings, 1))]
    parts.append("\n\n".join(findings))
    parts.append(f"---\n<sub>{wording.PR_FOOTER}</sub>")
    return "\n\n".join(parts) + "\n"
