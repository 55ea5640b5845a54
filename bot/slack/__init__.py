"""Slack: the Block Kit messages argo-why posts (``render``: pure, data in, messages out) and their delivery."""
