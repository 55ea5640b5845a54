"""Parse Kubernetes objects from YAML or JSON text, as files hold it and as people paste it.

Accepts one or many documents, ``kind: List`` (and ``*List`` with ``items``),
JSON (a fast path, tried first when the text looks like JSON: orjson, or the json
module where orjson would read the text differently) and YAML (libyaml's C loader
when available). Raw bytes are decoded first: UTF-8 (with or without a
byte order mark), UTF-16 and UTF-32 (with a byte order mark, or UTF-16 without
one, as Windows shells write redirected output). Every object must have a
``metadata.name`` and, unless the caller accepts pastes that start at
``metadata:``, a ``kind``; anything else raises :class:`BadInput` naming the
source and the document (1-based), never a traceback.

What a reader would otherwise get silently wrong is refused too: a mapping with the same key twice (YAML and JSON
keep the last value and drop the first without a word; two ``kubectl get -o yaml`` outputs appended with ``>>``
make one), aliases that expand far beyond what was written (an alias bomb, refused with the ratio Kubernetes' own
YAML reader applies), and input larger than :data:`MAX_INPUT_BYTES`. A document that is text rather than an object
(a Helm ``NOTES.txt``) is quoted by its first words, and a YAML error next to ``{{`` says the file looks like an
unrendered template.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from typing import Any

from bot.errors import BadInput
from bot.wording import report as wording

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""The largest input read (per file, or standard input): far above a whole cluster's export of the kinds argo-why
reads, far below what would exhaust the memory of a laptop or the bot's container once parsed."""

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


