"""How yaml.v2 reads a plain scalar back: a port of gopkg.in/yaml.v2's ``resolve.go``.

sigs.k8s.io/yaml (and so kubectl-blame) marshals through gopkg.in/yaml.v2, which
quotes a string exactly when, written plain, it would read back as something
else: a bool, null, int, float or timestamp in YAML 1.1's sense (``yes``, ``off``,
``~``, ``0x1F``, ``1_000``, ``.inf``, ``2024-01-02``). ``emitter`` asks this
module before it picks a style.

Ported: ``resolve()``'s table and branches for plain scalars
(``resolveMap``, the int/uint/float attempts with ``strconv``'s syntax and
ranges) and ``parseTimestamp``'s allowed layouts with Go's range checks.

Guarantees: pure; ``resolves_as_string(s)`` is True exactly when yaml.v2 would
resolve the plain scalar ``s`` to the string ``s`` (False for the empty string,
which resolves to null).
"""

from __future__ import annotations

import math
import re
from datetime import date

# yaml.v2 resolve.go: plain scalars that YAML 1.1 reads as something other than a string.
_RESOLVE_MAP = frozenset(
    {
        *("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"),
        *("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"),
        *("", "~", "null", "Null", "NULL"),
        *(".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"),
        "<<",
    }
)
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9_]+([eE][-+]?[0-9_]+)?")
_TIMESTAMPS = (
    re.compile(
        r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})[Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})([.,][0-9]+)?"
        r"(Z|[+-][0-9]{2}:[0-9]{2})"
    ),
    re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2}) ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})([.,][0-9]+)?"),
    re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"),
)


def _is_timestamp(s: str) -> bool:
    """yaml.v2 parseTimestamp: the layouts it tries, with Go's range checks."""
    for layout in _TIMESTAMPS:
        m = layout.fullmatch(s)
        if m is None:
            continue
        parts = [int(g) for g in m.groups()[:6] if g is not None]
        try:
            date(parts[0], parts[1], parts[2])
        except ValueError:
            continue
        if len(parts) == 6 and (parts[3] > 23 or parts[4] > 59 or parts[5] > 59):
            continue
        return True
    return False


def _go_int(s: str) -> int | None:
    """``strconv.ParseInt(s, 0, 64)``'s syntax (0x, 0o, 0b, leading-0 octal), ignoring range."""
    sign, digits = (s[0], s[1:]) if s[:1] in ("+", "-") else ("", s)
    base = 10
    if digits[:1] == "0":
        if len(digits) >= 3 and digits[1] in "bBoOxX":
            base, digits = {"b": 2, "o": 8, "x": 16}[digits[1].lower()], digits[2:]
        else:
            base, digits = 8, digits[1:]
    elif not digits:
        return None
    if not all(ch.isascii() and ch.isalnum() and int(ch, 36) < base for ch in digits):
        return None
    value = int(digits, base) if digits else 0
    return -value if sign == "-" else value


def resolves_as_string(s: str) -> bool:
    """Whether yaml.v2 reads ``s``, written plain, back as the same string (resolve.go)."""
    if s in _RESOLVE_MAP:
        return False
    first = s[0]
    if first == ".":
        if _DOT_FLOAT.fullmatch(s):
            try:
                return math.isinf(float(s))  # Go's ParseFloat rejects out-of-range values
            except ValueError:
                return True
        return True
    if first not in "+-0123456789":
        return True
    if _is_timestamp(s):
        return False
    plain = s.replace("_", "")
    value = _go_int(plain) if plain else None
    unsigned = plain[:1] not in ("+", "-")
    if value is not None and (-(2**63) <= value < 2**63 or (unsigned and value < 2**64)):
        return False  # ParseInt or ParseUint accepts it
    if _YAML_FLOAT.fullmatch(plain) and not math.isinf(float(plain)):
        return False
    # An unsigned integer too big for uint64 still resolves, as a big.Int.
    return not (value is not None and unsigned)
