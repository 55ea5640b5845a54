"""What every local stand-in server shares: a quiet threading HTTP server run in a daemon thread.

Guarantees: the server listens as soon as ``_serve`` returns; ``stop()`` is idempotent, frees the port and is
called at the end of a ``with`` block.
"""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Any, Self


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
