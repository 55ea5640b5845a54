"""The wording of the report itself, shared by every output: the text report, Slack, pull requests (and the page).

The titles of the causes, the better fixes and what not to do, the one-sentence explanation of a finding, the
reasons and evidence of the analysis (:mod:`bot.analysis`, which may import this module and no other of
:mod:`bot.wording`), and the notes of a report. Nothing here may interpolate a field value that could belong to a
Secret: callers pass values through :func:`bot.analysis.masking.mask` first.
"""

from __future__ import annotations

import json
from typing import Any


def plural(forms: tuple[str, str], count: int) -> str:
    """The singular or the plural form of a pair below, filled with ``count``: output never says "field(s)"."""
    return forms[0 if count == 1 else 1].format(count=count)


RESOURCES = ("{count} resource", "{count} resources")
DIFFERENCES = ("{count} difference", "{count} differences")
DESIRED_OBJECTS = ("{count} desired object", "{count} desired objects")
FIELDS = ("{count} field", "{count} fields")
SELF_HEAL_ATTEMPTS = ("{count} self-heal attempt", "{count} self-heal attempts")
SYNCS = ("{count} sync", "{count} syncs")


CAUSE_TITLES: dict[str, str] = {
    "autoscaler": "rewritten by an autoscaler",
    "operator": "rewritten by a controller",
    "mutating-webhook": "changed by a mutating admission webhook",
    "api-defaulting": "filled in by API defaulting",
    "normalization": "the same value in another form",
    "nondeterministic-render": "the manifest changes on every render",
    "shared-resource": "also applied by another Application",
    "other-gitops": "also applied by another GitOps tool",
    "manual-edit": "changed by hand",
    "unknown": "cause not shown by the inputs",
    "not-synced": "Git is ahead: not synced yet",
}

ADDED_TITLES: dict[str, str] = {
    # a field Git does not set (a list item, a key) that someone put there: "added", never "rewritten"
    "autoscaler": "added by an autoscaler",
    "operator": "added by a controller",
    "mutating-webhook": "added by a mutating admission webhook",
    "manual-edit": "added by hand",
}


def cause_title(cause: str, added: bool = False) -> str:
    """The title of a finding's cause; ``added``: the field is absent in Git (a toleration a controller appended),
    so it was added, not rewritten."""
    return (ADDED_TITLES.get(cause) if added else None) or CAUSE_TITLES.get(cause, cause)


ALTERNATIVES: dict[str, str] = {
    "autoscaler": "Remove spec.replicas from the manifest so that the autoscaler is its only owner "
    "(keep the ignore rule only while the field must stay in Git).",
    "operator": "Render what the controller writes, or leave the field out of Git so that the controller is "
    "its only owner.",
    "mutating-webhook": "Enable ServerSideDiff=true (the dry-run includes the webhook's change), or write the "
    "mutated value in Git.",
    "api-defaulting": "Write the defaulted value in Git, or enable ServerSideDiff=true so that defaults are part "
    "of the predicted state; an ignore rule is only a fallback.",
    "normalization": "Write the canonical form in Git; ServerSideDiff=true also compares after the API server's "
    "normalisation. An ignore rule is only a fallback.",
    "nondeterministic-render": "Pin the value in the chart's values (or an existing Secret/lookup-free template) "
    "so that every render is the same; never ignore it.",
    "shared-resource": "Give the object one owning Application: remove it from the other app's source, or "
    "mark the copy with argocd.argoproj.io/sync-options: Prune=false and stop rendering it.",
    "other-gitops": "Let one tool own the object: suspend or remove the other tool's Kustomization/HelmRelease "
    "for it, or move the object out of the Argo CD app.",
    "manual-edit": "First decide which value is right: if the live one is (a hotfix, say), commit it to Git; if "
    "Git's is, sync, which puts Git's value back and undoes the hand-made change.",
    "unknown": "Look at the Application's history and events; re-run with --desired-again, the cluster context "
    "and managedFields (kubectl get --show-managed-fields) for a better answer.",
    "not-synced": "Sync the app: the live value is what Argo CD applied at its last sync, and Git has changed since. "
    "If the sync does not run by itself, find out why: auto-sync is off, a sync window blocks it, or the last sync "
    "failed or was partial (the app's last operation says which).",
}

