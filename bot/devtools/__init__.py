"""Local stand-ins for Slack and Argo CD used by the demo and the tests; never used in production."""
