"""Every sentence argo-why says to a person, in one place.

Renderers (text, Slack) and the analysis take their wording from here, so that
tone and terms stay consistent and a change of phrasing is one edit. Nothing
here may interpolate a field value that could belong to a Secret: callers pass
values through :func:`bot.analysis.masking.mask` first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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
ATTEMPTS = ("{count} attempt", "{count} attempts")

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
    "manual-edit": "Revert the live object by syncing, or commit the value to Git if the change was right.",
    "unknown": "Look at the Application's history and events; re-run with --desired-again, the cluster context "
    "and managedFields (kubectl get --show-managed-fields) for a better answer.",
}

_NO_RESYNC = "Do not re-sync again and again: {who} puts its value back after every sync."
_NO_SELFHEAL = "Do not turn on selfHeal before the rule or the source fix is in: Argo CD and {who} would fight."
_NO_HAND_EDIT = "Do not edit the live object by hand: the change is invisible in Git and will be overwritten."
_NO_OTHER_WRITER = "Do not look for another writer: {who}, and nothing else writes this field."
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
        _NO_OTHER_WRITER.format(who="the API server fills in the default"),
        "Do not keep the fallback rule once Git writes the default (or ServerSideDiff is on): it only hides noise.",
    ),
    "normalization": (
        _NO_OTHER_WRITER.format(who="the API server stores the same value in its own form"),
        "Do not expect a sync to settle it: the API server normalises the value again every time.",
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
"""What not to do, per cause: said under each finding and, for the causes a report holds, at its end."""


def avoid_lines(causes: Iterable[str]) -> list[str]:
    """The "what not to do" lines for these causes, in their order, each line once."""
    out: list[str] = []
    for cause in causes:
        out.extend(line for line in AVOID.get(cause, ()) if line not in out)
    return out


MASK = "<redacted>"


def short_value(value: Any, limit: int = 60) -> str:
    """A value for a sentence: JSON-ish, cut at ``limit`` characters."""
    if value is None:
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explanation(pointer: str, resource_label: str, reason: str, desired: Any, live: Any) -> str:
    """One sentence: where, both values, why. ``None`` stands for a side that has no value."""
    if desired is None or live is None:
        where = "absent live" if live is None else f"{short_value(live)} live, absent in Git"
        return f"{pointer} of {resource_label} is {where}: {reason}."
    values = f"{short_value(live)} live but {short_value(desired)} in Git"
    return f"{pointer} of {resource_label} is {values}: {reason}."


# --- Verdict reasons and evidence (bot/analysis/causes.py, writers.py) ---
# A reason completes the sentence "<pointer> of <resource> is <values>: <reason>."; evidence lines stand alone.
# None of them may carry a field value (Secrets): only names of managers, objects, webhooks and sources.
TRACKING_HOW = {"annotation": "tracking annotation", "label": "app.kubernetes.io/instance label"}
REASON_SHARED = "Application {app} also applies this object and synced it last"
EVIDENCE_SHARED = "the live {how} names Application {app}, not {ours}"
REASON_DEFAULT = "{source} fills in this value when the manifest leaves the field out, and no other writer touched it"
REASON_DROPPED_DEFAULT = (
    "Git writes the default explicitly and the stored object leaves it out ({source}): absent means the same"
)
EVIDENCE_DEFAULT = "known default, from {source}: {pattern}"
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
REASON_PERSON = "a person changed it with {manager}"
REASON_SYNTHETIC = "the owner is the API server's placeholder entry {manager}; the real writer is lost"
REASON_OTHER_GITOPS = "{tool} applies this object too"
REASON_OPERATOR = "the controller {manager} writes this field{via}"
ON_BEHALF = " on behalf of {label}"
REASON_UNKNOWN_MANAGER = (
    "{manager} wrote it ({operation}): a field manager argo-why does not know, and nothing in the context points "
    "at it, so this is most likely a controller but could also be a person's script that names its own manager"
)
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
NO_NARROW_RULE = (
    "no ignore rule can hide this without also hiding values Git sets (list items are selected by content or key, "
    "and none tells these apart), so none is proposed"
)
CAUTION_WIDE_RULE = (
    "Caution: the rule hides {fields} of {resource}, so future Git changes there will not be synced either."
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

# --- Commands and buttons (handlers/slack.py) ---
UNKNOWN_COMMAND = "`/argo {sub}` is not a command. Try `/argo help`."
BAD_APP_NAME = "`/argo {command}` needs an Application name (`name` or `namespace/name`, lowercase)."
BAD_DURATION = "Give a duration from 1m to 30d, such as `30m`, `2h` or `1d12h`: `/argo mute <app> 2h`."
MUTED = "<@{user}> muted alerts for `{app}` for {duration}."
STORE_DOWN = "argo-why cannot reach its state store right now; nothing was queued. Try again in a minute."
WORKING = "Looking into `{app}`…"
STATE_EXPIRED = "This message is too old for its buttons; run `/argo why <app>` for a fresh analysis."
NOTE_RECHECKED = "Re-checked by <@{user}>: {summary}"
SYNCED_NOW = "`{app}` is Synced: nothing left to explain."


# --- Slack ---
# Every label and sentence of the Slack messages (bot/slack/render/). These are plain text with mrkdwn
# emphasis (*bold*, `code`); the renderer escapes &, < and > in them and in every value it fills in, so
# none of them may carry a link or an entity of its own. Placeholders are filled with values that are
# already masked where they belong to a Secret.

SLACK_ICON_DRIFT = ":large_orange_circle:"
SLACK_ICON_SYNCED = ":large_green_circle:"
SLACK_ICON_FAILED = ":red_circle:"
SLACK_ICON_WARNING = ":rotating_light:"
SLACK_ICON_ERROR = ":warning:"

# singular, plural
SLACK_DIFFERENCES = ("{count} difference", "{count} differences")
SLACK_RESOURCES = ("{count} resource", "{count} resources")
SLACK_UNSETTLED = ("{count} sync did not settle it", "{count} syncs did not settle it")
SLACK_APPS = ("{count} app", "{count} apps")

# the parent message (one per drift episode)
SLACK_PARENT_DRIFT = "{app} is OutOfSync: {differences} in {resources}"
SLACK_PARENT_DRIFT_NONE = "{app} is OutOfSync, but argo-why found no field that differs from Git"
SLACK_PARENT_SYNCED = "{app} is Synced again"
SLACK_PARENT_FAILED = "{app} is OutOfSync, and the analysis failed"
SLACK_PARENT_FAILED_HINT = "The reason is in the thread. Re-check, or `/argo why {app}`, tries again."
SLACK_REVISION = "revision {revision}"
SLACK_PROJECT = "project {project}"
SLACK_SYNCED_WAS = "What had drifted:"
SLACK_MORE_IN_THREAD = "and {count} more in the thread"
SLACK_SEE_THREAD = "The evidence, the proposed rules and what not to do are in the thread."
SLACK_BUTTON_SHOW_DIFF = "Show diff"
SLACK_BUTTON_MUTE = "Mute 24h"
SLACK_BUTTON_RECHECK = "Re-check"
SLACK_MUTE_CONFIRM_TITLE = "Mute {app} for 24 hours?"
SLACK_MUTE_CONFIRM_TEXT = (
    "argo-why will not post about {app} for 24 hours. The drift stays as it is; `/argo why {app}` still works."
)
SLACK_MUTE_CONFIRM_YES = "Mute 24h"
SLACK_MUTE_CONFIRM_NO = "Cancel"

# one verdict per field: "{field} of {resource} {predicate}"
SLACK_VERDICT = "{field} of {resource} {predicate}"
SLACK_PREDICATES: dict[str, tuple[str, str]] = {  # cause -> (with the writer known, without)
    "autoscaler": ("is rewritten by {who}", "is rewritten by an autoscaler"),
    "operator": ("is rewritten by {who}", "is rewritten by a controller"),
    "mutating-webhook": ("is changed on admission by {who}", "is changed on admission by a mutating webhook"),
    "api-defaulting": ("is filled in by API defaulting", "is filled in by API defaulting"),
    "normalization": ("is the same value in another form", "is the same value in another form"),
    "nondeterministic-render": (
        "changes on every render of the manifest",
        "changes on every render of the manifest",
    ),
    "shared-resource": ("is also applied by {who}", "is also applied by another Application"),
    "other-gitops": ("is also applied by {who}", "is also applied by another GitOps tool"),
    "manual-edit": ("was changed by hand with {who}", "was changed by hand"),
    "unknown": ("differs, and the inputs do not show why", "differs, and the inputs do not show why"),
}
SLACK_WHO_DETAIL = "({manager}, via the {subresource} subresource)"
SLACK_WHO_MANAGER = "({manager})"
SLACK_WHO_VIA = "(via the {subresource} subresource)"

# the thread: one section per finding, then what not to do
SLACK_THREAD_TITLE = "Why {app} is OutOfSync: {differences} in {resources} (of {compared} compared)"
SLACK_THREAD_APP_FACTS = "sync: {sync} · RespectIgnoreDifferences: {respect} · existing ignoreDifferences: {existing}"
SLACK_SYNC_MANUAL = "manual"
SLACK_SYNC_AUTOMATED = "automated"
SLACK_SYNC_SELF_HEAL = "automated with selfHeal"
SLACK_ON, SLACK_OFF = "on", "off"
SLACK_FINDING_TITLE = "*{number} of {total}* · {verdict}"
SLACK_CAUSE = "Cause: {cause}, {title} · confidence: *{confidence}*"
SLACK_EVIDENCE = "*Evidence*"
SLACK_OWNER = "managedFields: {manager}, {operation}{subresource}, at {time}"
SLACK_OWNER_SUBRESOURCE = ", subresource {subresource}"
SLACK_NO_OWNER = "managedFields: no entry owns this field"
SLACK_UNKNOWN_TIME = "an unknown time"
SLACK_CO_OWNERS = "also owned by {owners}"
SLACK_OBJECT = "related object: {object}"
SLACK_VALUES = "Git: {desired} · live: {live}"
SLACK_ABSENT = "(absent)"
SLACK_RULE = "*Proposed rule*, to add under `spec.ignoreDifferences` of the Application (it hides {hides}):"
SLACK_FALLBACK_RULE = (
    "*Fallback rule*, only if the better fix is not possible: add under `spec.ignoreDifferences` (it hides {hides}):"
)
SLACK_SYNC_OPTIONS = "and under `spec.syncPolicy.syncOptions`:"
SLACK_RULE_UNVERIFIED = "This rule did not pass its self-check: review it before you use it."
SLACK_NO_RULE = "*No rule:* {reason}."
SLACK_NO_RULE_REASONS: dict[str, str] = {
    "autoscaler": "no rule could be scoped narrowly enough",
    "operator": "no rule could be scoped narrowly enough",
    "mutating-webhook": "no rule could be scoped narrowly enough",
    "api-defaulting": "write the default in Git instead; hiding it is only a fallback",
    "normalization": "write the canonical form in Git instead; hiding it is only a fallback",
    "nondeterministic-render": "the value changes on every render, so a rule would hide every real change too",
    "shared-resource": "two Applications apply this object; hiding the field leaves them fighting over it",
    "other-gitops": "another GitOps tool applies this object; hiding the field leaves two owners fighting",
    "manual-edit": "a person changed it; hiding the difference would hide the edit",
    "unknown": "the cause is not shown, and a rule could hide a real problem",
}
SLACK_BETTER_FIX = "*Better fix:* {alternative}"
SLACK_AND_MORE = "and {count} more"
SLACK_CUT = "… cut; see `argo-why why {app}` for the rest"
SLACK_DO_NOT_TITLE = "What not to do"
SLACK_NO_DRIFT = "No field differs: {resources} of {app} match Git."
SLACK_TEXT_THREAD = "Why {app} is OutOfSync ({part} of {parts}): {findings}"
SLACK_TEXT_DO_NOT = "What not to do: {advice}"

# after the last retry of a failed analysis (in the thread)
SLACK_ANALYSIS_FAILED = "argo-why could not analyse {app}: {reason}"
SLACK_ANALYSIS_FAILED_HINT = (
    "It gave up after its retries. Re-check on the message above, or `/argo why {app}`, tries again."
)

# Show diff / /argo diff
SLACK_DIFF_TITLE = "Diff of {app}: {differences}, Git (-) against live (+)"
SLACK_DIFF_FILE = "Diff of {app}: {differences}, {lines} lines, too long for a message: it is attached as a file."
SLACK_DIFF_NONE = "No field of {app} differs from Git: there is no diff to show."
SLACK_DIFF_FROM = "--- {app} desired (Git)"
SLACK_DIFF_TO = "+++ {app} live (cluster)"
SLACK_DIFF_HUNK = "@@ {pointer} of {resource}{absent} @@"
SLACK_DIFF_ABSENT_GIT = " (absent in Git)"
SLACK_DIFF_ABSENT_LIVE = " (absent live)"

# a burst of apps drifting at once
SLACK_DIGEST_TITLE = "{apps} went OutOfSync within a minute"
# a digest too long for one line per app: groups by cause and writer, and the full list as a file in the thread
SLACK_DIGEST_STATES: dict[str, str] = {  # the app's state in the digest
    "drift": "OutOfSync",
    "pending": "not analysed yet",
    "failed": "the analysis failed",
    "synced": "Synced again",
    "clean": "no field differs from Git",
}
SLACK_DIGEST_LINES: dict[str, str] = {
    **{state: "{app}: " + text for state, text in SLACK_DIGEST_STATES.items()},
    "drift": "{app}: {differences}; top cause: {cause}",
}
SLACK_DIGEST_FAILED_WHY = "{app}: the analysis failed: {reason}"
SLACK_DIGEST_GROUPED = "Too many apps for one message: they are grouped by cause and writer."
SLACK_DIGEST_LIST_LATER = "The full list of {apps} goes into the thread when the burst is over."
SLACK_DIGEST_LIST_ATTACHED = "The full list of {apps} is attached in the thread."
SLACK_DIGEST_GROUP = "*{count}* · {cause} · {writer}"
SLACK_DIGEST_GROUP_NO_WRITER = "*{count}* · {cause}"
SLACK_DIGEST_NO_WRITER = "writer unknown"
SLACK_DIGEST_MORE_GROUPS = ("and {count} more group: see the full list", "and {count} more groups: see the full list")
SLACK_DIGEST_LIST_COLUMNS = ("app", "namespace", "status", "differences", "top cause", "writer", "detail", "argo cd")
SLACK_DIGEST_LIST_FILE = "argo-why-digest-{date}.csv"
SLACK_DIGEST_LIST_TITLE = "Every app of the digest ({apps})"
SLACK_DIGEST_HINT = "One message for the whole burst instead of one per app. Show details explains one app."
SLACK_BUTTON_DETAILS = "Show details"

# /argo help
SLACK_HELP_TITLE = "argo-why explains why an Argo CD Application stays OutOfSync, and proposes the narrowest fix."
SLACK_HELP_COMMANDS: tuple[tuple[str, str], ...] = (
    ("/argo why <app>", "why the app is OutOfSync: which controller rewrites which field, and the fix"),
    ("/argo diff <app>", "Git against live, for the fields that differ"),
    ("/argo mute <app> <duration>", "no alerts for the app for a while, for example 24h or 30m"),
    ("/argo help", "this message"),
)
SLACK_HELP_FOOTER = (
    "Alerts come as one message per drift episode, with the details in its thread. "
    "argo-why reads Argo CD and the cluster; it never changes them."
)

# the scheduler: reminders, the end of a mute, the daily summary (bot/slack/render/schedule.py)
SLACK_REMINDER = "{app} has been OutOfSync for {duration} ({syncs}); the cause is above in this thread."
SLACK_REMINDER_HINT = "Fix it, mute it (`/argo mute {app} 1d`), or Re-check if it settled."
SLACK_MUTE_ENDED = "The mute of {app} by {user} has ended, and it is still OutOfSync: argo-why looks at it again."
SLACK_SUMMARY_TITLE = "The {apps} drifting longest"
SLACK_SUMMARY_LINE = "{app}: OutOfSync for {duration} ({syncs})"
SLACK_SUMMARY_HINT = "One message a day. The explanation of each is in its thread; /argo why <app> looks again."
SLACK_DURATION_UNITS = (("{count} day", "{count} days"), ("{count} hour", "{count} hours"),
                        ("{count} minute", "{count} minutes"))  # fmt: skip


# --- Pull requests (bot/fixes/pr_text.py) ---
# Markdown for GitHub and GitLab. Values are filled in already masked where they belong to a Secret.

PR_TITLE_ONE = "argo-why: ignore {field} of {kind}/{name} rewritten by {writer}"
PR_TITLE_MANY = "argo-why: ignore {count} fields of {app} rewritten by {writers}"
PR_TITLE_SOURCE_ONE = "argo-why: drop {field} of {kind}/{name} from Git, {writer} owns it"
PR_TITLE_SOURCE_MANY = "argo-why: drop {count} fields of {app} from Git that autoscalers own"
PR_WRITERS_MORE = "{writers} and {count} more"
PR_API_SERVER = "the API server"
PR_A_WEBHOOK = "a mutating webhook"
PR_NOBODY = "an unnamed writer"
PR_INTRO_IGNORE = (
    "Application `{app}` stays OutOfSync after successful syncs because another controller rewrites "
    "{fields} that Git also sets. This pull request adds `ignoreDifferences` rules scoped to each object and "
    "field, so that Argo CD stops reporting (and, with `RespectIgnoreDifferences=true`, stops resetting) what "
    "that controller owns."
)
PR_INTRO_SOURCE = (
    "Application `{app}` stays OutOfSync after successful syncs because an autoscaler owns {fields} that Git "
    "also sets. This pull request removes the field from the manifest, so that the autoscaler is its only owner "
    "and no ignore rule is needed."
)
PR_APPLICATIONSET = (
    "**This edits the ApplicationSet `{appset}`: every Application it generates gets the rule.** Each rule is "
    "still scoped by the object's name and namespace, so it only matters where such an object exists."
)
PR_APPROVED = "Approved in Slack by {approvers}."
PR_THREAD = "[The Slack thread]({url}) has the full analysis."
PR_CHANGE_TITLE = "### The change"
PR_CHANGE_FILE = "In `{path}` of `{repo}` (based on `{base}`):"
PR_CHANGE_IGNORE = "Added under `{where}.ignoreDifferences`:"
PR_CHANGE_SYNC = "Added under `{where}.syncPolicy.syncOptions`:"
PR_CHANGE_SOURCE = "Removed from {resource}: `{field}`."
PR_FINDINGS_TITLE = "### Why"
PR_FINDING_TITLE = "#### {number}. `{field}` of {kind} `{name}`"
PR_WHICH = "**Which controller changes the field:** {writer}."
PR_WHICH_MANAGED = "managedFields: `{manager}`, {operation}{subresource}, at {time}"
PR_WHICH_SUBRESOURCE = " through the `{subresource}` subresource"
PR_WHICH_NOBODY = "no managedFields entry owns the value"
PR_OWNER = "**Why it is the intended owner:** {reason}"
PR_SAFE = "**Why ignoring it is safe:** {reason} Confidence: {confidence}."
PR_SAFE_SOURCE = (
    "**Why removing it is safe:** the autoscaler sets the field continuously; the value in Git is only used when "
    "the object is first created, and the autoscaler's minimum applies from then on."
)
PR_STILL_DETECTED = (
    "**What real drift will still be detected:** the rule is scoped to {kind} `{name}`{group} and hides only "
    "{hides}. Every other field of that object, and every other object of the Application, is still compared."
)
PR_STILL_DETECTED_SOURCE = (
    "**What real drift will still be detected:** everything else; only `{field}` leaves Git, and nothing is ignored."
)
PR_WIDE = "**Note:** this rule hides {fields}: future Git changes to them will not be synced to {kind} `{name}` either."
PR_GROUP = " (API group `{group}`)"
PR_VALUES = "Git: `{desired}` · live: `{live}`"
PR_EVIDENCE = "Evidence:"
PR_BETTER = "**Better fix, when possible:** {alternative}"
PR_FOOTER = (
    "Opened by argo-why after an approval in Slack. It only ever creates this branch and this pull request: it "
    "never merges, and it never writes to Argo CD or the cluster."
)
PR_OWNER_REASONS: dict[str, str] = {
    "autoscaler": "an autoscaler sets the replica count from the load by design; Git cannot hold a value that "
    "changes with traffic.",
    "operator": "{writer} manages this field as part of its job and writes it back on every reconcile; Git's "
    "value can never stay.",
    "mutating-webhook": "an admission webhook of the cluster changes this field on every create and update, by "
    "the cluster's policy; Git's value never reaches the stored object.",
    "api-defaulting": "nobody else writes it: the API server fills in this default when Git leaves it out.",
    "normalization": "nobody else writes it: the API server stores the same value in its canonical form.",
}
PR_SAFE_REASONS: dict[str, str] = {
    "autoscaler": "the autoscaler keeps the field within its own bounds; the rule only stops Argo CD from "
    "reporting the autoscaler's value as drift.",
    "operator": "the controller keeps the field at the value it computes; the rule only stops Argo CD from "
    "reporting that value as drift.",
    "mutating-webhook": "the webhook applies the same change every time; the rule only stops Argo CD from "
    "reporting the webhook's change as drift.",
    "api-defaulting": "the live value is the default of what Git says; the rule is a fallback until Git writes "
    "the default (or ServerSideDiff is on).",
    "normalization": "the live value equals Git's after canonicalisation; the rule is a fallback until Git "
    "writes the canonical form (or ServerSideDiff is on).",
}


# --- Fixes from chat: buttons, approvals, pull requests in Slack (bot/slack/render/fixes.py) ---
# {user}, {approvers}, {who}: Slack mentions made by the renderer; {what}: a SLACK_PR_WHAT_* phrase.
SLACK_BUTTON_OPEN_PR = "Open PR"
SLACK_BUTTON_OPEN_PR_ALL = "Open PR: all {count} rules"
SLACK_BUTTON_SOURCE_FIX = "Open PR: fix the source"
SLACK_BUTTON_APPROVE = "Approve"
SLACK_PR_WHAT_ONE = "an ignoreDifferences rule for {field} of {resource}"
SLACK_PR_WHAT_MANY = "ignoreDifferences rules for {count} fields"
SLACK_PR_WHAT_SOURCE_ONE = "the removal of {field} from the manifest of {resource}"
SLACK_PR_WHAT_SOURCE_MANY = "the removal of {count} autoscaled fields from their manifests"
SLACK_PR_CONFIRM_TITLE = "Open a pull request?"
SLACK_PR_CONFIRM_TEXT = (
    "argo-why will propose {what} in Git, for {app}, as a pull request for people to review. It needs {required}; "
    "it never merges anything."
)
SLACK_PR_REQUIRED = ("one approver", "two different approvers")
SLACK_PR_CONFIRM_YES = "Open PR"
SLACK_APPROVE_CONFIRM_TITLE = "Approve this fix?"
SLACK_APPROVE_CONFIRM_TEXT = "Your approval opens the pull request that proposes {what}."
SLACK_PR_CONFIRM_NO = "Cancel"
SLACK_PR_OPENED_BY = "PR {link} opened by {user}"
SLACK_PR_LINK = "#{number}"
SLACK_APPROVED_PARTLY = (
    "Approved {count} of {required} by {approvers}: {what}. A second, different approver can click Approve "
    "within 24 hours."
)
SLACK_PR_OPENED = "{icon} PR {link} opened by {user} ({approved}): {title}"
SLACK_PR_APPROVED_BY = "approved by {approvers}"
SLACK_PR_PROPOSED = "Proposed in {path} of {repo} (base {base}):"
SLACK_PR_PROPOSED_SOURCE = "Proposed in {path} of {repo} (base {base}): remove {fields}."
SLACK_PR_EXISTING = "PR {link} for this fix is already open ({user} opened it)."
SLACK_PR_ALREADY_PRESENT = "Nothing to propose: {path} of {repo} already has this rule (on {base})."
SLACK_PR_PASTE = "No pull request: {reason} Add this to the Application {app} by hand:"
SLACK_PR_PASTE_SOURCE = "No pull request: {reason}"
SLACK_PR_FAILED = "The pull request could not be opened: {reason}"
SLACK_PR_REFUSED = "{user} clicked Open PR, but may not approve fixes: nothing was done."
SLACK_PR_ONLY = "Only {approvers} may approve fixes, so nothing was done. Ask one of them to click."
SLACK_PR_NOBODY = (
    "Nobody may approve fixes yet: set APPROVERS (Slack user or user-group IDs) in argo-why's configuration, "
    "then click again."
)
SLACK_PR_TWICE = "You already approved this fix; a second, different approver must click Approve."
SLACK_PR_TWICE_THREAD = "{user} approved again; that still counts once: a second, different approver is needed."
SLACK_PR_BUSY = "This pull request is being opened right now; its link will appear in the thread."
SLACK_PR_NO_GIT = "Pull requests are not configured (GIT_PROVIDER is unset): copy the rule from the thread instead."
SLACK_PR_MERGED = "{icon} PR {link} was merged and {app} is Synced again."
SLACK_PR_MERGED_WAITING = "PR {link} was merged; argo-why will say when {app} is Synced."
SLACK_PR_CLOSED = "PR {link} was closed without merging: the Open PR button is back."


# --- Finding where an Application is defined (bot/fixes/locate.py) ---
LOCATE_BY_ANNOTATION = "the argo-why.io/definition annotation"
LOCATE_BY_PARENT = "the source of the parent Application {parent}"
LOCATE_BY_SOURCE = "the Application's own source"
LOCATE_BY_APPSET = "the ApplicationSet {appset}, through {how}"
LOCATE_NOTHING = (
    "argo-why cannot tell where {kind} {name} is defined: it has no {annotation} annotation and no parent "
    "Application tracks it. Add the annotation with the file's URL (as the browser shows it) to get a PR next time."
)
LOCATE_APPSET = "The Application is generated by the ApplicationSet {appset}, whose definition was not found: {reason}"
LOCATE_NOT_IN_FILE = "{path} in {repo} has no YAML document of kind {kind} named {name}."
LOCATE_NOT_A_BRANCH = (
    "{branch} is not a branch of {repo} (a tag or a commit?): a pull request needs a branch to target."
)
LOCATE_HELM = "The source that defines {kind} {name} is rendered by Helm, so its file cannot be edited safely."
LOCATE_NOT_FOUND = "No YAML document of kind {kind} named {name} under {path} in {repo} ({revision})."
LOCATE_PARENT_NO_SOURCE = "The parent Application {parent} has no source argo-why can read."
LOCATE_NOT_PLAIN = "The Application's source is {type}, not plain YAML, so the manifest cannot be edited directly."
LOCATE_NO_SOURCE = "The Application has no source argo-why can read."
PR_CANNOT_EDIT = "the file cannot be edited safely."


# --- Git hosts ---
# What argo-why says when GitHub or GitLab refuses or fails (bot/sources/git), and why a repository URL or path is
# refused (bot/sources/git/urls.py). Placeholders: {host} the API host, {repo} the repository path, {action} one of
# GIT_ACTIONS, {status} the HTTP status, {detail} the host's own message (cut short; it never holds the token).
GIT_ACTIONS: dict[str, str] = {
    "repo": "read the repository",
    "branch": "read branch {branch}",
    "file": "read {path} at {ref}",
    "list": "list {path} at {ref}",
    "find-pr": "look for an open pull request from {branch}",
    "create-branch": "create branch {branch}",
    "commit": "commit {path} to branch {branch}",
    "open-pr": "open a pull request from {branch}",
    "get-pr": "read pull request {number}",
}
GIT_AUTH = (
    "{host} rejected the Git token ({status}: {detail}): it is invalid, expired or revoked. "
    "Create a new token and set GIT_TOKEN."
)
GIT_PERMISSION_GITHUB = (
    "{host} refused to {action} in {repo} ({status}: {detail}): the token lacks a permission{needed}. "
    "A fine-grained token needs Contents: read and write (contents:write) and Pull requests: read and write "
    "(pull_requests:write) on {repo}; a classic token needs the repo scope."
)
GIT_PERMISSION_NEEDED = " (this call needs {permissions})"
GIT_PERMISSION_GITLAB = (
    "{host} refused to {action} in {repo} ({status}: {detail}): the token needs the api scope, and its user (or "
    "the project or group access token) at least the Developer role in {repo}."
)
GIT_REPO_NOT_FOUND = (
    "{host} has no repository {repo}, or the token cannot see it: a private repository answers 404 to a token "
    "without access. Check the repository URL and give the token access to {repo}."
)
GIT_NOT_FOUND = (
    "{host} could not {action} in {repo}: it does not exist ({detail}). A private repository also answers 404 "
    "when the token has no access to it."
)
GIT_NOT_A_FILE = "{path} at {ref} in {repo} is a {what}, not a file."
GIT_NOT_A_DIRECTORY = "{path} at {ref} in {repo} is a file, not a directory."
GIT_FILE_TOO_LARGE = (
    "{path} at {ref} in {repo} is too large to read through the {host} API; argo-why edits files up to 1 MB."
)
GIT_NOT_TEXT = "{path} at {ref} in {repo} is not UTF-8 text, so argo-why will not edit it."
GIT_TREE_TOO_LARGE = (
    "{path} at {ref} in {repo} holds more entries than argo-why lists ({limit}); point the Application at a smaller "
    "directory."
)
GIT_STALE_FILE = (
    "{path} changed on branch {branch} in {repo} after argo-why read it ({detail}). Nothing was written; run the "
    "fix again so that it starts from the current file."
)
GIT_BRANCH_EXISTS = (
    "Branch {branch} already exists in {repo} and points at another commit ({detail}); delete it or close its "
    "pull request, then try again."
)
GIT_PR_EXISTS = (
    "{host} says a pull request from {branch} is already open in {repo}, but it could not be found ({detail})."
)
GIT_PROTECTED = (
    "{host} refused to {action} in {repo}: branch {branch} is protected ({detail}). argo-why only pushes to its own "
    "argo-why/... branches: let the token create and push those, or exempt the pattern from the rule."
)
GIT_RATE_LIMITED = (
    "{host} is rate-limiting the Git token ({status}: {detail}); the limit resets {when}. Try again after that."
)
GIT_RATE_RESET_AT = "at {time} UTC, in {seconds} s"
GIT_RATE_RESET_UNKNOWN = "in a minute or so"
GIT_UNAVAILABLE = (
    "{host} could not {action} in {repo} ({detail}) after {attempts}: it is unreachable, down or "
    "overloaded. Try again in a few minutes."
)
GIT_REJECTED = "{host} refused to {action} in {repo} ({status}: {detail})."
GIT_BAD_RESPONSE = "{host} answered the request to {action} in {repo} with something argo-why cannot read ({detail})."
GIT_NO_TOKEN = "GIT_TOKEN is not set: a token that may push branches and open pull requests on the Git host."
GIT_NO_API_URL = (
    "GIT_API_URL is not set: GitLab needs the API URL of its instance, such as https://gitlab.example.com/api/v4."
)
GIT_UNKNOWN_PROVIDER = "GIT_PROVIDER is {provider!r}: argo-why supports github and gitlab."

# Refused URLs and paths (UnsupportedRepo). {url} is shown without any user:password part.
GIT_URL_NOT_ENTERPRISE = (
    "{url}: the repository is on github.com, but GIT_API_URL points at GitHub Enterprise ({host}), whose API and "
    "token do not reach github.com. Keep the definition in a repository on {host}, or run an argo-why for github.com."
)
GIT_URL_HOST = (
    "{url}: {host} is not the configured Git host (accepted: {accepted}). Set GIT_PROVIDER and GIT_API_URL for "
    "that host, or keep the definition in a repository on {accepted}."
)
GIT_URL_SCHEME = "{url}: only https://, http://, ssh:// and git@host:path repository URLs are understood."
GIT_URL_NOT_REPO = "{url}: {reason}."
GIT_URL_NOT_FILE = (
    "{url}: not a link to a file in a repository; copy it from the file's page in the browser: "
    "https://github.com/ORG/REPO/blob/BRANCH/PATH or https://gitlab.example.com/GROUP/REPO/-/blob/BRANCH/PATH."
)
GIT_PATH_REFUSED = "{what} {value!r} is refused: {reason}."
GIT_PATH_REASONS: dict[str, str] = {
    "empty": "it is empty",
    "absolute": "it is absolute (starts with /)",
    "dot": "it has a . or .. segment, which could leave the repository",
    "backslash": "it contains a backslash",
    "double-slash": "it has an empty segment (//) or ends with /",
    "encoded": "it hides /, \\, %, . or a control character behind percent-encoding",
    "control": "it contains a control character",
    "ref": "it is not a valid Git branch or ref name",
    "segment": "a repository path segment may only hold letters, digits, '.', '_' and '-'",
}

# Reaching Argo CD (bot/sources/argocd.py): redirects, TLS and answers that are not the API.
ARGOCD_HTTPS_UPGRADE = (
    "ARGOCD_URL {url} redirects to HTTPS; argo-why followed it to {target} (token kept: same host). "
    "Set ARGOCD_URL={target} to save the extra round trip."
)
ARGOCD_REDIRECT = (
    "Argo CD at {url} answered {status} with a redirect to {target}: argo-why follows only an http:// to https:// "
    "redirect on the same host (the token must not go anywhere else). Set ARGOCD_URL to the Argo CD API server "
    "itself{hint}."
)
ARGOCD_REDIRECT_LOGIN_HINT = ", not a login page or an SSO proxy in front of it"
ARGOCD_TLS_UNTRUSTED = (
    "cannot verify the TLS certificate of Argo CD at {url} ({reason}). Trust the CA that signed it with "
    "ARGOCD_CA_FILE (the chart mounts it from argocd.tls.caConfigMap or argocd.tls.caSecret; for Argo CD's own "
    "self-signed certificate use tls.crt of the Secret argocd-secret, or argocd-server-tls), or set "
    "ARGOCD_INSECURE=true in a lab."
)
ARGOCD_NOT_JSON = (
    "Argo CD at {url} answered {path} with something that is not JSON ({status}, {content_type}): ARGOCD_URL must "
    "be the Argo CD API server (the address of argocd-server), not a login page, an ingress default backend or "
    "a proxy."
)
