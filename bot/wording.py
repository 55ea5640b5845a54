"""Every sentence argo-why says to a person, in one place.

Renderers (text, Slack) and the analysis take their wording from here, so that
tone and terms stay consistent and a change of phrasing is one edit. Nothing
here may interpolate a field value that could belong to a Secret: callers pass
values through :func:`bot.analysis.masking.mask` first.
"""

from __future__ import annotations

import json
from typing import Any

CAUSE_TITLES: dict[str, str] = {
    "autoscaler": "rewritten by an autoscaler",
    "operator": "rewritten by a controller",
    "mutating-webhook": "changed by a mutating admission webhook",
    "api-defaulting": "filled in by API defaulting",
    "normalization": "the same value in another form",
    "nondeterministic-render": "the manifest changes on every render",
    "shared-resource": "also applied by another Application",
    "other-gitops": "also applied by another GitOps tool",
    "manual-edit": "changed by hand",
    "unknown": "cause not shown by the inputs",
}

ALTERNATIVES: dict[str, str] = {
    "autoscaler": "Remove spec.replicas from the manifest so that the autoscaler is its only owner "
    "(keep the ignore rule only while the field must stay in Git).",
    "operator": "Render what the controller writes, or leave the field out of Git so that the controller is "
    "its only owner.",
    "mutating-webhook": "Enable ServerSideDiff=true (the dry-run includes the webhook's change), or write the "
    "mutated value in Git.",
    "api-defaulting": "Write the defaulted value in Git, or enable ServerSideDiff=true so that defaults are part "
    "of the predicted state; an ignore rule is only a fallback.",
    "normalization": "Write the canonical form in Git; ServerSideDiff=true also compares after the API server's "
    "normalisation. An ignore rule is only a fallback.",
    "nondeterministic-render": "Pin the value in the chart's values (or an existing Secret/lookup-free template) "
    "so that every render is the same; never ignore it.",
    "shared-resource": "Give the object one owning Application: remove it from the other app's source, or "
    "mark the copy with argocd.argoproj.io/sync-options: Prune=false and stop rendering it.",
    "other-gitops": "Let one tool own the object: suspend or remove the other tool's Kustomization/HelmRelease "
    "for it, or move the object out of the Argo CD app.",
    "manual-edit": "Revert the live object by syncing, or commit the value to Git if the change was right.",
    "unknown": "Look at the Application's history and events; re-run with --desired-again, the cluster context "
    "and managedFields (kubectl get --show-managed-fields) for a better answer.",
}

DO_NOT = (
    "Do not re-sync again and again: the other writer will put its value back.",
    "Do not turn on selfHeal until the cause is understood: it turns this into a write loop.",
    "Do not edit the live object by hand: the change is invisible in Git and will be reverted or fought over.",
)

MASK = "<redacted>"


def short_value(value: Any, limit: int = 60) -> str:
    """A value for a sentence: JSON-ish, cut at ``limit`` characters."""
    if value is None:
        return "(absent)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explanation(pointer: str, resource_label: str, reason: str, desired: Any, live: Any) -> str:
    """One sentence: where, both values, why. ``None`` stands for a side that has no value."""
    if desired is None or live is None:
        where = "absent live" if live is None else f"{short_value(live)} live, absent in Git"
        return f"{pointer} of {resource_label} is {where}: {reason}."
    values = f"{short_value(live)} live but {short_value(desired)} in Git"
    return f"{pointer} of {resource_label} is {values}: {reason}."


NO_MANAGED_FIELDS = (
    "{label} has no managedFields (exported without --show-managed-fields?): ownership is unknown and "
    "findings on it have lowered confidence."
)
NOT_LIVE = "{label} is in the desired manifests but not among the live objects: it was not compared."
NO_APP = "No --app given and no tracking annotation found: shared-resource detection is off."
ALREADY_IGNORED = "{count} difference(s) are already covered by existing ignoreDifferences rules."
RULE_NOT_VERIFIED = "the proposed rule did not pass its self-check and was withdrawn"
NO_CLUSTER = (
    "No cluster context ({reason}): HPAs, ScaledObjects, webhook configurations and namespaces were not "
    "checked, so causes that need them have lowered confidence."
)
WRITE_LOOP = (
    "Write loop: selfHeal is on while {writers} also writes {fields} field(s); Argo CD and the other writer "
    "overwrite each other ({attempts} self-heal attempt(s), {syncs} sync(s) of this revision in the last hour). "
    "Fix the ownership before anything else."
)
