"""The wording of the report itself, shared by every output: the text report, Slack, pull requests (and the page).

The titles of the causes, the better fixes and what not to do, the one-sentence explanation of a finding, the
reasons and evidence of the analysis (:mod:`bot.analysis`, which may import this module and no other of
:mod:`bot.wording`), and the notes of a report. Nothing here may interpolate a field value that could belong to a
Secret: callers pass values through :func:`bot.analysis.masking.mask` first.
"""

from __future__ import annotations

import difflib
import hashlib
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
}

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
}
"""What not to do, per cause (``{who}``: :data:`THE_API_SERVER` or whoever the finding names). Said under each
finding, never merged across findings: advice belongs to its finding (:func:`avoid_for`)."""

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
        | ({"sync"} if action == "revert" else set())
        | ({"write"} if writes_git else set())
    )


def forbids(line: str) -> frozenset[str]:
    return _FORBIDS.get(line, frozenset())


def avoid_for(
    cause: str, *, rule: bool, action: str, who: str | None = None, allocated: bool = False, writes_git: bool = False
) -> list[str]:
    """What not to do about one finding: its cause's lines, about ``who`` (the API server unless named), the
    allocated-field lines instead of those about writing a default, and never a line against this finding's own fix
    (``rule``: it proposes an ignore rule; ``action``; ``writes_git``: its better fix writes a value into Git)."""
    lines = list(AVOID.get(cause, ()))
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
    return OPAQUE.format(length=len(value), digest=hashlib.sha256(value.encode()).hexdigest()[:12])


def text_changes(desired: str, live: str, shown: int = TEXT_CHANGES_SHOWN) -> list[str]:
    """The lines that differ between two texts, Git's first: ``timeoutMs: 2000 → 8000`` for a line whose key stayed,
    ``added …``/``removed …`` for the others; at most ``shown``, then "and N more"."""
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
    text = value if plain else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
INCOMPLETE = (
    "Incomplete: no field of {app} differs in the {compared} compared, but {count} not compared, so this is not a "
    "clean bill: {labels}."
)
NO_APP = "No --app given and no tracking annotation found: shared-resource detection is off."
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
