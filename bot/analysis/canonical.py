"""Equality after canonicalisation: the evidence for the ``normalization`` verdict.

Two values that differ as text may mean the same to the API server: resource
quantities (``1000m`` = ``1``, ``2048Mi`` = ``2Gi``), Go durations (``90m`` =
``1h30m0s``), ``""``/``{}``/``[]``/null versus absent, and the same list members
in another order. Quantities are only compared as quantities where the field
holds one (resources, limits, capacities), so that an image tag ``1.0`` never
equals ``1``.

Guarantees: pure; ``equivalent(a, b)`` returns the reason (a short phrase) or
``None``; ``deep_equal`` never confuses ``true`` with ``1``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal, DecimalException, InvalidOperation
from typing import Any

from bot.analysis.pointer import MISSING, Token

_QUANTITY_PARENTS = frozenset(
    {"limits", "requests", "hard", "capacity", "allocatable", "overhead", "resources", "used"}
)
_QUANTITY_KEYS = frozenset({"cpu", "memory", "storage", "ephemeral-storage", "sizeLimit"})
_DURATION = re.compile(r"^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_NS = {
    "ns": Decimal(1),
    "us": Decimal(1000),
    "µs": Decimal(1000),
    "μs": Decimal(1000),
    "ms": Decimal(10**6),
    "s": Decimal(10**9),
    "m": Decimal(60 * 10**9),
    "h": Decimal(3600 * 10**9),
}


def deep_equal(a: Any, b: Any) -> bool:
    """Structural equality with JSON semantics (``1 == 1.0``, but ``true != 1``)."""
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return False
        return all(deep_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b) and isinstance(a, str) == isinstance(b, str)


def is_empty(value: Any) -> bool:
    """Absent, null, ``""``, ``{}`` or ``[]``: what the API server drops as omitempty."""
    return value is MISSING or value is None or (isinstance(value, str | dict | list) and len(value) == 0)


def _quantity(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        return parse_quantity(value)
    except (ValueError, TypeError, ArithmeticError):
        return None


# The suffixes of a Kubernetes quantity: the power of 1000 (or of 1024 with a trailing "i").
_EXPONENTS = {"n": -3, "u": -2, "m": -1, "K": 1, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_BINARY_PREFIXES = "KMGTPE"


def parse_quantity(quantity: str | int | float) -> Decimal:
    """A Kubernetes quantity (``200Mi``, ``1.5``, ``100m``) as a decimal number; ``ValueError`` when it is none.

    The same function as ``kubernetes.utils.quantity.parse_quantity`` of the Kubernetes Python client (Apache
    License 2.0, Copyright 2019 The Kubernetes Authors), suffix for suffix and quirk for quirk (a test holds them
    equal): importing it from there imports the whole client, a fifth of a second of ``argo-why explain``.
    """
    if isinstance(quantity, int | float | Decimal):
        return Decimal(quantity)
    text = str(quantity)
    number, suffix = text, None
    if len(text) >= 2 and text[-1] == "i":
        if text[-2] in _EXPONENTS:
            number, suffix = text[:-2], text[-2:]
    elif len(text) >= 1 and text[-1] in _EXPONENTS:
        number, suffix = text[:-1], text[-1:]
    try:
        value = Decimal(number)
    except InvalidOperation:
        raise ValueError(f"Invalid number format: {number}") from None
    if suffix is None:
        return value
    if suffix.endswith("i"):
        if suffix[0] not in _BINARY_PREFIXES:  # "ki", "mi", "ni" and "ui" are not binary suffixes
            raise ValueError(f"{text} has unknown suffix")
        base = 1024
    else:
        base = 1000
    try:
        return value * (base ** Decimal(_EXPONENTS[suffix[0]]))
    except DecimalException as exc:
        raise ValueError(f"Invalid quantity: {text}") from exc


def looks_like_quantity_field(path: Sequence[Token]) -> bool:
    if not path:
        return False
    last = path[-1]
    parent = path[-2] if len(path) > 1 else None
    if isinstance(last, str) and (last in _QUANTITY_KEYS or last.startswith("hugepages-")):
        return True
    return isinstance(parent, str) and parent in _QUANTITY_PARENTS


def _duration_ns(value: Any) -> Decimal | None:
    if not isinstance(value, str) or not _DURATION.match(value):
        return None
    return sum((Decimal(n) * _UNIT_NS[u] for n, u in _DURATION_PART.findall(value)), Decimal(0))


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def same_members(a: Any, b: Any) -> bool:
    """Two lists holding the same members in another order."""
    if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
        return False
    return sorted(map(_canonical_json, a)) == sorted(map(_canonical_json, b))


def equivalent(desired: Any, live: Any, path: Sequence[Token]) -> str | None:
    """Why ``desired`` and ``live`` mean the same, or ``None`` when they do not."""
    if is_empty(desired) and is_empty(live):
        return "an empty value and an absent one mean the same"
    if desired is MISSING or live is MISSING:
        return None
    if same_members(desired, live) and not deep_equal(desired, live):
        return "the same list members in another order"
    if looks_like_quantity_field(path):
        qd, ql = _quantity(desired), _quantity(live)
        if qd is not None and ql is not None and qd == ql:
            return "the same quantity in another notation"
    dd, dl = _duration_ns(desired), _duration_ns(live)
    if dd is not None and dl is not None and dd == dl:
        return "the same duration in another notation"
    return None
