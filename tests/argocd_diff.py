"""Argo CD's own diff, from the tests: a wrapper around the ``argodiff`` helper (tests/tools/argodiff).

``argodiff`` is linked against Argo CD's modules (github.com/argoproj/argo-cd/v3 and the standalone
github.com/argoproj/gitops-engine, versions pinned in tests/tools/go.mod) and calls them as the application
controller does (util/argo/diff ``NewDiffConfigBuilder`` ... ``StateDiffs``): the Application's ignoreDifferences,
argocd-cm's ``resource.customizations`` and ``resource.compareoptions`` (read by Argo CD's settings manager), the
managedFieldsManagers filter, the status rule, and the diff mode. What it answers is what Argo CD would show.

Fixture (registered in tests/conftest.py): ``argocd_diff`` (session) -- an :class:`ArgoDiff`; call
``argocd_diff.diff([(desired, live), ...], mode=..., ignore_differences=..., argocd_cm=..., kubeconfig=...)``.
Modes: ``legacy`` (three-way, the default), ``structured-merge`` (an app syncing with ``ServerSideApply=true``) and
``server-side`` (``ServerSideDiff=true``: a server-side apply dry-run by ``argocd-controller`` on the API server of
``kubeconfig``; ``include_mutation_webhook=True`` is the compare option ``IncludeMutationWebhook=true``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.go_tools import GoToolsError, build_go_tools

Mode = Literal["legacy", "structured-merge", "server-side"]
Obj = Mapping[str, Any]


class ArgoDiffError(GoToolsError):
    """argodiff refused the request or Argo CD's diff failed; the message is Argo CD's error."""


@dataclass(frozen=True)
class ResourceDiff:
    """One resource as Argo CD's controller sees it (gitops-engine's DiffResult)."""

    group: str
    kind: str
    namespace: str
    name: str
    modified: bool
    normalized_live: dict[str, Any] | None
    """The live object after Argo CD's normalizations (ignoreDifferences, managedFieldsManagers, status...)."""
    predicted_live: dict[str, Any] | None
    """What the live object would be after a sync (normalized the same way): Argo CD's "desired" side of the diff."""


@dataclass(frozen=True)
class DiffAnswer:
    modified: bool
    """True when any resource is modified: the Application would be OutOfSync."""
    resources: list[ResourceDiff]

    def __iter__(self) -> Iterator[ResourceDiff]:
        return iter(self.resources)


class ArgoDiff:
    """Runs the ``argodiff`` binary, one process per request."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def request(self, body: Mapping[str, Any], timeout_s: float = 120.0) -> dict[str, Any]:
        """Sends one raw request (the JSON of tests/tools/argodiff/main.go) and returns the raw answer."""
        proc = subprocess.run(
            [str(self.binary)], input=json.dumps(body), capture_output=True, text=True, timeout=timeout_s, check=False
        )
        try:
            answer: dict[str, Any] = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise ArgoDiffError(
                f"argodiff exited {proc.returncode} without an answer:\n{proc.stderr[-4000:]}"
            ) from None
        if proc.returncode != 0 or "error" in answer:
            raise ArgoDiffError(f"argodiff: {answer.get('error')}\n{proc.stderr[-4000:]}")
        return answer

    def diff(
        self,
        resources: Sequence[tuple[Obj | None, Obj | None]],
        *,
        mode: Mode = "legacy",
        ignore_differences: Sequence[Obj] = (),
        argocd_cm: Mapping[str, str] | None = None,
        include_mutation_webhook: bool = False,
        kubeconfig: Path | str | None = None,
    ) -> DiffAnswer:
        """Argo CD's verdict on each ``(desired, live)`` pair (either may be None: missing from Git / the cluster).

        ``ignore_differences`` is the Application's ``spec.ignoreDifferences``; ``argocd_cm`` the data of
        ``argocd-cm`` (e.g. ``{"resource.customizations.ignoreDifferences.apps_Deployment": "jsonPointers: ..."}``,
        ``{"resource.compareoptions": "ignoreResourceStatusField: none"}``). Desired objects carry their namespace
        (Argo CD sets the destination namespace before diffing)."""
        body = {
            "mode": mode,
            "ignoreDifferences": list(ignore_differences),
            "argocdCM": dict(argocd_cm or {}),
            "includeMutationWebhook": include_mutation_webhook,
            "kubeconfig": str(kubeconfig) if kubeconfig else "",
            "resources": [{"desired": desired, "live": live} for desired, live in resources],
        }
        answer = self.request(body)
        return DiffAnswer(
            modified=answer["modified"],
            resources=[
                ResourceDiff(
                    group=r["group"], kind=r["kind"], namespace=r["namespace"], name=r["name"],
                    modified=r["modified"], normalized_live=r["normalizedLive"], predicted_live=r["predictedLive"],
                )
                for r in answer["resources"]
            ],
        )  # fmt: skip


@pytest.fixture(scope="session")
def argocd_diff() -> ArgoDiff:
    try:
        return ArgoDiff(build_go_tools() / "argodiff")
    except GoToolsError as e:
        pytest.fail(f"Argo CD's diff helper could not be built: {e}", pytrace=False)
