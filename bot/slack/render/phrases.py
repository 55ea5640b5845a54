"""How the messages name things in mrkdwn: the app (linked to Argo CD), a resource, a finding's one-line
verdict, the counts of a Report, the notes. Shared by the parent, the thread, the diff and the digest.

What it guarantees: every piece of user data goes through :mod:`bot.slack.render.escaping`, so a phrase can
be put in any mrkdwn text; the writer of a verdict never names Argo CD's own managers
(:data:`bot.analysis.managedfields.ARGOCD_MANAGERS`) nor, for a mutating webhook, the requester. The
``*_plain`` functions give the same facts as plain text for the messages' fallback ``text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from bot.analysis.managedfields import ARGOCD_MANAGERS
from bot.model import Finding, Report
from bot.slack.render.escaping import NAME_LIMIT, clip, code, escape, fill
from bot.slack.render.inputs import Alert
from bot.wording import slack as wording
from bot.wording.report import cause_title, plural

POINTER_LIMIT = 200
NOTE_LIMIT = 500


def app_md(alert: Alert) -> str:
    """The app's name in bold, linked to Argo CD when its URL is known."""
    name = escape(clip(alert.app, NAME_LIMIT))
    if not alert.argocd_url:
        return f"*{name}*"
    path = "/".join(quote(p, safe="") for p in (alert.app_namespace, alert.app) if p)
    url = f"{alert.argocd_url.rstrip('/')}/applications/{path}"
    return f"*<{escape(url).replace('|', '%7C')}|{name}>*"


def resource_name(f: Finding) -> str:
    """``namespace/name`` of the finding's resource (``name`` for a cluster-scoped one), plain text."""
    r = f.resource
    return f"{r.namespace}/{r.name}" if r.namespace else r.name


def kind_md(kind: str) -> str:
    """A kind, clipped and escaped."""
    return escape(clip(kind, 80))


def resource_md(f: Finding) -> str:
    """The finding's resource as "Kind `namespace/name`"."""
    return f"{kind_md(f.resource.kind)} {code(resource_name(f))}"


def _who(f: Finding) -> str | None:
    """The writer for a verdict: the object it acts for, and the manager unless that is Argo CD or the requester."""
    w = f.writer
    manager = w.manager if w.manager and w.manager not in ARGOCD_MANAGERS and f.cause != "mutating-webhook" else None
    if w.object is not None:
        name = f"{w.object.namespace}/{w.object.name}" if w.object.namespace else w.object.name
        who = f"{kind_md(w.object.kind)} {code(name)}"
        if manager and w.subresource:
            detail = wording.SLACK_WHO_DETAIL.format(manager=manager, subresource=w.subresource)
        elif manager:
            detail = wording.SLACK_WHO_MANAGER.format(manager=manager)
        else:
            return who
        return f"{who} {escape(clip(detail, NAME_LIMIT))}"
    if manager:
        via = f" {escape(wording.SLACK_WHO_VIA.format(subresource=w.subresource))}" if w.subresource else ""
        return code(manager) + via
    return None


def verdict(f: Finding) -> str:
    """One line: "`/spec/replicas` of Deployment `shop/web` is rewritten by HorizontalPodAutoscaler `shop/web` …"."""
    predicates = wording.SLACK_PREDICATES_ADDED if f.desired is None else {}
    with_who, without = predicates.get(f.cause) or wording.SLACK_PREDICATES.get(
        f.cause, wording.SLACK_PREDICATES["unknown"]
    )
    who = _who(f)
    predicate = fill(with_who, who=who) if who is not None and "{who}" in with_who else escape(without)
    return fill(
        wording.SLACK_VERDICT, field=code(f.field_name, POINTER_LIMIT), resource=resource_md(f), predicate=predicate
    )


def verdict_plain(f: Finding) -> str:
    """The finding in plain text: pointer, resource and the cause's title."""
    title = cause_title(f.cause, added=f.desired is None)
    return f"{clip(f.field_name, 80)} of {f.resource.kind} {clip(resource_name(f), 80)}: {title}"


def report_counts(report: Report) -> dict[str, str]:
    """The "N differences" and "N resources" of the Report's findings, plain text for the templates: those Argo
    CD's own diff shows (what makes the app OutOfSync), the others counted apart in ``hidden``."""
    shown = [f for f in report.findings if f.shown_by_argocd]
    hidden = len(report.findings) - len(shown)
    counted = shown or report.findings
    if not hidden:
        rest = ""
    elif shown:
        rest = wording.SLACK_HIDDEN_SOME.format(count=hidden)
    else:
        rest = wording.SLACK_HIDDEN_ALL
    return {
        "differences": plural(wording.SLACK_DIFFERENCES, len(counted)),
        "resources": plural(wording.SLACK_RESOURCES, len({f.resource for f in counted})),
        "hidden": rest,
    }


def note_texts(notes: Sequence[str]) -> list[str]:
    """The Report's notes, each clipped and escaped."""
    return [escape(clip(n, NOTE_LIMIT)) for n in notes]
