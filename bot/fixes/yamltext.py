"""Line-level YAML surgery: locate nodes with ruamel.yaml, change the file by whole lines.

ruamel.yaml's round-trip parser gives every node its start and end position; a
small composer here keeps them (an alias keeps its own position rather than
its anchor's). Edits never re-emit the document: new lines are spliced into
the original text, or one original line is dropped, so every byte outside the
touched lines stays as it was -- BOM, CRLF line endings, comments, quoting,
indentation and every other document of the file.

Guarantees:

* ``load`` refuses what it cannot map back to lines exactly (lone CR, NEL/LS/PS
  line breaks) and what is not YAML (duplicate keys included);
* ``splice`` only inserts lines, each ending like the line it follows, and refuses
  rather than touch a last line that has no line break;
* ``only_added``/``only_removed`` check a result independently with difflib, and
  ``scalar`` renders a string that YAML 1.1 and 1.2 readers (PyYAML, ruamel,
  Kubernetes' go-yaml) all read back as that same string.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import TaggedScalar
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

BOM = "\ufeff"
# ruamel counts these as line breaks; str.split("\n") does not, so positions would drift.
_ODD_BREAKS = {"\x85": "NEL", "\u2028": "LINE SEPARATOR", "\u2029": "PARAGRAPH SEPARATOR"}
# go-yaml v2 (sigs.k8s.io/yaml, what Kubernetes and Argo CD read with) takes these as booleans too.
_GO_YAML_BOOLS = frozenset({"y", "Y", "n", "N"})


class Refusal(Exception):
    """The file cannot be changed safely; the message says why, in words for the person who asked."""


@dataclass(eq=False)
class Node:
    """A YAML node with its place in the text (0-based lines and columns of the LF-normalised text)."""

    kind: Literal["map", "seq", "scalar", "alias"]
    line: int
    column: int
    index: int
    end_line: int
    end_column: int
    end_index: int
    flow: bool = False
    anchor: str | None = None
    value: str = ""  # a scalar's text; an alias's anchor name
    style: str | None = None
    tagged: bool = False
    items: list[Node] = field(default_factory=list)
    pairs: list[tuple[Node, Node]] = field(default_factory=list)

    @property
    def block(self) -> bool:
        return self.kind in ("map", "seq") and not self.flow

    @property
    def implicit_null(self) -> bool:
        """``key:`` with nothing after it: a value that lines below the key can fill without touching it."""
        return (
            self.kind == "scalar"
            and self.value == ""
            and self.style is None
            and not self.tagged
            and self.anchor is None
            and self.index == self.end_index
        )

    def last_line(self) -> int:
        """The last line that holds text of this node (a block scalar's trailing blank lines included)."""
        if self.kind in ("scalar", "alias"):
            if self.implicit_null:
                # ruamel places an empty value at the next token, possibly lines further down.
                raise Refusal("an empty list item or value ends the place to edit, and it has no position of its own")
            # A block scalar ends after its last line break, at column 0 of the following line.
            return self.end_line if self.end_column > 0 else self.end_line - 1
        if self.flow:
            return self.end_line
        if self.kind == "seq":
            return self.items[-1].last_line()
        key, value = self.pairs[-1]
        return key.last_line() if value.implicit_null else max(key.last_line(), value.last_line())

    def get(self, key: str) -> tuple[Node, Node] | None:
        """The (key, value) pair of a mapping whose key is the scalar ``key``; None when absent."""
        found = [(k, v) for k, v in self.pairs if k.kind == "scalar" and k.value == key]
        if len(found) > 1:
            raise Refusal(f"the key {key!r} appears twice")
        return found[0] if found else None

    def has_merge_key(self) -> bool:
        return any(k.kind == "scalar" and k.value == "<<" and k.style is None for k, _ in self.pairs)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.items:
            yield from child.walk()
        for key, value in self.pairs:
            yield from key.walk()
            yield from value.walk()


_KINDS: dict[type[Any], Literal["map", "seq", "scalar", "alias"]] = {
    MappingStartEvent: "map",
    SequenceStartEvent: "seq",
    ScalarEvent: "scalar",
    AliasEvent: "alias",
}


def _node(event: Any, events: Iterator[Any]) -> Node:
    start, end = event.start_mark, event.end_mark
    kind = _KINDS[type(event)]
    alias = kind == "alias"
    node = Node(
        kind,
        *(start.line, start.column, start.index, end.line, end.column, end.index),
        flow=bool(getattr(event, "flow_style", False)),
        anchor=None if alias else event.anchor,
        value=event.anchor if alias else getattr(event, "value", ""),
        style=getattr(event, "style", None),
        tagged=getattr(event, "tag", None) is not None,
    )
    if kind == "map":
        while not isinstance(nxt := next(events), MappingEndEvent):
            node.pairs.append((_node(nxt, events), _node(next(events), events)))
    elif kind == "seq":
        while not isinstance(nxt := next(events), SequenceEndEvent):
            node.items.append(_node(nxt, events))
    else:
        return node
    # Only a flow collection's end is exact (after its bracket); a block collection ends where its last child does.
    node.end_line, node.end_column, node.end_index = nxt.end_mark.line, nxt.end_mark.column, nxt.end_mark.index
    return node


def compose(events: Iterable[Any]) -> list[Node]:
    """One Node tree per document, from ruamel parser events."""
    docs: list[Node] = []
    it = iter(events)
    for event in it:
        if isinstance(event, DocumentStartEvent):
            docs.append(_node(next(it), it))
            if not isinstance(next(it), DocumentEndEvent):  # pragma: no cover - parser invariant
                raise Refusal("a document did not end where expected")
    return docs


def plain(value: Any) -> Any:
    """ruamel's round-trip data as plain dicts and lists, comparable between two readings of a file."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, TaggedScalar):  # compares by identity
        return ("!tagged", str(value.tag), value.value)
    if isinstance(value, float) and value != value:  # .nan never equals itself
        return ("!nan",)
    return value


@dataclass
class Parsed:
    """A YAML file as lines (exactly as given) and as documents (trees with positions, and data)."""

    lines: list[str]
    normal: str  # without BOM, CRLF as LF: what positions and indices refer to
    docs: list[Node]
    data: list[Any]


def split_lines(text: str) -> list[str]:
    """Lines with their terminators (only LF ends a line; CR stays with its LF)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def load(text: str) -> Parsed:
    """``text`` parsed once for positions and once for data; a refusal when either cannot be trusted."""
    stripped = text.removeprefix(BOM)
    normal = stripped.replace("\r\n", "\n")
    if "\r" in normal:
        raise Refusal("the file has carriage returns that do not end a line")
    for char, label in _ODD_BREAKS.items():
        if char in normal:
            raise Refusal(f"the file has a {label} character, which YAML counts as a line break")
    try:
        docs = compose(YAML(typ="rt").parse(normal))
        data = [plain(d) for d in YAML(typ="rt").load_all(normal)]
    except YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise Refusal(f"the file is not valid YAML: {problem}{where}") from exc
    if len(docs) != len(data):  # pragma: no cover - both come from the same parser
        raise Refusal("the file's documents could not be told apart")
    return Parsed(lines=split_lines(text), normal=normal, docs=docs, data=data)


def find_documents(parsed: Parsed, *, kind: str, api_group: str | None, name: str, namespace: str | None) -> int:
    """Index of the one document of ``kind`` named ``name``; a document without a namespace matches any."""
    matches = []
    for i, doc in enumerate(parsed.data):
        if not isinstance(doc, dict) or doc.get("kind") != kind:
            continue
        if api_group is not None and not str(doc.get("apiVersion", "")).startswith(api_group + "/"):
            continue
        meta = doc.get("metadata")
        if not isinstance(meta, dict) or meta.get("name") != name:
            continue
        if namespace and meta.get("namespace") and meta.get("namespace") != namespace:
            continue
        matches.append(i)
    label = f"{kind} {namespace + '/' if namespace else ''}{name}"
    if not matches:
        raise Refusal(f"no document of the file is the {label}")
    if len(matches) > 1:
        numbers = ", ".join(str(i + 1) for i in matches)
        raise Refusal(f"several documents of the file could be the {label} (documents {numbers})")
    return matches[0]


def template_at(normal: str, docs: Sequence[Node], *, inside_scalars: bool) -> str | None:
    """Where ``{{`` makes the file a template rather than YAML, as "line N"; None when it does not.

    With ``inside_scalars`` a ``{{`` within a scalar value is allowed: an ApplicationSet's own
    parameters (``'{{path.basename}}'``) live there, and the file is YAML as it stands.
    """
    spans = [(n.index, n.end_index) for d in docs for n in d.walk() if n.kind == "scalar"] if inside_scalars else []
    at = normal.find("{{")
    while at >= 0:
        if not any(start <= at < end for start, end in spans):
            return f"line {normal.count(chr(10), 0, at) + 1}"
        at = normal.find("{{", at + 2)
    return None


@dataclass(frozen=True)
class Style:
    """How a file indents: nested mapping keys, a sequence's dash under its key, an item after its dash."""

    map_indent: int = 2
    seq_offset: int = 0  # Argo CD's documentation puts the dash at the key's column
    item_offset: int = 2


def detect_style(scopes: Sequence[Sequence[Node]]) -> Style:
    """The most common indentation of the first scope that shows any; the defaults otherwise."""
    found: dict[str, int] = {}
    for scope in scopes:
        maps: Counter[int] = Counter()
        seqs: Counter[int] = Counter()
        items: Counter[int] = Counter()
        for root in scope:
            for node in root.walk():
                for key, value in node.pairs if node.block else ():
                    # A block collection never starts on its key's line, so the columns compare cleanly.
                    if value.block:
                        (maps if value.kind == "map" else seqs)[value.column - key.column] += 1
                if node.kind == "seq" and node.block:
                    items.update(i.column - node.column for i in node.items if not i.implicit_null)
        for name, counter, least in (("map_indent", maps, 1), ("seq_offset", seqs, 0), ("item_offset", items, 2)):
            usable = [n for n, _ in counter.most_common() if n >= least]
            if usable and name not in found:
                found[name] = usable[0]
    return Style(**found)


def _reads_back(candidate: str, value: str) -> bool:
    line = f"k: {candidate}\n"
    try:
        modern = YAML(typ="safe", pure=True).load(line)
        legacy = pyyaml.safe_load(line)
    except (YAMLError, pyyaml.YAMLError):
        return False
    return bool(modern == {"k": value} and legacy == {"k": value})


def scalar(value: str) -> str:
    """``value`` as a one-line YAML scalar: plain when every reader agrees, else single, else double quoted."""
    plain_ok = value not in _GO_YAML_BOOLS and value == value.strip()
    candidates = ([value] if plain_ok else []) + ["'" + value.replace("'", "''") + "'", json.dumps(value)]
    for candidate in candidates:
        if "\n" not in candidate and _reads_back(candidate, value):
            return candidate
    raise ValueError(f"cannot write {value!r} as a one-line YAML scalar")  # pragma: no cover - json never fails


Block = dict[str, "str | Block | list[str | Block]"]


def block_lines(value: Block | list[str | Block], column: int, style: Style) -> list[str]:
    """``value`` in block style, its keys (mapping) or dashes (sequence) at ``column``; lines without terminator."""
    pad = " " * column
    out: list[str] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            if isinstance(sub, str):
                out.append(f"{pad}{key}: {scalar(sub)}")
            else:
                out.append(f"{pad}{key}:")
                indent = style.map_indent if isinstance(sub, dict) else style.seq_offset
                out += block_lines(sub, column + indent, style)
        return out
    content = column + style.item_offset
    dash = pad + "-" + " " * (style.item_offset - 1)
    for item in value:
        if isinstance(item, str):
            out.append(dash + scalar(item))
        else:
            sub_lines = block_lines(item, content, style)
            out += [dash + sub_lines[0][content:], *sub_lines[1:]]
    return out


@dataclass(frozen=True)
class Insertion:
    """New lines after line ``after`` (0-based), extending a collection ``depth`` levels below the document root."""

    after: int
    depth: int
    lines: tuple[str, ...]


def splice(lines: Sequence[str], insertions: Sequence[Insertion]) -> list[str]:
    """``lines`` with the insertions made, each new line ending like the line it follows.

    At one line the deeper collection's lines come first: a shallower line closes the
    deeper block, so the other order would put the deeper lines in the wrong collection.
    Equal depths keep the order given.
    """
    ordered = sorted(enumerate(insertions), key=lambda p: (p[1].after, -p[1].depth, p[0]))
    out: list[str] = []
    done = 0
    for _, ins in ordered:
        out += lines[done : ins.after + 1]
        done = ins.after + 1
        anchor = lines[ins.after]
        ending = "\r\n" if anchor.endswith("\r\n") else "\n" if anchor.endswith("\n") else ""
        if not ending:
            raise Refusal("the file does not end with a line break: adding after its last line would change that line")
        out += [line + ending for line in ins.lines]
    return out + list(lines[done:])


def _opcodes(old: Sequence[str], new: Sequence[str]) -> Sequence[tuple[str, int, int, int, int]]:
    # autojunk would treat frequent lines (blank, "---") as junk and report changes that are not there.
    return difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()


def only_added(old: Sequence[str], new: Sequence[str]) -> bool:
    """True when ``new`` is ``old`` with lines inserted, every original line byte for byte, terminators included."""
    return all(tag in ("equal", "insert") for tag, *_ in _opcodes(old, new))


def only_removed(old: Sequence[str], new: Sequence[str], removed: Sequence[str]) -> bool:
    """True when ``new`` is ``old`` without exactly the lines ``removed`` (in order), nothing else touched."""
    gone: list[str] = []
    for tag, i1, i2, _, _ in _opcodes(old, new):
        if tag not in ("equal", "delete"):
            return False
        if tag == "delete":
            gone += old[i1:i2]
    return gone == list(removed)


def _bare(line: str) -> str:
    return line.removesuffix("\n").removesuffix("\r")


def unified_diff(old: Sequence[str], new: Sequence[str], path: str) -> str:
    """A unified diff for people (the PR body, Slack): LF lines, whatever the file's line endings."""
    rows = difflib.unified_diff([_bare(x) for x in old], [_bare(x) for x in new], f"a/{path}", f"b/{path}", lineterm="")
    return "".join(row + "\n" for row in rows)
