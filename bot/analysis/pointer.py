"""JSON pointers (RFC 6901) and the token paths the analysis walks with.

A path is a tuple of tokens: ``str`` for a map key, ``int`` for a list index.
Pointers are what users and the report see; paths are what code walks.
Guarantees: ``split(join(p)) == p`` for every path whose string tokens are not
all-digit, and ``escape``/``unescape`` are inverse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

Token = str | int
Path = tuple[Token, ...]

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>", "__bool__": lambda self: False})()
"""Sentinel for 'this side has no value here' (distinct from an explicit null)."""


def escape(token: Token) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join(path: Sequence[Token]) -> str:
    return "".join("/" + escape(t) for t in path)


def split(pointer: str) -> tuple[str, ...]:
    """Split a pointer into unescaped string tokens (list indices stay strings)."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise ValueError(f"a JSON pointer starts with '/': {pointer!r}")
    return tuple(unescape(t) for t in pointer[1:].split("/"))


def resolve(obj: Any, path: Sequence[Token | str]) -> Any:
    """The value at ``path`` in ``obj``, or ``MISSING``. String tokens index lists when numeric."""
    cur = obj
    for tok in path:
        if isinstance(cur, dict):
            if tok not in cur:
                return MISSING
            cur = cur[tok]
        elif isinstance(cur, list):
            try:
                idx = int(tok)
            except (TypeError, ValueError):
                return MISSING
            if not 0 <= idx < len(cur):
                return MISSING
            cur = cur[idx]
        else:
            return MISSING
    return cur


def covers(outer: str, inner: str) -> bool:
    """True when pointer ``outer`` is ``inner`` or one of its ancestors."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/") or outer == ""


def delete(obj: Any, path: Sequence[Token | str]) -> None:
    """Remove the value at ``path`` in place; a no-op when it is absent."""
    if not path:
        return
    parent = resolve(obj, path[:-1])
    last = path[-1]
    if isinstance(parent, dict):
        parent.pop(last, None)
    elif isinstance(parent, list):
        try:
            idx = int(last)
        except (TypeError, ValueError):
            return
        if 0 <= idx < len(parent):
            del parent[idx]


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_ITEM_KEYS = ("name", "containerPort", "port", "key", "mountPath", "devicePath", "ip")
"""What identifies a list item for a person, in this order (the usual merge keys of Kubernetes lists)."""


def readable(pointer: str, obj: Any = None) -> str:
    """``pointer`` as people read a path: ``spec.template.spec.containers[name=webhook].image``, keys with dots or
    slashes quoted (``metadata.annotations["a.b/c"]``), a list item named by its key in ``obj`` (the object the
    pointer points into) when it has one, else by its index (``args[0]``)."""
    out = ""
    here = obj
    for token in split(pointer):
        if token.isdigit() and not isinstance(here, dict):  # a list's index (the list itself may be unknown)
            if not isinstance(here, list):
                out += f"[{token}]"
                continue
            index = int(token)
            item = here[index] if index < len(here) else None
            key = next((k for k in _ITEM_KEYS if isinstance(item, dict) and isinstance(item.get(k), str | int)), None)
            out += f"[{key}={item[key]}]" if key is not None and isinstance(item, dict) else f"[{index}]"
            here = item
            continue
        out += (("." if out else "") + token) if _PLAIN_KEY.fullmatch(token) else f"[{json.dumps(token)}]"
        here = here.get(token) if isinstance(here, dict) else None
    return out or "(the whole object)"