@functools.cache
def _loader_class() -> Any:
    """The safe loader (libyaml's when PyYAML was built with it: an order of magnitude faster), refusing a mapping
    that holds the same key twice (YAML would keep the last value). Built on first use: JSON input (large apps,
    ``kubectl -o json``) never pays yaml's import."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(base):  # type: ignore[misc]  # libyaml's loader has no type hints
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: dict[tuple[str, str], int] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:  # `<<` merges, may repeat
                    ident = (key_node.tag, key_node.value)
                    line = key_node.start_mark.line + 1
                    if ident in seen:
                        raise _DuplicateKey(key_node.value, line, seen[ident])
                    seen[ident] = line
            mapping: dict[Any, Any] = super().construct_mapping(node, deep)
            return mapping

    return _Loader


_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16: FF FE 00 00 starts with UTF-16-LE's FF FE
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(data: bytes, source: str) -> str:
    """The text of a file: by its byte order mark, else UTF-16 when every other byte is NUL, else UTF-8."""
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
    if encoding is None and len(data) >= 2 and len(data) % 2 == 0 and b"\0" in data:
        # YAML and JSON are ASCII at heart: UTF-16 without a mark shows as NUL in every other byte
        even, odd = data[0::2].count(0), data[1::2].count(0)
        if odd > len(data) // 4 and even * 8 < odd:
            encoding = "utf-16-le"
        elif even > len(data) // 4 and odd * 8 < even:
            encoding = "utf-16-be"
    try:
        return data.decode(encoding or "utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"not UTF-8 or UTF-16 text ({e.reason} at byte {e.start})", source=source) from e


class _JSONDuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _JSONDuplicateKey(key)
            seen.add(key)
    return obj


_NUMBERS = bytes(
    ord("0") if 0x30 <= i <= 0x39 else ord("n") if chr(i) in ":,[- \t\r\n" else ord("x") for i in range(256)
)
_LONG_NUMBER = b"n" + b"0" * 19
"""In JSON text read through :data:`_NUMBERS` (digits to ``0``, what may stand before a number to ``n``): a number
of 19 digits or more, maybe an integer beyond 64 bits (orjson reads those as floats, the json module as integers).
A run of digits inside a string rarely matches (in a digest ``sha256:...``, a letter stands before it)."""
_ESCAPED_COLON = re.compile(rb"\\u003[aA]")
"""A colon written as an escape; not its neighbours ``\\u003c`` and ``\\u003e`` (Go's JSON, kubectl's, writes ``<`` and
``>`` so): they keep the fast path."""
_JSON_START = re.compile(r"[ \t\r\n]*[\[{]")
_JSON_START_BYTES = re.compile(rb"[ \t\r\n]*[\[{]")
"""What JSON text of objects starts with (JSON's own whitespace, then an object or a list)."""


def _fast_json(data: str | bytes) -> Any:
    """``data`` (text, or bytes read from a file) parsed by orjson (several times faster than the json module on
    large inputs), or ``None`` when the json module must read it: orjson refuses it (NaN, lone surrogates, nesting
    deeper than 1,024, bytes that are not UTF-8...), it may hold an integer beyond 64 bits, or it may have a
    duplicate key.

    Duplicates without a hook per object (which costs a third of the parse): every key of JSON text is followed by
    one colon outside a string, and orjson writes every string with its colons as they are. So, when the text writes
    no colon as an escape (``\\u003a``), it has exactly as many colons as orjson's dump of what it parsed, unless a
    key was given twice: the first of the two, its colon and what its value held, is gone from the dump.
    """
    import orjson

    if not (_JSON_START_BYTES.match(data) if isinstance(data, bytes) else _JSON_START.match(data)):
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if _ESCAPED_COLON.search(raw) or _LONG_NUMBER in raw.translate(_NUMBERS):
        return None
    if orjson.dumps(value).count(b":") != raw.count(b":"):
        return None
    return value


def _json_documents(text: str, source: str, *, fast: bool = True) -> list[Any] | None:
    if not _JSON_START.match(text):
        return None
    value = _fast_json(text) if fast else None
    if value is not None:
        return value if isinstance(value, list) else [value]
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except _JSONDuplicateKey as e:
        try:
            _yaml_documents(text, source)  # JSON is YAML: its reader names the line of the second key
        except BadInput as named:
            if isinstance(named.__cause__, _DuplicateKey):
                raise
            # the YAML reader stops at something else first (an emoji escaped as a surrogate pair is valid JSON
            # that PyYAML refuses): the duplicate is said without its line
        raise BadInput(wording.LOAD_DUPLICATE_KEY_JSON.format(key=json.dumps(e.key)), source=source) from e
    except ValueError:
        return None  # maybe YAML flow style, or JSON lines: let the YAML parser say what is wrong
    return value if isinstance(value, list) else [value]


def _yaml_documents(text: str, source: str, starts: list[int] | None = None) -> list[Any]:
    """The documents of ``text``; ``starts`` (when given) gets the 0-based line each document's content starts on."""
    docs: list[Any] = []
    aliased = "&" in text and "*" in text  # no anchor, no alias: nothing to expand
    import yaml  # only for YAML: JSON input never pays its import

    loader = _loader_class()(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            doc = loader.construct_document(node)
            if aliased:
                _check_aliases(doc, source, len(docs) + 1)
            docs.append(doc)
            if starts is not None:
                starts.append(node.start_mark.line)
    except _DuplicateKey as e:
        reason = wording.LOAD_DUPLICATE_KEY.format(key=json.dumps(e.key), line=e.line, first=e.first)
        raise BadInput(reason, source=source, document=len(docs) + 1) from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        reason = wording.LOAD_NOT_YAML.format(where=where, problem=problem)
        if mark is not None and (line := _template_line(text, mark.line)) is not None:
            reason += wording.LOAD_TEMPLATE.format(line=line + 1)
        raise BadInput(reason, source=source, document=len(docs) + 1) from e
    finally:
        loader.dispose()
    return docs


def _template_line(text: str, line: int) -> int | None:
    """The line holding template syntax (``{{``) at or just before ``line``, where a YAML error was found."""
    lines = text.splitlines()
    return next((n for n in range(min(line, len(lines) - 1), max(line - 3, -1), -1) if "{{" in lines[n]), None)


def _allowed_alias_ratio(expanded: int) -> float:
    """go-yaml's allowedAliasRatio (yaml.v2/v3 decode.go, used by kubectl and the API server): 0.99 up to 400,000
    decoded values, falling linearly to 0.1 at 4,000,000."""
    if expanded <= 400_000:
        return 0.99
    if expanded >= 4_000_000:
        return 0.10
    return 0.99 - 0.89 * (expanded - 400_000) / 3_600_000


def _check_aliases(doc: Any, source: str, number: int) -> None:
    """Refuse a document whose aliases make it expand far beyond what was written (go-yaml's "excessive aliasing").

    Counted without expanding anything: each container once (aliases share the constructed object), its expanded
    size memoised by identity, depth-first with an explicit stack (a deep document is no recursion error)."""
    sizes: dict[int, int] = {}
    opened: set[int] = set()  # the containers whose children are being counted: the path from the root
    written = 0
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        value, done = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        children = list(value.values()) if isinstance(value, dict) else value
        if done:
            sizes[id(value)] = 1 + sum(sizes.get(id(c), 1) for c in children)
            opened.discard(id(value))
            continue
        if id(value) in opened:  # an alias inside its own anchor: no Kubernetes object is infinite
            raise BadInput(wording.LOAD_RECURSIVE_ALIAS, source=source, document=number)
        if id(value) in sizes:
            continue
        opened.add(id(value))
        written += 1 + sum(not isinstance(c, (dict, list)) for c in children)
        stack.append((value, True))
        stack.extend((c, False) for c in children)
    expanded = sizes.get(id(doc), 1)
    aliased = expanded - written
    if aliased > 100 and expanded > 1000 and aliased / expanded > _allowed_alias_ratio(expanded):
        raise BadInput(wording.LOAD_ALIASES.format(expanded=expanded, written=written), source=source, document=number)


def _first_words(text: str, line: int | None, value: Any) -> str:
    """How a document that is no object begins: its first line as written (else its value), cut at a word."""
    lines = text.splitlines()
    first = lines[line].strip() if line is not None and 0 <= line < len(lines) else ""
    if not first:
        first = str(next(iter(value), "")) if isinstance(value, dict) else str(value)
    first = " ".join(first.split())
    if len(first) > 60:
        first = first[:60].rsplit(" ", 1)[0] + " …"
    return first


def load_documents(
    data: str | bytes, source: str = "<input>", *, require_name: bool = True, require_kind: bool = True
) -> list[dict[str, Any]]:
    """All Kubernetes objects in ``data`` (text, or bytes to :func:`decode`), with ``List`` wrappers flattened.

    ``require_name=False`` accepts objects without ``metadata.name`` (``blame`` prints any object);
    ``require_kind=False`` accepts objects without ``kind`` (a live object pasted from ``metadata:`` on).
    """
    if len(data) > MAX_INPUT_BYTES:
        raise BadInput(wording.LOAD_TOO_LARGE.format(limit=MAX_INPUT_BYTES // (1024 * 1024)), source=source)
    text: str | None
    if isinstance(data, bytes):
        # bytes of JSON are parsed as they are: decoding 10 MB to text first costs a tenth of the parse
        value = _fast_json(data)
        text = None if value is not None else decode(data, source)
    else:
        value, text = None, data.removeprefix("\ufeff")
    starts: list[int] = []
    docs: list[Any] | None
    if text is None:
        docs = value if isinstance(value, list) else [value]
    else:
        # bytes had their orjson try (one with a byte order mark, or UTF-16, goes the json module's way)
        docs = _json_documents(text, source, fast=not isinstance(data, bytes))
        if docs is None:
            docs = _yaml_documents(text, source, starts)
    objects: list[dict[str, Any]] = []
    for number, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        if isinstance(doc, (str, int, float)) or (
            isinstance(doc, dict) and not {"kind", "apiVersion", "metadata"} & doc.keys()
        ):
            if text is None:  # parsed from the bytes: the text only to quote it
                text = decode(data, source) if isinstance(data, bytes) else data
            start = _first_words(text, starts[number - 1] if starts else None, doc)
            raise BadInput(wording.LOAD_NOT_AN_OBJECT.format(start=start), source=source, document=number)
        if not isinstance(doc, dict):
            raise BadInput(f"expected a Kubernetes object, found {type(doc).__name__}", source=source, document=number)
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            for pos, item in enumerate(doc["items"]):
                objects.append(_checked(item, source, number, f"item {pos}", require_name, require_kind))
            continue
        objects.append(_checked(doc, source, number, None, require_name, require_kind))
    return objects


def _checked(
    obj: Any, source: str, number: int, item: str | None, require_name: bool, require_kind: bool
) -> dict[str, Any]:
    suffix = f" ({item})" if item else ""
    if not isinstance(obj, dict):
        raise BadInput(f"expected a Kubernetes object{suffix}", source=source, document=number)
    kind = obj.get("kind")
    if (require_kind or kind is not None) and (not isinstance(kind, str) or not kind):
        raise BadInput(f"object has no kind{suffix}", source=source, document=number)
    meta = obj.get("metadata")
    if not require_name:
        return obj
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise BadInput(f"{kind or 'object'} has no metadata.name{suffix}", source=source, document=number)
    return obj
