"""The fake Slack against the real slack_sdk AsyncWebClient and a real Bolt AsyncApp: if these pass, the fake speaks
enough of Slack's wire format for the bot's tests and the offline demo to mean something."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import pytest
from slack_bolt.async_app import AsyncAck, AsyncRespond
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from tests.fakes.slack import (
    BOT_USER_ID,
    MAX_BLOCKS,
    RESPONSE_URL,
    RESPONSE_URL_LIMIT,
    UPLOAD,
    FakeSlack,
    Upload,
    block_action_body,
    bolt_app,
    clear_slack_env,
    event_body,
    signed_headers,
    signed_request,
    slash_command_body,
    url_verification_body,
    web_client,
)

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
AUTH_TEST = {
    "ok": True,
    "url": "https://argo-why-demo.slack.com/",
    "team": "Demo",
    "user": "argo-why",
    "team_id": "T0DEMO",
    "user_id": "U0BOT",
    "bot_id": "B0BOT",
    "is_enterprise_install": False,
}


@pytest.fixture(autouse=True)
def _no_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_slack_env(monkeypatch)


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        yield server
    assert server.errors == [], server.errors[0]


def api_error(excinfo: pytest.ExceptionInfo[SlackApiError]) -> Any:
    return excinfo.value.response.get("error")


def data(response: AsyncSlackResponse) -> dict[str, Any]:
    """The JSON body of a Web API answer (``.data`` is bytes only for file downloads)."""
    assert isinstance(response.data, dict)
    return response.data


# -- Web API basics ------------------------------------------------------------------------------------------------


def test_url_and_token_shape(fake: FakeSlack) -> None:
    assert fake.url.startswith("http://127.0.0.1:") and fake.url.endswith("/api/")
    assert fake.token.startswith("xoxb-")
    assert FakeSlack().token != fake.token


async def test_auth_test(fake: FakeSlack) -> None:
    assert (await web_client(fake).auth_test()).data == AUTH_TEST
    [call] = fake.calls
    assert call.method == "auth.test"
    assert call.headers["authorization"] == f"Bearer {fake.token}"
    assert call.status == 200 and call.response == AUTH_TEST


async def test_post_update_and_thread_reply(fake: FakeSlack) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*web* is OutOfSync"}}]
    client = web_client(fake)
    parent = data(await client.chat_postMessage(channel="C0DEPLOYS", text="web is OutOfSync", blocks=blocks))
    updated = data(await client.chat_update(channel=parent["channel"], ts=parent["ts"], text="web: still OutOfSync"))
    reply = data(await client.chat_postMessage(channel=parent["channel"], thread_ts=parent["ts"], text="details"))
    assert parent["ok"] and parent["channel"] == "C0DEPLOYS"
    assert parent["message"]["text"] == "web is OutOfSync"
    assert parent["message"]["blocks"] == blocks
    assert parent["message"]["bot_id"] == "B0BOT" and parent["message"]["type"] == "message"
    assert "thread_ts" not in parent["message"]
    assert updated["ts"] == parent["ts"] and updated["channel"] == "C0DEPLOYS"
    assert updated["text"] == "web: still OutOfSync"
    assert updated["message"]["blocks"] == blocks  # a text-only update keeps the blocks, as on Slack
    assert reply["message"]["thread_ts"] == parent["ts"]
    assert float(reply["ts"]) > float(parent["ts"])

    [top] = fake.messages("C0DEPLOYS")
    assert top["ts"] == parent["ts"] and top["thread_ts"] is None
    assert top["text"] == "web: still OutOfSync" and top["updated"] == 1
    [in_thread] = fake.thread("C0DEPLOYS", parent["ts"])
    assert in_thread["text"] == "details" and in_thread["ts"] == reply["ts"]
    assert len(fake.messages("C0DEPLOYS", include_replies=True)) == 2


async def test_update_blocks_replace_or_remove_and_unknown_ts(fake: FakeSlack) -> None:
    client = web_client(fake)
    sent = await client.chat_postMessage(channel="C1", text="t", blocks=[{"type": "divider"}])
    await client.chat_update(channel="C1", ts=sent["ts"], text="t", blocks=[{"type": "divider"}] * 2)
    assert len(fake.messages("C1")[0]["blocks"]) == 2
    await client.chat_update(channel="C1", ts=sent["ts"], text="t", blocks=[])
    assert fake.messages("C1")[0]["blocks"] == []
    with pytest.raises(SlackApiError) as excinfo:
        await client.chat_update(channel="C1", ts="1.000001", text="x")
    assert api_error(excinfo) == "message_not_found"


@pytest.mark.filterwarnings("ignore:The top-level `text` argument is missing")
async def test_message_rules(fake: FakeSlack) -> None:
    client = web_client(fake)
    errors = []
    for kwargs in ({"channel": "C1"}, {"channel": "C1", "text": "x", "blocks": [{"type": "divider"}] * 51}):
        with pytest.raises(SlackApiError) as excinfo:
            await client.chat_postMessage(**kwargs)
        errors.append(api_error(excinfo))
    assert errors == ["no_text", "invalid_blocks"]
    assert MAX_BLOCKS == 50


async def test_channel_names_map_to_stable_ids(fake: FakeSlack) -> None:
    fake.add_channel("C0DEPLOYS", "deploys")
    client = web_client(fake)
    deploys = (await client.chat_postMessage(channel="#deploys", text="a"))["channel"]
    other = (await client.chat_postMessage(channel="#other", text="b"))["channel"]
    other_again = (await client.chat_postMessage(channel="other", text="c"))["channel"]
    name = (await client.conversations_info(channel="C0DEPLOYS"))["channel"]["name"]
    assert deploys == "C0DEPLOYS" and name == "deploys"
    assert other == other_again and other.startswith("C")
    assert [m["text"] for m in fake.messages("#other")] == ["b", "c"]


async def test_timestamps_are_unique_and_increasing(fake: FakeSlack) -> None:
    client = web_client(fake)
    sent = await asyncio.gather(*(client.chat_postMessage(channel="C1", text=str(i)) for i in range(20)))
    stamps: list[str] = [r["ts"] for r in sent]
    assert len(set(stamps)) == 20
    ordered = [m["ts"] for m in fake.messages("C1")]
    assert ordered == sorted(ordered, key=float)
    assert all(len(ts.split(".")[1]) == 6 for ts in stamps)


async def test_other_methods(fake: FakeSlack) -> None:
    fake.add_user("U1", "alice", real_name="Alice Liddell", display_name="alice.l")
    fake.set_usergroup("S0PLATFORM", ["U1", "U2"])
    client = web_client(fake)
    sent = await client.chat_postMessage(channel="C1", text="parent")
    reply = await client.chat_postMessage(channel="C1", text="reply", thread_ts=sent["ts"])
    with pytest.raises(SlackApiError) as excinfo:
        await client.usergroups_users_list(usergroup="S0NOPE")
    got: dict[str, Any] = {
        "ephemeral": (await client.chat_postEphemeral(channel="C1", user="U1", text="you may not approve")).data,
        "permalink": (await client.chat_getPermalink(channel="C1", message_ts=sent["ts"]))["permalink"],
        "reply_link": (await client.chat_getPermalink(channel="C1", message_ts=reply["ts"]))["permalink"],
        "user": (await client.users_info(user="U1"))["user"],
        "stranger": (await client.users_info(user="U9"))["user"],
        "group": (await client.usergroups_users_list(usergroup="S0PLATFORM"))["users"],
        "no_group": api_error(excinfo),
        "other": (await client.reactions_add(channel="C1", timestamp=sent["ts"], name="eyes")).data,
        "ts": sent["ts"],
    }
    assert got["ephemeral"]["ok"] and got["ephemeral"]["message_ts"]
    assert fake.ephemerals[0]["user"] == "U1" and fake.ephemerals[0]["text"] == "you may not approve"
    assert got["permalink"] == f"https://argo-why-demo.slack.com/archives/C1/p{got['ts'].replace('.', '')}"
    assert f"?thread_ts={got['ts']}&cid=C1" in got["reply_link"]
    assert got["user"]["id"] == "U1" and got["user"]["name"] == "alice"
    assert got["user"]["real_name"] == "Alice Liddell" and got["user"]["profile"]["display_name"] == "alice.l"
    assert got["stranger"]["id"] == "U9" and got["stranger"]["profile"]["display_name"]
    assert got["group"] == ["U1", "U2"] and got["no_group"] == "no_such_subteam"
    assert got["other"] == {"ok": True}


async def test_form_encoded_params_and_token_field(fake: FakeSlack) -> None:
    anonymous = AsyncWebClient(token=None, base_url=fake.url)
    blocks = json.dumps([{"type": "divider"}])
    form = {"token": fake.token, "channel": "C1", "text": "form", "blocks": blocks, "reply_broadcast": "false"}
    sent = data(await anonymous.api_call("chat.postMessage", data=form))
    assert sent["ok"] and sent["message"]["blocks"] == [{"type": "divider"}]
    [call] = fake.calls
    assert call.params["blocks"] == '[{"type": "divider"}]'  # form values are recorded as sent: strings
    assert "authorization" not in call.headers


async def test_invalid_token_is_invalid_auth(fake: FakeSlack) -> None:
    errors = []
    for client in (
        AsyncWebClient(token="xoxb-wrong", base_url=fake.url),
        AsyncWebClient(token=None, base_url=fake.url),
    ):
        with pytest.raises(SlackApiError) as excinfo:
            await client.chat_postMessage(channel="C1", text="hi")
        assert excinfo.value.response.status_code == 200  # Slack reports auth errors with HTTP 200
        errors.append(api_error(excinfo))
    assert errors == ["invalid_auth", "invalid_auth"]
    assert fake.messages("C1") == []


async def test_error_next(fake: FakeSlack) -> None:
    fake.error_next("chat.postMessage", "channel_not_found")
    client = web_client(fake)
    with pytest.raises(SlackApiError) as excinfo:
        await client.chat_postMessage(channel="C1", text="hi")
    assert api_error(excinfo) == "channel_not_found"
    assert (await client.chat_postMessage(channel="C1", text="hi"))["ok"] is True
    assert [c.status for c in fake.calls] == [200, 200]


# -- failures and the SDK's retry handlers ---------------------------------------------------------------------------


async def test_rate_limited_without_retry_handler(fake: FakeSlack) -> None:
    fake.fail_next("chat.postMessage", retry_after=7)
    with pytest.raises(SlackApiError) as excinfo:
        await web_client(fake).chat_postMessage(channel="C1", text="hi")
    response = excinfo.value.response
    assert response.status_code == 429
    assert response["error"] == "ratelimited"
    assert response.headers["Retry-After"] == "7"


async def test_rate_limited_then_success_with_retry_handler(fake: FakeSlack) -> None:
    fake.fail_next("chat.postMessage", retry_after=0)
    started = time.monotonic()
    sent = await web_client(fake, rate_limit_retries=2).chat_postMessage(channel="C1", text="hi")
    assert sent["ok"] and time.monotonic() - started < 3
    calls = fake.wait_for("chat.postMessage", 2)
    assert [c.status for c in calls] == [429, 200]
    assert len(fake.messages("C1")) == 1


async def test_server_error_then_success_with_retry_handler(fake: FakeSlack) -> None:
    fake.http_error_next("chat.update", status=500)
    fake.http_error_next("chat.postMessage", status=503, count=2)

    client = web_client(fake, server_error_retries=1)
    with pytest.raises(SlackApiError) as excinfo:
        await client.chat_postMessage(channel="C1", text="hi")  # 503 twice: one retry is not enough
    assert excinfo.value.response.status_code == 503
    assert excinfo.value.response["error"] == "internal_error"

    again = web_client(fake, server_error_retries=1)
    sent = await again.chat_postMessage(channel="C1", text="hi")
    assert (await again.chat_update(channel="C1", ts=sent["ts"], text="hi again"))["ok"]
    assert [c.status for c in fake.calls_to("chat.update")] == [500, 200]
    assert [c.status for c in fake.calls_to("chat.postMessage")] == [503, 503, 200]


async def test_down_and_up(fake: FakeSlack) -> None:
    fake.down()

    async def post() -> AsyncSlackResponse:
        return await web_client(fake).chat_postMessage(channel="C1", text="hi")

    with pytest.raises(SlackApiError) as excinfo:
        await post()
    assert excinfo.value.response.status_code == 503
    fake.up()
    assert (await post())["ok"]


# -- files_upload_v2 -----------------------------------------------------------------------------------------------


async def test_files_upload_v2_end_to_end(fake: FakeSlack) -> None:
    diff = "--- desired\n+++ live\n-  replicas: 2\n+  replicas: 5\n"
    client = web_client(fake)
    ts = (await client.chat_postMessage(channel="C1", text="web is OutOfSync"))["ts"]
    done = await client.files_upload_v2(channel="C1", thread_ts=ts, content=diff, filename="diff.txt")
    assert done["ok"] and done["file"]["title"] == "diff.txt"
    assert fake.uploads == [Upload("diff.txt", diff.encode(), "C1", ts)]
    methods = [c.method for c in fake.calls]
    assert methods == ["chat.postMessage", "files.getUploadURLExternal", UPLOAD, "files.completeUploadExternal"]
    get_url, upload, _ = fake.calls[1:]
    assert get_url.params["length"] == str(len(diff.encode()))
    assert get_url.response["upload_url"].startswith(fake.root)
    assert upload.response == f"OK - {len(diff.encode())}"


async def test_files_upload_v2_failed_upload_is_a_request_error(fake: FakeSlack) -> None:
    fake.http_error_next(UPLOAD, status=500)
    with pytest.raises(SlackRequestError):
        await web_client(fake).files_upload_v2(channel="C1", content="x", filename="diff.txt")
    assert fake.uploads == [] and not fake.calls_to("files.completeUploadExternal")


# -- polling ---------------------------------------------------------------------------------------------------------


def test_wait_for_times_out_with_what_it_saw(fake: FakeSlack) -> None:
    with pytest.raises(TimeoutError, match=r"0 of 1 chat\.update"):
        fake.wait_for("chat.update", timeout=0.05)


# -- requests from Slack to the bot --------------------------------------------------------------------------------


def test_signed_headers_verify_with_the_sdk() -> None:
    body = slash_command_body("/argo", "why shop")
    headers = signed_headers(SECRET, body)
    assert SignatureVerifier(SECRET).is_valid_request(body, headers)
    assert headers["content-type"] == "application/x-www-form-urlencoded"
    assert not SignatureVerifier("another-secret").is_valid_request(body, headers)
    assert not SignatureVerifier(SECRET).is_valid_request(body + b"x", headers)
    stale = signed_headers(SECRET, body, timestamp=int(time.time()) - 301)
    assert not SignatureVerifier(SECRET).is_valid_request(body, stale)
    assert signed_headers(SECRET, event_body({"type": "app_mention"}, "Ev1"))["content-type"] == "application/json"


def test_body_builders_shapes(fake: FakeSlack) -> None:
    raw_command = slash_command_body("/argo", "why shop", response_url=fake)
    command = {k: v[0] for k, v in parse_qs(raw_command.decode()).items()}
    assert command["command"] == "/argo" and command["text"] == "why shop"
    assert command["user_id"] == "U1" and command["channel_id"] == "C1" and command["team_id"] == "T0DEMO"
    assert command["response_url"].startswith(fake.root + "response/") and command["trigger_id"]

    raw = block_action_body("approve", "shop/web", message_ts="1764500000.000100", action_ts="1764500001.000001")
    payload = json.loads(parse_qs(raw.decode())["payload"][0])
    assert payload["type"] == "block_actions"
    assert payload["container"] == {
        "type": "message",
        "message_ts": "1764500000.000100",
        "channel_id": "C1",
        "is_ephemeral": False,
    }
    assert payload["user"]["id"] == "U1" and payload["trigger_id"] and payload["response_url"]
    assert payload["actions"][0] == {
        "action_id": "approve",
        "block_id": "argo-why-actions",
        "text": {"type": "plain_text", "text": "approve", "emoji": True},
        "value": "shop/web",
        "type": "button",
        "action_ts": "1764500001.000001",
    }

    envelope = json.loads(event_body({"type": "app_mention", "text": "<@U0BOT> why"}, "Ev01"))
    assert envelope["type"] == "event_callback" and envelope["event_id"] == "Ev01"
    assert envelope["event"]["type"] == "app_mention" and envelope["authorizations"][0]["user_id"] == BOT_USER_ID
    assert json.loads(url_verification_body("abc")) == {
        "token": "verification_token",
        "challenge": "abc",
        "type": "url_verification",
    }


async def test_bolt_slash_command_acks_and_responds(fake: FakeSlack) -> None:
    seen: list[dict[str, Any]] = []
    app = bolt_app(fake, SECRET)

    @app.command("/argo")
    async def argo(ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        await ack("Working on it…")
        seen.append(command)
        await respond(text="shop/web is OutOfSync", response_type="ephemeral")

    body = slash_command_body("/argo", "why shop/web", response_url=fake)
    response = await app.async_dispatch(signed_request(SECRET, body))
    await fake.wait_for_async(RESPONSE_URL)
    assert response.status == 200
    assert response.body == "Working on it…"  # ack(text) answers the text as is
    assert seen[0]["text"] == "why shop/web"
    assert len(fake.calls_to("auth.test")) == 1  # Bolt's single-team authorization
    [posted] = fake.responses
    assert posted["text"] == "shop/web is OutOfSync" and posted["response_type"] == "ephemeral"
    assert fake.calls_to(RESPONSE_URL)[0].response == "ok"


async def test_bolt_rejects_a_bad_signature(fake: FakeSlack) -> None:
    app = bolt_app(fake, SECRET)
    app.command("/argo")(_ack_only)
    body = slash_command_body("/argo", "why")
    assert (await app.async_dispatch(signed_request("another-secret", body))).status == 401


async def test_bolt_block_action_url_verification_and_event(fake: FakeSlack) -> None:
    clicked: list[dict[str, Any]] = []
    mentioned: list[dict[str, Any]] = []
    app = bolt_app(fake, SECRET)

    @app.action("approve")
    async def approve(ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        clicked.append(body)

    @app.event("app_mention")
    async def mention(event: dict[str, Any]) -> None:
        mentioned.append(event)

    statuses = []
    for body in (
        block_action_body("approve", "shop/web", response_url=fake),
        url_verification_body("chal-1"),
        event_body({"type": "app_mention", "user": "U1", "text": "<@U0BOT> why", "channel": "C1"}, "Ev1"),
    ):
        response = await app.async_dispatch(signed_request(SECRET, body))
        statuses.append((response.status, response.body))
    await asyncio.sleep(0.05)  # event listeners run after the automatic ack
    (action, _), (challenge, challenge_body), (event, _) = statuses
    assert (action, challenge, event) == (200, 200, 200)
    assert json.loads(challenge_body) == {"challenge": "chal-1"}
    assert clicked[0]["actions"][0]["value"] == "shop/web" and clicked[0]["container"]["channel_id"] == "C1"
    assert mentioned[0]["text"] == "<@U0BOT> why"


async def test_response_url_limit(fake: FakeSlack) -> None:
    from slack_sdk.webhook.async_client import AsyncWebhookClient

    hook = AsyncWebhookClient(fake.new_response_url())
    statuses = [(await hook.send(text=f"#{i}")).status_code for i in range(RESPONSE_URL_LIMIT + 1)]
    assert statuses == [200] * RESPONSE_URL_LIMIT + [404]
    assert len(fake.responses) == RESPONSE_URL_LIMIT


async def _ack_only(ack: AsyncAck) -> None:
    await ack()
