"""The Web API methods of the fake Slack and the workspace they read and change (channels, messages, users, user
groups, files, response URLs). ``FakeSlack`` (``server.py``) routes each call here while holding its lock.

What the methods guarantee (the parts of Slack's behaviour they reproduce):

* Messages: ``chat.postMessage`` returns the channel **ID** (a ``#name`` is mapped to a stable ``C…`` ID, a user ID to a
  ``D…`` DM ID) and a unique, strictly increasing ``ts`` (``1764500000.000100``). ``chat.update`` follows Slack's block
  rules: given ``blocks`` replace the whole list (``[]`` removes them), omitted ``blocks`` are kept (Slack docs
  "chat.update"); an unknown ``ts`` answers ``message_not_found``. A message without ``text``, ``blocks`` and
  ``attachments`` answers ``no_text``; more than 50 blocks answers ``invalid_blocks`` (Slack docs "Blocks").
* Reading back: ``conversations.history`` (top-level messages, newest first) and ``conversations.replies`` (the
  parent, then its replies), with ``oldest``/``latest``, ``limit`` and ``cursor``; the ``metadata`` a message was
  posted with is returned only with ``include_all_metadata``, as on Slack.
* Channels: ``conversations.list`` pages (``limit``, default 100, at most 1000; ``cursor``; ``types``) through the
  channels known by name (``FakeSlack.add_channel``, or a ``#name`` posted to), as Slack lists them (``next_cursor``
  empty on the last page); a private channel (``G…``) is listed only when ``types`` includes ``private_channel``.
* Files: ``files_upload_v2``'s three steps (slack_sdk ``web/async_client.py``): ``files.getUploadURLExternal`` returns
  an ``upload_url`` on this server; the POST of the bytes answers ``200 text/plain "OK - <length>"`` like
  files.slack.com (the SDK reads it as text); ``files.completeUploadExternal`` shares the uploaded bytes (``uploads``)
  and answers ``files: [{id, title}]``.
* ``response_url``: ``POST /response/<n>`` takes Bolt's ``respond()`` JSON and answers ``200 "ok"``; like Slack it
  refuses an empty message (400 ``no_text``) and more than 5 posts to one URL (404 ``used_url``, our approximation of
  Slack's limit of 5 responses per URL, Slack docs "slash commands").
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from typing import Any

from bot.demo.fake_slack import views
from bot.demo.fake_slack.wire import (
    BOT_ID,
    BOT_NAME,
    BOT_USER_ID,
    JSON,
    MAX_BLOCKS,
    RESPONSE_URL_LIMIT,
    TEAM,
    TEAM_ID,
    TEAM_URL,
    Upload,
    _Answer,
    _BadBody,
    _error,
    _json_field,
    _str_or_none,
    _truthy,
    _wire_message,
)

# Conversation and user IDs are upper-case letters and digits behind a type letter (channel names are lower-case).
_ID = re.compile(r"^[CDGUW][A-Z0-9]+$")


class WebApi:
    """The workspace and the methods of ``FakeSlack``: ``_methods`` maps a Web API method to its handler; uploads and
    response URLs are answered by ``_upload`` and ``_respond``. The caller holds the server's lock."""

    root: str  # the server's base URL, set by FakeSlack: upload and response URLs point at it

    def __init__(self) -> None:
        super().__init__()
        self.uploads: list[Upload] = []
        self.ephemerals: list[JSON] = []  # chat.postEphemeral messages: channel, user, text, blocks, thread_ts, ts
        self.responses: list[JSON] = []  # JSON bodies posted to response URLs, with "response_url" added
        self._messages: dict[str, list[JSON]] = {}
        self._channel_ids: dict[str, str] = {}  # name -> ID
        self._channel_names: dict[str, str] = {}  # ID -> name
        self._users: dict[str, JSON] = {}
        self._usergroups: dict[str, list[str]] = {}
        self._files: dict[str, JSON] = {}
        self.homes: dict[str, JSON] = {}  # views.publish: the App Home view of each user
        self._response_posts: dict[str, int] = {}
        self._last_ts_us = 0
        self._counter = 0
        self._methods: dict[str, Callable[[JSON], JSON]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.getPermalink": self._get_permalink,
            "conversations.info": self._conversations_info,
            "conversations.list": self._conversations_list,
            "conversations.history": self._history,
            "conversations.replies": self._replies,
            "users.info": self._users_info,
            "usergroups.users.list": self._usergroup_users,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "views.publish": lambda params: views.publish(self.homes, params),
        }

    # -- model helpers ----------------------------------------------------------------------------------------------

    def _next_ts(self) -> str:
        # Wall-clock based like Slack's, but strictly increasing so two posts in the same microsecond differ.
        self._last_ts_us = max(time.time_ns() // 1000, self._last_ts_us + 1)
        return f"{self._last_ts_us // 1_000_000}.{self._last_ts_us % 1_000_000:06d}"

    def _resolve_channel(self, value: str) -> str:
        value = value.strip()
        if _ID.match(value):
            # Posting to a user ID posts to the DM with that user; Slack answers with the D… ID.
            return "D" + value[1:] if value[0] in "UW" else value
        name = value.lstrip("#")
        if name not in self._channel_ids:
            channel_id = f"C{len(self._channel_ids) + 1:08d}"
            self._channel_ids[name] = channel_id
            self._channel_names[channel_id] = name
        return self._channel_ids[name]

    def _find(self, channel_id: str, ts: str) -> JSON | None:
        for record in self._messages.get(channel_id, []):
            if record["ts"] == ts:
                return record
        return None

    @staticmethod
    def _content(params: JSON) -> tuple[str | None, list[Any] | None, list[Any] | None]:
        text = _str_or_none(params.get("text"))
        blocks = _json_field(params.get("blocks"), "invalid_blocks_format")
        attachments = _json_field(params.get("attachments"), "invalid_attachments")
        if blocks is not None and not isinstance(blocks, list):
            raise _BadBody("invalid_blocks_format")
        if attachments is not None and not isinstance(attachments, list):
            raise _BadBody("invalid_attachments")
        return text, blocks, attachments

    def _listing(self, params: JSON, records: list[JSON]) -> JSON:
        """A page of ``records`` as conversations.history/replies answer it: ``oldest``/``latest`` bounds (exclusive
        unless ``inclusive``), ``limit`` (default 100), ``cursor``; metadata only with ``include_all_metadata``."""
        inclusive = _truthy(params.get("inclusive"))
        oldest, latest = float(params.get("oldest") or 0), float(params.get("latest") or 9e12)
        chosen = [r for r in records if (oldest <= float(r["ts"]) if inclusive else oldest < float(r["ts"]))
                  and float(r["ts"]) < latest]  # fmt: skip
        start = int(params.get("cursor") or 0)
        limit = int(params.get("limit") or 100)
        page = chosen[start : start + limit]
        messages = []
        for r in page:
            m = _wire_message(r)
            if r.get("metadata") and _truthy(params.get("include_all_metadata")):
                m["metadata"] = copy.deepcopy(r["metadata"])
            messages.append(m)
        more = start + limit < len(chosen)
        return {"ok": True, "messages": messages, "has_more": more,
                "response_metadata": {"next_cursor": str(start + limit) if more else ""}}  # fmt: skip

    # -- Web API methods --------------------------------------------------------------------------------------------

    @staticmethod
    def _auth_test(params: JSON) -> JSON:
        return {
            "ok": True,
            "url": TEAM_URL,
            "team": TEAM,
            "user": BOT_NAME,
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _post_message(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        text, blocks, attachments = self._content(params)
        if text is None and not blocks and not attachments:
            return _error("no_text")
        if blocks is not None and len(blocks) > MAX_BLOCKS:
            return _error("invalid_blocks", errors=[f"must provide at most {MAX_BLOCKS} items [json-pointer:/blocks]"])
        channel_id = self._resolve_channel(channel)
        thread_ts = _str_or_none(params.get("thread_ts"))
        metadata = _json_field(params.get("metadata"), "invalid_metadata")
        record: JSON = {
            "metadata": metadata if isinstance(metadata, dict) else None,
            "channel": channel_id,
            "ts": self._next_ts(),
            "thread_ts": thread_ts,
            "text": text or "",
            "blocks": blocks or [],
            "attachments": attachments or [],
            "updated": 0,
            "edited_ts": None,
            "reply_broadcast": thread_ts is not None and _truthy(params.get("reply_broadcast")),
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
        }
        self._messages.setdefault(channel_id, []).append(record)
        return {"ok": True, "channel": channel_id, "ts": record["ts"], "message": _wire_message(record)}

    def _update(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        ts = _str_or_none(params.get("ts"))
        if channel is None:
            return _error("channel_not_found")
        record = self._find(self._resolve_channel(channel), ts) if ts else None
        if record is None:
            return _error("message_not_found")
        text, blocks, attachments = self._content(params)
        if text is None and blocks is None and attachments is None:
            return _error("no_text")
        if blocks is not None and len(blocks) > MAX_BLOCKS:
            return _error("invalid_blocks", errors=[f"must provide at most {MAX_BLOCKS} items [json-pointer:/blocks]"])
        # Slack's rules ("chat.update"): what is given replaces, what is omitted stays; blocks=[] removes the blocks.
        if text is not None:
            record["text"] = text
        if blocks is not None:
            record["blocks"] = blocks
        if attachments is not None:
            record["attachments"] = attachments
        record["updated"] += 1
        record["edited_ts"] = self._next_ts()
        return {
            "ok": True,
            "channel": record["channel"],
            "ts": record["ts"],
            "text": record["text"],
            "message": _wire_message(record),
        }

    def _post_ephemeral(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        user = _str_or_none(params.get("user"))
        if channel is None:
            return _error("channel_not_found")
        if user is None:
            return _error("user_not_in_channel")
        text, blocks, attachments = self._content(params)
        if text is None and not blocks and not attachments:
            return _error("no_text")
        ts = self._next_ts()
        self.ephemerals.append(
            {
                "channel": self._resolve_channel(channel),
                "user": user,
                "text": text or "",
                "blocks": blocks or [],
                "thread_ts": _str_or_none(params.get("thread_ts")),
                "ts": ts,
            }
        )
        return {"ok": True, "message_ts": ts}

    def _get_permalink(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        ts = _str_or_none(params.get("message_ts"))
        if channel is None:
            return _error("channel_not_found")
        channel_id = self._resolve_channel(channel)
        record = self._find(channel_id, ts) if ts else None
        if record is None:
            return _error("message_not_found")
        permalink = f"{TEAM_URL}archives/{channel_id}/p{record['ts'].replace('.', '')}"
        if record["thread_ts"] is not None:
            permalink += f"?thread_ts={record['thread_ts']}&cid={channel_id}"
        return {"ok": True, "channel": channel_id, "permalink": permalink}

    def _history(self, params: JSON) -> JSON:
        """Top-level messages (and broadcast replies), newest first, like Slack."""
        channel = _str_or_none(params.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        records = self._messages.get(self._resolve_channel(channel), [])
        top = [r for r in records if r["thread_ts"] is None or r["reply_broadcast"]]
        return self._listing(params, list(reversed(top)))

    def _replies(self, params: JSON) -> JSON:
        """The thread of ``ts``: its parent first, then the replies, oldest first, like Slack."""
        channel, ts = _str_or_none(params.get("channel")), _str_or_none(params.get("ts"))
        if channel is None:
            return _error("channel_not_found")
        records = self._messages.get(self._resolve_channel(channel), [])
        thread = [r for r in records if r["ts"] == ts or r["thread_ts"] == ts]
        if not thread:
            return _error("thread_not_found")
        return self._listing(params, thread)

    def _conversations_list(self, params: JSON) -> JSON:
        types = str(params.get("types") or "public_channel").split(",")
        try:
            limit = max(1, min(int(params.get("limit") or 100), 1000))
            start = int(str(params.get("cursor") or "0").removeprefix("dGVhbTpD")) if params.get("cursor") else 0
        except ValueError:
            return _error("invalid_cursor")
        wanted = [(cid, name) for name, cid in sorted(self._channel_ids.items())
                  if ("private_channel" if cid.startswith("G") else "public_channel") in types]  # fmt: skip
        page = wanted[start : start + limit]
        more = start + limit < len(wanted)
        channels = [{"id": cid, "name": name, "name_normalized": name, "is_channel": cid.startswith("C"),
                     "is_group": False, "is_private": cid.startswith("G"), "is_archived": False,
                     "context_team_id": TEAM_ID} for cid, name in page]  # fmt: skip
        return {"ok": True, "channels": channels,
                "response_metadata": {"next_cursor": f"dGVhbTpD{start + limit}" if more else ""}}  # fmt: skip

    def _conversations_info(self, params: JSON) -> JSON:
        channel = _str_or_none(params.get("channel"))
        if channel is None:
            return _error("channel_not_found")
        channel_id = self._resolve_channel(channel)
        name = self._channel_names.get(channel_id, f"channel-{channel_id.lower()}")
        return {
            "ok": True,
            "channel": {
                "id": channel_id,
                "name": name,
                "name_normalized": name,
                "is_channel": channel_id.startswith("C"),
                "is_group": False,
                "is_im": channel_id.startswith("D"),
                "is_private": channel_id.startswith("G"),
                "is_archived": False,
                "is_general": False,
                "is_member": True,
                "created": 1700000000,
                "context_team_id": TEAM_ID,
            },
        }

    @staticmethod
    def _user_object(user_id: str, name: str, real_name: str, display_name: str) -> JSON:
        return {
            "id": user_id,
            "team_id": TEAM_ID,
            "name": name,
            "deleted": False,
            "real_name": real_name,
            "tz": "Etc/UTC",
            "tz_offset": 0,
            "is_admin": False,
            "is_bot": user_id == BOT_USER_ID,
            "profile": {
                "real_name": real_name,
                "real_name_normalized": real_name,
                "display_name": display_name,
                "display_name_normalized": display_name,
            },
        }

    def _users_info(self, params: JSON) -> JSON:
        user_id = _str_or_none(params.get("user"))
        if user_id is None:
            return _error("user_not_found")
        user = self._users.get(user_id)
        if user is None:
            name = BOT_NAME if user_id == BOT_USER_ID else f"user-{user_id.lower()}"
            user = self._user_object(user_id, name, name if user_id == BOT_USER_ID else f"User {user_id}", name)
        return {"ok": True, "user": copy.deepcopy(user)}

    def _usergroup_users(self, params: JSON) -> JSON:
        group = _str_or_none(params.get("usergroup"))
        if group is None or group not in self._usergroups:
            return _error("no_such_subteam")
        return {"ok": True, "users": list(self._usergroups[group])}

    def _get_upload_url(self, params: JSON) -> JSON:
        filename = _str_or_none(params.get("filename"))
        length = str(params.get("length", ""))
        if filename is None or not length.isdigit():
            return _error("invalid_arguments")
        self._counter += 1
        file_id = f"F{self._counter:09d}"
        self._files[file_id] = {"filename": filename, "length": int(length), "content": None}
        return {"ok": True, "upload_url": f"{self.root}upload/{file_id}", "file_id": file_id}

    def _upload(self, file_id: str, body: bytes) -> _Answer:
        entry = self._files.get(file_id)
        if entry is None:
            return _Answer.plain("Not Found", status=404)
        entry["content"] = body
        return _Answer.plain(f"OK - {len(body)}")

    def _complete_upload(self, params: JSON) -> JSON:
        files = _json_field(params.get("files"), "invalid_arguments")
        if not isinstance(files, list) or not files or not all(isinstance(f, dict) and "id" in f for f in files):
            return _error("invalid_arguments")
        entries = [self._files.get(str(f["id"])) for f in files]
        if any(entry is None or entry["content"] is None for entry in entries):
            return _error("file_not_found")  # never issued, or its bytes never arrived
        channel = _str_or_none(params.get("channel_id"))
        channels = [channel] if channel else [c for c in str(params.get("channels") or "").split(",") if c]
        targets: list[str | None] = [self._resolve_channel(c) for c in channels] or [None]
        thread_ts = _str_or_none(params.get("thread_ts"))
        answered: list[JSON] = []
        for spec, entry in zip(files, entries, strict=True):
            assert entry is not None
            title = str(spec.get("title") or entry["filename"])
            for target in targets:
                self.uploads.append(Upload(entry["filename"], entry["content"], target, thread_ts))
            size = len(entry["content"])
            answered.append({"id": spec["id"], "title": title, "name": entry["filename"], "size": size})
        return {"ok": True, "files": answered}

    def _respond(self, response_id: str, params: JSON, bad_body: str | None) -> _Answer:
        # Incoming-webhook style: plain-text answers and real HTTP statuses, unlike the Web API.
        if bad_body:
            return _Answer.plain("invalid_payload", status=400)
        posts = self._response_posts.get(response_id, 0) + 1
        self._response_posts[response_id] = posts
        if posts > RESPONSE_URL_LIMIT:
            return _Answer.plain("used_url", status=404)
        if not any(params.get(key) for key in ("text", "blocks", "attachments", "delete_original")):
            return _Answer.plain("no_text", status=400)
        self.responses.append({**copy.deepcopy(params), "response_url": f"{self.root}response/{response_id}"})
        return _Answer.plain("ok")
