"""Every sentence and label argo-why says in Slack: slash commands, alerts, threads, digests, fixes from chat.

The Slack renderers (:mod:`bot.slack.render`), the handlers and the runtime take their Slack wording from here;
the titles, fixes and advice of a report itself are in :mod:`bot.wording.report`. Nothing here may interpolate a
field value that could belong to a Secret: callers pass values through :func:`bot.analysis.masking.mask` first.
"""

from __future__ import annotations

# --- Commands and buttons (handlers/slack.py) ---
UNKNOWN_COMMAND = "`/argo {sub}` is not a command. Try `/argo help`."
BAD_APP_NAME = "`/argo {command}` needs an Application name (`name` or `namespace/name`, lowercase)."
BAD_DURATION = "Give a duration from 1m to 30d, such as `30m`, `2h` or `1d12h`: `/argo mute <app> 2h`."
MUTED = "<@{user}> muted alerts for `{app}` for {duration}."
STORE_DOWN = "argo-why cannot reach its state store right now; nothing was queued. Try again in a minute."
WORKING = "Looking into `{app}`…"
WORKING_OVERVIEW = "Gathering the drift overview…"
BAD_PAGE = "Give a page number: `/argo drift 2`."
STATE_EXPIRED = "This message is too old for its buttons; run `/argo why <app>` for a fresh analysis."
NOTE_RECHECKED = "Re-checked by <@{user}>: {summary}"
SYNCED_NOW = "`{app}` is Synced: nothing left to explain."


# --- Slack ---
# Every label and sentence of the Slack messages (bot/slack/render/). These are plain text with mrkdwn
# emphasis (*bold*, `code`); the renderer escapes &, < and > in them and in every value it fills in, so
# none of them may carry a link or an entity of its own. Placeholders are filled with values that are
# already masked where they belong to a Secret.

SLACK_ICON_DRIFT = ":large_orange_circle:"
SLACK_ICON_GIT_AHEAD = ":large_blue_circle:"
"""Git ahead of the cluster: a state to sync, not an alarm."""
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
SLACK_PARENT_DRIFT = "{app} is OutOfSync: {differences} in {resources}{hidden}"
SLACK_PARENT_GIT_AHEAD = "{app} is waiting for a sync: {differences} in {resources} changed in Git"
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
    "not-synced": ("has changed in Git and is not synced yet", "has changed in Git and is not synced yet"),
}
SLACK_PREDICATES_ADDED: dict[str, tuple[str, str]] = {  # the same, for a field Git does not set: it was added
    "autoscaler": ("is added by {who}", "is added by an autoscaler"),
    "operator": ("is added by {who}", "is added by a controller"),
    "mutating-webhook": ("is added on admission by {who}", "is added on admission by a mutating webhook"),
    "manual-edit": ("was added by hand with {who}", "was added by hand"),
}
SLACK_WHO_DETAIL = "({manager}, via the {subresource} subresource)"
SLACK_WHO_MANAGER = "({manager})"
SLACK_WHO_VIA = "(via the {subresource} subresource)"

