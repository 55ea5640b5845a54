"""Parse Kubernetes objects from YAML or JSON text.

Accepts one or many documents, ``kind: List`` (and ``*List`` with ``items``),
JSON (a fast path, tried first when the text looks like JSON) and YAML (libyaml's
C loader when available). Every object must have a ``kind`` and a
``metadata.name``; anything else raises :class:`BadInput` naming the source and
the document (1-based), never a traceback.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from bot.errors import BadInput

try:  # libyaml is an order of magnitude faster; the pure-Python loader is the fallback
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


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
    docs: list[Any] = []
    loader = _Loader(text)
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


def load_documents(text: str, source: str = "<input>", *, require_name: bool = True) -> list[dict[str, Any]]:
    """All Kubernetes objects in ``text``, with ``List`` wrappers flattened.

    ``require_name=False`` accepts objects without ``metadata.name`` (``blame`` prints any object).
    """
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
                objects.append(_checked(item, source, number, f"item {pos}", require_name))
            continue
        objects.append(_checked(doc, source, number, None, require_name))
    return objects


def _checked(obj: Any, source: str, number: int, item: str | None, require_name: bool) -> dict[str, Any]:
    suffix = f" ({item})" if item else ""
    if not isinstance(obj, dict):
        raise BadInput(f"expected a Kubernetes object{suffix}", source=source, document=number)
    if not isinstance(obj.get("kind"), str) or not obj["kind"]:
        raise BadInput(f"object has no kind{suffix}", source=source, document=number)
    meta = obj.get("metadata")
    if not require_name:
        return obj
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise BadInput(f"{obj['kind']} has no metadata.name{suffix}", source=source, document=number)
    return obj
