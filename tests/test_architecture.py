"""The import contracts in pyproject.toml keep up with the code: a new module of the bot is covered at once.

``lint-imports`` (run by ``make test``) checks the contracts themselves; this checks that the contract "the
analysis uses nothing of the bot but bot.model, bot.errors and bot.wording" names every other module, so that a
module added later is forbidden to the analysis without anyone remembering to list it.
"""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path
from typing import Any

import bot

ROOT = Path(__file__).resolve().parents[1]
ALLOWED_TO_THE_ANALYSIS = {"bot.analysis", "bot.model", "bot.errors", "bot.wording", "bot.__main__"}


def _contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["name"]: c for c in config["contracts"]}


def test_the_analysis_contract_names_every_other_module_of_the_bot() -> None:
    [contract] = [c for name, c in _contracts().items() if name.startswith("The analysis uses nothing of the bot")]
    forbidden = set(contract["forbidden_modules"])
    modules = {f"bot.{m.name}" for m in pkgutil.iter_modules(bot.__path__)}
    assert modules - ALLOWED_TO_THE_ANALYSIS - forbidden == set(), "add the new module to the contract"
    assert forbidden - modules - {"handlers"} == set(), "the contract names a module that no longer exists"


def test_every_contract_is_checked_on_both_packages() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["root_packages"] == ["bot", "handlers"] and config["include_external_packages"] is True
    assert len(_contracts()) >= 4
