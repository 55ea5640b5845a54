"""What every local stand-in server shares: a quiet threading HTTP server run in a daemon thread, and
``LocalServer``, the request and answer plumbing of the Argo CD, Kubernetes, GitHub and GitLab fakes.

Guarantees: the server listens as soon as ``_serve`` returns; ``stop()`` is idempotent, frees the port and is
called at the end of a ``with`` block. A ``LocalServer`` listens on a free 127.0.0.1 port with HTTP/1.1 keep-alive,
records every request in ``calls`` with the status it answered (0 when the connection was dropped), turns an
exception inside its ``handle`` into a 500 whose traceback is kept in ``errors``, and resets the connection (a TCP
RST) when ``_answer`` returns None.
"""

from __future__ import annotations

import secrets
import socket
import struct
import threading
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, unquote, urlsplit


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # an idle keep-alive connection must not keep the process (or stop()) waiting
    request_queue_size = 128  # the default backlog of 5 drops SYNs when a client opens a burst of connections

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up mid-request (and connections a fake drops on purpose) are expected; bugs in a fake
        # are answered with a 500 and kept in its ``errors`` instead of tracebacks on stderr.
        pass


class BackgroundServer:
    """Base of the fakes: ``_serve(httpd, name)`` starts serving; ``stop()`` or the ``with`` block ends it."""

    _httpd: QuietHTTPServer
    _thread: threading.Thread
    _stopped: bool = False
    _stop_lock: threading.Lock

    def _serve(self, httpd: QuietHTTPServer, name: str) -> None:
        self._httpd = httpd
        self._stop_lock = threading.Lock()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=name, daemon=True
        )
        self._thread.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and free the port; idempotent."""
        with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@dataclass(frozen=True)
class Call:
    """One request as a fake saw it. ``query`` keeps the first value of each parameter (``raw_query`` has all);
    ``status`` is the HTTP status answered, 0 when the connection was dropped without an answer."""

    method: str
    path: str
    query: dict[str, str]
    status: int
    raw_query: str = ""


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes = b""
    raw_path: str = ""  # as sent, still percent-encoded: GitLab's ids hold %2F, which ``path`` has decoded

    def arg(self, name: str, default: str = "") -> str:
        values = self.query.get(name)
        return values[0] if values else default

    def args(self, name: str) -> list[str]:
        return list(self.query.get(name, []))


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keep-alive like the real servers, so the clients' connection pools are exercised too.
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, delayed ACKs would add ~40 ms to every keep-alive call.
    disable_nagle_algorithm = True
    owner: ClassVar[LocalServer]

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self.close_connection = True  # we do not parse chunked bodies; never reuse such a connection
        split = urlsplit(self.path)
        request = Request(
            method=self.command,
            path=unquote(split.path),
            query=parse_qs(split.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw_path=split.path,
        )
        response = self.owner._dispatch(request, split.query)
        if response is None:
            self._reset()
            return
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    def _reset(self) -> None:
        # SO_LINGER 0 turns close() into a TCP RST: the client sees "connection reset by peer", not a clean EOF.
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean; every request is in owner.calls


class LocalServer(BackgroundServer):
    """A ThreadingHTTPServer on a free 127.0.0.1 port, in a daemon thread, that records every request in ``calls``.
    Subclasses implement ``handle``."""

    def __init__(self, name: str) -> None:
        self.token = secrets.token_urlsafe(32)
        self.calls: list[Call] = []
        self.errors: list[str] = []  # tracebacks of exceptions inside the fake itself (a test bug, not an API error)
        self._lock = threading.RLock()
        handler = type(f"{name}Handler", (_Handler,), {"owner": self})
        httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{httpd.server_address[1]}"
        self._serve(httpd, name)

    def bearer(self, request: Request) -> str | None:
        """The bearer token of the request, None when there is none."""
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        value = value.strip()
        return value if scheme.lower() == "bearer" and value else None

    def handle(self, request: Request) -> Response:
        raise NotImplementedError

    def _answer(self, request: Request) -> Response | None:
        """The answer to ``request``; None resets the connection instead (the tests' fakes override this to inject
        failures)."""
        try:
            return self.handle(request)
        except Exception:  # a bug in the fake: make it loud in the test, not a hung client
            text = traceback.format_exc()
            with self._lock:
                self.errors.append(text)
            return Response(500, text.encode(), {"Content-Type": "text/plain"})

    def _dispatch(self, request: Request, raw_query: str) -> Response | None:
        response = self._answer(request)
        query = {k: v[0] for k, v in request.query.items() if v}
        with self._lock:
            self.calls.append(
                Call(request.method, request.path, query, response.status if response else 0, raw_query=raw_query)
            )
        return response
