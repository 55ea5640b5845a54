"""Which of explain's differences Argo CD's own diff reports, and why not the others.

Argo CD does not compare Git's object with the live one as they are written. Its legacy diff (and the
structured-merge diff of apps that sync with server-side apply) first round-trips an object of a built-in kind through
its Go type (``remarshal``): ``1000m`` and ``1`` are then the same, an empty omitempty value is gone. Its server-side
diff compares with a dry-run apply, so what the API server or a webhook fills in is in the prediction too. explain
still reports such differences (they are real, and the casebook's ``normalization`` findings), but says of each
whether Argo CD shows it (``Finding.shown_by_argocd``), so nobody chases a difference Argo CD never counted.

Its three-way diff also leaves out what the live object has beyond the last applied configuration (or Git's, when
there is none): everything, for a custom resource; inside ``volumeClaimTemplates``, for a StatefulSet. The defaults
the API server fills into those (the casebook's ``api-defaulting`` findings) are real but never reported. And for a
built-in kind it runs Kubernetes' own defaulting functions on its prediction, so a value they fill in (a port's
``protocol: TCP``) never shows either; allocated values and CRD schema defaults are not among them.

And when the round trip is refused -- one field of Git's object that the Go type does not have, or a value of the
wrong type -- Argo CD compares the object as written and reports ``1000m`` against ``1`` after all
(argoproj/argo-cd#16400): the finding names that field, the real fix.

Guarantees: pure; :func:`view` answers for one object pair in the app's diff mode (legacy when not known);
``reported`` given (``why``: Argo CD's own answer) takes precedence over what is computed here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Set
from dataclasses import dataclass
from typing import Any

from bot.analysis.context import annotations_of
from bot.analysis.defaulting import scheme_default
from bot.analysis.diff import diff_objects
from bot.analysis.pointer import MISSING, Token, covers, join, readable
from bot.analysis.remarshal import Refusal, known, remarshal, round_trip
from bot.analysis.schema import group_of
from bot.wording import report as wording

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _remove_fields(orig: Any, live: Any) -> Any:
    """gitops-engine's jsonutil.RemoveMapFields / RemoveListFields: keep of ``live`` only what ``orig`` has (list
    items by position; items beyond ``orig``'s stay, so that they show)."""
    if isinstance(orig, dict) and isinstance(live, dict):
        return {k: _remove_fields(v, live[k]) if live[k] is not None else None for k, v in orig.items() if k in live}
    if isinstance(orig, list) and isinstance(live, list):
        return [_remove_fields(orig[i], v) if i < len(orig) and v is not None else v for i, v in enumerate(live)]
    return live


