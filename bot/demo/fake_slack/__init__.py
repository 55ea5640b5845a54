"""A fake Slack Web API: a real HTTP server on 127.0.0.1 that answers the calls argo-why makes, plus builders for the
signed requests Slack sends to the bot.

It exists so that the bot's real ``slack_sdk`` ``AsyncWebClient`` (aiohttp, which httpx mocks cannot intercept) and
Bolt's ``respond()`` talk to something that speaks Slack's wire format, in the offline ``make demo`` and in the tests
(as Bolt's own tests do, slackapi/bolt-python ``tests/mock_web_api_server/``). Nothing in production imports it. What
only tests need (failure injection, channel, user and user-group set-up, ``wait_for``, the other request builders) is
added in ``tests/fakes/slack.py``.

One module a job, each listing the parts of Slack's wire format it reproduces: ``server`` is the HTTP server
(``FakeSlack``: routing, parameters, authentication, the record of every call), ``web_api`` the Web API methods and
the workspace they change (messages, threads, files, response URLs), ``wire`` the identity of the fake workspace and
the shapes of answers, ``bodies`` the requests from Slack to the bot that the demo sends (``signed_headers``,
``block_action_body``). Every name this package had as a single module is still importable from here.

Not reproduced: rate limits (only injected), scopes, channel membership, OAuth, multipart bodies (the retired
``files.upload``), files appearing as messages in the channel, Events API delivery from Slack to the bot (use the
body builders of ``bodies``, and those of ``tests/fakes/slack.py``, with ``signed_headers``).
"""

from bot.demo.fake_slack.bodies import DEFAULT_RESPONSE_URL as DEFAULT_RESPONSE_URL
from bot.demo.fake_slack.bodies import _response_url as _response_url
from bot.demo.fake_slack.bodies import _trigger_id as _trigger_id
from bot.demo.fake_slack.bodies import block_action_body, signed_headers
from bot.demo.fake_slack.server import FakeSlack
from bot.demo.fake_slack.wire import (
    APP_ID,
    BOT_ID,
    BOT_NAME,
    BOT_USER_ID,
    MAX_BLOCKS,
    RESPONSE_URL,
    RESPONSE_URL_LIMIT,
    TEAM,
    TEAM_ID,
    TEAM_URL,
    UPLOAD,
    SlackCall,
    Upload,
)
from bot.demo.fake_slack.wire import JSON as JSON
from bot.demo.fake_slack.wire import _Answer as _Answer
from bot.demo.fake_slack.wire import _error as _error

# The public names, which tests/fakes/slack.py re-exports as its own. The ``X as X`` imports above are importable
# from here too, as they were from the single module: JSON, DEFAULT_RESPONSE_URL and the private helpers the tests'
# subclass and builders use.
__all__ = [
    "APP_ID",
    "BOT_ID",
    "BOT_NAME",
    "BOT_USER_ID",
    "MAX_BLOCKS",
    "RESPONSE_URL",
    "RESPONSE_URL_LIMIT",
    "TEAM",
    "TEAM_ID",
    "TEAM_URL",
    "UPLOAD",
    "FakeSlack",
    "SlackCall",
    "Upload",
    "block_action_body",
    "signed_headers",
]
