"""What a caller passes to the messages beyond the Report: the :class:`Alert` and the :class:`Buttons` ids (defined
with the Report in :mod:`bot.model`, so that the state behind a message can keep them).

Plain frozen data; nothing here renders.
"""

from __future__ import annotations

from bot.model import Alert, Buttons

__all__ = ["Alert", "Buttons"]
