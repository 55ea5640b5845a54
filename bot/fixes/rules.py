"""Which ignoreDifferences values and sync options an Application lacks, worked out on its data.

No YAML text here: given the ``spec`` as read, these functions say what a fix
must add -- per rule, the values missing from the entry with the same group,
kind, name and namespace (absent and empty count the same), or a new entry --
and refuse what must not be changed (a sync option set to another value).
``rules_yaml`` writes the paste-able snippet in the block style the edit uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.fixes.yamltext import Block, Refusal, Style, block_lines

SCOPE_KEYS = ("group", "kind", "name", "namespace")
LIST_KEYS = ("jsonPointers", "jqPathExpressions", "managedFieldsManagers")


@dataclass(frozen=True)
class RuleChange:
    """What one rule added: a new ignoreDifferences entry, or values merged into an existing one."""

    group: str
    kind: str
    name: str
    namespace: str
    added: tuple[tuple[str, str], ...]  # (field, value): ("jsonPointers", "/spec/replicas")
    merged: bool

    @property
    def scope(self) -> tuple[str, str, str, str]:
        return (self.group, self.kind, self.name, self.namespace)

    def describe(self) -> str:
        group = f"{self.group}/" if self.group else ""
        where = f"{self.namespace}/" if self.namespace else ""
        values = ", ".join(f"{value} ({key})" for key, value in self.added)
        lead = "added to the existing rule for" if self.merged else "new rule for"
        return f"{lead} {group}{self.kind} {where}{self.name or '*'}: {values}"


@dataclass(frozen=True)
class Rule:
    scope: tuple[str, str, str, str]  # group, kind, name, namespace; "" when absent
    values: dict[str, list[str]]  # list key -> values, in order, without repeats


@dataclass(frozen=True)
class Missing:
    change: RuleChange
    entry: int | None  # index of the existing entry with the same scope, None for a new entry
    values: dict[str, list[str]]  # list key -> values to add


def _scope_text(rule: Mapping[str, Any], key: str) -> str:
    value = rule.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"ignoreDifferences {key} must be a string, not {value!r}")
    return value


def normalise(rules: Sequence[Mapping[str, Any]]) -> list[Rule]:
    """Rules with one entry per scope (two rules for the same resource become one)."""
    merged: dict[tuple[str, str, str, str], dict[str, list[str]]] = {}
    for rule in rules:
        unknown = sorted(set(rule) - {*SCOPE_KEYS, *LIST_KEYS})
        if unknown:
            raise ValueError(f"not ignoreDifferences keys: {', '.join(unknown)}")
        group, kind, name, namespace = (_scope_text(rule, key) for key in SCOPE_KEYS)
        if not kind:
            raise ValueError("an ignoreDifferences rule needs a kind")
        values = merged.setdefault((group, kind, name, namespace), {})
        for key in LIST_KEYS:
            given = rule.get(key) or []
            if isinstance(given, str) or not all(isinstance(v, str) and v for v in given):
                raise ValueError(f"ignoreDifferences {key} must be a list of non-empty strings, not {given!r}")
            bucket = values.setdefault(key, [])
            bucket += [v for v in given if v not in bucket]
    out = [Rule(scope, {k: v for k, v in values.items() if v}) for scope, values in merged.items()]
    for normal in out:
        if not normal.values:
            raise ValueError(f"the rule for {normal.scope[1]} {normal.scope[2]} names no {' or '.join(LIST_KEYS)}")
    return out


def entry_block(scope: tuple[str, str, str, str], values: Mapping[str, list[str]]) -> Block:
    """An ignoreDifferences entry in Argo CD's documented key order; empty scope keys left out."""
    entry: Block = {key: value for key, value in zip(SCOPE_KEYS, scope, strict=True) if value}
    entry.update({key: list(values[key]) for key in LIST_KEYS if values.get(key)})
    return entry


def rules_yaml(rules: Sequence[Mapping[str, Any]], sync_options: Sequence[str]) -> str:
    """The YAML to paste under the Application's ``spec`` (an ApplicationSet's ``spec.template.spec``).

    Same block style as the edit writes when the file gives no hint: dashes at the key's column.
    """
    tree: Block = {}
    entries: list[str | Block] = [entry_block(rule.scope, rule.values) for rule in normalise(rules)]
    if entries:
        tree["ignoreDifferences"] = entries
    options: list[str | Block] = list(dict.fromkeys(sync_options))
    if options:
        tree["syncPolicy"] = {"syncOptions": options}
    return "".join(line + "\n" for line in block_lines(tree, 0, Style()))


def list_at(data: dict[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refusal(f"{where}.{key} is not a list")
    return value


def _scope_of(entry: Any) -> tuple[str, ...] | None:
    if not isinstance(entry, dict):
        return None
    return tuple("" if entry.get(key) is None else str(entry.get(key)) for key in SCOPE_KEYS)


def missing_rules(entries: list[Any], wanted: Sequence[Rule], where: str) -> list[Missing]:
    """What each rule lacks in ``entries``, and the index of the entry with the same scope to merge it into."""
    out = []
    for rule in wanted:
        same = [j for j, entry in enumerate(entries) if _scope_of(entry) == rule.scope]
        missing: dict[str, list[str]] = {}
        for key, values in rule.values.items():
            have = {v for j in same for v in list_at(entries[j], key, where)}
            if lacking := [v for v in values if v not in have]:
                missing[key] = lacking
        if missing:
            added = tuple((key, v) for key, values in missing.items() for v in values)
            change = RuleChange(*rule.scope, added=added, merged=bool(same))
            out.append(Missing(change, same[0] if same else None, missing))
    return out


def missing_options(spec: dict[str, Any], options: Sequence[str], where: str) -> list[str]:
    """The sync options not yet set; an option already set to another value is a refusal, never a change."""
    policy = spec.get("syncPolicy")
    if policy is not None and not isinstance(policy, dict):
        raise Refusal(f"{where}.syncPolicy is not a mapping")
    present = [str(o) for o in list_at(policy or {}, "syncOptions", f"{where}.syncPolicy")]
    missing = []
    for option in dict.fromkeys(options):
        key = option.split("=", 1)[0]
        if option in present:
            continue
        clash = [o for o in present if o.split("=", 1)[0] == key]
        if clash:
            raise Refusal(
                f"{where}.syncPolicy.syncOptions already has {clash[0]} and the fix needs {option}; "
                "an existing line is not changed automatically: change it by hand if that is intended"
            )
        missing.append(option)
    return missing
