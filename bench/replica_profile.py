"""``argo-why serve`` under tracemalloc, for ``bench/storm.py --profile DIR``: where a replica's memory goes.

Run with ``PYTHONTRACEMALLOC=N`` (so that every import is traced from the start; with ``N`` > 1 frames, each
allocation is also charged to the innermost frame of the bot's own code that led to it). A thread takes a snapshot every
``PROFILE_EVERY_S`` seconds and keeps the one with the most traced memory (the replica's peak); when the replica is
sent SIGUSR1 (the benchmark does, before it stops it), the peak snapshot and the last one are written to
``$PROFILE_OUT`` as text: the top allocations by package and by line, the traced peak beside ``VmHWM`` (what
tracemalloc does not see: the interpreter, C extensions' own allocations, thread stacks), and the packages loaded.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import threading
import tracemalloc
from collections import Counter
from pathlib import Path
from types import FrameType

EVERY_S = float(os.environ.get("PROFILE_EVERY_S", "2"))
TOP = 30


def _package(filename: str) -> str:
    """``site-packages/kubernetes/client/...`` -> ``kubernetes``; ``/bot/runtime/x.py`` -> ``bot.runtime``."""
    m = re.search(r"site-packages/([^/]+)", filename)
    if m:
        return m.group(1).removesuffix(".py")
    m = re.search(r"/(bot|handlers)/([^/]+)", filename)
    if m:
        return f"{m.group(1)}.{m.group(2).removesuffix('.py')}"
    m = re.search(r"/lib/python3\.\d+/([^/]+)", filename)
    return f"stdlib:{m.group(1).removesuffix('.py')}" if m else filename


def _report(title: str, snap: tracemalloc.Snapshot) -> str:
    stats = snap.statistics("filename")
    total = sum(s.size for s in stats)
    by_package: Counter[str] = Counter()
    for s in stats:
        by_package[_package(str(s.traceback[0].filename))] += s.size
    lines = [f"== {title}: {total / 2**20:.1f} MB traced", "-- by package"]
    lines += [f"{size / 2**20:8.2f} MB  {name}" for name, size in by_package.most_common(TOP)]
    lines += ["-- by line"]
    for s in snap.statistics("lineno")[:TOP]:
        frame = s.traceback[0]
        lines.append(f"{s.size / 2**20:8.2f} MB  {s.count:8d} blocks  {frame.filename}:{frame.lineno}")
    if tracemalloc.get_traceback_limit() > 1:  # who in the bot asked for it: the innermost frame of bot/ or handlers/
        by_caller: Counter[str] = Counter()
        for s in snap.statistics("traceback"):
            ours = [f for f in s.traceback if re.search(r"/(bot|handlers)/", f.filename)]
            where = f"{ours[0].filename}:{ours[0].lineno}" if ours else f"(outside the bot) {s.traceback[0].filename}"
            by_caller[where] += s.size
        lines += ["-- by the bot's innermost frame"]
        lines += [f"{size / 2**20:8.2f} MB  {where}" for where, size in by_caller.most_common(TOP)]
    return "\n".join(lines)


def main() -> None:
    if not tracemalloc.is_tracing():
        tracemalloc.start()
    out = Path(os.environ["PROFILE_OUT"])
    peak: list[tracemalloc.Snapshot | None] = [None]
    peak_size = [0]
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(EVERY_S):
            current, _ = tracemalloc.get_traced_memory()
            if current > peak_size[0]:
                peak_size[0] = current
                peak[0] = tracemalloc.take_snapshot()

    def dump(signum: int, frame: FrameType | None) -> None:
        stop.set()
        status = Path("/proc/self/status").read_text()
        hwm = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        _, traced_peak = tracemalloc.get_traced_memory()
        parts = [f"VmHWM {int(hwm.group(1)) / 1024 if hwm else float('nan'):.0f} MB; tracemalloc peak "
                 f"{traced_peak / 2**20:.1f} MB"]  # fmt: skip
        if peak[0] is not None:
            parts.append(_report("at the peak", peak[0]))
        parts.append(_report("at the end (what the storm left alive)", tracemalloc.take_snapshot()))
        parts.append("-- modules loaded: " + " ".join(sorted({m.split(".")[0] for m in sys.modules})))
        out.write_text("\n\n".join(parts) + "\n")

    threading.Thread(target=watch, daemon=True).start()
    signal.signal(signal.SIGUSR1, dump)  # the bot's own SIGTERM handling (a graceful stop) stays as it is
    from bot.cli import main as cli

    raise SystemExit(cli(["serve"]))


if __name__ == "__main__":
    main()
