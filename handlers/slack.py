"""Slack slash commands (``/argo ...``) and buttons, as Bolt listeners.

Every listener acknowledges first (Slack wants an answer within 3 s), validates
its input before any call, and either answers at once (help, mute, errors,
always ephemeral for errors) or puts a job on the durable queue for the worker,
which answers in the channel. Button values are opaque ids of state kept in the
store; a double click (same ``action_ts``, user and action) is handled once.
"""

from __future__ import annotations

import re
import time
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond

from bot import wording
from bot.services import Services
from bot.slack.render import error_message, help_message
from bot.store import StoreUnavailable

_APP = re.compile(r"^(?:(?P<ns>[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)/)?(?P<name>[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$")
_DURATION = re.compile(r"^(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?$")
MAX_MUTE_S = 30 * 24 * 3600
ACTION_DEDUPE_S = 600


def parse_app(text: str) -> tuple[str | None, str] | None:
    """``name`` or ``namespace/name`` of an Application, or ``None`` when it is not a valid name."""
    m = _APP.match(text.strip())
    return (m.group("ns"), m.group("name")) if m else None


def parse_duration(text: str) -> int | None:
    """``30m``, ``2h``, ``1d12h`` -> seconds (1 minute to 30 days), else ``None``."""
    m = _DURATION.match(text.strip().lower())
    if not m or not any(m.groupdict().values()):
        return None
    seconds = sum(int(m.group(k) or 0) * f for k, f in (("d", 86400), ("h", 3600), ("m", 60)))
    return seconds if 60 <= seconds <= MAX_MUTE_S else None


def _app_key(ns: str | None, name: str) -> str:
    return f"{ns}/{name}" if ns else name


async def _ack_error(ack: AsyncAck, text: str) -> None:
    msg = error_message(text)
    await ack(text=msg.text, blocks=msg.blocks)


def register(app: AsyncApp, services: Services) -> None:
    """Attach the ``/argo`` command and the button listeners to a Bolt app."""

    @app.command("/argo")
    async def argo_command(ack: AsyncAck, command: dict[str, Any], respond: AsyncRespond) -> None:
        words = (command.get("text") or "").split()
        sub = words[0].lower() if words else "help"
        services.metrics.commands.labels(name=sub if sub in ("why", "diff", "mute", "help") else "unknown").inc()
        if sub == "help":
            msg = help_message()
            await ack(text=msg.text, blocks=msg.blocks)
            return
        if sub not in ("why", "diff", "mute"):
            await _ack_error(ack, wording.UNKNOWN_COMMAND.format(sub=sub[:40]))
            return
        if len(words) < 2 or (parsed := parse_app(words[1])) is None:
            await _ack_error(ack, wording.BAD_APP_NAME.format(command=sub))
            return
        ns, name = parsed
        channel, user = str(command.get("channel_id")), str(command.get("user_id"))
        try:
            if sub == "mute":
                seconds = parse_duration(words[2]) if len(words) > 2 else None
                if seconds is None:
                    await _ack_error(ack, wording.BAD_DURATION)
                    return
                await services.store.set_mute(_app_key(ns, name), time.time() + seconds, user)
                await ack()
                await respond(text=wording.MUTED.format(user=user, app=_app_key(ns, name), duration=words[2]),
                              response_type="in_channel")  # fmt: skip
                return
            await services.queue.enqueue({"type": "command", "command": sub, "app": name, "app_namespace": ns,
                                          "channel": channel, "user": user,
                                          "response_url": command.get("response_url")})  # fmt: skip
        except StoreUnavailable:
            await _ack_error(ack, wording.STORE_DOWN)
            return
        await ack(text=wording.WORKING.format(app=_app_key(ns, name)))

    async def _button(
        ack: AsyncAck, body: dict[str, Any], action_id: str, respond: AsyncRespond
    ) -> dict[str, Any] | None:
        """Ack, drop double clicks, and return the job fields every button job needs."""
        await ack()
        action = (body.get("actions") or [{}])[0]
        user = str((body.get("user") or {}).get("id"))
        container = body.get("container") or {}
        services.metrics.commands.labels(name=action_id).inc()
        key = f"action:{action.get('action_ts')}:{user}:{action_id}"
        try:
            if not await services.store.first_seen(key, ACTION_DEDUPE_S):
                return None
        except StoreUnavailable:
            await respond(text=wording.STORE_DOWN, response_type="ephemeral", replace_original=False)
            return None
        message = body.get("message") or {}
        return {
            "state": str(action.get("value") or ""),
            "channel": str(container.get("channel_id") or (body.get("channel") or {}).get("id")),
            "thread_ts": str(message.get("thread_ts") or container.get("message_ts") or ""),
            "user": user,
        }

    async def _enqueue(job: dict[str, Any], respond: AsyncRespond) -> None:
        try:
            await services.queue.enqueue(job)
        except StoreUnavailable:
            await respond(text=wording.STORE_DOWN, response_type="ephemeral", replace_original=False)

    @app.action("show_diff")
    async def show_diff(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        job = await _button(ack, body, "show_diff", respond)
        if job:
            await _enqueue({"type": "show_diff", **job}, respond)

    @app.action("recheck")
    async def recheck(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        job = await _button(ack, body, "recheck", respond)
        if job:
            await _enqueue({"type": "recheck", **job}, respond)

    @app.action("mute")
    async def mute(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        job = await _button(ack, body, "mute", respond)
        if not job:
            return
        try:
            state = await services.store.get_state(job["state"])
            if state is None:
                await respond(text=wording.STATE_EXPIRED, response_type="ephemeral", replace_original=False)
                return
            app_key = str(state["app_key"])
            await services.store.set_mute(app_key, time.time() + 24 * 3600, job["user"])
        except StoreUnavailable:
            await respond(text=wording.STORE_DOWN, response_type="ephemeral", replace_original=False)
            return
        note = wording.MUTED.format(user=job["user"], app=app_key, duration="24h")
        await _enqueue({"type": "note", "channel": job["channel"], "thread_ts": job["thread_ts"], "text": note},
                       respond)  # fmt: skip
