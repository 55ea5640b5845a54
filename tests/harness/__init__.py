"""The harnesses that start real processes for the tests (a real Argo CD, ...)."""
