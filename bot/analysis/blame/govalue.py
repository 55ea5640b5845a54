"""Values as Go's unstructured JSON holds them, and Go's way of printing scalars.

kubectl-blame reads an object into ``map[string]interface{}`` (encoding/json),
so what it prints is the object after a JSON round trip, and it pads its columns
by Go's ``len`` (bytes). A YAML loader gives Python more types (dates, bytes,
non-string keys); this module turns them into what Go would have.

Guarantees: pure; ``go_value`` returns a new value (never the input's own
dicts or lists) holding only dicts with string keys, lists, str, int, float,
bool and None; ``format_basic`` spells ints and floats as Go's
``formatBasicType`` (no exponent, shortest round-trip digits).
"""

from __future__ import annotations

import base64
import json
import math
from datetime import date, datetime
from decimal import Decimal
from typing import Any


def go_len(s: str) -> int:
    """Go's ``len``: kubectl-blame pads by bytes, not characters."""
    return len(s.encode("utf-8", "surrogatepass"))


def _go_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, float):
        return format_basic(key)
    return str(go_value(key))


def _rfc3339(t: datetime) -> str:
    text = t.isoformat()
    return text[: -len("+00:00")] + "Z" if text.endswith("+00:00") else text


def go_value(value: Any) -> Any:
    """The value as it would be after a JSON round trip (a YAML loader may give more types)."""
    if isinstance(value, dict):
        return {_go_key(k): go_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [go_value(v) for v in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, datetime):
        return _rfc3339(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")  # encoding/json's []byte
    return str(value)


def format_basic(value: Any) -> str:
    """Go's ``formatBasicType``: ints in decimal, floats with ``strconv.FormatFloat(f, 'f', -1)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        # repr() is the shortest round-trip form, as Go's precision -1; 'f' forbids exponents.
        text = format(Decimal(repr(value)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return str(value)
