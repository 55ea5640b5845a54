"""What the analysis knows about Kubernetes types: list semantics and API defaults.

The data files in ``data/`` are ``mergekeys.json`` (server-side apply's list
semantics, generated from the type markers of kubernetes/api, apimachinery and
apiextensions-apiserver at the commits its ``_about`` names) and
``defaults.json`` (the fields the API server fills in, per kind; its ``_about``
explains each column). Built-in kinds use Kubernetes' own list semantics; webhook
configurations, which those tables do not cover, are added here by hand from
the ``+listType`` markers of admissionregistration/v1. Every list of a kind the
tables do not know (custom resources) is atomic, as Argo CD's merge treats it.

Guarantees: lookups are pure and cached; an unknown kind or path answers
"atomic", never raises.
"""

from __future__ import annotations

import json
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from bot.analysis.pointer import Token


@dataclass(frozen=True)
class ListType:
    kind: str  # "map", "set" or "atomic"
    keys: tuple[str, ...] = ()
    key_defaults: dict[str, Any] = field(default_factory=dict)

    def key_of(self, item: Any) -> tuple[Any, ...] | None:
        """The merge key of an item (key defaults applied); ``None`` when it has none.

        Two items have equal keys when their key fields are equal as JSON: a string stands for itself (most keys
        are names), an integer in a tuple, any other value for its JSON text in a tuple (``1``, ``1.0`` and ``true`` are
        three keys)."""
        if not isinstance(item, dict):
            return None
        out: list[Any] = []
        for k in self.keys:
            v = item[k] if k in item else self.key_defaults.get(k)
            if v is None:
                return None
            kind = type(v)
            out.append(v if kind is str else (v,) if kind is int else (json.dumps(v, sort_keys=True),))
        return tuple(out)


ATOMIC = ListType("atomic")

_WEBHOOK_LISTS: dict[str, dict[str, Any]] = {
    "webhooks": {"listType": "map", "keys": ["name"]},
    "webhooks[].rules": {"listType": "atomic", "keys": []},
    "webhooks[].admissionReviewVersions": {"listType": "atomic", "keys": []},
    "webhooks[].matchConditions": {"listType": "map", "keys": ["name"]},
}
_EXTRA_KINDS = {
    "MutatingWebhookConfiguration": {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "lists": _WEBHOOK_LISTS,
    },
    "ValidatingWebhookConfiguration": {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "lists": _WEBHOOK_LISTS,
    },
}


@cache
def _mergekeys() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_file("data/mergekeys.json"))
    kinds = dict(data["kinds"])
    kinds.update(_EXTRA_KINDS)
    data["kinds"] = kinds
    return data


@cache
def _defaults() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_file("data/defaults.json"))
    return data


def group_of(api_version: str) -> str:
    """API group without version; ``""`` for the core group (``v1``)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def is_known(group: str, kind: str) -> bool:
    """Whether the schema of this kind is known (built-in kinds the tables cover)."""
    spec = _mergekeys()["kinds"].get(kind)
    return spec is not None and group_of(spec["apiVersion"]) == group


def schema_path(path: Sequence[Token]) -> str:
    """``spec.template.spec.containers[].ports`` for a token path (indices become ``[]``)."""
    out = ""
    for tok in path:
        if isinstance(tok, int):
            out += "[]"
        else:
            out += ("." if out else "") + tok
    return out


@cache
def list_type(group: str, kind: str, spath: str) -> ListType:
    """The semantics of the list at schema path ``spath`` of ``group/kind``."""
    if not is_known(group, kind):
        return ATOMIC
    spec = _mergekeys()["kinds"][kind]["lists"].get(spath)
    if spec is None:
        return ATOMIC
    lt = spec.get("listType", "atomic")
    if lt == "map" and spec.get("keys"):
        return ListType("map", tuple(spec["keys"]), dict(spec.get("keyDefaults") or {}))
    if lt == "set":
        return ListType("set")
    return ATOMIC


@cache
def _default_patterns(kind: str) -> tuple[tuple[tuple[str, ...], Any, str], ...]:
    table = _defaults().get(kind) or {}
    out = []
    for ptr, spec in table.items():
        if isinstance(spec, dict) and ptr.startswith("/"):
            out.append((tuple(ptr[1:].split("/")), spec.get("value"), str(spec.get("mechanism", "default"))))
    return tuple(out)


def known_defaults(kind: str, pointer: str) -> list[tuple[str, Any, str]]:
    """API defaults at or below ``pointer`` for ``kind``: ``(pattern, value, mechanism)`` triples.

    Patterns use ``*`` for any list index or map key, as ``defaults.json`` writes them.
    """
    probe = tuple(pointer[1:].split("/")) if pointer else ()
    hits = []
    for pattern, value, mechanism in _default_patterns(kind):
        if len(pattern) >= len(probe) and all(p in ("*", t) for p, t in zip(pattern, probe, strict=False)):
            hits.append(("/" + "/".join(pattern), value, mechanism))
    return hits


def data_file(name: str) -> bytes:
    """A file of ``bot/analysis/data/`` (pkgutil, as importlib.resources would, without its 10 ms of imports at
    every start of the CLI)."""
    data = pkgutil.get_data("bot.analysis", name)
    assert data is not None  # the package's own loader always reads its files
    return data
