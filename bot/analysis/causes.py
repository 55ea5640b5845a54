"""Decide the cause of one difference, in the order the casebook applies the rules.

1. shared-resource: the live tracking names another Application (neither the app analysed nor the one the desired
   object's own tracking names: a mistyped ``--app`` is no second Application);
2. normalization: equal after canonicalisation, or Git writes a default that the
   server does not store (proven by ``defaulting.dropped``);
3. api-defaulting: Git leaves the field unset, no other writer touched it, and
   ``defaulting.proves`` that the live value is what the API server or the schema
   fills in. Never assumed: an item that appears in a list is never a default,
   and a value nothing proves is left to the owner rules (a matching webhook
   explains it, the owner of an atomic list notwithstanding);
4. nondeterministic-render: two renders of the same revision disagree and Argo CD
   wrote the live value;
5. not-synced (Git ahead of the cluster): nobody but Argo CD owns the field and what
   it last sent there (``FieldFacts.sent``: its own last-applied-configuration, or the
   render of the revision it last synced) is the live value while Git renders another:
   ``confirmed``; only the Application's revisions saying Git is ahead: ``likely``;
6. by the owner (``writers``): no managedFields at all -> unknown; nobody ->
   mutating webhook, or a removal when the value is absent; Argo CD -> mutating
   webhook when one intercepts the object (confirmed only with proof that the value
   changed on admission, and never on a catch-all webhook's match alone), else
   unknown; replicas with a scaler -> autoscaler; a person's tool (and Helm's command
   line) -> manual edit; Flux and other GitOps tools -> other-gitops; any other
   controller -> operator (``likely`` when its name is unknown and nothing points at it).

What proves each cause and what only allows it is the table in the README ("How the
analysis decides"); ``confidence`` says which: ``confirmed`` needs the proof.

Guarantees: pure; never returns a cause outside the contract vocabulary; the
``reason`` and ``evidence`` strings never contain field values (Secrets).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bot.analysis.canonical import deep_equal, equivalent, is_empty
from bot.analysis.context import TRACKING_ANNOTATION, annotations_of, same_app, tracked_app
from bot.analysis.defaulting import allocated, dropped, proves, undeclared_builtin
from bot.analysis.diff import Delta
from bot.analysis.facts import FieldFacts, ObjectInputs, Verdict
from bot.analysis.managedfields import ARGOCD_MANAGERS
from bot.analysis.pointer import MISSING, resolve
from bot.analysis.schema import is_known
from bot.analysis.writers import by_owner, is_human
from bot.model import Confidence, ObjectRef
from bot.wording import report as wording

_IN_DRY_RUN = frozenset({"api-defaulting", "mutating-webhook"})
"""Causes whose live value a server-side apply dry-run reproduces (normalization says per verdict: not a pruning)."""


def decide(delta: Delta, inp: ObjectInputs) -> Verdict:
    facts = FieldFacts.of(delta, inp)
    for rule in _BEFORE_OWNER:
        verdict = rule(facts)
        if verdict is not None:
            break
    else:
        verdict = by_owner(facts)
    verdict = _allocated(facts, verdict)
    if verdict.cause in _IN_DRY_RUN:
        return replace(verdict, server_side_diff_hides=True)
    return verdict


def _allocated(f: FieldFacts, verdict: Verdict) -> Verdict:
    """Git leaves empty a field the cluster allocates: whoever filled it in, the fix is to delete the empty field from
    Git, never to write the allocated value there."""
    delta, ref = f.delta, f.obj.ref
    git = delta.desired
    if git is MISSING or not _blank(git) or not allocated(ref.group, ref.kind, delta.path):
        return verdict
    name = next((t for t in reversed(delta.path) if isinstance(t, str)), "")
    verdict.alternative = wording.ALTERNATIVE_ALLOCATED.format(
        field=name, git=wording.short_value(git), live=wording.short_value(delta.live)
    )
    verdict.allocated = True
    return verdict


def _shared(f: FieldFacts) -> Verdict | None:
    inp = f.obj
    if not inp.app:
        return None
    desired_has_annotation = TRACKING_ANNOTATION in annotations_of(inp.desired)
    live_app, mode = tracked_app(inp.live)
    if live_app is None:
        return None
    if desired_has_annotation and mode != "annotation":
        return None
    if not desired_has_annotation and (mode != "label" or tracked_app(inp.desired)[1] != "label"):
        return None
    if same_app(live_app, inp.app):
        return None
    own_app = tracked_app(inp.desired)[0]
    if own_app is not None and same_app(live_app, own_app):  # the app the manifest names: a mistyped --app, not a
        return None  # second Application
    app_obj = inp.index.applications.get(live_app)
    ref = ObjectRef("Application", live_app, (app_obj or {}).get("metadata", {}).get("namespace")) if app_obj else None
    how = wording.TRACKING_HOW[mode]
    return Verdict(
        "shared-resource",
        "confirmed",
        f.writer(ref),
        wording.REASON_SHARED.format(app=live_app),
        [wording.EVIDENCE_SHARED.format(how=how, app=live_app, ours=inp.app), *f.evidence],
    )


def _normalization(f: FieldFacts) -> Verdict | None:
    delta, ref = f.delta, f.obj.ref
    gone = delta.live is MISSING and delta.desired is not MISSING and not f.others
    # a field the built-in type does not have comes first: "{} is the same as absent" would hide the real fix
    proof = undeclared_builtin(ref.group, ref.kind, ref.version, delta.path) if gone else None
    if proof is None:
        why = equivalent(delta.desired, delta.live, delta.path)
        if why is not None:
            return replace(_normalised(f, why), server_side_diff_hides=True)
        if not gone:
            return None
        # Git writes a value the server does not keep: the schema's default, or a false/0 that omitempty drops
        proof = dropped(ref.group, ref.kind, ref.version, delta.path, delta.desired, f.obj.crd())
        if proof is None:
            return None
    reason = wording.REASON_DROPPED_DEFAULT
    if proof.pruned:
        reason = wording.REASON_UNDECLARED if proof.builtin else wording.REASON_PRUNED
    return Verdict(
        "normalization",
        "confirmed" if proof.certain else "likely",
        f.writer(),
        reason.format(source=proof.source),
        [
            (wording.EVIDENCE_PRUNED if proof.pruned else wording.EVIDENCE_DEFAULT).format(
                source=proof.source, pattern=proof.pattern or delta.pointer
            ),
            *f.evidence,
        ],
        server_side_diff_hides=not proof.pruned,
    )


def _blank(value: Any) -> bool:
    """Empty as Git can write an allocated field: ``""``, null, ``[]``, ``[""]``, or ``0`` (a nodePort to allocate)."""
    if is_empty(value) or (type(value) is int and value == 0):
        return True
    return isinstance(value, list) and all(is_empty(v) for v in value)


def _normalised(f: FieldFacts, why: str) -> Verdict:
    """The same value in another form: who stored it so, and the exact form to write in Git.

    A built-in kind goes through the API server's Go types, which re-serialise quantities and durations. A custom
    resource is stored as it is given: the form comes from its own mutating webhook or conversion (or the controller
    that wrote it), which the context names when it holds them."""
    delta, ref = f.delta, f.obj.ref
    verdict = Verdict("normalization", "confirmed", f.writer(), why, list(f.evidence))
    notation = not is_empty(delta.desired) and not isinstance(delta.live, list | dict)
    if not is_known(ref.group, ref.kind) and notation:
        who, obj, evidence = _custom_normaliser(f)
        verdict.who, verdict.writer = who, f.writer(obj)
        verdict.reason = wording.REASON_CR_NORMALISED.format(why=why, who=who)
        verdict.reason += wording.CR_UNSEEN_HINT if who == wording.WHO_CR_UNSEEN else ""
        verdict.evidence = [*evidence, *verdict.evidence]
    if notation and not (ref.group == "" and ref.kind == "Secret"):
        verdict.alternative = wording.ALTERNATIVE_CANONICAL.format(
            value=wording.short_value(delta.live), git=wording.short_value(delta.desired),
            who=verdict.who or wording.THE_API_SERVER,
        )  # fmt: skip
    return verdict


def _custom_normaliser(f: FieldFacts) -> tuple[str, ObjectRef | None, list[str]]:
    """Who re-serialised a custom resource's value: a mutating webhook that intercepts it, the conversion webhook of
    its CRD, the controller that owns the field, or, when the context shows none, the resource's own webhook."""
    # a webhook that intercepts every resource names no writer of this value in particular
    hooks = [h for h in f.obj.index.webhooks_for(f.obj.live) if not h.catch_all]
    if hooks:
        h = next((h for h in hooks if "UPDATE" in h.operations), hooks[0])
        ev = wording.EVIDENCE_WEBHOOK_OPS.format(configuration=h.configuration.label, webhook=h.webhook,
                                                 operations="/".join(h.operations))  # fmt: skip
        return wording.WHO_WEBHOOK.format(webhook=h.webhook, configuration=h.configuration.label), h.configuration, [ev]
    crd = f.obj.crd()
    conversion = ((crd or {}).get("spec") or {}).get("conversion") or {}
    if crd is not None and conversion.get("strategy") == "Webhook":
        name = str((crd.get("metadata") or {}).get("name"))
        return wording.WHO_CONVERSION.format(crd=name), ObjectRef("CustomResourceDefinition", name), []
    if f.others and f.chosen is not None:
        return f.chosen.manager, None, []
    return wording.WHO_CR_UNSEEN, None, []


