"""The edit a system-level PR proposes: one ``resource.customizations.ignoreDifferences.<group>_<Kind>`` rule into
the file that holds ``argocd-cm``.

Two forms, as people keep it: a ConfigMap manifest (``data.<key>``, the document ``kind: ConfigMap`` named
``argocd-cm``) or the argo-helm chart's values (``configs.cm.<key>``, a values file of one document). The rule is
YAML inside a string; the guarantees are those of :mod:`bot.fixes.edit` for app rules:

* the edit only ADDS lines (checked with difflib), every other line, comment and document stays byte for byte;
* a key that exists already (a literal block scalar, ``|``) gets the missing values merged into it, inside the
  block (a list it has grows, a list it lacks is added); a value already there is never added twice, and when
  nothing is missing the answer is "already-present";
* the new text, read again, equals the old documents except the one key, whose rules read back as the old rules
  plus exactly the missing values;
* whatever cannot be done that way (a template, flow style, a quoted one-line value, a key or the rule's YAML that
  is not a mapping) is "refused" with a reason a person can act on.

Pure: no I/O.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import yaml as pyyaml

from bot.fixes.edit import EditResult
from bot.fixes.yamltext import (
    Insertion,
    Node,
    Parsed,
    Refusal,
    Style,
    detect_style,
    find_documents,
    load,
    only_added,
    scalar,
    splice,
    unified_diff,
)

Form = Literal["configmap", "helm"]
RULE_KEYS = ("managedFieldsManagers", "jsonPointers", "jqPathExpressions")


def _rules_of(raw: Any, key: str) -> dict[str, list[str]]:
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        raise Refusal(f"{key} is not a string holding YAML")
    try:
        data = pyyaml.safe_load(raw)
    except pyyaml.YAMLError as e:
        raise Refusal(f"the value of {key} is not valid YAML") from e
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise Refusal(f"the value of {key} is not a mapping of lists")
    return {str(k): [str(x) for x in v] for k, v in data.items()}


def _missing(have: Mapping[str, list[str]], want: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, values in want.items():
        new = [v for v in values if v not in have.get(k, [])]
        if new:
            out[k] = new
    return out


def _rule_lines(rules: Mapping[str, Sequence[str]], style: Style) -> list[str]:
    out: list[str] = []
    for k, values in rules.items():
        out.append(f"{k}:")
        out += [" " * style.seq_offset + "-" + " " * (style.item_offset - 1) + scalar(v) for v in values]
    return out


def _mapping(node: Node, where: str) -> Node:
    if node.kind != "map" or node.flow or node.anchor is not None or node.has_merge_key():
        raise Refusal(f"{where} is not a plain block mapping; change it by hand")
    return node


def _block_body(lines: Sequence[str], value: Node, key: str) -> tuple[int, int, int]:
    """(first content line, last content line, indentation) of the literal block scalar ``value``."""
    if value.kind != "scalar" or value.style != "|" or value.anchor is not None:
        raise Refusal(f"{key} is not written as a literal block (|); add the rule by hand")
    first = value.line + 1
    last = value.last_line()
    content = [i for i in range(first, last + 1) if lines[i].strip()]
    if not content:
        raise Refusal(f"{key} is an empty block; add the rule by hand")
    indent = min(len(lines[i]) - len(lines[i].lstrip(" ")) for i in content)
    return first, last, indent


def _merge_inside(parsed: Parsed, value: Node, key: str, missing: Mapping[str, list[str]], style: Style
                  ) -> list[Insertion]:  # fmt: skip
    """The lines that add ``missing`` inside the block scalar of ``key``: each list grows after its last item; a
    list the block lacks goes after the block's last line."""
    first, last, indent = _block_body(parsed.lines, value, key)
    inner = load("".join(line[indent:] if line.strip() else "\n" for line in parsed.lines[first : last + 1]))
    if len(inner.docs) != 1:
        raise Refusal(f"the value of {key} holds several YAML documents")
    root = _mapping(inner.docs[0], f"the value of {key}")
    pad = " " * indent
    out: list[Insertion] = []
    for k, values in missing.items():
        pair = root.get(k)
        if pair is None:
            lines = _rule_lines({k: values}, style)
            out.append(Insertion(after=last, depth=1, lines=tuple(pad + line for line in lines)))
            continue
        seq = pair[1]
        if seq.kind != "seq" or seq.flow or not seq.items:
            raise Refusal(f"{k} in {key} is not a block list; add the rule by hand")
        dash = " " * seq.column + "-" + " " * (seq.items[0].column - seq.column - 1)
        out.append(Insertion(after=first + seq.last_line(), depth=2,
                             lines=tuple(pad + dash + scalar(v) for v in values)))  # fmt: skip
    return out


