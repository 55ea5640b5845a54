"""Ages as kubectl prints them: k8s.io/apimachinery's ``duration.HumanDuration``.

kubectl-blame's ``--time relative`` shows how long ago each managedFields entry
wrote, in the short form of ``kubectl get`` ages (``90s``, ``5m30s``, ``3h``,
``2d4h``, ``3y12d``). This is a port of ``HumanDuration`` from
``k8s.io/apimachinery/pkg/util/duration/duration.go``, which works on Go's
``time.Duration`` (whole nanoseconds, here whole microseconds, as Python's
``timedelta`` holds them).

Guarantees: pure; the same text as the Go function for every duration, including
Go's truncation toward zero, ``0s`` for up to a second in the future (client and
server clocks drift) and ``<invalid>`` beyond that.
"""

from __future__ import annotations

from datetime import timedelta


def _microseconds(d: timedelta) -> int:
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def human_duration(d: timedelta) -> str:
    """k8s.io/apimachinery's ``duration.HumanDuration`` (``5m30s``, ``3h``, ``2d4h``, ``3y12d``)."""
    us = _microseconds(d)
    seconds = -(-us // 1_000_000) if us < 0 else us // 1_000_000  # Go truncates toward zero
    # Up to a second in the future counts as now: clocks of client and API server drift.
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = us // 60_000_000
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = us // 3_600_000_000
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"
