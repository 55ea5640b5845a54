"""What gitops-engine's ``remarshal`` does to an object of a built-in kind before Argo CD diffs it.

Argo CD's legacy diff first decodes every object of a kind client-go's scheme knows into its Go type and encodes it
back: an empty value of an ``omitempty`` field vanishes (``clusterIP: ""``, an env ``value: ""``) and a
``resource.Quantity`` comes out in canonical form (``1000m`` is ``1``, ``1024Mi`` is ``1Gi``). The types are DATA,
``data/remarshal.json``, generated from k8s.io/api by ``scripts/gen-remarshal-data.sh`` (never a hand list).

The round trip is all or nothing, as in gitops-engine: its decoder refuses unknown fields
(``DisallowUnknownFields``), so ONE field the Go type does not have (a StatefulSet's ``strategy``, a typo), a value
of the wrong type or a malformed quantity leaves the whole object as it is, and then Argo CD does report ``1000m``
against ``1``. :func:`refusal` says which field did it.

Guarantees: pure; :func:`remarshal` returns a new object and leaves kinds it does not know (custom resources) as
they are, and so an object the Go decoder refuses; :func:`canonical_quantity` answers Go's ``Quantity.String()``
for a valid quantity, ``None`` otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from bot.analysis.pointer import Token, join
from bot.analysis.schema import data_file
from bot.wording import report as wording

_QTY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}


@cache
def _data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_file("data/remarshal.json"))
    return data


def canonical_quantity(value: Any) -> str | None:
    """Go's canonical text of a quantity (``resource.MustParse(v).String()``); ``None`` when it is not one."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip() if not isinstance(value, str) else value
    m = _QTY.match(text)
    if not m:
        return None
    number, suffix = Decimal(m.group(1)), m.group(2) or ""
    if suffix in _BINARY:
        amount, fmt = number * (Decimal(2) ** _BINARY[suffix]), "binary"
    elif suffix[:1] in ("e", "E"):
        amount, fmt = number * (Decimal(10) ** int(suffix[1:])), "exponent"
    else:
        amount, fmt = number * (Decimal(10) ** _DECIMAL[suffix]), "decimal"
    # Go keeps nano precision at most, rounding up (away from zero)
    nanos = (amount * 10**9).to_integral_value(rounding="ROUND_CEILING" if amount >= 0 else "ROUND_FLOOR")
    amount = nanos / Decimal(10**9)
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    mag = abs(amount)
    if fmt == "binary" and mag == mag.to_integral_value() and mag >= 1024:
        n, exp = int(mag), 0
        while n % 1024 == 0 and exp < 60:
            n, exp = n // 1024, exp + 10
        suffixes = {v: k for k, v in _BINARY.items()}
        return f"{sign}{n}{suffixes[exp]}" if exp else f"{sign}{n}"
    # decimal: the smallest multiple-of-3 exponent that keeps the mantissa an integer, as big as possible
    n, exp = int(mag * 10**9), -9
    while n % 1000 == 0 and exp < 18:
        n, exp = n // 1000, exp + 3
    if fmt == "exponent":
        return f"{sign}{n}e{exp}" if exp else f"{sign}{n}"
    return f"{sign}{n}{_DECIMAL_SUFFIX[exp]}"


def _root(api_version: str, kind: str) -> str | None:
    group, _, version = api_version.rpartition("/")
    root = _data()["kinds"].get(f"{group}/{version}/{kind}")
    return str(root) if root is not None else None


def _empty(value: Any) -> bool:
    """Go's zero value, which omitempty drops: "", false, 0, an empty list or map."""
    if isinstance(value, bool):
        return not value
    return value in ("", 0, [], {})


class _NotDecodable(ValueError):
    """The Go decoder would refuse the object: remarshal then leaves it as it is.

    ``args``: (the field's path as tokens, what it is not: a key of ``wording.report.NOT_DECODABLE``).
    """


_SCALARS: dict[str, tuple[type, ...]] = {"string": (str,), "bool": (bool,), "number": (int, float)}


@cache
def _struct(ref: str) -> dict[str, tuple[str, bool]] | None:
    """The fields of the Go struct ``ref`` (``None``: not a struct): each field's type, and whether an empty value of
    it is dropped (``omitempty`` on a value that is neither a pointer, nor a struct, nor ``any``)."""
    types = _data()["types"]
    fields = types.get(ref)
    if fields is None:
        return None
    out: dict[str, tuple[str, bool]] = {}
    for key, spec in fields.items():
        ref_of = spec["type"]
        value_type = ref_of not in types and ref_of != "any"  # a struct value is never omitted, even empty
        out[key] = (ref_of, bool(spec.get("omitempty")) and not spec.get("pointer") and value_type)
    return out