_NO_RESYNC = "Do not re-sync again and again: {who} puts its value back after every sync."
_NO_SELFHEAL = "Do not turn on selfHeal before the rule or the source fix is in: Argo CD and {who} would fight."
_NO_HAND_EDIT = "Do not edit the live object by hand: the change is invisible in Git and will be overwritten."
_NO_OTHER_WRITER = "Do not look for another writer: {who}, and nothing else writes this field."
THE_API_SERVER = "the API server"
"""Who stores a value in its own form or fills in a default, unless the finding names someone else (a custom
resource's own webhook or conversion: for custom resources the API server stores what it is given)."""
AVOID: dict[str, tuple[str, ...]] = {
    # What not to do, per cause; never the fix itself (for a manual edit, re-syncing is the fix).
    "autoscaler": (
        _NO_RESYNC.format(who="the autoscaler"),
        _NO_SELFHEAL.format(who="the autoscaler"),
        "Do not pin the replica count by hand (kubectl scale): the autoscaler owns it.",
    ),
    "operator": (_NO_RESYNC.format(who="the controller"), _NO_SELFHEAL.format(who="the controller"), _NO_HAND_EDIT),
    "mutating-webhook": (
        "Do not re-sync again and again: the webhook changes the value again on every update.",
        _NO_SELFHEAL.format(who="the webhook"),
        _NO_HAND_EDIT,
    ),
    "api-defaulting": (
        _NO_OTHER_WRITER.format(who="{who} fills in the default"),
        "Do not keep the fallback rule once Git writes the default (or ServerSideDiff is on): it only hides noise.",
    ),
    "normalization": (
        _NO_OTHER_WRITER.format(who="{who} stores the same value in its own form"),
        "Do not expect a sync to settle it: {who} normalises the value again every time.",
    ),
    "nondeterministic-render": (
        "Do not ignore the field: a value that changes on every render would change silently on every sync.",
        "Do not expect a sync to settle it: the next render differs again.",
    ),
    "shared-resource": (
        "Do not ignore the difference: two Applications would keep overwriting each other unseen.",
        "Do not delete the object from one app before the other is its only owner (Prune=false on the copy).",
    ),
    "other-gitops": (
        "Do not ignore the difference: two GitOps tools would keep overwriting each other unseen.",
        _NO_SELFHEAL.format(who="the other tool"),
    ),
    "manual-edit": (
        "Do not add an ignore rule: it would hide the hand-made change, and every later one there.",
        "Do not edit the live object again to 'fix' it: sync from Git, or commit the value to Git.",
    ),
    "unknown": (
        "Do not add an ignore rule until the writer is known: it could hide a real change.",
        "Do not turn on selfHeal until the cause is understood: it could turn this into a write loop.",
    ),
    "not-synced": (
        "Do not add an ignore rule: it would keep this Git change, and every later one to the field, from syncing.",
        "Do not look for a writer in the cluster: nothing rewrote the value, Argo CD applied it from an older "
        "revision.",
    ),
}
"""What not to do, per cause (``{who}``: :data:`THE_API_SERVER` or whoever the finding names). Said under each
finding, never merged across findings: advice belongs to its finding (:func:`avoid_for`)."""

SELF_HEAL_ON: dict[str, str] = {
    _NO_SELFHEAL.format(who=who): "Do not leave selfHeal on before the rule or the source fix is in: it is on, so "
    f"Argo CD and {who} undo each other on every reconcile."
    for who in ("the autoscaler", "the controller", "the webhook", "the other tool")
} | {
    AVOID["unknown"][1]: "Do not leave selfHeal on until the cause is understood: it is on, so if something else "
    "writes this field, Argo CD and it undo each other on every reconcile.",
}
"""The selfHeal lines when the Application already has selfHeal on (README, "How the analysis decides")."""

AVOID_ALLOCATED = (
    "Do not write the allocated value into Git: it belongs to this object in this cluster, and another cluster (or "
    "the object re-created) gets another one.",
    "Do not keep the fallback rule once the empty field is gone from Git: it only hides noise.",
)
"""What not to do about an allocated field (a Service's clusterIP or nodePort, a claim's volumeName) Git leaves
empty: replaces the cause's lines about writing the default."""

_FORBIDS: dict[str, frozenset[str]] = {
    # what a line forbids, of what a fix can recommend: "rule" (an ignore rule), "sync" (syncing to revert),
    # "write" (writing a value into Git)
    AVOID["manual-edit"][0]: frozenset({"rule"}),
    AVOID["unknown"][0]: frozenset({"rule"}),
    AVOID["not-synced"][0]: frozenset({"rule"}),
    AVOID["nondeterministic-render"][0]: frozenset({"rule"}),
    AVOID["nondeterministic-render"][1]: frozenset({"sync"}),
    AVOID["shared-resource"][0]: frozenset({"rule"}),
    AVOID["other-gitops"][0]: frozenset({"rule"}),
    AVOID["normalization"][1]: frozenset({"sync"}),
    AVOID["mutating-webhook"][0]: frozenset({"sync"}),
    AVOID_ALLOCATED[0]: frozenset({"write"}),
    **{AVOID[c][0]: frozenset({"sync"}) for c in ("autoscaler", "operator")},
}


def recommends(rule: bool, action: str, writes_git: bool) -> frozenset[str]:
    """What a fix asks for, in :data:`_FORBIDS`' terms."""
    return (
        frozenset({"rule"} if rule else set())
        | ({"sync"} if action in ("revert", "sync") else set())
        | ({"write"} if writes_git else set())
    )


def forbids(line: str) -> frozenset[str]:
    return _FORBIDS.get(line, frozenset())


def avoid_for(
    cause: str,
    *,
    rule: bool,
    action: str,
    who: str | None = None,
    allocated: bool = False,
    writes_git: bool = False,
    self_heal: bool = False,
) -> list[str]:
    """What not to do about one finding: its cause's lines, about ``who`` (the API server unless named), the
    allocated-field lines instead of those about writing a default, and never a line against this finding's own fix
    (``rule``: it proposes an ignore rule; ``action``; ``writes_git``: its better fix writes a value into Git).
    ``self_heal``: the Application already has selfHeal on, so "do not turn it on" becomes what it does now."""
    lines = list(AVOID.get(cause, ()))
    if self_heal:
        lines = [SELF_HEAL_ON.get(line, line) for line in lines]
    if allocated:
        lines = [line for line in lines if "Git writes the default" not in line] + list(AVOID_ALLOCATED)
    if not rule:  # no rule proposed: nothing to keep or drop
        lines = [line for line in lines if "the fallback rule" not in line]
    wanted = recommends(rule, action, writes_git)
    return [line.format(who=who or THE_API_SERVER) for line in lines if not forbids(line) & wanted]


MASK = "<redacted>"


OPAQUE_MIN = 120
"""A string this long without a space or line break (a certificate, a token, base64) is shown by its length and
hash: its characters tell a person nothing, and two of them side by side only differ somewhere in the middle."""
OPAQUE = "{length:,} characters, sha256 {digest}"
TEXT_LINES = ("{count} line of text", "{count} lines of text")
TEXT_CHANGED = "{key}: {old} → {new}"
TEXT_REPLACED = "{old} → {new}"
TEXT_ADDED = "added {line}"
TEXT_REMOVED = "removed {line}"
TEXT_MORE = "and {count} more"
TEXT_CHANGES_SHOWN = 3


