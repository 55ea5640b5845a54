"""Who is who in Slack, for approvals and pull requests: user-group members and people's names, cached.

``APPROVERS`` may name user groups (``S…``); their members come from ``usergroups.users.list`` and are cached
for :data:`CACHE_S` seconds per replica, so a burst of clicks costs one call while a change of the group is
seen within minutes. Names (``users.info``) are cached the same way; a name that cannot be read falls back
to the user ID, never an error. A Slack outage while reading a group raises :class:`SlackUnavailable`: the
click's job then stays pending and is retried, rather than refusing someone who may approve.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from bot.slack.poster import SlackPoster, SlackUnavailable

CACHE_S = 300.0


class Directory:
    def __init__(self, poster: SlackPoster, *, cache_s: float = CACHE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._poster = poster
        self._cache_s = cache_s
        self._clock = clock
        self._groups: dict[str, tuple[frozenset[str], float]] = {}
        self._names: dict[str, tuple[str | None, float]] = {}

    async def members(self, group: str) -> frozenset[str]:
        hit = self._groups.get(group)
        if hit is not None and hit[1] > self._clock():
            return hit[0]
        try:
            resp = await self._poster.call("usergroups.users.list", usergroup=group)
        except SlackUnavailable as e:
            if "no_such_subteam" in str(e) or "subteam_not_found" in str(e):
                members: frozenset[str] = frozenset()  # a group that does not exist has no members
            else:
                raise
        else:
            members = frozenset(str(u) for u in resp.get("users") or [])
        self._groups[group] = (members, self._clock() + self._cache_s)
        return members

    async def may_approve(self, user: str, approvers: Sequence[str]) -> bool:
        """``user`` (a user ID, ``U…``/``W…``) is listed in ``approvers`` or is a member of a user group there."""
        if not user.startswith(("U", "W")):
            return False  # a group's ID is never a person
        if user in approvers:
            return True
        for group in (a for a in approvers if a.startswith("S")):
            if user in await self.members(group):
                return True
        return False

    async def name(self, user: str) -> str | None:
        """The display name (or real name, or login) as Slack gives it, without an ``@`` (in a PR body an ``@``
        would mention whoever has that login on the Git host); ``None`` when it cannot be read."""
        hit = self._names.get(user)
        if hit is not None and hit[1] > self._clock():
            return hit[0]
        try:
            resp: Any = await self._poster.call("users.info", user=user)
            profile = (resp.get("user") or {}).get("profile") or {}
            found = profile.get("display_name") or profile.get("real_name") or (resp.get("user") or {}).get("name")
            name = str(found or "").lstrip("@") or None
        except SlackUnavailable:
            return None  # not cached: the next PR tries again
        self._names[user] = (name, self._clock() + self._cache_s)
        return name
