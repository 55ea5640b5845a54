"""``bot.analysis`` exports exactly what code outside it uses, as httpx's tests/analysis/test_exported_members.py.

The rest of the bot (bot/why.py, bot/cli.py, bench/) imports the analysis from ``bot.analysis``
only, so ``__all__`` is its interface: a name added or removed here is a change to that interface.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from types import ModuleType

import pytest

import bot.analysis

EXPORTED = [
    "MAX_INPUT_BYTES",
    "Cell",
    "ObjKey",
    "Owner",
    "Row",
    "SideBySide",
    "blame_many",
    "covers",
    "deep_equal",
    "diff_objects",
    "explain",
    "load_documents",
    "looks_swapped",
    "object_key",
    "ref_key",
    "resource_ref",
    "side_by_side",
]


def ruff_order(names: list[str]) -> list[str]:
    """Sorted as ruff sorts ``__all__`` (RUF022, isort-style): constants, then classes, then the rest."""
    return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[:1].isupper() else 2, n))


def test_all_is_the_pinned_sorted_list() -> None:
    assert bot.analysis.__all__ == EXPORTED
    assert ruff_order(EXPORTED) == EXPORTED


def test_all_imports_are_exported() -> None:
    # A package's submodules become its attributes once imported; they are not part of the interface. Names
    # imported on first use (bot.analysis._LAZY) are exported all the same.
    public = {
        name
        for name, value in vars(bot.analysis).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert bot.analysis.__all__ == ruff_order(list(public | set(bot.analysis._LAZY)))


def test_blame_and_the_side_by_side_are_imported_when_first_used() -> None:
    code = (
        "import sys, bot.analysis; before = {m for m in ('bot.analysis.blame', 'bot.analysis.sidebyside') "
        "if m in sys.modules}; f = bot.analysis.side_by_side; print(sorted(before), "
        "'bot.analysis.sidebyside' in sys.modules, f is bot.analysis.sidebyside.side_by_side)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "True", "True"]


@pytest.mark.parametrize("name", EXPORTED)
def test_each_exported_name_is_importable(name: str) -> None:
    module = importlib.import_module("bot.analysis")
    assert getattr(module, name, None) is not None