# the thread: one section per finding, then what not to do
SLACK_THREAD_TITLE = "Why {app} is OutOfSync: {differences} in {resources}{hidden} (of {compared} compared)"
SLACK_HIDDEN_SOME = ", and {count} more that Argo CD's own diff does not show"
SLACK_HIDDEN_ALL = ", none of which Argo CD's own diff shows"
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
SLACK_TEXT_CHANGED = "Changed lines: {changes}"
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
    "not-synced": "Git changed it and the app is not synced yet; a rule would keep the change from ever syncing",
}
SLACK_NO_RULE_NOT_SHOWN = "Argo CD's own diff does not show this difference, so there is nothing to hide"
SLACK_BETTER_FIX = "*Better fix:* {alternative}"
# A field changed by hand: which value is right comes first, then what each choice does. {field}, {live},
# {desired}, {who}: code (who: the manager that wrote it).
SLACK_MANUAL_DECIDE = (
    "*First decide which value is right:* {field} was set to {live} by hand ({who}); Git has {desired}."
)
SLACK_MANUAL_KEEP = (
    "*The live value is right* (a hotfix, say): commit it to Git, so that the next sync keeps it instead of "
    "rolling it back."
)
SLACK_MANUAL_REVERT = (
    "*Git is right:* sync the app. That sets {field} back from {live} to {desired} and undoes the hand-made "
    "change: a hotfix would be rolled back."
)
SLACK_AND_MORE = "and {count} more"
SLACK_CUT = "… cut; see `argo-why why {app}` for the rest"
SLACK_DO_NOT_TITLE = "*What not to do:*"
SLACK_NO_DRIFT = "No field differs: {resources} of {app} match Git."
SLACK_TEXT_THREAD = "Why {app} is OutOfSync ({part} of {parts}): {findings}"
SLACK_TEXT_NOTES = "Notes on the analysis of {app}"
SLACK_TEXT_PASTE = "The rules for {app} to paste, one entry per object"

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
    "one-sided": "no field differs, but resources are only in Git or only in the cluster",
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
    ("/argo drift [page]", "every OutOfSync app of this channel, grouped by cause and writer, fleet-wide first"),
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


# --- Fixes from chat: buttons, approvals, pull requests in Slack (bot/slack/render/fixes.py) ---
# {user}, {approvers}, {who}: Slack mentions made by the renderer; {what}: a SLACK_PR_WHAT_* phrase.
SLACK_BUTTON_OPEN_PR = "Open PR"
SLACK_BUTTON_OPEN_PR_ALL = "Open PR: all {count} rules"
SLACK_BUTTON_SOURCE_FIX = "Open PR: fix the source"
SLACK_BUTTON_COMMIT_LIVE = "Open PR: commit the live value to Git"
SLACK_BUTTON_APPROVE = "Approve"
SLACK_PR_WHAT_ONE = "an ignoreDifferences rule for {field} of {resource}"
SLACK_PR_WHAT_MANY = "ignoreDifferences rules for {count} fields"
SLACK_PR_WHAT_SOURCE_ONE = "the removal of {field} from the manifest of {resource}"
SLACK_PR_WHAT_SOURCE_MANY = "the removal of {count} autoscaled fields from their manifests"
SLACK_PR_WHAT_COMMIT_ONE = "the live value {live} of {field} of {resource}, written into its manifest"
SLACK_PR_WHAT_COMMIT_MANY = "the live values of {count} fields changed by hand, written into their manifests"
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
SLACK_PR_PROPOSED_COMMIT = "Proposed in {path} of {repo} (base {base}): set {fields} to the live value."
SLACK_PR_EXISTING = "PR {link} for this fix is already open ({user} opened it)."
SLACK_PR_ALREADY_PRESENT = "Nothing to propose: {path} of {repo} already has this rule (on {base})."
SLACK_PR_PASTE = "No pull request: {reason} Add this to the Application {app} by hand:"
SLACK_PR_PASTE_SOURCE = "No pull request: {reason}"
SLACK_PR_PASTE_CM = "No pull request: {reason} Add this to the ConfigMap {app} in Argo CD's namespace by hand:"
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


