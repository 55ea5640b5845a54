"""`python -m bot` is the same as the `argo-why` console script."""

from bot.cli import run

run()
