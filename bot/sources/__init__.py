"""Outbound I/O: Argo CD (httpx) and the cluster (the kubernetes client), read-only always; the Git hosts (httpx,
``git/``), whose only write is one branch and one pull request per fix. ``clients`` builds them from the settings
groups, for the composition root and the CLI."""