def _defaulting(f: FieldFacts) -> Verdict | None:
    delta, ref = f.delta, f.obj.ref
    blank = is_empty(delta.desired) or (allocated(ref.group, ref.kind, delta.path) and _blank(delta.desired))
    if not blank or delta.live is MISSING or f.others:
        return None
    if f.added_item:
        return None  # an item that appears in a list is something a controller or a webhook added, not a default
    proof = proves(ref.group, ref.kind, ref.version, delta.path, delta.live, f.obj.crd())
    specific = [h for h in f.obj.index.webhooks_for(f.obj.live) if not h.catch_all]
    if proof is None or (not proof.certain and specific):
        return None  # a published default of some version is no proof against a webhook that could have set it
    return Verdict(
        "api-defaulting",
        "confirmed" if proof.certain else "likely",
        f.writer(),
        wording.REASON_DEFAULT.format(source=proof.source),
        [wording.EVIDENCE_DEFAULT.format(source=proof.source, pattern=proof.pattern), *f.evidence],
    )


def _nondeterministic(f: FieldFacts) -> Verdict | None:
    delta, inp = f.delta, f.obj
    if f.others:
        return None
    if not inp.again_given:
        # no second render was given: say whether one could decide this difference (only Argo CD, or nobody, owns
        # it), so that bot mode asks Argo CD for the two uncached renders only when a finding needs them
        inp.render_wanted = True
        return None
    if inp.again is None:
        return None
    again_value = resolve(inp.again, delta.desired_path)
    argo_owns = any(e.is_argocd for e in f.owners)
    if _argocd_mask(again_value) and _argocd_mask(delta.desired):
        # Argo CD masks Secret values ("++++"), so two renders cannot be compared. But if Argo CD wrote the
        # live value while applying this very revision, and renders something else now, the render changed.
        if inp.synced_same_revision and argo_owns and _argocd_mask(delta.live):
            return Verdict("nondeterministic-render", "likely", f.writer(), wording.REASON_MASKED_RENDER,
                           list(f.evidence))  # fmt: skip
        return None
    if deep_equal(again_value, delta.desired):
        return None
    if not argo_owns and inp.entries is not None and f.owners:
        return None
    confidence: Confidence = "confirmed" if argo_owns else "likely"
    return Verdict(
        "nondeterministic-render",
        confidence,
        f.writer(),
        wording.REASON_RENDERS_DIFFER,
        [wording.EVIDENCE_RENDERS_DIFFER, *f.evidence],
    )


