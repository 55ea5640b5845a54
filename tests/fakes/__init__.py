"""Test doubles for the outside world: real local HTTP servers that answer like Argo CD and the Kubernetes API."""
