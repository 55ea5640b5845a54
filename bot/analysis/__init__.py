"""The pure analysis: no network, no Slack, no Redis. See ``engine`` for the entry point.

Code outside this package imports from here, never from the modules inside it
(tests of internals excepted): ``__all__`` is what the rest of the bot relies on,
and tests/analysis/test_exported_members.py pins it.

* ``explain``: desired + live + context in, a Report out;
* ``load_documents``: the Kubernetes objects of one YAML or JSON text, Lists flattened; ``MAX_INPUT_BYTES`` the
  largest text it reads;
* ``looks_swapped``: whether desired and live objects were given the wrong way round;
* ``blame_many``: ``argo-why blame``'s text, as kubectl-blame prints it;
* ``diff_objects``, ``covers``, ``deep_equal``: the diff, whether a pointer
  covers another, and value equality with JSON semantics, as the analysis uses them;
* ``side_by_side``, ``SideBySide``, ``Row``, ``Cell``, ``Owner``: Git's object beside the live one, aligned by
  field, every live line with its writers (the drift page draws it);
* ``resource_ref``, ``object_key``, ``ref_key``, ``ObjKey``: how objects are matched
  (API group, kind, namespace, name).
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from bot.analysis.canonical import deep_equal
from bot.analysis.diff import diff_objects
from bot.analysis.engine import ObjKey, explain, object_key, ref_key, resource_ref
from bot.analysis.loader import MAX_INPUT_BYTES, load_documents
from bot.analysis.pairing import looks_swapped
from bot.analysis.pointer import covers

if _TYPE_CHECKING:
    from bot.analysis.blame import blame_many
    from bot.analysis.sidebyside import Owner, Row, SideBySide, side_by_side
    from bot.analysis.valuetext import Cell

_LAZY = {
    "blame_many": "bot.analysis.blame",
    **dict.fromkeys(("Owner", "Row", "SideBySide", "side_by_side"), "bot.analysis.sidebyside"),
    "Cell": "bot.analysis.valuetext",
}
"""Exported names imported when first used: ``argo-why explain`` needs neither blame's printer nor the page's
side-by-side, and importing them was a tenth of its start."""


def __getattr__(name: str) -> _Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "MAX_INPUT_BYTES",
    "Cell",
    "ObjKey",
    "Owner",
    "Row",
    "SideBySide",
    "blame_many",
    "covers",
    "deep_equal",
    "diff_objects",
    "explain",
    "load_documents",
    "looks_swapped",
    "object_key",
    "ref_key",
    "resource_ref",
    "side_by_side",
]
