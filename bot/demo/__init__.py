"""``argo-why demo``: the whole bot offline, and the local stand-ins for Slack, Argo CD and Kubernetes it runs against.

Nothing in production imports this package; the servers here are what the demo needs at runtime (the test-only
controls over them live in ``tests/fakes/``).
"""
