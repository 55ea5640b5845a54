"""``POST /webhooks/argocd`` on the wire, since the endpoint is a plain ASGI app (issue 29): real uvicorn and Redis.

* every outcome answers the bytes the contract names (README, "The Slack bot: `argo-why serve`"): the status, the
  JSON body byte for byte, ``application/json`` with its ``Content-Length``, ``Connection: close`` after a 413;
* a client that goes away before its body is read gets nothing, enqueues nothing, and leaves no error in the log;
* ``POST /webhooks/argocd`` is taken at the edge, every other request on the path is answered by the router (405,
  the redirect of a trailing slash) as before;
* an accepted alert costs Redis one round trip (one ``EVALSHA`` naming its mark, nothing else), and a server that
  has lost its scripts (``SCRIPT FLUSH``, a new Redis) still gets the alert queued once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio

from bot.config import Settings, required
from tests.fakes.argocd import FakeArgoCD
from tests.fakes.kube import FakeKubernetes
from tests.fakes.slack import FakeSlack
from tests.harness.service_kit import Bot, running, service_settings, until

GOOD = {"app": {"name": "shop", "namespace": "argocd"}, "sync": {"status": "OutOfSync", "revision": "abc"},
        "operationState": {"phase": "Succeeded", "finishedAt": "2026-11-30T08:00:00Z"}}  # fmt: skip


@pytest.fixture
def settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Settings:  # fmt: skip
    return service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)


def _token(bot: Bot) -> str:
    return required(bot.settings.runtime.webhook_token, "WEBHOOK_TOKEN").get_secret_value()


def _exchange(port: int, request: bytes, *, close_early: bool = False) -> bytes:
    """One request on a socket of its own; the answer as the bytes that came back until the server closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        if close_early:
            return b""
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def _head(token: str, length: int, *, close: bool = True) -> bytes:
    """The head of a request; ``close``: it asks the server to close the connection after its answer."""
    return (f"POST /webhooks/argocd HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n"
            f"{'Connection: close' + chr(13) + chr(10) if close else ''}\r\n").encode()  # fmt: skip


def _split(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


async def test_every_outcome_answers_the_contract_bytes(settings: Settings) -> None:
    async with running(settings, workers=0) as bot:
        port = int(bot.url.rsplit(":", 1)[1])
        token = _token(bot)
        good = json.dumps(GOOD).encode()
        cases: list[tuple[bytes, int, bytes]] = [
            (_head("wrong", len(good)) + good, 401, b'{"error":"missing or wrong bearer token"}'),
            (_head(token, 9) + b"{not json", 400, b'{"error":"body is not valid JSON"}'),
            (_head(token, 17) + b'{"app":{"name":7}', 400, b'{"error":"body is not valid JSON"}'),
            (_head(token, 24) + b'{"app": {"name": "shop"}', 400, b'{"error":"body is not valid JSON"}'),
            (_head(token, 25) + b'{"app": {"name": "shop"}}', 400, b'{"error":"sync: Field required"}'),
            (_head(token, len(good)) + good, 202, b""),  # the entry id: checked below
            (_head(token, len(good)) + good, 200, b'{"status":"duplicate"}'),
        ]
        for request, status, expected in cases:
            got, headers, body = _split(await asyncio.to_thread(_exchange, port, request))
            assert got == status, (request[-40:], got, body)
            assert headers["content-type"] == "application/json"
            assert headers["content-length"] == str(len(body))
            if status == 202:
                answer = json.loads(body)
                assert set(answer) == {"status", "id"} and answer["status"] == "queued"
                assert body == b'{"status":"queued","id":"' + answer["id"].encode() + b'"}'
            else:
                assert body == expected
        big = b'{"pad": "' + b"x" * (1024 * 1024) + b'"}'
        # a keep-alive request: the answer is read to the end only because the server closes after its 413
        got, headers, body = _split(await asyncio.to_thread(_exchange, port, _head(token, len(big), close=False) + big))
        assert (got, body) == (413, b'{"error":"body over 1048576 bytes"}')
        assert headers["connection"].lower() == "close" and headers["content-type"] == "application/json"
        assert await bot.services.queue.depth() == 1


async def test_a_client_gone_before_its_body_is_read_gets_nothing_queued_and_no_error(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with running(settings, workers=0) as bot:
        port = int(bot.url.rsplit(":", 1)[1])
        good = json.dumps(GOOD).encode()
        for _ in range(3):  # a third of the body, then the connection closes
            await asyncio.to_thread(_exchange, port, _head(_token(bot), len(good)) + good[:40], close_early=True)
        await asyncio.sleep(0.3)
        assert await bot.services.queue.depth() == 0
        assert (await bot.webhook(GOOD)).status_code == 202  # the server is as it was
    bad = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, [f"{r.name}: {r.getMessage()[:300]}" for r in bad]


async def _monitor(url: str, seen: list[dict[str, Any]], ready: asyncio.Event) -> None:
    client = redis.asyncio.Redis.from_url(url)
    try:
        async with client.monitor() as m:
            ready.set()
            while True:
                seen.append(await m.next_command())
    finally:
        await client.aclose()


async def test_an_accepted_alert_is_one_round_trip_and_survives_a_script_flush(
    settings: Settings, redis_url: str
) -> None:
    seen: list[dict[str, Any]] = []
    ready = asyncio.Event()
    async with running(settings, workers=0) as bot:
        watcher = asyncio.create_task(_monitor(redis_url, seen, ready))
        await ready.wait()
        bodies = [{**GOOD, "sync": {"status": "OutOfSync", "revision": f"r{i}"}} for i in range(5)]
        for body in bodies:
            assert (await bot.webhook(body)).status_code == 202

        def dedupe(by_script: bool) -> list[dict[str, Any]]:
            return [c for c in seen if (c["client_type"] == "lua") == by_script and "seen:webhook:" in c["command"]]

        # MONITOR shows a script's own commands before the EVALSHA that ran them: wait for both
        await until(lambda: len(dedupe(True)) >= 5 and len(dedupe(False)) >= 5)
        sent = dedupe(False)
        assert len(sent) == 5 and all(c["command"].startswith("EVALSHA ") for c in sent), sent

        plain = redis.asyncio.Redis.from_url(redis_url)
        await plain.script_flush()  # the server forgets the script, as a new Redis would
        await plain.aclose()
        again = {**GOOD, "sync": {"status": "OutOfSync", "revision": "after-flush"}}
        assert (await bot.webhook(again)).status_code == 202
        assert (await bot.webhook(again)).json() == {"status": "duplicate"}
        assert (await bot.webhook(bodies[0])).json() == {"status": "duplicate"}
        assert await bot.services.queue.depth() == 6
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)


async def test_the_router_still_answers_the_webhook_paths_other_requests(settings: Settings) -> None:
    """``POST /webhooks/argocd`` is taken at the edge; every other request on that path is the router's, as before."""
    async with running(settings, workers=0) as bot:
        assert (await bot.http.get("/webhooks/argocd")).status_code == 405
        assert (await bot.http.put("/webhooks/argocd", content=b"{}")).status_code == 405
        slash = await bot.http.post("/webhooks/argocd/", content=b"{}", headers={"Authorization": "Bearer x"})
        assert slash.status_code == 307 and slash.headers["location"].endswith("/webhooks/argocd")
        assert (await bot.http.post("/webhooks/argocd", content=b"{}")).status_code == 401  # the edge's
