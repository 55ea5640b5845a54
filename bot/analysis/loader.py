"""Parse Kubernetes objects from YAML or JSON text, as files hold it and as people paste it.

Accepts one or many documents, ``kind: List`` (and ``*List`` with ``items``),
JSON (a fast path, tried first when the text looks like JSON) and YAML (libyaml's
C loader when available). Raw bytes are decoded first: UTF-8 (with or without a
byte order mark), UTF-16 and UTF-32 (with a byte order mark, or UTF-16 without
one, as Windows shells write redirected output). Every object must have a
``metadata.name`` and, unless the caller accepts pastes that start at
``metadata:``, a ``kind``; anything else raises :class:`BadInput` naming the
source and the document (1-based), never a traceback.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

from bot.errors import BadInput

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


def _json_documents(text: str) -> list[Any] | None:
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None  # maybe YAML flow style, or JSON lines: let the YAML parser say what is wrong
    return value if isinstance(value, list) else [value]


def _yaml_documents(text: str, source: str) -> list[Any]:
    import yaml  # only for YAML: JSON input (large apps, kubectl -o json) never pays its import

    docs: list[Any] = []
    # libyaml is an order of magnitude faster; the pure-Python loader is the fallback (how PyYAML was built)
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        while loader.check_data():
            docs.append(loader.get_data())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise BadInput(f"not valid YAML{where}: {problem}", source=source, document=len(docs) + 1) from e
    finally:
        loader.dispose()
    return docs


def load_documents(
    data: str | bytes, source: str = "<input>", *, require_name: bool = True, require_kind: bool = True
) -> list[dict[str, Any]]:
    """All Kubernetes objects in ``data`` (text, or bytes to :func:`decode`), with ``List`` wrappers flattened.

    ``require_name=False`` accepts objects without ``metadata.name`` (``blame`` prints any object);
    ``require_kind=False`` accepts objects without ``kind`` (a live object pasted from ``metadata:`` on).
    """
    text = decode(data, source) if isinstance(data, bytes) else data.removeprefix("\ufeff")
    docs = _json_documents(text)
    if docs is None:
        docs = _yaml_documents(text, source)
    objects: list[dict[str, Any]] = []
    for number, doc in enumerate(docs, start=1):
        if doc is None:
            continue
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