def _new_key(parsed: Parsed, doc: Node, path: Sequence[str], key: str, rules: Mapping[str, Sequence[str]],
             style: Style) -> Insertion:  # fmt: skip
    """The lines that add ``key: |`` with the rule below the mapping at ``path``, creating the mappings missing."""
    node, depth, done = doc, 0, 0
    for name in path:
        pair = _mapping(node, ".".join(path[:done]) or "the document").get(name)
        if pair is None:
            break
        if pair[1].implicit_null:
            node, done = pair[0], done + 1
            break
        node, done, depth = pair[1], done + 1, depth + 1
    if node.kind == "scalar":  # `data:` with nothing after it: lines below the key fill it
        column, after = node.column + style.map_indent, node.line
    else:
        node = _mapping(node, ".".join(path[:done]) or "the document")
        column, after = node.column, node.last_line()
    lines: list[str] = []
    for name in path[done:]:
        lines.append(" " * column + f"{name}:")
        column += style.map_indent
    lines.append(" " * column + f"{key}: |")
    lines += [" " * (column + style.map_indent) + line for line in _rule_lines(rules, style)]
    return Insertion(after=after, depth=depth, lines=tuple(lines))


def add_system_rule(text: str, *, form: Form, key: str, rules: Mapping[str, Sequence[str]],
                    path: str = "argocd-cm.yaml") -> EditResult:  # fmt: skip
    """Add the system-level ``rules`` under ``key`` of argocd-cm in ``text`` (see the module docstring)."""
    if not key.startswith("resource.customizations.ignoreDifferences.") or key.endswith(".all"):
        raise ValueError(f"not a per-kind ignoreDifferences key: {key!r}")
    if not rules or any(k not in RULE_KEYS or not v for k, v in rules.items()):
        raise ValueError(f"rules must be non-empty lists of {RULE_KEYS}: {rules!r}")
    keys = ("data",) if form == "configmap" else ("configs", "cm")
    where = ".".join(keys)
    try:
        if "{{" in text:
            raise Refusal("the file is a Helm/Go template: it is YAML only once rendered; change it by hand")
        parsed = load(text)
        if form == "configmap":
            index = find_documents(parsed, kind="ConfigMap", api_group=None, name="argocd-cm", namespace=None)
        elif len(parsed.docs) == 1 and isinstance(parsed.data[0], dict):
            index = 0
        else:
            raise Refusal("a Helm values file is one YAML mapping; this file is not")
        data = parsed.data[index]
        holder: Any = data
        for k in keys:
            holder = holder.get(k) if isinstance(holder, dict) else None
        if holder is not None and not isinstance(holder, dict):
            raise Refusal(f"{where} is not a mapping")
        have = _rules_of((holder or {}).get(key), key)
        missing = _missing(have, rules)
        if not missing:
            return EditResult("already-present", reason=f"{where} already has the rule under {key}")
        style = detect_style([[parsed.docs[index]], parsed.docs])
        doc = parsed.docs[index]
        if have:
            node = doc
            for k in keys:
                found = _mapping(node, k).get(k)
                assert found is not None  # the data has it
                node = found[1]
            pair = _mapping(node, where).get(key)
            if pair is None:
                raise Refusal(f"{key} has no lines of its own to edit")
            insertions = _merge_inside(parsed, pair[1], key, missing, style)
        else:
            if holder is not None and key in holder:
                raise Refusal(f"{key} is there but empty; fill it by hand")
            insertions = [_new_key(parsed, doc, keys, key, missing, style)]
        new_lines = splice(parsed.lines, insertions)
        if not only_added(parsed.lines, new_lines):
            raise Refusal("internal check failed: the edit would change existing lines; nothing was changed")
        new_text = "".join(new_lines)
        after = load(new_text).data
        expected = {k: [*have.get(k, []), *missing.get(k, [])] for k in {**have, **missing}}
        got = after[index]
        for k in keys:
            got = got.get(k) if isinstance(got, dict) else None
        if not isinstance(got, dict) or _rules_of(got.get(key), key) != expected:
            raise Refusal("internal check failed: the edited rule does not read back as intended; nothing was changed")
        rest_after = copy.deepcopy(after)
        rest_before = copy.deepcopy(parsed.data)
        for docs in (rest_after, rest_before):
            holder2 = docs[index]
            for k in keys:
                holder2 = holder2.get(k) if isinstance(holder2, dict) else {}
            if isinstance(holder2, dict):
                holder2.pop(key, None)
            if docs is rest_after:
                _prune_created(docs[index], keys, parsed.data[index])
        if rest_after != rest_before:
            raise Refusal("internal check failed: the edit would change other keys; nothing was changed")
    except Refusal as refusal:
        return EditResult("refused", reason=str(refusal))
    return EditResult("changed", text=new_text, diff=unified_diff(parsed.lines, new_lines, path))


def _prune_created(doc: Any, keys: Sequence[str], before: Any) -> None:
    """Drop the mappings the edit created on the way to the key (empty once the key is popped) for the comparison."""
    for depth in range(len(keys), 0, -1):
        cur, old = doc, before
        for k in keys[: depth - 1]:
            cur = cur.get(k) if isinstance(cur, dict) else None
            old = old.get(k) if isinstance(old, dict) else None
        name = keys[depth - 1]
        if isinstance(cur, dict) and cur.get(name) == {} and (not isinstance(old, dict) or old.get(name) is None):
            if isinstance(old, dict) and name in old:
                cur[name] = old[name]
            else:
                cur.pop(name)
