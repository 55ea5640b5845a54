"""Test doubles for the outside world: the local Argo CD, Kubernetes and Slack servers of ``bot.demo``, extended with
what only tests need (failure injection, RBAC denials, ``reset``, polling helpers, more request builders)."""
