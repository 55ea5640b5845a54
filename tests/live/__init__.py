"""The live casebook: scripted drifts on the real API server (tests/harness/kube_server.py), judged by ``argo-why``.

``writers`` makes the API calls of each writer (Argo CD in its two sync modes, kubectl, an HPA, an operator, a
person); ``webhook`` is a real HTTPS mutating admission webhook; ``scenarios`` scripts each drift with the verdict
it must produce; tests/live/test_live_casebook.py runs them through ``argo-why explain`` and ``argo-why why``.
"""
