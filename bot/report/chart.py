"""The weekly report's chart: OutOfSync hours by cause over recent weeks, as a PNG.

Pure: numbers in, PNG bytes out (matplotlib with the Agg backend, no display, no file). Readable on Slack's dark
and light themes alike: the image carries its own light, opaque background with dark text, and the causes are told
apart by mid-tone colours (the Okabe-Ito palette, safe for colour-blind readers) with a legend. An empty history
still renders (a chart that says so), never an error.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from bot.wording.report import CHART_EMPTY, CHART_TITLE, CHART_Y

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#999999", "#000000",
           "#882255")  # fmt: skip
BACKGROUND = "#F7F7F7"
INK = "#222222"


def drift_chart(weeks: Sequence[str], seconds: Mapping[str, Mapping[str, float]]) -> bytes:
    """Stacked bars: for each week (oldest first), the OutOfSync hours of each cause (``seconds[week][cause]``).

    matplotlib (with numpy and Pillow, about 55 MB resident) is imported here, when a chart is drawn, never when the
    bot starts: the weekly report runs on one replica once a week (and draws in a child process of its own,
    :mod:`bot.runtime.weekly`)."""
    import matplotlib

    matplotlib.use("Agg")  # before pyplot: no display, thread-safe rendering to bytes

    import matplotlib.pyplot as plt

    causes = sorted({c for w in weeks for c, v in (seconds.get(w) or {}).items() if v > 0},
                    key=lambda c: -sum((seconds.get(w) or {}).get(c, 0.0) for w in weeks))  # fmt: skip
    fig, ax = plt.subplots(figsize=(8, 4), dpi=120)
    try:
        fig.patch.set_facecolor(BACKGROUND)
        ax.set_facecolor(BACKGROUND)
        bottom = [0.0] * len(weeks)
        for i, cause in enumerate(causes):
            hours = [(seconds.get(w) or {}).get(cause, 0.0) / 3600 for w in weeks]
            ax.bar(list(weeks), hours, bottom=bottom, label=cause, color=PALETTE[i % len(PALETTE)],
                   edgecolor=BACKGROUND, linewidth=0.8)  # fmt: skip
            bottom = [b + h for b, h in zip(bottom, hours, strict=True)]
        if not causes:
            ax.text(0.5, 0.5, CHART_EMPTY, ha="center", va="center", transform=ax.transAxes, color=INK)
        else:
            legend = ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
            for text in legend.get_texts():
                text.set_color(INK)
        ax.set_title(CHART_TITLE, color=INK)
        ax.set_ylabel(CHART_Y, color=INK)
        ax.tick_params(colors=INK, labelsize=8)
        for spine in ax.spines.values():
            spine.set_color(INK)
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png", facecolor=BACKGROUND)
        return out.getvalue()
    finally:
        plt.close(fig)


def main() -> None:
    """``python -m bot.report.chart``: ``{"weeks": [...], "seconds": {...}}`` on stdin, the PNG on stdout (the weekly
    report draws in a child process, so that matplotlib never stays resident in a replica)."""
    import json
    import sys

    data = json.load(sys.stdin)
    sys.stdout.buffer.write(drift_chart(list(data["weeks"]), dict(data["seconds"])))


if __name__ == "__main__":
    main()
