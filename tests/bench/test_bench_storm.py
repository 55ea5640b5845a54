"""bench/storm.py under faults (issue 22, item 21): a webhook whose connection is closed is counted and retried, not
a traceback; a benchmark that cannot finish says why in one line. (The bot's side of the ``httpx.ReadError``, its
keep-alive, is in tests/runtime/test_readiness.py.)"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

from bench.storm import failure_line, post_webhook

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def server_that_hangs_up(times: int) -> AsyncIterator[str]:
    """A local HTTP server that closes the first ``times`` connections after reading the request, then answers 202."""
    seen = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal seen
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), b"0"))  # fmt: skip
            await reader.readexactly(length)
            seen += 1
            if seen <= times:
                break  # hang up without an answer, as a server closing an idle connection does
            writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def test_a_hung_up_webhook_is_counted_and_retried() -> None:
    outcomes: Counter[str] = Counter()
    async with server_that_hangs_up(1) as url, httpx.AsyncClient(base_url=url) as client:
        await post_webhook(client, {"app": {"name": "a"}}, {}, outcomes)
    assert outcomes == Counter({"RemoteProtocolError": 1, "202": 1})


async def test_a_webhook_that_never_gets_through_is_counted_not_raised() -> None:
    outcomes: Counter[str] = Counter()
    async with server_that_hangs_up(99) as url, httpx.AsyncClient(base_url=url) as client:
        await post_webhook(client, {"app": {"name": "a"}}, {}, outcomes)
    assert outcomes == Counter({"RemoteProtocolError": 3})


def test_an_httpx_error_without_a_message_is_still_said_in_one_line() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:8080/webhooks/argocd")
    line = failure_line(httpx.ReadError("", request=request))
    assert line == ("storm: failed: ReadError on POST http://127.0.0.1:8080/webhooks/argocd: the connection was "
                    "closed before the answer")  # fmt: skip
    assert (
        failure_line(TimeoutError("nothing listens on port 1"))
        == "storm: failed: TimeoutError: nothing listens on port 1"
    )


def test_a_storm_that_cannot_start_says_why_in_one_line() -> None:
    """A replica refuses a malformed setting: the benchmark stops at once with that reason, one line, exit 1."""
    env = {**os.environ, "SWEEP_SECONDS": "often", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "storm.py"), "--apps", "1", "--unknown", "0",
                           "--seconds", "1"], capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("storm: failed: RuntimeError: the replica for port") and "SWEEP_SECONDS" in line, line
    assert "Traceback" not in proc.stderr