def _original(config: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """The three-way diff's original: the last applied configuration, else (two-way diff) Git's object itself."""
    try:
        orig = json.loads(annotations_of(live).get(LAST_APPLIED) or "null")
    except ValueError:
        orig = None
    return orig if isinstance(orig, dict) else config


def _with_deletions(orig: Any, config: Any) -> Any:
    """``config`` with a null for each key ``orig`` has and it has not: what the three-way patch deletes (list items
    paired by position)."""
    if isinstance(orig, dict) and isinstance(config, dict):
        out = dict(config)
        for k, v in orig.items():
            if k not in config:
                if v is not None:
                    out[k] = None
            else:
                out[k] = _with_deletions(v, config[k])
        return out
    if isinstance(orig, list) and isinstance(config, list) and len(orig) == len(config):
        return [_with_deletions(o, c) for o, c in zip(orig, config, strict=True)]
    return config


def _deleted(patch: Any, live: Any, path: tuple[Token, ...] = ()) -> Iterator[str]:
    """The pointers where the three-way patch (``three_way_config``) deletes a value ``live`` has."""
    if isinstance(patch, dict) and isinstance(live, dict):
        for k, v in patch.items():
            if k in live and live[k] is not None:
                if v is None:
                    yield join((*path, k))
                else:
                    yield from _deleted(v, live[k], (*path, k))
    elif isinstance(patch, list) and isinstance(live, list):
        for i, (p, v) in enumerate(zip(patch, live, strict=False)):
            yield from _deleted(p, v, (*path, i))


def three_way_config(config: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """Git's object (after the round trip) as the three-way patch applies it: what the last applied configuration
    set and Git no longer does (a ``value: ""`` the round trip dropped) is deleted (null)."""
    return _with_deletions(_original(config, live), config)  # type: ignore[no-any-return]


def three_way_live(config: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """The live object as Argo CD's three-way diff patches and compares it (gitops-engine ``threeWayMergePatch``)."""
    orig = _original(config, live)
    api, kind = str(orig.get("apiVersion") or ""), str(orig.get("kind") or "")
    if not known(api, kind):
        return _remove_fields(orig, live)  # type: ignore[no-any-return]
    if group_of(api) in ("apps", "extensions") and kind == "StatefulSet":
        templates = (orig.get("spec") or {}).get("volumeClaimTemplates")
        live_templates = (live.get("spec") or {}).get("volumeClaimTemplates")
        if isinstance(templates, list) and isinstance(live_templates, list):
            spec = {**live["spec"], "volumeClaimTemplates": _remove_fields(templates, live_templates)}
            return {**live, "spec": spec}
    return live


def _related(pointers: Set[str], pointer: str) -> bool:
    return any(covers(p, pointer) or covers(pointer, p) for p in pointers)


@dataclass(frozen=True)
class ArgoView:
    """What Argo CD's diff makes of one object pair."""

    diff_mode: str
    kind: str
    shown: frozenset[str] | None
    """The pointers its legacy diff reports (after the round trip); ``None`` in server-side mode (the dry-run)."""
    defaulted: frozenset[str] = frozenset()
    """The pointers its prediction gets from Kubernetes' defaulting functions."""
    trimmed: frozenset[str] = frozenset()
    """The pointers it would report but for what its three-way diff leaves out of the live object."""
    refused: Refusal | None = None
    """The field Git's object should not have, when the round trip is refused (Argo CD compares it as written)."""
    fixed: frozenset[str] = frozenset()
    """With ``refused``: the pointers it would report once that field is fixed."""
    git: dict[str, Any] | None = None
    """With ``refused``: Git's object, to name the field as people read it."""
    reported: frozenset[str] | None = None
    """Argo CD's own answer (``why``), when there is one."""

    def shows(self, pointer: str, server_side_diff_hides: bool) -> bool:
        """Whether Argo CD reports the difference at ``pointer``."""
        if self.reported is not None:
            return _related(self.reported, pointer)
        if self.shown is None:
            return not server_side_diff_hides
        return _related(self.shown, pointer)

    def sentence(self, pointer: str, server_side_diff_hides: bool) -> str | None:
        """What the finding says about Argo CD's view of it, if anything."""
        if not self.shows(pointer, server_side_diff_hides):
            if self.shown is None:
                return wording.NOT_SHOWN_SERVER_SIDE
            if _related(self.trimmed, pointer):
                return wording.NOT_SHOWN_LIVE_ONLY.format(kind=self.kind)
            if _related(self.defaulted, pointer):
                return wording.NOT_SHOWN_DEFAULTED.format(kind=self.kind)
            return wording.NOT_SHOWN_ROUNDTRIP.format(kind=self.kind)
        refused = self.refused
        if refused is not None and self.shown is not None and not _related(self.fixed, pointer):
            if covers(refused.pointer, pointer):
                return None  # the field itself: its own finding says to remove it
            field = readable(refused.pointer, self.git)
            return wording.SHOWN_ROUNDTRIP_REFUSED.format(kind=self.kind, field=field, problem=refused.problem)
        return None


def view(
    desired: dict[str, Any],
    live: dict[str, Any],
    diff_mode: str | None,
    reported: Set[str] | None = None,
) -> ArgoView:
    """Argo CD's view of ``desired`` against ``live`` (both as explain compares them)."""
    mode = diff_mode or "legacy"
    kind = str(desired.get("kind") or live.get("kind") or "object")
    answer = frozenset(reported) if reported is not None else None
    if mode == "server-side":
        return ArgoView(mode, kind, None, reported=answer)
    (config, why_desired), (trip_live, why_live) = round_trip(desired), round_trip(live)
    shown, defaulted, trimmed = _legacy(config, trip_live)
    why = why_desired or why_live
    if why is None:
        return ArgoView(mode, kind, shown, defaulted, trimmed, reported=answer)
    fixed, _, _ = _legacy(remarshal(desired, strict=False), remarshal(live, strict=False))
    return ArgoView(mode, kind, shown, defaulted, trimmed, why, fixed, desired, answer)


def _legacy(config: dict[str, Any], live: dict[str, Any]) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The pointers the legacy (three-way) diff reports, those its defaulting of the prediction hides, and those its
    trimming of the live object leaves out."""
    api, kind = str(config.get("apiVersion") or ""), str(config.get("kind") or "")
    typed, group = known(api, kind), group_of(api)
    shown: set[str] = set()
    defaulted: set[str] = set()
    trimmed: set[str] = set()
    # The patch is computed against the trimmed live object; a list it replaces is replaced whole, so then every
    # difference inside it shows, trimmed or not (but for what the defaulting of the prediction fills back in).
    patched = diff_objects(config, three_way_live(config, live))
    in_patch = {d.pointer for d in patched}
    replaced = {d.atomic_root for d in patched if d.atomic_root is not None}
    for d in diff_objects(config, live):
        if d.pointer not in in_patch and d.atomic_root not in replaced:
            trimmed.add(d.pointer)
            continue
        hidden = typed and d.desired is MISSING and scheme_default(group, kind, d.path, d.live)
        (defaulted if hidden else shown).add(d.pointer)
    shown.update(_deleted(three_way_config(config, live), live))  # diff_objects reads a null as "not set"
    return frozenset(shown), frozenset(defaulted), frozenset(trimmed)