def _not_synced(f: FieldFacts) -> Verdict | None:
    """Git ahead of the cluster: the live value is what Argo CD itself last sent, and Git renders another one now.

    Proven when something shows what Argo CD sent (its own last-applied-configuration, or the render of the revision
    it last synced) and that is the live value; only ``likely`` when all that is known is that the Application last
    synced another revision than Git's and Argo CD alone owns the field. Another manager owning the field is left to
    the owner rules (its write came after the sync)."""
    delta = f.delta
    if f.others or (delta.live is not MISSING and not f.argocd_only):
        return None
    sent = f.sent()
    if sent is None or sent.source == "revision":
        if not f.obj.git_ahead or sent is not None:
            return None
        return Verdict("not-synced", "likely", f.writer(), wording.REASON_NOT_SYNCED_REVISION,
                       [wording.EVIDENCE_GIT_AHEAD, *f.evidence])  # fmt: skip
    how = wording.SENT_HOW[sent.source]
    if deep_equal(sent.value, delta.desired):
        return None  # Argo CD sent Git's value: Git has not moved here, something changed it since
    if deep_equal(sent.value, delta.live):
        reason = wording.REASON_NOT_SYNCED_ADDED if delta.live is MISSING else wording.REASON_NOT_SYNCED
        return Verdict("not-synced", "confirmed", f.writer(), reason.format(how=how),
                       [wording.EVIDENCE_SENT_LIVE.format(how=how), *f.evidence])  # fmt: skip
    return Verdict("not-synced", "likely", f.writer(), wording.REASON_NOT_SYNCED_AND_CHANGED.format(how=how),
                   list(f.evidence))  # fmt: skip


_BEFORE_OWNER: tuple[Callable[[FieldFacts], Verdict | None], ...] = (
    _shared,
    _normalization,
    _defaulting,
    _nondeterministic,
    _not_synced,
)
"""Steps 1 to 5 of the module docstring, tried in this order; the first verdict wins, else the owner decides (6)."""


def _argocd_mask(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and set(value) == {"+"}


__all__ = ["ARGOCD_MANAGERS", "FieldFacts", "ObjectInputs", "Verdict", "decide", "is_human"]
