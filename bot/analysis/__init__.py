"""The pure analysis: no network, no Slack, no Redis. See ``engine`` for the entry point.

Code outside this package imports from here, never from the modules inside it
(tests of internals excepted): ``__all__`` is what the rest of the bot relies on,
and tests/analysis/test_exported_members.py pins it.

* ``explain``: desired + live + context in, a Report out;
* ``load_documents``: the Kubernetes objects of one YAML or JSON text, Lists flattened;
* ``blame_many``: ``argo-why blame``'s text, as kubectl-blame prints it;
* ``diff_objects``, ``covers``, ``deep_equal``: the diff, whether a pointer
  covers another, and value equality with JSON semantics, as the analysis uses them;
* ``side_by_side``, ``SideBySide``, ``Row``, ``Cell``, ``Owner``: Git's object beside the live one, aligned by
  field, every live line with its writers (the drift page draws it);
* ``resource_ref``, ``object_key``, ``ref_key``, ``ObjKey``: how objects are matched
  (API group, kind, namespace, name).
"""

from bot.analysis.blame import blame_many
from bot.analysis.canonical import deep_equal
from bot.analysis.diff import diff_objects
from bot.analysis.engine import ObjKey, explain, object_key, ref_key, resource_ref
from bot.analysis.loader import load_documents
from bot.analysis.pointer import covers
from bot.analysis.sidebyside import Owner, Row, SideBySide, side_by_side
from bot.analysis.valuetext import Cell

__all__ = [
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
    "object_key",
    "ref_key",
    "resource_ref",
    "side_by_side",
]
