"""A replica holds only what every replica uses (issue 29: memory per replica in a storm).

Features that need heavy libraries load them when used, never when the bot starts: the weekly report's chart
(matplotlib, numpy, Pillow: about 55 MB, drawn in a child process) and the drift page (Jinja2, when the first page is
drawn). Measured with the real entry points imported in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.runtime.weekly import draw_chart

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("matplotlib", "numpy", "PIL", "jinja2")


def loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=300)  # fmt: skip
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_starting_the_bot_loads_no_chart_and_no_page_library() -> None:
    loaded = loaded_after("import bot.app, bot.cli, bot.runtime, bot.web.view")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


@pytest.mark.parametrize("seconds", [{}, {"2026-W48": {"autoscaler": 7200.0, "manual-edit": 3600.0}}])
async def test_the_weekly_chart_is_drawn_in_a_child_process(seconds: dict[str, dict[str, float]]) -> None:
    before = set(sys.modules)
    png = await draw_chart(["2026-W47", "2026-W48"], seconds)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert "matplotlib" not in sys.modules or "matplotlib" in before  # drawing here loaded nothing
