"""Outbound I/O: Argo CD (httpx), the cluster (the kubernetes client). Read-only, always."""
