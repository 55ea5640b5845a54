"""Argo CD's own diff, from the tests: a wrapper around the ``argodiff`` helper (tests/tools/argodiff).

``argodiff`` is linked against Argo CD's modules (github.com/argoproj/argo-cd/v3 and the standalone
github.com/argoproj/gitops-engine, versions pinned in tests/tools/go.mod) and calls them as the application
controller does (util/argo/diff ``NewDiffConfigBuilder`` ... ``StateDiffs``): the Application's ignoreDifferences,
argocd-cm's ``resource.customizations`` and ``resource.compareoptions`` (read by Argo CD's settings manager), the
managedFieldsManagers filter, the status rule, and the diff mode. What it answers is what Argo CD would show.

Two Argo CD release lines are built (scripts/build-go-tools.sh): :data:`NEWEST` (tests/tools/go.mod) and the older
3.1 line (tests/tools/argocd-3.1/go.mod: argo-cd v3.1.9, its gitops-engine, k8s.io v0.33.1), the same source.

Fixtures (registered in tests/conftest.py): ``argocd_diff`` (session) -- an :class:`ArgoDiff` of the newest line
(one ``argodiff --stream`` process for the session); ``argocd_diff_line`` -- the same, parametrised over every line
in :data:`LINES` (the key checks run against each); call
``argocd_diff.diff([(desired, live), ...], mode=..., ignore_differences=..., argocd_cm=..., kubeconfig=...)``.
Modes: ``legacy`` (three-way, the default), ``structured-merge`` (an app syncing with ``ServerSideApply=true``) and
``server-side`` (``ServerSideDiff=true``: a server-side apply dry-run by ``argocd-controller`` on the API server of
``kubeconfig``; ``include_mutation_webhook=True`` is the compare option ``IncludeMutationWebhook=true``).
``structured-merge`` also needs ``kubeconfig``: Argo CD's controller always gives the diff the schema of the
destination cluster (its GVK parser, built from the server's OpenAPI document; custom resources need their CRD
there, see tests/harness/served_kinds.py), and without it gitops-engine's structured-merge diff would take every list as
atomic (a Deployment's containers, a webhook configuration's webhooks), a verdict no Argo CD gives.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import pytest

from tests.harness.go_tools import GoToolsError, build_go_tools

Mode = Literal["legacy", "structured-merge", "server-side"]
Obj = Mapping[str, Any]


LINES: dict[str, str] = {"v3.2.12": "argodiff", "v3.1.9": "argodiff-argocd-3.1"}
"""Argo CD release → the helper binary linked against it (in the folder of build_go_tools())."""
NEWEST = "v3.2.12"


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
    """Runs ``argodiff --stream``: one process for the session, one request and one answer line at a time (a new
    process per request would cost about half a second: Argo CD's settings manager syncs its informers first)."""

    def __init__(self, binary: Path, line: str = NEWEST) -> None:
        self.binary = binary
        self.line = line
        """The Argo CD release the helper is linked against."""
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None

    def _process(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            # Argo CD's logs, read back when the process dies; it lives as long as the process (closed by close()).
            self._stderr = tempfile.TemporaryFile("w+")  # noqa: SIM115
            self._proc = subprocess.Popen(
                [str(self.binary), "--stream"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True, bufsize=1,
            )  # fmt: skip
        return self._proc

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()[-4000:]

    def request(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Sends one raw request (the JSON of tests/tools/argodiff/main.go) and returns the raw answer."""
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(body) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            self.close()
            raise ArgoDiffError(f"argodiff stopped without an answer:\n{self._stderr_tail()}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise ArgoDiffError(f"argodiff: {answer['error']}")
        return answer

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None

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
        if mode == "structured-merge" and not kubeconfig:
            # Argo CD's controller always diffs with the schema of the destination cluster (controller/state.go:
            # WithGVKParser); without one gitops-engine takes every list as atomic, which no controller does.
            raise ArgoDiffError("mode structured-merge needs kubeconfig: the API server whose schema Argo CD reads")
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
def argodiff_helpers() -> Iterator[dict[str, ArgoDiff]]:
    """One helper per Argo CD line (each process starts on its first request)."""
    try:
        folder = build_go_tools()
    except GoToolsError as e:
        pytest.fail(f"Argo CD's diff helper could not be built: {e}", pytrace=False)
    helpers = {line: ArgoDiff(folder / binary, line) for line, binary in LINES.items()}
    try:
        yield helpers
    finally:
        for helper in helpers.values():
            helper.close()


@pytest.fixture(scope="session")
def argocd_diff(argodiff_helpers: dict[str, ArgoDiff]) -> ArgoDiff:
    return argodiff_helpers[NEWEST]


@pytest.fixture(scope="session", params=list(LINES), ids=lambda line: f"argocd-{line}")
def argocd_diff_line(request: pytest.FixtureRequest, argodiff_helpers: dict[str, ArgoDiff]) -> ArgoDiff:
    return argodiff_helpers[request.param]
