"""Slack slash commands (``/argo ...``) and buttons, as Bolt listeners.

Every listener acknowledges first (Slack wants an answer within 3 s), validates
its input before any call, and either answers at once (help, errors, always
ephemeral) or puts a job on the durable queue for the worker, which checks that
the app is visible where it was asked about (its channel, or a DM with one of its
approvers), then answers: why, diff, mute and every button. Button values are opaque ids of state kept in the
store; a double click (same ``action_ts``, user and action) is handled once.

An answer through a ``response_url`` that fails (refused, timed out) is logged once and changes nothing. A signed
request that still makes Bolt or a listener fail (what :mod:`handlers.slack_http` could not foresee) is answered 400
and logged in one line, never with a traceback.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond
from slack_bolt.response import BoltResponse

from bot.intake import Intake
from bot.intake.jobs import ActionId, ButtonJob, CommandJob, FixJob, HomeJob, NoteJob, app_key
from bot.slack.render import error_message, help_message
from bot.store import StoreUnavailable
from bot.wording import slack as wording

_APP = re.compile(r"^(?:(?P<ns>[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)/)?(?P<name>[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)$")
_DURATION = re.compile(r"^(?:(?P<d>\d+)d)?(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?$")
log = logging.getLogger("argo_why.slack")
MAX_MUTE_S = 30 * 24 * 3600
ACTION_DEDUPE_S = 600


@dataclass(frozen=True)
class Click:
    """A button click as the signed payload says it: the button's value, where, and who clicked."""

    state: str
    channel: str
    thread_ts: str | None
    """The thread the clicked message belongs to (the message itself when it is a parent)."""
    user: str


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


async def _tell(respond: AsyncRespond, text: str) -> None:
    """An ephemeral answer after the ack, through the request's response_url (none: nothing to answer to)."""
    try:
        await respond(text=text, response_type="ephemeral", replace_original=False)
    except ValueError:  # Bolt's way of saying that the request carried no response_url
        log.info("no response_url to answer %r", text)
    except (TimeoutError, aiohttp.ClientError, OSError) as e:  # the answer is lost, nothing else is
        log.warning("could not answer through the response_url (%s): %s", type(e).__name__, e)


async def _ack_error(ack: AsyncAck, text: str) -> None:
    msg = error_message(text)
    await ack(text=msg.text, blocks=msg.blocks)


