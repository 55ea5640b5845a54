"""Kubernetes resource quantities (``500m``, ``2Gi``, ``1e3``) read as exact decimals.

A port of ``parse_quantity`` from the Kubernetes Python client
(``kubernetes/utils/quantity.py``, Apache-2.0), which this package used to import:
importing it loads the whole client (``kubernetes.client``, urllib3, ...), and the
analysis imports no I/O library. The port reads exactly what that function reads,
its leniencies included (any number ``decimal.Decimal`` accepts: ``NaN``, ``1_000``,
surrounding spaces), so ``normalization`` verdicts are unchanged.

Suffixes: decimal ``n u m k M G T P E`` (and ``K``), binary ``Ki Mi Gi Ti Pi Ei``.

Guarantees: pure; returns a ``Decimal`` or raises ``ValueError``, nothing else
(``ki``/``mi``/``ni``/``ui`` are not binary suffixes and raise).
"""

from __future__ import annotations

from decimal import Decimal, DecimalException, InvalidOperation

_EXPONENTS = {"n": -3, "u": -2, "m": -1, "K": 1, "k": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_BINARY_PREFIXES = "KMGTPE"  # only these exist in base 1024


def parse_quantity(quantity: str | int | float | Decimal) -> Decimal:
    """The quantity as a number: ``parse_quantity("1500m") == Decimal("1.5")``."""
    if isinstance(quantity, int | float | Decimal):
        return Decimal(quantity)
    text = str(quantity)
    number, suffix = text, ""
    if len(text) >= 2 and text[-1] == "i":
        if text[-2] in _EXPONENTS:
            number, suffix = text[:-2], text[-2:]
    elif text and text[-1] in _EXPONENTS:
        number, suffix = text[:-1], text[-1:]
    try:
        amount = Decimal(number)
    except InvalidOperation:
        raise ValueError(f"Invalid number format: {number}") from None
    if not suffix:
        return amount
    if suffix.endswith("i") and suffix[0] not in _BINARY_PREFIXES:
        raise ValueError(f"{text} has unknown suffix")
    base = 1024 if suffix.endswith("i") else 1000
    try:
        return amount * (base ** Decimal(_EXPONENTS[suffix[0]]))
    except DecimalException as exc:
        raise ValueError(f"Invalid quantity: {text}") from exc
