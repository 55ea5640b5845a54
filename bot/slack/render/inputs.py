"""What a caller passes to the messages beyond the Report: the :class:`Alert` (defined with the Report in
:mod:`bot.model`) and the :class:`Buttons` ids.

Plain frozen data; nothing here renders.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.model import Alert

__all__ = ["Alert", "Buttons"]


@dataclass(frozen=True)
class Buttons:
    """Opaque state ids (kept in Redis by the caller), used as the buttons' values."""

    show_diff: str
    mute: str
    recheck: str
