"""A clock tests move by hand, for the parts whose clock is injectable."""

from __future__ import annotations


class FakeClock:
    """A clock tests move by hand (``clock.now += 60``), for the parts whose clock is injectable."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