# --- the fleet (bot/slack/render/fleet.py) ---
SLACK_ICON_FLEET = ":globe_with_meridians:"
SLACK_FLEET_LINE = "The same in {others}: {names}. ({field} of {kind}, written by {writer})"
SLACK_OTHER_APPS = ("{count} other app", "{count} other apps")
SLACK_FLEET_RULE = "A system-level rule covers all {count} apps: {rule} under {key} of argocd-cm. {radius}"
SLACK_FLEET_RADIUS_NONE = "It hides nothing else in the {checked} apps checked."
SLACK_FLEET_RADIUS = "Beyond this drift it also hides {fields} in {objects} of {apps}: {names}."
SLACK_FLEET_UNCHECKED = ("{count} app could not be checked.", "{count} apps could not be checked.")
SLACK_FLEET_NO_RULE = "No system-level rule is offered: {reason}"
SLACK_SYSTEM_ONLY = (
    "A system-level rule changes every application of this Argo CD: only {approvers} may approve it (two of them), "
    "so nothing was done. Ask one of them to click."
)
SLACK_SYSTEM_REFUSED = (
    "{user} clicked Open PR: system-level rule, but may not approve system-level rules: nothing was done."
)
SLACK_SYSTEM_REFUSED_NOW = "No PR was opened for {app}: checked again now, {reason}"
SLACK_SYSTEM_CHANGED = (
    "No PR was opened for {app}: this drift is no longer in several apps, or its rule changed since it was offered."
)
SLACK_FLEET_PENDING = ("{count} app that drifts is not analysed yet.", "{count} apps that drift are not analysed yet.")
SLACK_BUTTON_SYSTEM_RULE = "Open PR: system-level rule"
SLACK_SYSTEM_CONFIRM_TITLE = "Open a PR to argocd-cm?"
SLACK_SYSTEM_CONFIRM_TEXT = (
    "argo-why will propose {rule} under {key} of argocd-cm, for {count} apps. Two different approvers are needed."
)
SLACK_SYSTEM_APPROVED_PARTLY = (
    "Approved {count} of 2 by {approvers}: the system-level rule {rule} for {what}. A second, different approver "
    "opens the PR."
)
SLACK_SYSTEM_MERGED = (
    "The system-level rule for this drift was merged: {link} ({key} of argocd-cm). argo-why will say when {app} is "
    "Synced, once Argo CD has the new argocd-cm and compares the app again."
)
SLACK_SYSTEM_SYNCED = (
    "The system-level rule for this drift was merged ({link}, {key} of argocd-cm) and {app} is Synced again."
)
SLACK_FIELDS_COUNT = ("{count} field", "{count} fields")
SLACK_OBJECTS_COUNT = ("{count} object", "{count} objects")
SLACK_ARGOCD_CM = "argocd-cm"
SLACK_CM_NOT_IN_FILE = "{path} in {repo} (ARGOCD_CM_DEFINITION) holds neither the argocd-cm ConfigMap nor Helm values."
SLACK_CM_NO_BRANCH = "no branch of the repository matches ARGOCD_CM_DEFINITION ({url})."
SLACK_CM_NO_APP = "no Application manages the Argo CD namespace ({namespace}), and ARGOCD_CM_DEFINITION is not set."
SLACK_CM_NOT_FOUND = (
    "no file in the sources of the Applications whose destination is the Argo CD namespace ({apps}) holds the "
    "argocd-cm ConfigMap or argo-helm values; set ARGOCD_CM_DEFINITION to the file's URL."
)
SLACK_CM_UNREAD = " Not looked in: {sources}."
SLACK_CM_UNREAD_ONE = "{app} ({reason})"

# --- the drift overview: /argo drift, App Home (bot/slack/render/overview.py) ---
SLACK_OVERVIEW_TITLE = "Drift overview: {apps} OutOfSync, {groups}"
SLACK_OVERVIEW_GROUPS = ("{count} cause", "{count} causes")
SLACK_OVERVIEW_EMPTY = "No app argo-why knows of is OutOfSync here."
SLACK_OVERVIEW_FLEET = "Fleet-wide"
SLACK_OVERVIEW_GROUP = "{cause} by {writer}: {apps}"
SLACK_OVERVIEW_FIELDS = "top fields: {fields}"
SLACK_OVERVIEW_APP = "{app}: drifting for {duration}{flags}"
SLACK_OVERVIEW_MUTED = "muted"
SLACK_OVERVIEW_PR = "PR open"
SLACK_OVERVIEW_PAGE = "Page {page} of {pages}. Next: /argo drift {next}"
SLACK_OVERVIEW_LAST_PAGE = "Page {page} of {pages}."
SLACK_SUMMARY_FLEET_LINE = "Fleet-wide: {field} of {kind} written by {writer} in {apps}"

