"""Report formats other than Slack: the drift page (``html``) and, beside it, the others as they move here."""
