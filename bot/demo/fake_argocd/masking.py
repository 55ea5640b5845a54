"""Secret masking as Argo CD does it (gitops-engine ``pkg/diff`` ``HideSecretData``, ``NormalizeSecret``).

Guarantees: no Secret value leaves the fake unmasked. ``data`` (``stringData`` folded in first) is replaced by eight
``+`` for the first distinct value of a key and four more for each further one, so equal values stay equal and
different values stay different across the objects masked together and across their last-applied-configuration
annotation; a ResourceDiff's four states are masked with the controller's numbering.
"""

from __future__ import annotations

import base64
import json

from bot.demo.fake_argocd.objects import Obj, _loads_state, _state, go_json, split_api_version

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _is_secret(obj: Obj | None) -> bool:
    return (
        obj is not None and obj.get("kind") == "Secret" and split_api_version(str(obj.get("apiVersion", "")))[0] == ""
    )


def normalize_secret(obj: Obj | None) -> None:
    """Argo CD's NormalizeSecret, in place: ``stringData`` moves into ``data``, base64-encoded."""
    if obj is None or not isinstance(obj.get("stringData"), dict):
        return
    data: Obj = obj["data"] if isinstance(obj.get("data"), dict) else {}
    for key, value in obj["stringData"].items():
        data[key] = base64.b64encode(value.encode()).decode() if isinstance(value, str) else value
    obj["data"] = data
    del obj["stringData"]


def hide_secret_data(*objs: Obj | None) -> None:
    """Argo CD's HideSecretData, in place, over the objects in Argo CD's order (target, then live).

    Per key, the first distinct value seen is replaced by eight ``+``, every further distinct value by four more,
    so equal values stay equal and different values stay different (across objects, and across the
    last-applied-configuration annotation, which Argo CD masks with the same numbering).
    """
    present = [o for o in objs if o is not None]
    applied: list[tuple[Obj, Obj]] = []
    for obj in present:
        text = ((obj.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED)
        if isinstance(text, str):
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            if isinstance(parsed, dict):
                applied.append((obj, parsed))
    sequence = [*present, *(parsed for _, parsed in applied)]
    keys: set[str] = set()
    for obj in sequence:
        normalize_secret(obj)
        if isinstance(obj.get("data"), dict):
            keys.update(obj["data"])
    for key in keys:
        replacement = "+" * 8
        seen: dict[str, str] = {}
        for obj in sequence:
            data = obj.get("data")
            if not isinstance(data, dict) or key not in data:
                continue
            value = data[key]
            text = value if isinstance(value, str) else ("" if value is None else json.dumps(value))
            if text not in seen:
                seen[text] = replacement
                replacement += "++++"
            data[key] = seen[text]
    for obj, parsed in applied:
        obj["metadata"]["annotations"][LAST_APPLIED] = go_json(parsed)


def _mask_resource_diff(diff: Obj) -> None:
    """Mask a Secret's four states as the controller does: target and live together, then the normalized and
    predicted states (computed by Argo CD from the masked pair) with the same numbering."""
    target, live = _loads_state(diff.get("targetState")), _loads_state(diff.get("liveState"))
    hide_secret_data(target, live)
    predicted = _loads_state(diff.get("predictedLiveState"))
    normalized = _loads_state(diff.get("normalizedLiveState"))
    hide_secret_data(predicted, normalized)
    for name, obj in (
        ("targetState", target),
        ("liveState", live),
        ("predictedLiveState", predicted),
        ("normalizedLiveState", normalized),
    ):
        if name in diff:
            diff[name] = _state(obj)