# --- the weekly report (bot/slack/render/weekly.py) ---
SLACK_WEEKLY_TITLE = "Weekly drift report, {week}"
SLACK_WEEKLY_CHART = "The chart of OutOfSync hours by cause over the last {weeks} weeks is in the thread."
SLACK_WEEKLY_LONGEST = "Drifting longest:"
SLACK_WEEKLY_LONGEST_LINE = "{app}: {duration}"
SLACK_WEEKLY_NONE_DRIFTING = "No app is drifting now."
SLACK_WEEKLY_MERGED = "Rules merged this week:"
SLACK_WEEKLY_MERGED_LINE = "{link}: ended the drift of {apps}"
SLACK_WEEKLY_NONE_MERGED = "No rule was merged this week."
SLACK_WEEKLY_CHART_TITLE = "OutOfSync hours by cause"


# --- many teams, one bot (routing, approvers per project, visibility) ------------------------------------------------
ROUTE_SOURCES = {
    "app-annotation": "the Application's argo-why.io/channel annotation",
    "project-annotation": "the AppProject's argo-why.io/channel annotation",
    "subscription": "the Application's argo-why notifications subscription",
    "channel-routes": "CHANNEL_ROUTES",
    "default": "SLACK_CHANNEL",
}
ROUTE_FALLBACK = "The alerts of {app} are posted here instead of their own channel: {reasons}."
ROUTE_REFUSED = "Slack refused to post in <#{channel}> ({error}: invite argo-why there, or fix the route)"
ROUTE_MOVED_OLD = (
    ":arrow_right: The alerts of {app} now go to <#{channel}> ({source}); this thread is not updated any more."
)
ROUTE_MOVED_NEW = "The alerts of {app} used to go to <#{channel}>; this thread continues there."
NOT_VISIBLE = (
    "`{app}` is not visible here: argo-why answers about an app only in the channel its alerts go to, "
    "or in a direct message with someone who may approve its fixes."
)
SLACK_PR_ONLY_PROJECT = (
    "Only {approvers} may approve fixes of project {project}, so nothing was done. Ask one of them to click."
)
SLACK_PR_NOBODY_PROJECT = (
    "Nobody may approve fixes of project {project}: give it approvers in APPROVER_ROUTES (or set APPROVERS) in "
    "argo-why's configuration, then click again."
)
# The drift page's link, in the first message of each thread (bot/slack/render/thread.py): {link} the signed link
# (labelled SLACK_FULL_DIFF_LINK), {hours} how long it works.
SLACK_FULL_DIFF = "{link}: Git beside the live objects, every line with its writer (link valid {hours} h)"
SLACK_FULL_DIFF_LINK = "Full diff"

# resources only one side has (to prune, missing) and an OutOfSync with nothing that differs (bot/slack/render/
# resources.py); their explanations and fixes are the report's own (bot.wording.report)
SLACK_ONE_SIDED = ("{count} resource only one side has", "{count} resources only one side has")
SLACK_PARENT_RESOURCES = "{app} is OutOfSync: {count}"
SLACK_RESOURCE_LINE = "{resource}: {state}"
SLACK_RESOURCE_TITLE = "*{resource}*: {state}"
SLACK_RESOURCE_FIX = "*Fix:* {fix}"
SLACK_RESOURCE_EVIDENCE = "*What Argo CD and the object say:*"
SLACK_ALSO_RESOURCES = "Also {count}: the thread says which, why and the fix."
SLACK_NOTHING_DIFFERS_TITLE = "*Nothing differs now*"
SLACK_NOTHING_DIFFERS_FIX = "*What settles it:* {fix}"
SLACK_TEXT_RESOURCES = "Resources of {app} only one side has: {items}"
SLACK_TEXT_NOTHING_DIFFERS = "{app} is OutOfSync, but nothing differs now"
SLACK_SEE_THREAD_RESOURCES = "Why, and the fix for each, are in the thread."
