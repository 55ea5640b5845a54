"""The errors argo-why reports about its sources and settings: Git hosts and Argo CD refusing, failing or misset.

Each sentence names what was being done, by whom and what to do about it, and is said wherever the error surfaces
(the command line, a Slack thread, the logs). None of them may carry a token or a URL's credentials.
"""

from __future__ import annotations

# --- Settings ---
# Several settings to fix at once (bot/config.py): this line, then one line per variable.
SETTINGS_PROBLEMS = "{count} settings need fixing before argo-why can start:"
# A malformed value, after "NAME: ". {given} is the value as written (never for a secret), {bounds} one of
# SETTING_BOUNDS, {bound} an amount in the setting's unit (setting_amount).
SETTING_WHOLE_NUMBER = "must be a whole number{bounds}, not {given!r}"
SETTING_NUMBER = "must be a number{bounds}, not {given!r}"
SETTING_BOOLEAN = "must be true or false, not {given!r}"
SETTING_CHOICE = "must be {choices}, not {given!r}"
SETTING_AT_LEAST = "must be at least {bound}"
SETTING_MORE_THAN = "must be more than {bound}"
SETTING_AT_MOST = "must be at most {bound}"
SETTING_INVALID = "is not a value argo-why understands; the README lists what each variable takes"
SETTING_BOUNDS = {"both": " from {low} to {high}", "low": " of at least {low}", "above": " above {low}"}
SETTING_UNITS = {"seconds": ("second", "seconds"), "hours": ("hour", "hours")}
# A seconds amount is also said in the largest whole unit it makes: "30 days (2592000 seconds)".
SETTING_LARGER_UNITS = ((86400, ("day", "days")), (3600, ("hour", "hours")), (60, ("minute", "minutes")))
# The settings' own checks (bot/config.py field validators).
SETTING_URL = "must start with http:// or https://"
SETTING_REDIS_URL = "must start with redis://, rediss:// (TLS) or unix:// (a socket), such as redis://redis:6379/0"
SETTING_CLUSTER_CONTEXTS = "expected cluster=context pairs separated by commas, got {part!r}"
SETTING_CHANNEL_ID = "must be a channel ID such as C0123456789, not a name"
SETTING_APPROVALS = "must be 1 or 2"
SETTING_APPROVERS = "expected Slack user (U...) or user-group (S...) IDs, got {bad}"
SETTING_DAILY_AT = "must be HH:MM (UTC), such as 09:00, or off"
SETTING_WEEKLY_AT = "must be DAY HH:MM (UTC), such as mon 09:00, or off"
SETTING_PORTS_DIFFER = "METRICS_PORT must differ from PORT (unset it to serve /metrics on PORT)"
SETTING_VIEW_KEY = "must be at least 32 characters (for example: openssl rand -hex 32)"
SETTING_DURATION = "must be a duration such as 86400, 24h, 90m or 7d"
SETTING_VIEW_BASE_URL = "VIEW_LINK_KEY is set but VIEW_BASE_URL is not: the links need the bot's public URL"


def setting_amount(value: float, unit: str | None) -> str:
    """``value`` in the setting's unit, as a person reads it: ``30 days (2592000 seconds)``, ``1 hour``, ``65535``."""
    if unit is None:
        return _number(value)
    one, many = SETTING_UNITS[unit]
    plain = f"{_number(value)} {one if value == 1 else many}"
    base = 3600 if unit == "hours" else 1
    seconds = value * base
    for size, (single, plural_) in SETTING_LARGER_UNITS:
        if size > base and seconds >= size and seconds % size == 0:
            n = seconds // size
            return f"{_number(n)} {single if n == 1 else plural_} ({plain})"
    return plain


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


# --- Health (the log of `argo-why serve`) ---
# Slack's answer to auth.test: said once at start-up and again when it changes. {error} is the Web API's error.
SLACK_AUTH_FAILED = (
    "Slack does not accept SLACK_BOT_TOKEN (auth.test: {error}): nothing can be posted until it does. "
    "invalid_auth, token_revoked, not_authed: set a valid bot token (xoxb-...) of the installed app; "
    "account_inactive: the app was uninstalled or the workspace deactivated it"
)
SLACK_AUTH_TIMEOUT = "no answer within {seconds:g} s"
# Slack could not be reached (or failed) for auth.test: the token is neither accepted nor refused, so no token remedy.
SLACK_UNREACHABLE = (
    "cannot reach Slack to check SLACK_BOT_TOKEN ({error}); the token itself was not refused. Check that this pod "
    "reaches Slack's Web API (SLACK_API_URL when set; DNS, a proxy, an egress network policy); webhooks are queued "
    "meanwhile and posted once Slack answers"
)
SLACK_AUTH_OK = "Slack accepts SLACK_BOT_TOKEN (auth.test ok)"
SLACK_AUTH_BACK = "Slack accepts SLACK_BOT_TOKEN again (auth.test ok)"
NOT_READY = "not ready: webhooks cannot be accepted durably ({reasons})"
READY_AGAIN = "ready again: webhooks are accepted"
# What `serve` runs with: the address it listens on, then the settings (never a secret: only whether it is set).
SERVE_LISTENING = "listening on http://{host}:{port}{metrics}"
SERVE_METRICS_PORT = " (GET /metrics on port {port} only)"
SERVE_SETTINGS = "settings: {settings}"

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
    "{host} could not {action} in {repo} ({detail}; attempts: {attempts}): it is unreachable, down or "
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

# --- Input files (argo-why explain) ---
# One line on stderr, after "argo-why: <file>: ". {option} is --desired or --live.
INPUT_EMPTY = (
    "no Kubernetes object in this {option} file, so there is nothing to compare (an empty `argocd app manifests` "
    "output usually means the Argo CD login expired: run `argocd login` and render again)"
)
INPUT_EMPTY_LIVE = (
    "no Kubernetes object in this {option} file, so there is nothing to compare (did the export run? `kubectl get "
    "-f desired.yaml -o yaml --show-managed-fields` prints the live objects the manifests name)"
)
INPUT_EMPTY_BLAME = (
    "no object to blame: the input is empty (kubectl get ... -o yaml --show-managed-fields | argo-why blame -)"
)
# {options}: "--desired and --live". Said before anything is read.
INPUT_STDIN_TWICE = (
    "{options} both read standard input (-), which can be read only once: give all but one of them as files"
)
# After "argo-why: <the --desired files>: ".
INPUT_SWAPPED = (
    "--desired and --live look swapped: every object given as --desired carries what only the API server writes "
    "(uid, resourceVersion, managedFields) and none given as --live does; give the rendered manifests (argocd app "
    "manifests) as --desired and the kubectl export as --live"
)
INPUT_NO_COUNTERPART = "no object in --desired has a counterpart in --live (same group, kind, namespace, name)"
