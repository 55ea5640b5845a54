"""``bot.analysis`` exports exactly what code outside it uses, as httpx's tests/analysis/test_exported_members.py.

The rest of the bot (bot/why.py, bot/cli.py, bench/) imports the analysis from ``bot.analysis``
only, so ``__all__`` is its interface: a name added or removed here is a change to that interface.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

import bot.analysis

EXPORTED = [
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
    "object_key",
    "ref_key",
    "resource_ref",
    "side_by_side",
]


def test_all_is_the_pinned_sorted_list() -> None:
    assert bot.analysis.__all__ == EXPORTED
    assert sorted(EXPORTED) == EXPORTED


def test_all_imports_are_exported() -> None:
    # A package's submodules become its attributes once imported; they are not part of the interface.
    public = [
        name
        for name, value in vars(bot.analysis).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    ]
    assert bot.analysis.__all__ == sorted(public)


@pytest.mark.parametrize("name", EXPORTED)
def test_each_exported_name_is_importable(name: str) -> None:
    module = importlib.import_module("bot.analysis")
    assert getattr(module, name, None) is not None
