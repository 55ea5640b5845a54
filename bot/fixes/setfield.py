"""The edit of a "commit the live value to Git" PR: one scalar of a plain manifest set to the value live has.

For a field someone changed by hand (a hotfix image set with ``kubectl set image``), the first question is which value
is right; when it is the live one, this edit writes it into the manifest so that the next sync keeps it instead of
rolling it back. Same contract as :mod:`bot.fixes.edit` (README, "Fixes from chat: Open PR", step 3): exactly one line
changes -- the value's own text, its key, indentation, quoting style and end-of-line comment stay -- and every other
document of the file stays byte for byte. The file is only changed where it still holds the value the analysis saw in
Git (a finding's list index is the live object's; the file's list may be in another order): any other value, a template,
a value over several lines, in a block scalar, an anchor or alias, is a refusal with a reason, never a half-edit. The
result is read back and compared with the intended data before it is returned.

Pure: no I/O.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from bot.analysis.pointer import split
from bot.fixes.edit import EditResult, _checked, _load_yaml
from bot.fixes.yamltext import Node, Refusal, find_documents, scalar

Scalar = str | int | float | bool


def _step(data: Any, node: Node, key: str, where: str) -> tuple[Any, Node]:
    """One step of the pointer in the data and in the node tree together."""
    if node.kind == "alias" or node.anchor is not None:
        raise Refusal(f"{where} is tied to a YAML anchor or alias; changing it would change others too")
    if isinstance(data, dict) and node.kind == "map":
        pair = node.get(key)
        if key not in data or pair is None:
            raise Refusal(f"the manifest has no {where}/{key}")
        return data[key], pair[1]
    if isinstance(data, list) and node.kind == "seq" and key.isdigit() and int(key) < len(node.items):
        return data[int(key)], node.items[int(key)]
    raise Refusal(f"the manifest has no {where}/{key}")


def _written(value: Scalar, style: str | None) -> str:
    """``value`` as YAML on one line, in the quoting style the old value had when it was a quoted string."""
    if isinstance(value, bool) or not isinstance(value, str):
        return json.dumps(value)
    if style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return json.dumps(value, ensure_ascii=False)
    return scalar(value)


def set_field(text: str, *, kind: str, name: str, namespace: str | None, pointer: str, git: Any, live: Scalar,
              path: str = "manifest.yaml") -> EditResult:  # fmt: skip
    """Set the scalar at ``pointer`` of the ``kind`` ``name`` document from ``git`` (what the analysis saw in Git,
    checked) to ``live``. ``path`` only labels the diff."""
    keys = split(pointer)
    if not keys:
        raise ValueError("set_field needs a pointer below the document root")
    try:
        parsed = _load_yaml(text, template_ok=False)
        index = find_documents(parsed, kind=kind, api_group=None, name=name, namespace=namespace)
        expected = copy.deepcopy(parsed.data[index])
        data: Any = expected
        node = parsed.docs[index]
        where = ""
        for key in keys[:-1]:
            data, node = _step(data, node, key, where or "the document")
            where += f"/{key}"
        parent, last = data, keys[-1]
        old, value = _step(parent, node, last, where or "the document")
        if old != git or isinstance(old, bool) != isinstance(git, bool):
            shown = json.dumps(old, ensure_ascii=False, default=str)[:80]
            raise Refusal(f"{pointer} in the manifest is {shown}, not the value Git had in the analysis; "
                          "set it by hand")  # fmt: skip
        if value.kind != "scalar" or value.tagged or value.style in ("|", ">") or value.line != value.end_line:
            raise Refusal(f"{pointer} is not a one-line value in the manifest; set it by hand")
        parent[int(last) if isinstance(parent, list) else last] = live
        normal = parsed.normal.split("\n")[value.line]
        if value.line == 0 and parsed.lines[0].startswith("\ufeff"):
            raise Refusal(f"{pointer} is on the first line, behind a byte order mark; set it by hand")
        original = parsed.lines[value.line]
        ending = original[len(original.rstrip("\r\n")) :]
        new_line = normal[: value.column] + _written(live, value.style) + normal[value.end_column :] + ending
        new_lines = [*parsed.lines[: value.line], new_line, *parsed.lines[value.line + 1 :]]

        def one_line(old_lines: list[str], changed: list[str]) -> bool:
            return len(old_lines) == len(changed) and sum(a != b for a, b in zip(old_lines, changed, strict=True)) == 1

        new_text, diff = _checked(parsed, index, expected, new_lines, path, one_line)
    except Refusal as refusal:
        return EditResult("refused", reason=str(refusal))
    return EditResult("changed", text=new_text, diff=diff)
