"""The pure analysis: no network, no Slack, no Redis. See ``engine`` for the entry point."""

from bot.analysis.engine import explain
from bot.analysis.loader import load_documents

__all__ = ["explain", "load_documents"]
