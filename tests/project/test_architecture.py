"""The import contracts in pyproject.toml keep up with the code: a new module of the bot is covered at once.

``lint-imports`` (run by ``make test``) checks the contracts themselves; this checks that the contract "the
analysis uses nothing of the bot but bot.model, bot.errors and bot.wording.report" names every other module (and
every other audience of the wording), so that a module added later is forbidden to the analysis without anyone
remembering to list it; that the top of ``bot/`` shows its parts (at most eight modules beside the packages, the
runtime's jobs in ``bot/runtime/``, the HTTP surface in ``bot/web/``, the intake and its jobs in ``bot/intake/``, the
wording one module per audience); and that each rule of the layout has its contract.
"""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path
from typing import Any

import bot
import bot.intake
import bot.runtime
import bot.store
import bot.web
import bot.wording

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_TO_THE_ANALYSIS = {"bot.analysis", "bot.model", "bot.errors", "bot.wording.report", "bot.__main__"}
RUNTIME_JOBS = {"worker", "alerts", "digest", "fixflow", "followup", "sweep", "reminders", "scheduler", "serial"}
AUDIENCES = {"report", "slack", "pr", "cli"}
TOP_MODULES_AT_MOST = 8
"""Modules beside the packages at the top of bot/ (``__init__`` and ``__main__`` aside): each a part of its own."""
HTTP_SURFACE = {"health", "view", "viewlinks"}
"""The bot's own HTTP endpoints beside the handlers, in bot/web/."""


def _contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["name"]: c for c in config["contracts"]}


def test_the_analysis_contract_names_every_other_module_of_the_bot() -> None:
    [contract] = [c for name, c in _contracts().items() if name.startswith("The analysis uses nothing of the bot")]
    forbidden = set(contract["forbidden_modules"])
    modules = {f"bot.{m.name}" for m in pkgutil.iter_modules(bot.__path__)} - {"bot.wording"}
    modules |= {f"bot.wording.{m.name}" for m in pkgutil.iter_modules(bot.wording.__path__)}
    assert modules - ALLOWED_TO_THE_ANALYSIS - forbidden == set(), "add the new module to the contract"
    assert forbidden - modules - {"handlers"} == set(), "the contract names a module that no longer exists"


def test_the_top_of_bot_shows_its_parts() -> None:
    top = {m.name for m in pkgutil.iter_modules(bot.__path__)}
    assert not top & RUNTIME_JOBS, "a job of the running bot belongs in bot/runtime/"
    assert not top & {"render", "services"}, "renamed: bot/report/, bot/runtime/services.py"
    assert RUNTIME_JOBS | {"runtime", "services"} <= {m.name for m in pkgutil.iter_modules(bot.runtime.__path__)}
    assert bot.runtime.__all__ == ["Runtime", "Services"]
    assert {m.name for m in pkgutil.iter_modules(bot.wording.__path__)} == AUDIENCES
    assert {"report", "runtime", "wording"} <= {m.name for m in pkgutil.iter_modules(bot.__path__) if m.ispkg}


def test_the_top_of_bot_holds_at_most_eight_modules_beside_its_packages() -> None:
    modules = {m.name for m in pkgutil.iter_modules(bot.__path__) if not m.ispkg} - {"__main__"}
    packages = {m.name for m in pkgutil.iter_modules(bot.__path__) if m.ispkg}
    assert len(modules) <= TOP_MODULES_AT_MOST, f"group these into a part of their own: {sorted(modules)}"
    assert not modules & (HTTP_SURFACE | {"jobs", "intake", "approvals", "clients", "state"}), "moved into a package"
    assert {"web", "intake"} <= packages
    assert {m.name for m in pkgutil.iter_modules(bot.web.__path__)} >= HTTP_SURFACE
    assert {"jobs"} <= {m.name for m in pkgutil.iter_modules(bot.intake.__path__)}


def test_each_rule_of_the_layout_has_a_contract() -> None:
    contracts = list(_contracts().values())

    def forbids(source: str, target: str) -> bool:
        return any(c["type"] == "forbidden" and source in c["source_modules"] and target in c["forbidden_modules"]
                   for c in contracts)  # fmt: skip

    assert any(c["type"] == "acyclic_siblings" and {"bot", "handlers"} <= set(c["ancestors"]) for c in contracts)
    [store] = [c for name, c in _contracts().items() if name.startswith("The store owns its records")]
    store_modules = {f"bot.store.{m.name}" for m in pkgutil.iter_modules(bot.store.__path__)}
    assert set(store["source_modules"]) == store_modules - {"bot.store.state"}, "every module of the store but state"
    assert forbids("bot.store.base", "bot.store.state"), "the store's records belong to the store: no circle"
    assert forbids("bot.runtime", "bot.config"), "the runtime receives its settings"
    assert forbids("bot.report", "bot.store") and forbids("bot.slack.render", "bot.store"), "rendering is pure"
    assert forbids("handlers", "bot.runtime")
    [wording] = [c for c in contracts if c["type"] == "independence"]
    assert set(wording["modules"]) == {f"bot.wording.{a}" for a in AUDIENCES}


def test_every_contract_is_checked_on_both_packages() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert config["root_packages"] == ["bot", "handlers"] and config["include_external_packages"] is True
    assert len(_contracts()) >= 9