def is_opaque(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= OPAQUE_MIN and not any(c.isspace() for c in value)


def is_text(value: Any) -> bool:
    """A string of several lines (a ConfigMap's application.yaml): shown by the lines that changed, not whole."""
    return isinstance(value, str) and "\n" in value.strip("\n")


def opaque_summary(value: str) -> str:
    import hashlib  # here, not at the top: OpenSSL's start is a few ms of every `argo-why explain` that needs none

    return OPAQUE.format(length=len(value), digest=hashlib.sha256(value.encode()).hexdigest()[:12])


def text_changes(desired: str, live: str, shown: int = TEXT_CHANGES_SHOWN) -> list[str]:
    """The lines that differ between two texts, Git's first: ``timeoutMs: 2000 → 8000`` for a line whose key stayed,
    ``added …``/``removed …`` for the others; at most ``shown``, then "and N more"."""
    import difflib  # only for a multi-line text that changed: most runs have none

    old, new = desired.splitlines(), live.splitlines()
    changes: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        gone, came = [line.strip() for line in old[i1:i2]], [line.strip() for line in new[j1:j2]]
        for a, b in zip(gone, came, strict=False):
            key_a, sep_a, value_a = a.partition(": ")
            key_b, sep_b, value_b = b.partition(": ")
            if sep_a and sep_b and key_a == key_b:
                changes.append(TEXT_CHANGED.format(key=key_a, old=value_a, new=value_b))
            else:
                changes.append(TEXT_REPLACED.format(old=a, new=b))
        changes += [TEXT_REMOVED.format(line=a) for a in gone[len(came) :]]
        changes += [TEXT_ADDED.format(line=b) for b in came[len(gone) :]]
    if len(changes) > shown:
        changes = [*changes[:shown], TEXT_MORE.format(count=len(changes) - shown)]
    return [short_value(c, 120) for c in changes]


def short_value(value: Any, limit: int = 60) -> str:
    """A value for a sentence: JSON-ish, cut at ``limit`` characters; a long opaque string by its length and hash, a
    text of several lines by its number of lines."""
    if value is None:
        return "(absent)"
    if is_opaque(value):
        return opaque_summary(value)
    if is_text(value):
        count = len(value.splitlines())
        return TEXT_LINES[0 if count == 1 else 1].format(count=count)
    # an empty or space-padded string is quoted, or it vanishes from the sentence ("is 10.96.41.17 live but  in Git")
    plain = isinstance(value, str) and value != "" and value.strip() == value
    text = value if plain else _json(value)
    return text if len(text) <= limit else _cut(value, text, limit)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _cut(value: Any, text: str, limit: int) -> str:
    """``value`` shortened to about ``limit`` characters without cutting into a word or an item: a map or a list
    keeps its first whole entries and says "…" for the rest inside its brackets (so the sentence around it still
    reads), a text is cut after a word; a string without spaces (an image, a URL) stays whole."""
    if isinstance(value, (dict, list)):
        if isinstance(value, dict):
            items = [f"{_json(k)}: {_json(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]
        else:
            items = [_json(v) for v in value]
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        kept: list[str] = []
        for item in items:
            if kept and len(opening + ", ".join([*kept, item, "…"]) + closing) > limit:
                break
            kept.append(item)
        return opening + ", ".join(kept + (["…"] if len(kept) < len(items) else [])) + closing
    if isinstance(value, str) and " " in text[:limit]:
        return text[: text.rindex(" ", 0, limit)].rstrip(" ,;:") + " …"
    return text


def explanation(pointer: str, resource_label: str, reason: str, desired: Any, live: Any) -> str:
    """One sentence: where, both values, why. ``None`` stands for a side that has no value."""
    if desired is None or live is None:
        where = "absent live" if live is None else f"{short_value(live)} live, absent in Git"
        return f"{pointer} of {resource_label} is {where}: {reason}."
    if is_text(desired) and is_text(live):
        changes = "; ".join(text_changes(desired, live))
        return f"{pointer} of {resource_label} differs from Git in its text ({changes}): {reason}."
    values = f"{short_value(live)} live but {short_value(desired)} in Git"
    return f"{pointer} of {resource_label} is {values}: {reason}."


# --- Verdict reasons and evidence (bot/analysis/causes.py, writers.py) ---
# A reason completes the sentence "<pointer> of <resource> is <values>: <reason>."; evidence lines stand alone.
# None of them may carry a field value (Secrets): only names of managers, objects, webhooks and sources.
TRACKING_HOW = {"annotation": "tracking annotation", "label": "app.kubernetes.io/instance label"}
REASON_SHARED = "Application {app} also applies this object and synced it last"
EVIDENCE_SHARED = "the live {how} names Application {app}, not {ours}"
REASON_DEFAULT = (
    "{source} fills in this value when the manifest leaves the field out or empty, and no other writer touched it"
)
REASON_DROPPED_DEFAULT = (
    "Git writes the default explicitly and the stored object leaves it out ({source}): absent means the same"
)
EVIDENCE_DEFAULT = "known default, from {source}: {pattern}"
REASON_PRUNED = (
    "{source} does not declare this field, so the API server prunes it when it stores the object: remove it from "
    "Git, or declare it in the CRD"
)
REASON_UNDECLARED = (
    "{source} has no such field, so the API server drops it when it stores the object (with a warning; strict field "
    "validation refuses it), and while Git has it Argo CD's legacy diff compares the whole object as written, "
    "canonical forms included (argoproj/argo-cd#16400): remove it from Git, or move it where the type has it"
)
EVIDENCE_PRUNED = "{source} declares no {pattern} (and keeps no unknown fields there)"
REASON_MASKED_RENDER = (
    "Argo CD applied this same revision at its last sync and wrote another value than it renders now (Secret "
    "values are masked, so the renders themselves cannot be compared)"
)
REASON_RENDERS_DIFFER = "two renders of the same revision give different values, and Argo CD wrote the live one"
EVIDENCE_RENDERS_DIFFER = "--desired and --desired-again differ at this field"
REASON_NO_MANAGED_FIELDS = "the live object carries no managedFields, so nobody can be named"
REASON_WEBHOOK_UNOWNED = (
    "no field manager owns it, and webhook {webhook} of {configuration} intercepts {operations} of this object"
)
EVIDENCE_WEBHOOK = "{configuration}: webhook {webhook} matches"
EVIDENCE_WEBHOOK_OPS = "{configuration}: webhook {webhook} matches {operations}"
REASON_ABSENT_UNEXPLAINED = "the field is absent live and no manager explains why"
REASON_NOBODY_OWNS = (
    "no field manager owns the live value: admission webhooks change objects without recording ownership"
)
REASON_WEBHOOK_REWROTE = (
    "Argo CD sent its value (so it owns the field), and webhook {webhook} of {configuration} rewrote it on admission"
)
REASON_WEBHOOK_ADDED = (
    "webhook {webhook} of {configuration} added it on admission; Argo CD only owns the list or map around it "
    "because it applies that as a whole"
)
REASON_SENT_GIT_VALUE = (
    "Argo CD sent Git's value (its last-applied-configuration shows it) and owns the field, yet another value is "
    "stored: an admission webhook changed it on the way in (no MutatingWebhookConfiguration in the context "
    "matches; add them with --context to name it)"
)
REASON_WEBHOOK_OR_SCHEMA = (
    "Argo CD sent Git's object without this key (its last-applied-configuration shows it), and it appeared at "
    "admission: a mutating webhook or a default of the CRD's schema added it; add the CRD and the webhook "
    "configurations with --context to tell which"
)
EVIDENCE_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration: Argo CD sent Git's value"
REASON_ARGOCD_WROTE = (
    "Argo CD itself wrote the live value (a rollback, an older revision or a manual sync); nothing in the inputs "
    "shows another writer"
)
# --- What Argo CD last sent, and the verdicts it proves (issue 30: Git ahead, webhooks, removals) ---
SENT_HOW = {
    "last-applied": "its last-applied-configuration shows it",
    "revision": "its last sync applied the revision Git is at now",
    "render": "the revision it last synced renders it",
}
"""How argo-why knows what Argo CD last sent at a field (``bot.analysis.facts.Sent.source``)."""
REASON_NOT_SYNCED = (
    "the live value is what Argo CD sent at its last sync ({how}), and Git has changed since: the app is not synced "
    "to Git's revision yet, nothing rewrote the value"
)
REASON_NOT_SYNCED_ADDED = (
    "Git has added this since Argo CD's last sync, which did not send it ({how}): the app is not synced to Git's "
    "revision yet"
)
REASON_NOT_SYNCED_REVISION = (
    "Argo CD last synced another revision than the one Git is at now (the Application says so), and only Argo CD "
    "owns the live value: Git has most likely changed this since that sync"
)
REASON_NOT_SYNCED_AND_CHANGED = (
    "Git has changed this since Argo CD's last sync ({how} another value), and the live value is not what that "
    "sync sent either: sync first, then look again at what remains"
)
EVIDENCE_SENT_LIVE = "what Argo CD last sent here ({how}) is the live value, not Git's"
EVIDENCE_SENT_GIT = "what Argo CD last sent here ({how}) is Git's value, and the live one differs"
EVIDENCE_GIT_AHEAD = "the Application's last synced revision is not Git's target revision"
REASON_WEBHOOK_PROVEN = (
    "Argo CD sent Git's value ({how}) and still owns the field, so the value changed on admission: webhook "
    "{webhook} of {configuration} intercepts {operations} of this object"
)
REASON_WEBHOOK_EVERYTHING = (
    "Argo CD sent Git's value ({how}) and still owns the field, so the value changed on admission; webhook "
    "{webhook} of {configuration} is a candidate, but it intercepts every resource, which alone does not show it "
    "changed this one"
)
REASON_ARGOCD_WROTE_OR_WEBHOOK = (
    "Argo CD wrote the live value and nothing shows what it sent (server-side apply keeps no "
    "last-applied-configuration): either Git has changed since its last sync (the app is not synced yet) or webhook "
    "{webhook} of {configuration}, which intercepts every resource, changed it; `argo-why why` on the app tells "
    "which from the synced revision"
)
EVIDENCE_WEBHOOK_EVERYTHING = (
    "{configuration}: webhook {webhook} intercepts {operations} of every resource (its rules name no group or "
    "resource), so its match is no evidence about this field"
)
REASON_REMOVED = (
    "Git sets it, the live object lacks it and no field manager owns it: it was removed after it was applied (a "
    "person's patch, an operator's update or a webhook: a removal records no field manager), and no API default or "
    "schema explains the absence"
)
REASON_REMOVED_SENT = (
    "Argo CD sent it at its last sync ({how}) and it is gone: it was removed since (a person's patch, an "
    "operator's update or a webhook: a removal records no field manager), and no API default or schema explains the "
    "absence"
)
EVIDENCE_REMOVED = "no managedFields entry owns the field, and no known default or schema explains its absence"
ALTERNATIVE_REMOVED = (
    "Sync to put Git's value back. If it disappears again, a controller or a webhook removes it: the API server's "
    "audit log names the writer (a removal leaves no trace in managedFields). Never ignore it: an absent value is "
    "not the same value."
)
REASON_HELM_CLI = (
    "the Helm command line ({manager}) wrote it: a person or a pipeline ran helm install or upgrade against an "
    "object Argo CD manages (Flux's Helm controller writes as helm-controller)"
)
ALTERNATIVE_NOT_SHOWN = (
    "Nothing to change for Argo CD: its own diff does not show this difference, so it does not make the app "
    "OutOfSync. Never write what the cluster fills in (a status, an allocated or defaulted value) into Git."
)
"""The better fix of a finding Argo CD does not show whose live value the server filled in."""
GIT_AHEAD = (
    "Git is ahead of the cluster: Argo CD last synced {synced}, Git is at {target}. What differs is Git's change "
    "that has not been applied yet, not drift. {why_not}"
)
NO_APPLIED_RENDER = (
    "could not render the revision Argo CD last synced ({revision}: {error}); Git's changes since are told from the "
    "revisions alone"
)
GIT_AHEAD_WHY_NOT = {
    "manual": "Auto-sync is off: sync the app to apply it.",
    "failed": "The last sync ended {phase}: {message} Fix that, then sync.",
    "running": "A sync is running now: wait for it, then look again.",
    "automated": "Auto-sync is on: if the sync does not run soon, look at the project's sync windows and the "
    "app's conditions.",
}

AN_AUTOSCALER = "an autoscaler"
VIA_SCALE = " through the scale subresource"
REASON_AUTOSCALER = "{what} sets the replica count ({manager}{via})"
EVIDENCE_SCALER = "{scaler} targets this object"
DIFF_MODE_NOTE = {
    "legacy": "Argo CD compares {app} with its legacy three-way diff (no ServerSideDiff=true compare option).",
    "server-side": "Argo CD compares {app} with server-side diff (ServerSideDiff=true): a dry-run apply on the API "
    "server predicts the live object, defaults and webhook changes included.",
}
NOT_SHOWN_ROUNDTRIP = (
    "Argo CD does not report this difference: its diff reads the {kind} through the Kubernetes Go type first, "
    "where Git's value and the live one are the same. If the app is OutOfSync, the cause is another difference."
)
NOT_SHOWN_LIVE_ONLY = (
    "Argo CD does not report this difference: its three-way diff leaves out of the live {kind} what the last applied "
    "configuration (or Git) does not set, so the value the cluster filled in never shows."
)
NOT_SHOWN_DEFAULTED = (
    "Argo CD does not report this difference: its legacy diff runs Kubernetes' defaulting functions for the {kind} "
    "on its prediction, and they fill in this value."
)
SHOWN_ROUNDTRIP_REFUSED = (
    "Argo CD reports it only because it cannot read Git's {kind} through the Kubernetes Go type ({field} {problem}), "
    "so it compares the values as written (argoproj/argo-cd#16400): correct {field} in Git and this difference goes."
)
NOT_DECODABLE = {
    "field": "is not a field of its type",
    "string": "is not a string",
    "number": "is not a number",
    "bool": "is not true or false",
    "quantity": "is not a quantity",
    "list": "is not a list",
    "map": "is not a map",
    "object": "is not an object",
}
"""What keeps Argo CD from reading a field through its Go type (bot.analysis.remarshal)."""
NOT_SHOWN_SERVER_SIDE = (
    "Argo CD does not report this difference: its server-side diff's dry-run apply predicts the live value."
)
SERVER_SIDE_DIFF_BETTER = (
    "This app uses Argo CD's legacy diff; under server-side diff (compare option ServerSideDiff=true) the dry-run "
    "includes this value and the difference does not show, so enabling it for this app is the better fix than a "
    "rule."
)
REASON_SCALED_TO_ZERO = (
    "{what} scaled it to zero through the scale subresource, which records no field manager for a 0 (the Scale's "
    "replicas is omitempty), so nobody owns the field"
)
REASON_SCALER_UNOWNED = "{what} targets this object and no field manager owns the replica count"
REASON_PERSON = "a person changed it with {manager}"
REASON_SCALER_TOO = "; {scaler} also targets this {kind} and will overwrite it"
EVIDENCE_SCALER_TOO = "{scaler} also targets this {kind} and will overwrite the replica count"
ALTERNATIVE_ALLOCATED = (
    "Delete `{field}: {git}` from Git (render the key only when it has a value): the cluster allocates {field} for "
    "this object, so an empty value in Git never matches it. Never write the allocated value ({live}) into Git."
)
ALTERNATIVE_CANONICAL = (
    "Write `{value}` in Git instead of `{git}`: the form {who} stores, so that Git and the cluster agree; "
    "ServerSideDiff=true also compares after that rewrite. An ignore rule is only a fallback."
)
REASON_CR_NORMALISED = (
    "{why}; for a custom resource the API server stores what it is given, so {who} re-serialised it in its own form"
)
WHO_WEBHOOK = "webhook {webhook} of {configuration}"
WHO_CONVERSION = "the conversion webhook of CustomResourceDefinition {crd}"
WHO_CR_UNSEEN = "the resource's own mutating webhook or conversion"
CR_UNSEEN_HINT = (
    " (none is in the context: add the MutatingWebhookConfigurations and the CustomResourceDefinition with --context "
    "to name it)"
)
ALTERNATIVE_SCALED_BY_HAND = (
    "Sync to put Git's count back until {scaler} changes it again; better, leave spec.replicas out of Git so that "
    "{scaler} is its only owner, and scale through the autoscaler's minReplicas/maxReplicas instead of by hand."
)
REASON_SYNTHETIC = "the owner is the API server's placeholder entry {manager}; the real writer is lost"
REASON_OTHER_GITOPS = "{tool} applies this object too"
REASON_OPERATOR = "the controller {manager} writes this field{via}"
ON_BEHALF = " on behalf of {label}"
REASON_UNKNOWN_MANAGER = (
    "{manager} wrote it ({operation}): a field manager argo-why does not know, and nothing in the context points "
    "at it, so this is most likely a controller but could also be a person's script that names its own manager"
)
REASON_GENERIC_MANAGER = (
    "{manager} wrote it ({operation}): {what}, so the name tells neither which controller nor whether a controller "
    "or a person's tool wrote it, and nothing in the context points at one; find the pod that runs it "
    "(kubectl get pods -A -o wide and their commands) or add the objects that drive this one with --context"
)
EVIDENCE_GENERIC_MANAGER = "{manager} is a default field manager name, not evidence of any particular writer"
EVIDENCE_UNKNOWN_MANAGER = "{manager} is not a known controller's field manager, and no context object names it"

NO_MANAGED_FIELDS = (
    "{label} has no managedFields (exported without --show-managed-fields?): ownership is unknown and "
    "findings on it have lowered confidence."
)
NOT_LIVE = "{label} is in the desired manifests but not among the live objects: it was not compared."
# {total}, {compared}, {count} below are already counted phrases (``plural``): "3 resources", "1 desired object"
NOT_COMPARED = "Not compared (no live counterpart): {count} of {total}; the report says nothing about them."
NO_DRIFT = "No drift: {app} matches Git in {compared}."
HIDDEN_SOME = ", and {count} more that Argo CD's own diff does not show"
HIDDEN_ALL = ", none of which Argo CD's own diff shows"
"""The headline counts what Argo CD shows (what makes the app OutOfSync) apart from the rest."""
INCOMPLETE = (
    "Incomplete: no field of {app} differs in the {compared} compared, but {count} not compared, so this is not a "
    "clean bill: {labels}."
)
NO_APP = "No --app given and no tracking annotation found: shared-resource detection is off."
NO_DRIFT_UNNAMED = "No drift: {matching} Git."
MATCH_GIT = ("{count} resource matches", "{count} resources match")
MORE_OBJECTS = ("{count} more object", "{count} more objects")
OBJECTS_NAMED = "{first} and {more}"
OBJECTS_NONE = "the given objects"


def app_shown(app: str) -> str:
    """An app as people write it: Argo CD tracks an app outside its control-plane namespace as ``namespace_name``
    (tracking id, instance label), which its CLI and UI write ``namespace/name`` (a name holds no ``_``)."""
    namespace, sep, name = app.partition("_")
    return f"{namespace}/{name}" if sep and namespace and name else app


def objects_named(labels: list[str]) -> str:
    """What a report is about when no app is known: its objects by name (``Deployment shop/web``), the first two,
    then how many more."""
    if not labels:
        return OBJECTS_NONE
    if len(labels) <= 2:
        return " and ".join(labels)
    return OBJECTS_NAMED.format(first=", ".join(labels[:1]), more=plural(MORE_OBJECTS, len(labels) - 1))


ALREADY_IGNORED = "Already covered by existing ignoreDifferences rules: {count}."
NOT_SHOWN_NOTE = (
    "Argo CD's own diff does not show {count} of these {total} (each finding says why): they do not make the app "
    "OutOfSync, and need no ignore rule."
)
NO_NARROW_RULE = (
    "no ignore rule can hide this without also hiding values Git sets (list items are selected by content or key, "
    "and none tells these apart), so none is proposed"
)
PASTE_RULES = (
    "Rules to paste under the Application's spec: one ignoreDifferences entry per object, with the pointers and "
    "expressions of all its findings"
)
PASTE_FALLBACK_RULES = (
    "Fallback rules to paste only while the better fixes above cannot be made: one ignoreDifferences entry per object"
)
CAUTION_WIDE_RULE = (
    "Caution: the rule hides {fields} of {resource}, so future Git changes there will not be synced either."
)
SYNC_CAVEAT_NO_RESPECT = (
    "Sync caveat: ignoreDifferences only changes what Argo CD compares; without RespectIgnoreDifferences=true a "
    "sync (automated after any Git change, or by hand) still applies Git's value to {fields} "
    "(argoproj/argo-cd#4912, #6520)."
)
SYNC_CAVEAT_NEW_RESOURCE = (
    "Sync caveat: RespectIgnoreDifferences=true only spares fields of a resource that already exists; when Argo CD "
    "creates {resource} (first sync, or after it was deleted) it applies Git's value to {fields} "
    "(argoproj/argo-cd#2913)."
)
SYNC_CAVEAT_CR_LIST = (
    " In a custom resource Argo CD puts back the whole list {lists} from live when it syncs with "
    "RespectIgnoreDifferences, so Git changes to the other fields of those items are not applied either "
    "(argoproj/argo-cd#27480)."
)
NO_CLUSTER = (
    "No cluster context ({reason}): HPAs, ScaledObjects, webhook configurations and namespaces were not "
    "checked, so causes that need them have lowered confidence."
)
WRITE_LOOP = (
    "Write loop: selfHeal is on while {writers} also writes {fields}; Argo CD and the other writer "
    "overwrite each other ({attempts}, {syncs} of this revision in the last hour). "
    "Fix the ownership before anything else."
)

# --- Input a user got slightly wrong (bot/analysis/loader.py, engine.py) ---
# The loader's refusals: one line after "argo-why: <file>: document <n>: ".
LOAD_TOO_LARGE = "larger than {limit} MiB, more than any set of manifests or live objects argo-why reads"
LOAD_NOT_YAML = "not valid YAML{where}: {problem}"
LOAD_TEMPLATE = (
    "; it looks like an unrendered template ({{{{ … }}}} on line {line}): give argo-why the rendered manifests "
    "(argocd app manifests, helm template, kustomize build)"
)
LOAD_DUPLICATE_KEY = (
    "duplicate key {key} (line {line}, first at line {first}): YAML would keep only the last one and silently drop "
    "the first (two `kubectl get -o yaml` outputs appended with >> need a line --- between them)"
)
LOAD_DUPLICATE_KEY_JSON = "duplicate key {key}: JSON would keep only the last one and silently drop the first"
LOAD_ALIASES = (
    "its YAML aliases expand to {expanded:,} values from {written:,} written (an alias bomb?): refused, as Kubernetes' "
    "own YAML reader refuses excessive aliasing"
)
LOAD_RECURSIVE_ALIAS = "a YAML alias refers to the node that holds it (an endless structure, which no object is)"
LOAD_NOT_AN_OBJECT = (
    "not a Kubernetes object but text (no kind, apiVersion or metadata; a Helm NOTES.txt?): it begins with "
    "“{start}”; leave it out of the manifests"
)
# The analysis' warnings (Report.warnings, said first). {label} "Deployment shop/web".
APP_MATCHES_NO_TRACKING = (
    "--app {app} matches no tracking annotation or label in the manifests (they name {tracked}): a typo? No verdict "
    "rests on it: an object whose live tracking names {used} is not taken for another Application's."
)
REPEATED_RESOURCE = (
    "{label} appears {count} times in {side} (the same file given twice, or a doubled paste?): it is counted once, "
    "with its last copy, as Argo CD does (RepeatedResourceWarning)."
)
SIDE_DESIRED = "--desired"
SIDE_LIVE = "--live"
MANAGED_FIELDS_UNREADABLE = (
    "{label}: metadata.managedFields could not be read ({problem}): ownership is unknown, no rule is proposed from "
    "it, and findings on it have lowered confidence."
)
REASON_UNREADABLE_MANAGED_FIELDS = "the live object's managedFields could not be read, so nobody can be named"
MANAGED_FIELDS_PROBLEMS = {
    "not-a-list": "it is not a list of entries",
    "entry-not-a-mapping": "entry {n} is not a mapping",
    "no-fields": "entry {n} has no fieldsV1",
}

# --- the system-level rule of a fleet-wide drift (bot/analysis/systemrule.py) ---
AND_MORE = " and {count} more"
# each is the reason alone, said after "No system-level rule is offered: " (bot/wording/slack.py)
SYSTEM_RULE_WHOLE_SECTION = "{path} is a whole section, and hiding it in every app is too broad"
SYSTEM_RULE_HIDES_GIT = "it would also hide {count} in other objects, whose Git changes would stop syncing: {fields}"
GIT_MANAGED_FIELDS = ("{count} Git-managed field", "{count} Git-managed fields")
SYSTEM_RULE_UNCHECKED = (
    "{count} of the {total} apps could not be checked (more than 1 in 10), so what it would hide is not known: {apps}"
)
SYSTEM_RULE_PENDING = (
    "{count} of the {total} apps drift and are not analysed yet (more than 1 in 10), so what it would hide is not "
    "known yet: {apps}"
)

# --- the weekly report's chart (bot/report/chart.py) ---
CHART_TITLE = "OutOfSync hours by cause, per week"
CHART_Y = "app-hours OutOfSync"
CHART_EMPTY = "No OutOfSync time recorded in these weeks"

# --- The drift page (bot/report/page_model.py, bot/report/templates/) ---
# The page's own labels are in its template (bot/report/templates/page.html); these name what it shows.
PAGE_MODE_FILES = "files: the rendered manifests against the live objects (argo-why's merge semantics)"
PAGE_MODE_LEGACY = "Argo CD's diff (managed-resources, legacy three-way diff)"
PAGE_MODE_SERVER_SIDE = "Argo CD's diff (managed-resources, ServerSideDiff)"
PAGE_TITLE = "Why {app} is OutOfSync"

# --- Resources only one side has, resources Argo CD does not compare, and OutOfSync with nothing that differs
# (bot/analysis/resources.py, bot/analysis/argoscope.py). {label} is "Kind ns/name"; {app} the Application.
SKIP_REASONS: dict[str, str] = {
    "hook": "a sync hook",
    "sync-skip": "argocd.argoproj.io/hook: Skip, never applied",
    "ignore-extraneous": "only in the cluster, with compare-options IgnoreExtraneous",
    "excluded": "a kind argocd-cm's resource.exclusions/inclusions leave out",
}
SKIPPED_NOTE = "Not compared, as Argo CD does not compare them either: {items}."
RESOURCE_STATES: dict[str, str] = {
    "requires-pruning": "in the cluster, no longer in Git (requires pruning)",
    "missing": "in Git, missing from the cluster",
}
RESOURCES_COUNTED = ("{count} resource only one side has", "{count} resources only one side has")
PRUNE_REASONS: dict[str, str] = {
    "prune-disabled": (
        "{label} is in the cluster but no longer in Git, and it carries argocd.argoproj.io/sync-options: "
        "Prune=false: Argo CD never deletes it, so the app stays OutOfSync."
    ),
    "prune-needs-confirmation": (
        "{label} is in the cluster but no longer in Git, and it carries argocd.argoproj.io/sync-options: "
        "Prune=confirm: Argo CD deletes it only once someone confirms the prune."
    ),
    "auto-prune-off": (
        "{label} is in the cluster but no longer in Git: auto-sync runs without prune, so Argo CD leaves it in place "
        "and reports it as requiring pruning."
    ),
    "manual-sync": (
        "{label} is in the cluster but no longer in Git: the app is synced by hand, and no sync with prune has "
        "deleted it."
    ),
    "prune-pending": (
        "{label} is in the cluster but no longer in Git; auto-sync with prune is on, so Argo CD deletes it at its "
        "next automated sync."
    ),
    "not-pruned": (
        "{label} is in the cluster but no longer in Git: Argo CD reports it as requiring pruning until a sync with "
        "prune deletes it."
    ),
}
PRUNE_FIX = (
    "Sync with prune (argocd app sync {app} --prune, or Prune in the sync dialog), or delete it by hand; to keep it "
    "on purpose, annotate it argocd.argoproj.io/sync-options: Prune=false and argocd.argoproj.io/compare-options: "
    "IgnoreExtraneous (then the app is no longer OutOfSync because of it)."
)
PRUNE_FIXES: dict[str, str] = {
    "prune-disabled": (
        "If it is kept on purpose, add argocd.argoproj.io/compare-options: IgnoreExtraneous to it so that the app is "
        "no longer OutOfSync because of it; if not, delete it by hand (a sync never does while Prune=false is set)."
    ),
    "prune-needs-confirmation": (
        "Confirm the prune (argocd app confirm-deletion {app}, or the confirmation in the UI), or keep it on purpose "
        "with Prune=false and IgnoreExtraneous."
    ),
    "prune-pending": (
        "Wait for the next automated sync, or sync now with prune (argocd app sync {app} --prune); if it stays, look "
        "at the last sync's result and the sync windows."
    ),
}
PRUNE_EVIDENCE_STATUS = "Argo CD's status: requiresPruning: true"
PRUNE_EVIDENCE_OPTION = "the object says argocd.argoproj.io/sync-options: {option}"
PRUNE_EVIDENCE_POLICY = "the Application's syncPolicy: {policy}"
PRUNE_EVIDENCE_TRACKED = "its tracking ({how}) names {app}"
SYNC_POLICY_MANUAL = "no automated sync"
SYNC_POLICY_AUTO = "automated, prune: {prune}"
MISSING_REASONS: dict[str, str] = {
    "selective-sync": (
        "{label} is in Git but not in the cluster: the last sync was a selective sync of {count} that did not "
        "include it."
    ),
    "namespace-missing": (
        "{label} is in Git but not in the cluster: the last sync could not create it because namespace {namespace} "
        "does not exist, and the app does not create namespaces (no CreateNamespace=true)."
    ),
    "kind-not-served": (
        "{label} is in Git but not in the cluster: the cluster does not serve its kind (the CRD is not installed)."
    ),
    "sync-failed": "{label} is in Git but not in the cluster: the last sync failed to apply it.",
    "sync-stopped": (
        "{label} is in Git but not in the cluster: the last sync ended {phase} before it reached this resource "
        "(sync wave {wave})."
    ),
    "not-synced": (
        "{label} is in Git but not in the cluster: it came with revision {target}, and the last sync applied {applied}."
    ),
    "deleted-after-sync": (
        "{label} is in Git but not in the cluster: the last sync applied it, so something deleted it after the sync."
    ),
    "unknown": "{label} is in Git but not in the cluster, and Argo CD's status does not say why.",
}
MISSING_FIXES: dict[str, str] = {
    "selective-sync": "Sync the whole app (argocd app sync {app}), or this resource alone (argocd app sync {app} "
    "--resource {group}:{kind}:{name}).",
    "namespace-missing": "Add CreateNamespace=true to the Application's syncOptions (or put the Namespace in Git), "
    "then sync.",
    "kind-not-served": "Install the CRD first (in Git, in an earlier sync wave than this resource); "
    "SkipDryRunOnMissingResource=true on the resource only helps when the CRD comes in the same sync. Then sync.",
    "sync-failed": "Fix what the sync result says, then sync (argocd app sync {app}).",
    "sync-stopped": "Fix the resources that failed in the earlier wave (argocd app get {app} --show-operation lists "
    "them), then sync.",
    "not-synced": "Sync (argocd app sync {app}); if auto-sync is on, find out why it did not run (sync windows, a "
    "failed sync, auto-sync disabled).",
    "deleted-after-sync": "Find who deletes it (the cluster's events or audit log: a controller, a TTL, a person), "
    "then sync.",
    "unknown": "Look at the last sync's result (argocd app get {app} --show-operation), the app's conditions and "
    "events, then sync (argocd app sync {app}).",
}
MISSING_EVIDENCE_RESULT = "the last sync's result for it: {status}: {message}"
MISSING_EVIDENCE_SELECTIVE = "the last sync named only: {resources}"
MISSING_EVIDENCE_OPERATION = "the last sync: {phase}, {message}"
MISSING_EVIDENCE_CONDITION = "condition {type}: {message}"
MISSING_EVIDENCE_OPTION = "the resource says argocd.argoproj.io/sync-options: {options}"
NOTHING_DIFFERS = (
    "{app} is OutOfSync in Argo CD's status, but nothing differs now: no field differs in Argo CD's own diff, and no "
    "resource is only in Git or only in the cluster."
)
NOTHING_DIFFERS_COMPARED = "Argo CD last compared the app at {reconciled}, {when} the last sync finished ({finished})."
NOTHING_DIFFERS_WHEN = {"after": "after", "before": "before"}
NOTHING_DIFFERS_REVISION = "It compared revision {revision}; the last sync applied {applied}."
NOTHING_DIFFERS_LISTED = "Its status lists {labels} as OutOfSync."
NOTHING_DIFFERS_FIX = (
    "Hard refresh the app (argocd app get {app} --hard-refresh, or Refresh > Hard Refresh in the UI): Argo CD "
    "compares again without its caches. If it is still OutOfSync after that, argocd app diff {app} shows what Argo "
    "CD compares (argoproj/argo-cd#18153, #14666)."
)
RESOURCES_HEAD = "No field of {app} differs in the {compared} compared, but {count}."
