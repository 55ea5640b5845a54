"""Secret values never leave the analysis unmasked.

A Secret's ``data`` and ``stringData`` values, and its
``kubectl.kubernetes.io/last-applied-configuration`` annotation (which repeats
them), are replaced by a fixed mask before a value reaches a Finding, an
explanation, a log line or any renderer.
"""

from __future__ import annotations

from typing import Any

from bot.analysis.pointer import MISSING
from bot.wording.report import MASK

_SECRET_POINTERS = (
    "/data",
    "/stringData",
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
)


def is_secret(group: str, kind: str) -> bool:
    return group == "" and kind == "Secret"


def is_secret_field(group: str, kind: str, pointer: str) -> bool:
    return is_secret(group, kind) and any(pointer == p or pointer.startswith(p + "/") for p in _SECRET_POINTERS)


def mask(group: str, kind: str, pointer: str, value: Any) -> Any:
    """``value``, or the mask when it belongs to a Secret's data (absent stays absent)."""
    if value is MISSING or not is_secret_field(group, kind, pointer):
        return value
    return MASK


def masked_object(obj: dict[str, Any]) -> dict[str, Any]:
    """A shallow-safe copy of a Secret with every value masked; other objects unchanged."""
    api = str(obj.get("apiVersion", ""))
    if not is_secret("" if "/" not in api else api.rsplit("/", 1)[0], str(obj.get("kind"))):
        return obj
    out = dict(obj)
    for key in ("data", "stringData"):
        if isinstance(obj.get(key), dict):
            out[key] = {k: MASK for k in obj[key]}
    meta = dict(obj.get("metadata") or {})
    ann = meta.get("annotations")
    if isinstance(ann, dict) and "kubectl.kubernetes.io/last-applied-configuration" in ann:
        meta["annotations"] = {**ann, "kubectl.kubernetes.io/last-applied-configuration": MASK}
        out["metadata"] = meta
    return out
