"""Every sentence of the pull requests argo-why opens, and of finding the file a fix edits.

The pull request's title and body (:mod:`bot.fixes.pr_text`, Markdown for GitHub and GitLab) and the reasons why an
Application's definition was not found (:mod:`bot.fixes.locate`). Nothing here may interpolate a field value that
could belong to a Secret: callers pass values through :func:`bot.analysis.masking.mask` first.
"""

from __future__ import annotations

# --- Pull requests (bot/fixes/pr_text.py) ---
# Markdown for GitHub and GitLab. Values are filled in already masked where they belong to a Secret.

PR_TITLE_ONE = "argo-why: ignore {field} of {kind}/{name} rewritten by {writer}"
PR_TITLE_MANY = "argo-why: ignore {count} fields of {app} rewritten by {writers}"
PR_TITLE_SOURCE_ONE = "argo-why: drop {field} of {kind}/{name} from Git, {writer} owns it"
PR_TITLE_COMMIT_ONE = "argo-why: commit the live {field} of {kind}/{name} to Git, set by hand with {writer}"
PR_TITLE_COMMIT_MANY = "argo-why: commit {count} live values of {app} to Git, set by hand"
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
PR_INTRO_COMMIT = (
    "Application `{app}` stays OutOfSync because {fields} was changed by hand in the cluster (a hotfix, say) and "
    "Git still has the old value. Someone decided the live value is the right one: this pull request writes it "
    "into the manifest, so that the next sync keeps it instead of rolling it back."
)
PR_APPLICATIONSET = (
    "**This edits the ApplicationSet `{appset}`: every Application it generates gets the rule.** Each rule is "
    "still scoped by the object's name and namespace, so it only matters where such an object exists."
)
PR_APPROVED = "Approved in Slack by {approvers}."
# An approver as the PR names them: the name Slack gave (never with an ``@``: on the Git host that would mention
# whoever has that login) and their Slack mention, in code so that the Git host links nobody.
PR_APPROVER_NAMED = "{name} (`<@{user}>` in Slack)"
PR_APPROVER_ID = "`<@{user}>` in Slack"
PR_THREAD = "[The Slack thread]({url}) has the full analysis."
PR_CHANGE_TITLE = "### The change"
PR_CHANGE_FILE = "In `{path}` of `{repo}` (based on `{base}`):"
PR_CHANGE_IGNORE = "Added under `{where}.ignoreDifferences`:"
PR_CHANGE_SYNC = "Added under `{where}.syncPolicy.syncOptions`:"
PR_CHANGE_SOURCE = "Removed from {resource}: `{field}`."
PR_CHANGE_COMMIT = "In {resource}: `{field}` set from `{desired}` (Git) to `{live}` (live)."
# Fallback rules (normalization, defaulting): the PR says which they are, and what fixes them in Git instead.
PR_FALLBACKS = (
    "**Fallback rules, not the fix:** for the fields below, live holds Git's value in another form (or a default "
    "the API server fills in), so the fix is in Git and needs no rule. Keep these rules only until that is done, "
    "or delete them from this pull request:"
)
PR_FALLBACK_ITEM = "- `{field}` of {kind} `{name}` ({cause}): {alternative}"
PR_FALLBACK_TITLE = " (fallback rule)"
PR_FALLBACK_WHY = (
    "**This rule is a fallback:** the better fix is in Git (below); the rule only hides the difference meanwhile."
)
PR_FINDINGS_TITLE = "### Why"
PR_FINDING_TITLE = "#### {number}. `{field}` of {kind} `{name}`{fallback}"
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
PR_SAFE_COMMIT = (
    "**Why committing it is safe:** the cluster already runs this value; merging changes nothing there. Not "
    "merging, a sync puts Git's old value back and undoes the hand-made change."
)
PR_STILL_DETECTED_COMMIT = (
    "**What real drift will still be detected:** everything; nothing is ignored, and Git now holds `{field}` as "
    "it runs."
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
    "manual-edit": "a person set this value in the cluster with {writer}; the approval in Slack says it is the "
    "right one, and this PR makes Git its owner again.",
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
