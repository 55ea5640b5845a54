"""Channel names to channel IDs, through ``conversations.list``, read once and cached.

Routes may name a channel (``#team-a``) instead of giving its ID; Slack's Web API posts by ID, and the thread map
keeps IDs (names change). :class:`Channels` lists the workspace's public and private channels the bot can see
(``conversations.list``, every page; scopes ``channels:read`` and ``groups:read``) the first time a name is asked
for, and keeps the map; a name it does not know makes it list again, at most once per :data:`RELIST_S` seconds, so
a channel created after start-up is found without a restart while a typo costs one call, not one per alert.
IDs are returned as given, without a call: an install that routes by ID needs neither scope.

Guarantee: :meth:`Channels.resolve` returns an ID or raises :class:`UnknownChannel` (a name Slack does not list),
or :class:`bot.slack.poster.SlackUnavailable` (Slack did not answer: the caller's job stays pending).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.errors import ArgoWhyError
from bot.routing import channel_ref, is_channel_id
from bot.slack.poster import SlackPoster

RELIST_S = 60.0
PAGE = 1000
MAX_PAGES = 100


class UnknownChannel(ArgoWhyError):
    """A channel name Slack does not list (a typo, an archived channel, or a private one the bot is not in)."""


class Channels:
    def __init__(self, poster: SlackPoster, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._poster = poster
        self._clock = clock
        self._ids: dict[str, str] = {}
        self._listed_at: float | None = None

    async def resolve(self, ref: str) -> str:
        """The ID of a channel given as an ID or a name (``#name`` or ``name``)."""
        ref = channel_ref(ref) if not is_channel_id(ref.strip()) else ref.strip()
        if is_channel_id(ref):
            return ref
        name = ref.lstrip("#")
        if name not in self._ids and (self._listed_at is None or self._clock() - self._listed_at >= RELIST_S):
            await self._list()
        if name not in self._ids:
            raise UnknownChannel(f"Slack has no channel #{name} that the bot can see (a typo, an archived channel, "
                                 "or a private channel the bot was not invited to)")  # fmt: skip
        return self._ids[name]

    async def _list(self) -> None:
        ids: dict[str, str] = {}
        cursor = ""
        for _ in range(MAX_PAGES):
            page = await self._poster.channels_page(cursor or None, PAGE)
            for c in page.get("channels") or []:
                if isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("id"), str):
                    ids[c["name"]] = c["id"]
            cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                break
        self._ids = ids
        self._listed_at = self._clock()