def register(app: AsyncApp, services: Intake) -> None:
    """Attach the ``/argo`` command and the button listeners to a Bolt app, and its error handler."""

    @app.error
    async def refuse(error: Exception) -> BoltResponse:
        log.warning("signed Slack request refused: Bolt could not handle it (%s: %s)", type(error).__name__,
                    str(error)[:200])  # fmt: skip
        return BoltResponse(status=400, body={"error": "malformed request"})

    @app.command("/argo")
    async def argo_command(ack: AsyncAck, command: dict[str, Any]) -> None:
        words = (command.get("text") or "").split()
        sub = words[0].lower() if words else "help"
        services.metrics.commands.labels(
            name=sub if sub in ("why", "diff", "mute", "help", "drift") else "unknown"
        ).inc()
        if sub == "help":
            msg = help_message()
            await ack(text=msg.text, blocks=msg.blocks)
            return
        if sub == "drift":
            page = words[1] if len(words) > 1 else "1"
            if not page.isdigit() or not 0 < int(page) < 10_000:
                await _ack_error(ack, wording.BAD_PAGE)
                return
            job = CommandJob(command="drift", app="", channel=str(command.get("channel_id")),
                             user=str(command.get("user_id")), page=int(page))  # fmt: skip
            try:
                await services.queue.enqueue(job.payload())
            except StoreUnavailable:
                await _ack_error(ack, wording.STORE_DOWN)
                return
            await ack(text=wording.WORKING_OVERVIEW)
            return
        if sub not in ("why", "diff", "mute"):
            await _ack_error(ack, wording.UNKNOWN_COMMAND.format(sub=sub[:40]))
            return
        if len(words) < 2 or (parsed := parse_app(words[1])) is None:
            await _ack_error(ack, wording.BAD_APP_NAME.format(command=sub))
            return
        ns, name = parsed
        channel, user = str(command.get("channel_id")), str(command.get("user_id"))
        seconds = None
        if sub == "mute":
            seconds = parse_duration(words[2]) if len(words) > 2 else None
            if seconds is None:
                await _ack_error(ack, wording.BAD_DURATION)
                return
        try:
            # the worker checks that the app is visible in this channel before it mutes or answers anything
            job = CommandJob(command=sub, app=name, app_namespace=ns, channel=channel, user=user,
                             response_url=command.get("response_url"), mute_s=seconds,
                             duration=words[2] if seconds else None)  # fmt: skip
            await services.queue.enqueue(job.payload())
        except StoreUnavailable:
            await _ack_error(ack, wording.STORE_DOWN)
            return
        await ack(text=wording.WORKING.format(app=app_key(name, ns)))

    @app.event("app_home_opened")
    async def app_home_opened(event: dict[str, Any]) -> None:
        if event.get("tab") != "home" or not event.get("user"):
            return
        try:
            await services.queue.enqueue(HomeJob(user=str(event["user"])).payload())
        except StoreUnavailable:
            return  # the tab shows its last version; the next sweep publishes it again

    async def _button(ack: AsyncAck, body: dict[str, Any], action_id: ActionId, respond: AsyncRespond) -> Click | None:
        """Ack, drop double clicks, and return what every button job needs."""
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
            await _tell(respond, wording.STORE_DOWN)
            return None
        message = body.get("message") or {}
        return Click(
            state=str(action.get("value") or ""),
            channel=str(container.get("channel_id") or (body.get("channel") or {}).get("id")),
            thread_ts=str(message.get("thread_ts") or container.get("message_ts") or "") or None,
            user=user,
        )

    async def _enqueue(job: ButtonJob | NoteJob | FixJob, respond: AsyncRespond) -> None:
        try:
            await services.queue.enqueue(job.payload())
        except StoreUnavailable:
            await _tell(respond, wording.STORE_DOWN)

    @app.action(ActionId.SHOW_DIFF)
    async def show_diff(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        click = await _button(ack, body, ActionId.SHOW_DIFF, respond)
        if click:
            await _enqueue(ButtonJob(type="show_diff", **asdict(click)), respond)

    @app.action(ActionId.RECHECK)
    async def recheck(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        click = await _button(ack, body, ActionId.RECHECK, respond)
        if click:
            await _enqueue(ButtonJob(type="recheck", **asdict(click)), respond)

    @app.action(ActionId.MUTE)
    async def mute(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        click = await _button(ack, body, ActionId.MUTE, respond)
        if click:  # the worker checks that the app is visible here, mutes it and says so in the thread
            await _enqueue(ButtonJob(type="mute", **asdict(click)), respond)

    async def _fix(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond, action_id: ActionId) -> None:
        """Open PR and Approve: everything is decided by the worker, from the signed payload's ``user.id``."""
        click = await _button(ack, body, action_id, respond)
        if not click:
            return
        action = (body.get("actions") or [{}])[0]
        message = body.get("message") or {}
        message_ts = str((body.get("container") or {}).get("message_ts") or message.get("ts") or "")
        raw_blocks = message.get("blocks")
        blocks: list[Any] = raw_blocks if isinstance(raw_blocks, list) else []
        thread_ts, block_id = message.get("thread_ts"), action.get("block_id")
        job = FixJob(type="open_pr" if action_id == ActionId.OPEN_PR else "approve", state=click.state,
                     channel=click.channel, message_ts=message_ts,
                     thread_ts=thread_ts if isinstance(thread_ts, str) and thread_ts else None,
                     block_id=block_id if isinstance(block_id, str) and block_id else None, user=click.user,
                     blocks=[b for b in blocks if isinstance(b, dict)])  # fmt: skip
        await _enqueue(job, respond)

    @app.action(ActionId.OPEN_PR)
    async def open_pr(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await _fix(ack, body, respond, ActionId.OPEN_PR)

    @app.action(ActionId.APPROVE)
    async def approve(ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond) -> None:
        await _fix(ack, body, respond, ActionId.APPROVE)
