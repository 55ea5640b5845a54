"""The Slack app manifest asks for exactly the scopes the code needs: every Web API method the bot calls is found in
the code (``poster.call("chat.update", ...)``, ``client.files_upload_v2(...)``), mapped to its scope, and the set of
scopes must equal the manifest's, so a new call without its scope, or a scope nobody uses, fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

from tests.paths import ROOT

MANIFEST = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yaml").read_text())
# Slack's documentation of each method ("Required scopes"); an empty set: the method needs none.
METHOD_SCOPES: dict[str, set[str]] = {
    "auth.test": set(),
    "chat.getPermalink": set(),
    "chat.postMessage": {"chat:write"},
    "chat.update": {"chat:write"},
    "chat.postEphemeral": {"chat:write"},
    "files.getUploadURLExternal": {"files:write"},
    "files.completeUploadExternal": {"files:write"},
    "usergroups.users.list": {"usergroups:read"},
    "users.info": {"users:read"},
    "views.publish": set(),  # the App Home tab: no scope, the app_home_opened event and the Home tab enabled
    # the outbox reads back public and private alert channels (DMs and group DMs are never alert channels)
    "conversations.history": {"channels:history", "groups:history"},
    "conversations.replies": {"channels:history", "groups:history"},
    # channel names in routes, resolved among public and private channels (never DMs)
    "conversations.list": {"channels:read", "groups:read"},
}
# slack_sdk helpers that call several methods
HELPERS = {"files_upload_v2": ("files.getUploadURLExternal", "files.completeUploadExternal")}
_METHOD = re.compile(r"^[a-z]+(\.[a-zA-Z]+)+$")
_SDK_METHOD = re.compile(r"^(admin|auth|bookmarks|chat|conversations|dnd|files|pins|reactions|reminders|search|team|"
                         r"usergroups|users|views)_[A-Za-z0-9_]+$")  # fmt: skip


def methods_called() -> dict[str, set[str]]:
    """Slack Web API method -> the files that call it (the shipped code, not the demo's fakes)."""
    found: dict[str, set[str]] = {}
    for path in sorted([*(ROOT / "bot").rglob("*.py"), *(ROOT / "handlers").rglob("*.py")]):
        if "demo" in path.relative_to(ROOT).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            names: tuple[str, ...] = ()
            first = node.args[0] if node.args else None
            if (
                node.func.attr in ("call", "api_call")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                names = (first.value,) if _METHOD.match(first.value) else ()
            elif node.func.attr in HELPERS:
                names = HELPERS[node.func.attr]
            elif _SDK_METHOD.match(node.func.attr):
                group, _, rest = node.func.attr.partition("_")
                names = (f"{group}.{rest.replace('_', '.')}",)
            for name in names:
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_code_calls_the_methods_the_bot_is_known_to_need() -> None:
    called = methods_called()
    # a floor, so that a broken scan cannot pass by finding nothing
    assert {"chat.postMessage", "chat.update", "usergroups.users.list", "users.info"} <= set(called)
    unknown = sorted(set(called) - set(METHOD_SCOPES))
    assert not unknown, f"new Slack method(s) {unknown} in {[called[m] for m in unknown]}: add their scopes here"


def test_the_manifest_asks_for_exactly_the_scopes_the_code_needs() -> None:
    needed = {"commands"}  # the /argo slash command
    for method in methods_called():
        needed |= METHOD_SCOPES.get(method, set())
    assert set(MANIFEST["oauth_config"]["scopes"]["bot"]) == needed
    assert "user" not in MANIFEST["oauth_config"]["scopes"]  # no user token


def test_every_request_url_is_the_one_endpoint_and_the_one_event_is_app_home_opened() -> None:
    [command] = MANIFEST["features"]["slash_commands"]
    events = MANIFEST["settings"]["event_subscriptions"]
    urls = {command["url"], MANIFEST["settings"]["interactivity"]["request_url"], events["request_url"]}
    assert command["command"] == "/argo" and {u.rsplit("/slack/", 1)[1] for u in urls} == {"events"}
    assert len({u.split("/slack/")[0] for u in urls}) == 1
    code = Path(ROOT / "handlers" / "slack.py").read_text()
    # the events the code listens to are exactly the ones subscribed, and the Home tab they are for is enabled
    assert re.findall(r'@app\.event\("([a-z_]+)"\)', code) == events["bot_events"] == ["app_home_opened"]
    assert MANIFEST["features"]["app_home"]["home_tab_enabled"] is True
