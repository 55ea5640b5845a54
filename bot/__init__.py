"""argo-why: explains why an Argo CD Application stays OutOfSync."""

__version__ = "0.1.0"
