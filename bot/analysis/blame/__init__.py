"""``argo-why blame``: print an object with the field manager(s) owning every line.

This is a byte-for-byte emulation of kubectl-blame (github.com/knight42/kubectl-blame,
``cmd/marshal.go`` and ``cmd/util.go``), so that people who know that tool read the same
thing here, and so that its test data can check this module. In short:

* every line is prefixed with ``manager operation `` (or ``manager (operation time) ``),
  padded to one width; a line whose field no entry owns shows the owners of its nearest
  owned ancestor, and a line with no owned ancestor shows blanks;
* a field owned by several entries gets one prefix line per owner, joined by ``/``;
* map keys are printed sorted; list items are matched to ``k:``/``v:`` FieldsV1 nodes
  (``i:`` too, which kubectl-blame rejects); lists are printed in the compact style;
* strings are quoted as Go's ``sigs.k8s.io/yaml`` (yaml.v2) would, including its
  folding of long lines at 80 columns; multi-line strings are printed as literal blocks.

Guarantees: pure functions (no file or network I/O; the clock is read only when no
``now`` is given); the input object is never modified; an object without
``metadata.managedFields`` raises :class:`BadInput` (it was exported without
``--show-managed-fields``); a Secret's ``data``/``stringData`` values and its
last-applied-configuration annotation are replaced by the mask before anything is
printed, so Secret values never appear in the output.

The parts, each a module of this package:

* ``tree``: every entry's FieldsV1 set merged into one ownership tree;
* ``printer``: the line prefixes (manager, operation, time column) and the walk that
  prints the object beside the tree (kubectl-blame's ``marshal.go``);
* ``goduration``: ages as kubectl prints them (apimachinery's ``HumanDuration``);
* ``govalue``: values as Go's unstructured JSON holds and prints them;
* ``emitter`` and ``resolve``: strings quoted and folded as gopkg.in/yaml.v2 does.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any

from bot.analysis.blame.emitter import yaml_string
from bot.analysis.blame.goduration import human_duration
from bot.analysis.blame.govalue import go_len, go_value
from bot.analysis.blame.printer import Printer, manager_infos
from bot.analysis.blame.tree import Node, build_tree, item_node
from bot.analysis.managedfields import entries_of
from bot.analysis.masking import is_secret
from bot.errors import BadInput
from bot.wording.report import MASK

TIME_FORMATS = ("none", "relative", "full")
"""Accepted ``time_format`` values, as kubectl-blame's ``--time`` flag."""

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def blame(obj: dict[str, Any], *, time_format: str = "none", now: datetime | None = None) -> str:
    """The annotated text of one object, ending with a newline.

    ``time_format`` is ``none``, ``relative`` (age against ``now``) or ``full`` (the
    time in ``now``'s zone, or in the system's local zone when ``now`` is not given,
    as kubectl-blame prints it).
    """
    return _blame(obj, time_format, *_clock(now))


def blame_many(objs: list[dict[str, Any]], *, time_format: str = "none", now: datetime | None = None) -> str:
    """Every object (the items of a ``List`` each on their own), separated by ``---`` lines.

    This is kubectl-blame's output for a file of several documents or a ``kind: List``.
    """
    clock = _clock(now)  # one reading for all, so that relative times agree between objects
    parts: list[str] = []
    for obj in objs:
        items = obj.get("items") if isinstance(obj, dict) else None
        kind = obj.get("kind") if isinstance(obj, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
            parts.extend(_blame(item, time_format, *clock) for item in items)
        else:
            parts.append(_blame(obj, time_format, *clock))
    return "---\n".join(parts)


def _clock(now: datetime | None) -> tuple[datetime, tzinfo | None]:
    """``now`` made aware, and the zone full times are shown in (None: the system's, per date)."""
    if now is None:
        return datetime.now(UTC), None
    if now.tzinfo is None:
        return now.replace(tzinfo=UTC), UTC
    return now, now.tzinfo


def _blame(obj: Any, time_format: str, now: datetime, zone: tzinfo | None) -> str:
    if time_format not in TIME_FORMATS:
        raise BadInput(f"unknown time format {time_format!r} (expected one of {', '.join(TIME_FORMATS)})")
    if not isinstance(obj, dict):
        raise BadInput("expected a Kubernetes object (a mapping)")
    entries = entries_of(obj)
    if not entries:
        raise BadInput(
            f"{_label(obj)}: .metadata.managedFields is empty; export the object with "
            "`kubectl get -o yaml --show-managed-fields`"
        )
    infos = manager_infos(entries, time_format, now, zone)
    root = build_tree(entries, infos)
    # kubectl-blame's blank prefix is as wide as the (last) entry's prefix; all are padded alike.
    printer = Printer(" " * go_len(infos[-1]))
    printer.write_map(0, True, root, _printable(obj))
    return "".join(printer.out)


def _label(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
    return f"{obj.get('kind') or 'object'} {name}".strip()


def _printable(obj: dict[str, Any]) -> dict[str, Any]:
    """A deep copy as kubectl-blame prints it: no managedFields, JSON types, Secret values masked."""
    out = go_value(obj)
    assert isinstance(out, dict)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)  # Go: obj.SetManagedFields(nil) removes the key
    api = str(out.get("apiVersion") or "")
    if is_secret(api.rsplit("/", 1)[0] if "/" in api else "", str(out.get("kind"))):
        for key in ("data", "stringData"):
            if isinstance(out.get(key), dict):
                out[key] = dict.fromkeys(out[key], MASK)
            elif key in out and out[key] is not None:
                out[key] = MASK  # malformed, but a value all the same: never print it
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if isinstance(annotations, dict) and _LAST_APPLIED in annotations:
            annotations[_LAST_APPLIED] = MASK  # it repeats the data in clear
    return out


# The names tests import from the single module this package once was (aliases, not copies).
_human_duration = human_duration
_yaml_string = yaml_string
_Node = Node
_build_tree = build_tree
_item_node = item_node

__all__ = ["TIME_FORMATS", "blame", "blame_many"]
