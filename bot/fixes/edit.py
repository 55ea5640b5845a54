"""The edit a fix PR proposes: ignoreDifferences rules into an Application file, or a field out of a manifest.

Contract (README, "Fixes from chat: Open PR", step 3 "The edit"): comments, key order, quoting, indentation and
every other document of the file stay byte for byte as they were; adding rules
only ADDS lines, dropping a field only REMOVES that field's line. Rules merge
into an existing entry with the same group, kind, name and namespace; what is
already there is not added twice, and when nothing is missing the answer is
"already-present". Sync options are appended to ``spec.syncPolicy.syncOptions``,
never changed: a key already set to another value is a refusal.

Every "changed" result is checked before it is returned, independently of how
it was made: difflib must see only added (or only the one removed) lines, and
the new text, read again, must equal the old documents plus exactly the
intended change. Whatever cannot be done that way -- templates, flow style
where lines would have to be rewritten, anchors or aliases at the place to
edit, ambiguous or missing documents, a last line without line break -- is a
"refused" result with a reason a person can act on; never a half-edit.

Pure: no I/O. Malformed *arguments* (a rule without kind, a list that is not
a list of strings) raise ``ValueError``: they are the caller's bug, not the file's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bot.analysis.pointer import split
from bot.fixes.rules import (
    RuleChange,
    entry_block,
    list_at,
    missing_options,
    missing_rules,
    normalise,
    rules_yaml,
)
from bot.fixes.yamltext import (
    Block,
    Insertion,
    Node,
    Parsed,
    Refusal,
    Style,
    block_lines,
    detect_style,
    find_documents,
    load,
    only_added,
    only_removed,
    splice,
    template_at,
    unified_diff,
)

__all__ = ["EditResult", "RuleChange", "Status", "add_ignore_rules", "drop_field", "rules_yaml"]

Status = Literal["changed", "already-present", "refused"]


@dataclass(frozen=True)
class EditResult:
    """The outcome of an edit; ``text`` and ``diff`` are set only when ``status`` is "changed"."""

    status: Status
    text: str | None = None
    reason: str | None = None
    diff: str = ""
    rules: tuple[RuleChange, ...] = ()
    sync_options: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def added_pointers(self) -> tuple[str, ...]:
        """Every pointer or jq expression the edit added, in order."""
        return tuple(value for rule in self.rules for key, value in rule.added if key != "managedFieldsManagers")

    @property
    def summary(self) -> tuple[str, ...]:
        """One line per change, for the PR body."""
        return (
            *(rule.describe() for rule in self.rules),
            *(f"sync option {option} added to syncPolicy.syncOptions" for option in self.sync_options),
            *(f"{pointer} removed" for pointer in self.removed),
        )


def _editable(node: Node, kind: Literal["map", "seq"], where: str) -> Node:
    """``node`` when lines can be added to it: a block collection of that kind, no anchor, alias or merge key."""
    if node.kind == "alias":
        raise Refusal(f"{where} is the YAML alias *{node.value}; editing it would edit what it points to")
    if node.anchor is not None:
        raise Refusal(f"{where} carries the YAML anchor &{node.anchor}; an edit would change its aliases too")
    if node.kind != kind:
        shape = "a mapping" if kind == "map" else "a list"
        if node.kind == "scalar":  # `syncPolicy: null`, `ignoreDifferences: ~`: only rewriting that line would do
            written = repr(node.value) if node.value else "an empty value"
            raise Refusal(f"{where} is written as {written}, not as {shape}; change it by hand")
        raise Refusal(f"{where} is not {shape}")
    if node.flow:
        brackets = "{...}" if kind == "map" else "[...]"
        raise Refusal(f"{where} is written in flow style ({brackets}); adding to it would rewrite existing lines")
    if node.has_merge_key():
        raise Refusal(f"{where} merges keys from elsewhere (<<:); a change here could hide or expose merged keys")
    return node


@dataclass
class _Planner:
    """Collects the insertions of one edit and, alongside, the data the edited document must read back as."""

    style: Style
    insertions: list[Insertion] = field(default_factory=list)

    def put(
        self,
        mapping: Node,
        depth: int,
        data: dict[str, Any],
        keys: Sequence[str],
        values: list[str | Block],
        where: str,
    ) -> None:
        """Append ``values`` to the list at ``keys`` below ``mapping`` (``depth`` deep), creating what is absent."""
        key, rest = keys[0], keys[1:]
        here = f"{where}.{key}"
        tree: Block | list[str | Block] = values
        for inner in reversed(rest):
            tree = {inner: tree}
        pair = mapping.get(key)
        if pair is None:
            self._add(mapping.last_line(), depth, block_lines({key: tree}, mapping.column, self.style))
            data[key] = copy.deepcopy(tree)
        elif pair[1].implicit_null:
            # "key:" with nothing after it: lines below the key fill it without touching the key's line.
            column = pair[0].column + (self.style.map_indent if rest else self.style.seq_offset)
            self._add(pair[0].last_line(), depth + 1, block_lines(tree, column, self.style))
            data[key] = copy.deepcopy(tree)
        elif rest:
            self.put(_editable(pair[1], "map", here), depth + 1, data[key], rest, values, here)
        else:
            seq = _editable(pair[1], "seq", here)
            first = seq.items[0]
            # New items copy the list's own spacing after the dash.
            offset = first.column - seq.column if first.line == seq.line else self.style.item_offset
            lines = block_lines(values, seq.column, replace(self.style, item_offset=offset))
            self._add(seq.last_line(), depth + 1, lines)
            data[key].extend(copy.deepcopy(values))

    def _add(self, after: int, depth: int, lines: list[str]) -> None:
        self.insertions.append(Insertion(after=after, depth=depth, lines=tuple(lines)))


def _mapping_at(data: Any, keys: Sequence[str], label: str) -> dict[str, Any]:
    for depth, key in enumerate(keys, 1):
        data = data.get(key) if isinstance(data, dict) else None
        if isinstance(data, list):
            # A finding's index is the live object's; the file's list may be in another order.
            raise Refusal(f"{'.'.join(keys[:depth])} of the {label} is a list; its items are edited by hand")
        if not isinstance(data, dict):
            raise Refusal(f"the {label} has no {'.'.join(keys[:depth])} mapping")
    found: dict[str, Any] = data
    return found


def _descend(node: Node, keys: Sequence[str], labels: Sequence[str]) -> Node:
    """The value at ``keys`` below ``node``, every mapping on the way fit to edit (``labels[i]`` names the i-th)."""
    for depth, key in enumerate(keys):
        pair = _editable(node, "map", labels[depth]).get(key)
        if pair is None:  # the data has it, so it came through a merge key or an alias
            raise Refusal(f"{labels[depth + 1]} has no lines of its own to edit")
        node = pair[1]
    return node


def add_ignore_rules(
    text: str,
    *,
    app_name: str,
    app_namespace: str | None,
    rules: Sequence[Mapping[str, Any]],
    sync_options: Sequence[str],
    applicationset: bool = False,
    path: str = "application.yaml",
) -> EditResult:
    """Add ``rules`` and ``sync_options`` to the Application (or ApplicationSet) ``app_name`` in ``text``.

    ``path`` only labels the diff. See the module docstring for the guarantees.
    """
    wanted = normalise(rules)
    if not all(isinstance(o, str) and o for o in sync_options):
        raise ValueError(f"sync options must be non-empty strings: {sync_options!r}")
    kind = "ApplicationSet" if applicationset else "Application"
    keys = ("spec", "template", "spec") if applicationset else ("spec",)
    where = ".".join(keys)
    try:
        parsed = _load_yaml(text, template_ok=applicationset)
        index = find_documents(parsed, kind=kind, api_group="argoproj.io", name=app_name, namespace=app_namespace)
        expected = copy.deepcopy(parsed.data[index])
        spec = _mapping_at(expected, keys, kind)
        entries = list_at(spec, "ignoreDifferences", where)
        changes = missing_rules(entries, wanted, where)
        options = missing_options(spec, sync_options, where)
        if not changes and not options:
            return EditResult("already-present", reason=f"the {kind} {app_name} already has every rule and sync option")
        written = [v for c in changes for v in (*c.change.scope, *(x for _, x in c.change.added))]
        if applicationset and any("{{" in v for v in written):
            raise Refusal("a value of the rule contains {{, which the ApplicationSet would read as a template")

        root = parsed.docs[index]
        labels = [f"the {kind} document", *(".".join(keys[: i + 1]) for i in range(len(keys)))]
        node = _editable(_descend(root, keys, labels), "map", where)
        planner = _Planner(detect_style([[root], parsed.docs]))
        fresh: list[str | Block] = []
        for item in changes:
            if item.entry is None:
                fresh.append(entry_block(item.change.scope, item.values))
                continue
            listing = f"{where}.ignoreDifferences"
            seq = _editable(_descend(node, ["ignoreDifferences"], [where, listing]), "seq", listing)
            label = f"the ignoreDifferences entry for {item.change.kind} {item.change.name}"
            entry = _editable(seq.items[item.entry], "map", label)
            for key, values in item.values.items():
                listed: list[str | Block] = list(values)
                planner.put(entry, len(keys) + 2, entries[item.entry], [key], listed, f"{listing}[{item.entry}]")
        if fresh:
            planner.put(node, len(keys), spec, ["ignoreDifferences"], fresh, where)
        if options:
            planner.put(node, len(keys), spec, ["syncPolicy", "syncOptions"], list(options), where)
        new_text, diff = _checked(parsed, index, expected, splice(parsed.lines, planner.insertions), path, only_added)
    except Refusal as refusal:
        return EditResult("refused", reason=str(refusal))
    added = tuple(item.change for item in changes)
    return EditResult("changed", text=new_text, diff=diff, rules=added, sync_options=tuple(options))


def drop_field(
    text: str, *, kind: str, name: str, namespace: str | None, pointer: str, path: str = "manifest.yaml"
) -> EditResult:
    """Remove the one-line field at ``pointer`` from the ``kind`` ``name`` document of a plain manifest file.

    Only that line goes (with its end-of-line comment); comment lines above it stay.
    Refused: templates, a missing or ambiguous document or field, a pointer through a
    list, a value over several lines or in flow style, an anchor or alias, the field
    sharing its line with other YAML, or being the only key of its mapping (removing
    it would turn the mapping into null). ``path`` only labels the diff.
    """
    keys = split(pointer)
    if not keys:
        raise ValueError("drop_field needs a pointer below the document root")
    try:
        parsed = _load_yaml(text, template_ok=False)
        index = find_documents(parsed, kind=kind, api_group=None, name=name, namespace=namespace)
        expected = copy.deepcopy(parsed.data[index])
        parent = _mapping_at(expected, keys[:-1], f"{kind} {name}") if len(keys) > 1 else expected
        if keys[-1] not in parent:
            raise Refusal(f"the {kind} {name} has no {pointer}")
        del parent[keys[-1]]

        labels = ["the document", *("/" + "/".join(keys[: i + 1]) for i in range(len(keys)))]
        mapping = _editable(_descend(parsed.docs[index], keys[:-1], labels), "map", labels[-2])
        pair = mapping.get(keys[-1])
        if pair is None:  # the data has it, so it came through an alias
            raise Refusal(f"{pointer} has no line of its own to remove")
        key_node, value = pair
        for part in pair:
            if part.anchor is not None or part.kind == "alias":
                raise Refusal(f"{pointer} is tied to a YAML anchor or alias; removing it would break or change others")
        if value.kind != "scalar" or value.style in ("|", ">"):
            raise Refusal(f"{pointer} has a {'flow' if value.flow else 'multi-line'} value; remove it by hand")
        line = key_node.last_line()
        if not value.implicit_null and value.last_line() != line:
            raise Refusal(f"{pointer} has a multi-line value; remove it by hand")
        if len(mapping.pairs) == 1:
            raise Refusal(f"{pointer} is the only key of its mapping; removing it would make the mapping null")
        if parsed.normal.split("\n")[line][: key_node.column].strip():
            raise Refusal(f"{pointer} shares its line with other YAML; remove it by hand")
        removed = [parsed.lines[line]]
        new_lines = parsed.lines[:line] + parsed.lines[line + 1 :]
        new_text, diff = _checked(
            parsed, index, expected, new_lines, path, lambda old, new: only_removed(old, new, removed)
        )
    except Refusal as refusal:
        return EditResult("refused", reason=str(refusal))
    return EditResult("changed", text=new_text, diff=diff, removed=(pointer,))


def _load_yaml(text: str, *, template_ok: bool) -> Parsed:
    """The parsed file, or a refusal when it is a template; ``template_ok`` allows ``{{`` inside scalar values."""
    if not template_ok and "{{" in text:
        line = text[: text.index("{{")].count("\n") + 1
        raise Refusal(
            f"the file is a Helm/Go template ({{{{ on line {line}): it is YAML only once rendered, "
            "so it cannot be edited safely; change it by hand"
        )
    parsed = load(text)
    if template_ok and (where := template_at(parsed.normal, parsed.docs, inside_scalars=True)):
        raise Refusal(f"the file has template syntax ({{{{) outside a YAML value at {where}; change it by hand")
    return parsed


def _checked(
    parsed: Parsed,
    index: int,
    expected: Any,
    new_lines: list[str],
    path: str,
    lines_ok: Callable[[list[str], list[str]], bool],
) -> tuple[str, str]:
    """The new text and its diff, once the lines and the data read back from it are exactly as intended."""
    if not lines_ok(parsed.lines, new_lines):
        raise Refusal("internal check failed: the edit would change existing lines; nothing was changed")
    new_text = "".join(new_lines)
    try:
        after = load(new_text).data
    except Refusal as refusal:
        raise Refusal(f"internal check failed: the edited file does not read back ({refusal})") from refusal
    intended = [*parsed.data[:index], expected, *parsed.data[index + 1 :]]
    if after != intended:
        raise Refusal("internal check failed: the edited file does not read back as intended; nothing was changed")
    return new_text, unified_diff(parsed.lines, new_lines, path)
