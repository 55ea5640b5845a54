"""Real ``redis-server`` processes for the tests: nothing is mocked below the redis-py client.

Fixtures:

* ``redis_server`` (session) -- one server on a free local port, no persistence; yields its URL;
* ``redis_url`` (function) -- that URL, after a FLUSHALL, so every test starts from an empty Redis;
* ``redis_outage`` (function) -- a separate throwaway :class:`RedisProcess` a test may ``stop()`` and ``start()``
  (same port) to simulate an outage without disturbing the shared server;
* ``durable_redis`` (function) -- the same with persistence as production should run it (AOF, fsync on every
  write): ``kill()`` it (SIGKILL) and ``start()`` it again, and every write it acknowledged is still there;
* :class:`RedisProxy` -- a proxy that takes Redis away exactly when a given command is sent.

If ``redis-server`` is not on PATH, ``scripts/ensure-tools.sh redis-server`` installs it (Debian package of the
same name); if it is still missing the tests using these fixtures fail with a message saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]


def _redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found is None:
        # OSError: the script cannot even run here; the message below says what is missing.
        with contextlib.suppress(OSError):
            subprocess.run([str(ROOT / "scripts" / "ensure-tools.sh"), "redis-server"], check=False)
        found = shutil.which("redis-server")
    if found is None:
        pytest.fail(
            "redis-server is not installed and scripts/ensure-tools.sh could not install it; "
            "install the redis-server package (apt-get install redis-server) to run the Redis tests",
            pytrace=False,
        )
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class RedisProcess:
    """One ``redis-server`` on 127.0.0.1, without persistence, that can be stopped and started again."""

    def __init__(self, binary: str, workdir: Path, port: int | None = None, *, durable: bool = False) -> None:
        self.binary = binary
        self.workdir = workdir
        self.port = port or free_port()
        self.durable = durable
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 5.0) -> None:
        log = (self.workdir / f"redis-{self.port}.log").open("ab")
        # --save "" / --appendonly no: a restart comes back empty, like a Redis without persistence. Durable: every
        # write is in the append-only file before Redis answers it, so a SIGKILL loses nothing acknowledged.
        aof = ["yes", "--appendfsync", "always"] if self.durable else ["no"]
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", *aof,
             "--daemonize", "no", "--dir", str(self.workdir)],
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=0.5) as client:
                    if client.ping():
                        return
            except redis.exceptions.ConnectionError:
                time.sleep(0.01)
        self.stop()
        tail = (self.workdir / f"redis-{self.port}.log").read_text(errors="replace")[-2000:]
        pytest.fail(f"redis-server on port {self.port} did not answer PING within {timeout_s}s:\n{tail}", pytrace=False)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last write; what is not in the append-only file yet is gone."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def _start_on_free_port(binary: str, workdir: Path, *, durable: bool = False) -> RedisProcess:
    # The port is free when picked but could be taken before redis-server binds it; try another then.
    for attempt in range(3):
        server = RedisProcess(binary, workdir, durable=durable)
        try:
            server.start()
            return server
        except pytest.fail.Exception:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = _start_on_free_port(_redis_server_binary(), tmp_path_factory.mktemp("redis"))
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: str) -> Iterator[str]:
    with redis.Redis.from_url(redis_server) as client:
        client.flushall()
    yield redis_server


@pytest.fixture
def redis_outage(tmp_path: Path) -> Iterator[RedisProcess]:
    """A Redis of the test's own: ``.stop()`` it to simulate an outage, ``.start()`` to bring it back (empty)."""
    server = _start_on_free_port(_redis_server_binary(), tmp_path)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A Redis of the test's own with an fsync'd append-only file: ``.kill()`` and ``.start()`` keep its data."""
    server = _start_on_free_port(_redis_server_binary(), tmp_path, durable=True)
    try:
        yield server
    finally:
        server.stop()


class RedisProxy:
    """A TCP proxy in front of a Redis that goes down the moment a client sends ``trigger`` (``cut_on``): that
    command never reaches Redis, every connection is dropped and new ones are refused until ``restore()``. It puts
    an outage exactly between two commands of the bot (the dedupe mark and the enqueue). ``stall_on(trigger)``: the
    first command that sends ``trigger`` reaches Redis, but its connection gets no answer until ``restore()`` (a
    client that did something and never learnt so)."""

    def __init__(self, redis_url: str) -> None:
        host_port = redis_url.split("//", 1)[1].split("/", 1)[0]
        self._host, _, port = host_port.rpartition(":")
        self._port = int(port)
        self._trigger: bytes | None = None
        self._stall: bytes | None = None
        self._released = asyncio.Event()
        self.down = False
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> RedisProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"redis://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/0"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._released.set()
        self._drop_all()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def cut_on(self, trigger: bytes) -> None:
        self._trigger = trigger

    def stall_on(self, trigger: bytes) -> None:
        self._stall = trigger
        self._released = asyncio.Event()

    def restore(self) -> None:
        self._trigger, self._stall, self.down = None, None, False
        self._released.set()

    def _drop_all(self) -> None:
        for w in list(self._writers):
            w.close()
        self._writers.clear()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        if self.down:
            client_w.close()
            return
        redis_r, redis_w = await asyncio.open_connection(self._host, self._port)
        self._writers |= {client_w, redis_w}
        stalled: list[asyncio.Event] = []

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, watch: bool) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    if watch and self._trigger is not None and self._trigger in data:
                        self.down = True
                        self._drop_all()
                        return
                    if watch and self._stall is not None and self._stall in data:
                        self._stall = None  # once: the client's next connection works
                        stalled.append(self._released)
                    if not watch and stalled:
                        await stalled[0].wait()
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(client_r, redis_w, True), pipe(redis_r, client_w, False))
