"""The bot's own HTTP surface beside the inbound handlers: readiness, metrics and the drift page.

* ``health`` -- readiness of one replica (``/readyz``) and Slack's auth state beside it;
* ``metrics`` -- the Prometheus metrics of one bot process, on its own registry (``/metrics``);
* ``view`` -- the drift page: saving a report for its "Full diff" link, and ``GET /view/<token>``;
* ``viewlinks`` -- the signed, expiring links to that page.

The ASGI app itself is wired by the composition root (``bot.app``); the Slack and Argo CD webhooks are
``handlers/``. Nothing here imports the runtime.
"""