def _walk(value: Any, ref: str, strict: bool = True) -> Any:
    """``value`` decoded as the Go type ``ref`` and encoded back. A refusal raises :class:`_NotDecodable` with the
    path of the field as it unwinds (built only then: most objects decode)."""
    if value is None:
        return None
    scalar = _SCALARS.get(ref)
    if scalar is not None:
        if not isinstance(value, scalar) or (ref == "number" and isinstance(value, bool)):
            raise _NotDecodable((), ref)
        return value
    if ref == "quantity":
        canonical = canonical_quantity(value)
        if canonical is None:
            raise _NotDecodable((), "quantity")
        return canonical
    if ref.startswith("[]"):
        if not isinstance(value, list):
            raise _NotDecodable((), "list")
        item, out_list = ref[2:], []
        for i, v in enumerate(value):
            try:
                out_list.append(_walk(v, item, strict))
            except _NotDecodable as e:
                raise _NotDecodable((i, *e.args[0]), e.args[1]) from None
        return out_list
    if ref.startswith("map[]"):
        if not isinstance(value, dict):
            raise _NotDecodable((), "map")
        item, out_map = ref[5:], {}
        for k, v in value.items():
            try:
                out_map[k] = _walk(v, item, strict)
            except _NotDecodable as e:
                raise _NotDecodable((k, *e.args[0]), e.args[1]) from None
        return out_map
    fields = _struct(ref)
    if fields is None:
        return value
    if not isinstance(value, dict):
        raise _NotDecodable((), "object")
    out = {}
    for key, v in value.items():
        spec = fields.get(key)
        if spec is None:
            if not strict:
                continue  # what a decoder without DisallowUnknownFields does
            raise _NotDecodable((key,), "field")  # DisallowUnknownFields
        if v is None:
            continue
        try:
            walked = _walk(v, spec[0], strict)  # first: a value of the wrong type fails the whole decoding
        except _NotDecodable as e:
            raise _NotDecodable((key, *e.args[0]), e.args[1]) from None
        if spec[1] and _empty(walked):
            continue
        out[key] = walked
    return out


def known(api_version: str, kind: str) -> bool:
    """Whether Argo CD round-trips this kind through a Go type (client-go's scheme knows it)."""
    return _root(api_version, kind) is not None


KNOWN_TYPE_FIELDS: dict[tuple[str, str], tuple[tuple[tuple[str, ...], str], ...]] = {
    ("argoproj.io", "Rollout"): ((("spec", "template", "spec"), "api/core/v1.PodSpec"),),
}
"""Fields of custom resources Argo CD re-encodes through a Kubernetes type by default (argo-cd's knownTypesNormalizer:
an Argo Rollout's pod template is a PodSpec), leniently: unknown keys are dropped, a value it cannot decode stays."""


def _known_type_fields(obj: dict[str, Any]) -> dict[str, Any]:
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    fields = KNOWN_TYPE_FIELDS.get((group, str(obj.get("kind") or "")))
    if not fields:
        return obj
    out = obj
    for path, ref in fields:
        parent: Any = out
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or not isinstance(parent.get(path[-1]), dict):
            continue
        try:
            value = _walk(parent[path[-1]], ref, strict=False)
        except _NotDecodable:
            continue
        out = json.loads(json.dumps(out))  # a copy: the caller's object is never changed
        target = out
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return out


def remarshal(obj: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """``obj`` as Argo CD's legacy diff sees it after the round trip; an unknown kind unchanged (but for the fields
    of :data:`KNOWN_TYPE_FIELDS`).

    ``strict=False``: as it would be if its unknown fields were gone (what fixing them in Git would give).
    """
    root = _root(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    if root is None:
        return _known_type_fields(obj)
    try:
        out: dict[str, Any] = _walk(obj, root, strict)
    except _NotDecodable:
        return obj  # gitops-engine logs the decoding error and diffs the object as it is
    out["apiVersion"], out["kind"] = obj["apiVersion"], obj["kind"]
    return out


@dataclass(frozen=True)
class Refusal:
    """Why Argo CD cannot round-trip an object through its Go type."""

    pointer: str
    """The field that makes the decoder refuse the object."""
    problem: str
    """What is wrong with it, in words (``wording.report.NOT_DECODABLE``)."""


def refusal(obj: dict[str, Any]) -> Refusal | None:
    """Why Argo CD cannot round-trip ``obj`` through its Go type, or ``None`` when it can or when the kind has no Go
    type (custom resources are never round-tripped)."""
    return round_trip(obj)[1]


def round_trip(obj: dict[str, Any]) -> tuple[dict[str, Any], Refusal | None]:
    """``(remarshal(obj), refusal(obj))`` from one walk of the object."""
    root = _root(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    if root is None:
        return _known_type_fields(obj), None
    try:
        out: dict[str, Any] = _walk(obj, root)
    except _NotDecodable as e:
        return obj, Refusal(join(e.args[0]), wording.NOT_DECODABLE[e.args[1]])
    out["apiVersion"], out["kind"] = obj["apiVersion"], obj["kind"]
    return out, None


def undeclared(api_version: str, kind: str, path: Sequence[Token]) -> tuple[int, str] | None:
    """Where ``path`` leaves the Go type of a built-in kind: (how many tokens are declared, the type that lacks the
    next one, as ``Container (core/v1)``); ``None`` when every step is declared, or the kind is not built in."""
    ref = _root(api_version, kind)
    for depth, tok in enumerate(path):
        if ref is None:
            return None
        if ref.startswith("[]") and isinstance(tok, int):
            ref = ref[2:]
        elif ref.startswith("map[]") and isinstance(tok, str):
            ref = ref[5:]
        elif (fields := _data()["types"].get(ref)) is not None and isinstance(tok, str):
            if tok not in fields:
                package, _, name = ref.rpartition(".")
                return depth, f"{name} ({package.removeprefix('api/').removeprefix('apimachinery/pkg/apis/')})"
            ref = fields[tok]["type"]
        else:
            return None
    return None
