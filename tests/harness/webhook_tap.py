"""A recording relay between Argo CD's notifications controller and the bot, on 127.0.0.1.

The e2e stack's notifications webhook (``service.webhook.argo-why``'s url, set by install.sh's ``ARGO_WHY_URL``)
points here; every request is recorded (arrival time, method, path, the JSON body as sent, the bot's answer status)
and relayed unchanged, headers included, to the bot. So a test can say what the real controller sent (the rendered
template of deploy/argocd-notifications, for every case) and how often, without changing what the bot receives.
The ``Authorization`` header is relayed but never recorded. ``routes`` sends the webhooks of the apps whose name starts
with a given prefix to another bot (a test's own, with settings of its own) instead of ``target``: the session's bot
never sees them, and the test's bot sees nothing else.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


@dataclass(frozen=True)
class Sent:
    at: float
    method: str
    path: str
    body: Any
    status: int

    @property
    def app(self) -> str:
        """``namespace/name`` of the Application the webhook is about."""
        app = self.body.get("app") or {} if isinstance(self.body, dict) else {}
        return f"{app.get('namespace')}/{app.get('name')}"


class WebhookTap:
    """Listens on a free loopback port (``url``) and relays to ``target`` (set before the first request), or to the
    target of the first prefix of ``routes`` that the app's name starts with."""

    def __init__(self) -> None:
        self.target = ""
        self.routes: dict[str, str] = {}
        self.sent: list[Sent] = []
        self._lock = threading.Lock()
        tap = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                name = str((body.get("app") or {}).get("name") or "") if isinstance(body, dict) else ""
                target = next((t for prefix, t in tap.routes.items() if name.startswith(prefix)), tap.target)
                try:
                    resp = httpx.post(target + self.path, content=raw, headers=headers, timeout=30)
                    status, answer = resp.status_code, resp.content
                except httpx.HTTPError as e:
                    status, answer = 502, str(e).encode()
                with tap._lock:
                    tap.sent.append(Sent(time.time(), "POST", self.path, body, status))
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="webhook-tap", daemon=True)
        self._thread.start()

    def for_app(self, name: str, namespace: str = "argocd") -> list[Sent]:
        with self._lock:
            return [s for s in self.sent if s.app == f"{namespace}/{name}"]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
