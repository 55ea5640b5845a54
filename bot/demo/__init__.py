"""``argo-why demo``: the whole bot offline, and the local stand-ins for Slack, Argo CD and Kubernetes it runs against.

Nothing in production imports this package; the servers here are what the demo needs at runtime (the test-only
controls over them live in ``tests/fakes/``). ``EXAMPLES`` are the bundled scenarios, shipped as package data, so the
demo works the same from a checkout, an installed wheel and the container image.
"""

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent / "examples"
