"""The live casebook (tests/live/): real drifts on a real API server, judged by ``argo-why`` as users run it.

Each scenario's script syncs its objects as Argo CD does, lets the drift's writer act through its own API calls,
and reads everything back from the server. Then:

* ``argo-why explain --format json`` (the CLI, in a subprocess) on the desired manifests, the live objects with
  their managedFields and the context objects must name the scripted writer and cause for exactly the drifted
  fields, and propose rules that hide those fields and no field Git manages; Argo CD's own diff (argodiff), in the
  app's diff mode (structured-merge, on this server's schema, for an app syncing with ``ServerSideApply=true``),
  confirms that the proposed rules leave the object in sync, and judges their blast radius leaf by leaf
  (tests/harness/argocd_judge.py ``assert_rule_holds``);
* ``argo-why why`` against the stand-in Argo CD, whose ``managed-resources`` are computed by Argo CD's diff in the
  app's diff mode (legacy three-way or structured-merge, and server-side diff: a dry-run apply by
  ``argocd-controller`` on the real server), with the cluster context read from the real server by the kubernetes
  client, must report the same verdicts minus the fields that diff mode does not show (server-side diff: defaulting
  and webhook mutations vanish), and say which diff mode the app uses.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from bot.analysis import covers
from bot.config import ArgoCDSettings
from bot.demo.fake_argocd.diffs import is_argocd_hook
from bot.demo.fake_argocd.objects import _state
from bot.sources.clients import argocd_factory, clusters
from bot.why import investigate
from bot.wording.report import DIFF_MODE_NOTE, SERVER_SIDE_DIFF_BETTER
from tests.fakes.argocd import REVISION, FakeArgoCD, build_application
from tests.harness.argocd_diff import ArgoDiff, ArgoDiffError, Mode
from tests.harness.argocd_judge import assert_rule_holds
from tests.harness.kube_server import KubeServer
from tests.live.scenarios import SCENARIOS, Expect, Scenario, Script
from tests.live.webhook import DIGEST, INJECTED_LABEL, SidecarInjector, sidecar_injector  # noqa: F401  (fixture)
from tests.live.writers import Cluster, Obj
from tests.paths import ROOT

APP = "shop"
GIT_AT = "c0ffee0000000000000000000000000000000001"
"""Git's revision when it has moved on since the sync (the sync applied ``REVISION``)."""
BY_NAME = {s.name: s for s in SCENARIOS}


def params(*modes: str) -> list[Any]:
    """Every scenario, by name."""
    return [s.name for s in SCENARIOS]


@dataclass
class Ran:
    """A scenario after its script ran: what the files given to explain hold."""

    scenario: Scenario
    namespace: str
    desired: list[Obj]
    live: list[Obj]
    context: list[Obj]
    desired_again: list[Obj] | None
    pairs: list[tuple[Obj | None, Obj | None]]
    """What Argo CD compares: each desired object with its live one (None: not in the cluster), then the objects
    only the cluster has (leftovers of an earlier revision)."""
    applied: list[Obj] | None = None
    """What Argo CD last synced, when Git has moved on since (the synced revision's render)."""

    @property
    def compared(self) -> list[tuple[Obj, Obj]]:
        return [(d, lv) for d, lv in self.pairs if d is not None and lv is not None]


@pytest.fixture(scope="module")
def cluster(kube_server: KubeServer) -> Iterator[Cluster]:
    c = Cluster(kube_server)
    try:
        yield c
    finally:
        c.close()


def application(namespace: str, sync: str, *, server_side_diff: bool = False, git_ahead: bool = False) -> Obj:
    app = build_application(APP, namespace, [], server_side_apply=sync == "ssa", git_at=GIT_AT if git_ahead else None)
    if server_side_diff:
        app["metadata"]["annotations"] = {"argocd.argoproj.io/compare-options": "ServerSideDiff=true"}
    return app


@pytest.fixture(scope="module")
def run(kube_server: KubeServer, cluster: Cluster, sidecar_injector: SidecarInjector) -> Callable[[str], Ran]:  # noqa: F811
    done: dict[str, Ran] = {}

    def run_one(name: str) -> Ran:
        if name not in done:
            scenario = BY_NAME[name]
            namespace = f"live-{name}"[:63].rstrip("-")
            kube_server.create_namespace(namespace)
            script = Script(cluster, namespace, APP, sidecar_injector, sync=scenario.sync)
            scenario.script(script)
            pairs: list[tuple[Obj | None, Obj | None]] = [
                (o, cluster.get(o) if cluster.exists(o) else None) for o in script.desired
            ]
            pairs += [(None, cluster.get(o)) for o in script.leftover if cluster.exists(o)]
            live = [lv for _, lv in pairs if lv is not None]
            ns = cluster.get({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
            context = [cluster.get(o) for o in script.context] + [ns]
            done[name] = Ran(
                scenario, namespace, script.desired, live, context, script.desired_again, pairs, script.applied
            )
        return done[name]

    return run_one


def write(path: Path, objs: list[Obj]) -> str:
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def explain_cli(ran: Ran, folder: Path, app: Obj) -> dict[str, Any]:
    argv = [sys.executable, "-m", "bot", "explain", "--format", "json",
            "--desired", write(folder / "desired.yaml", ran.desired),
            "--live", write(folder / "live.yaml", ran.live),
            "--context", write(folder / "context.yaml", [*ran.context, app])]  # fmt: skip
    if ran.desired_again is not None:
        argv += ["--desired-again", write(folder / "desired-again.yaml", ran.desired_again)]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    assert proc.returncode == (1 if report["findings"] or report["resources"] else 0)
    return report


Verdict = tuple[str, str, str, str, str | None]


def one_sided(resources: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(r["resource"]["kind"], r["resource"]["name"], r["state"]) for r in resources}


def verdicts(findings: list[dict[str, Any]]) -> set[Verdict]:
    return {(f["resource"]["kind"], f["resource"]["name"], f["pointer"], f["cause"], f["writer"].get("manager"))
            for f in findings}  # fmt: skip


def expected(scenario: Scenario, mode: str = "explain") -> set[Verdict]:
    keep: Callable[[Expect], bool] = {
        "explain": lambda e: True, "legacy": lambda e: e.legacy, "server-side": lambda e: e.ssd,
    }[mode]  # fmt: skip
    return {(e.kind, e.name, e.pointer, e.cause, e.manager) for e in scenario.expect if keep(e)}


def leaves(value: Any, pointer: str = "") -> Iterator[str]:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from leaves(v, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from leaves(v, f"{pointer}/{i}")
    else:
        yield pointer


def git_managed(desired: Obj) -> set[str]:
    """Every leaf Git sets (metadata: labels and annotations only, as Argo CD compares them)."""
    meta = desired.get("metadata") or {}
    compared = {k: v for k, v in desired.items() if k not in ("apiVersion", "kind", "metadata", "status")}
    compared["metadata"] = {k: meta[k] for k in ("labels", "annotations") if k in meta}
    return set(leaves(compared))


def check_rules_hide_exactly_the_drift(ran: Ran, report: dict[str, Any]) -> list[Obj]:
    """Every proposed rule hides its finding's field, and no field Git manages that did not drift."""
    rules = []
    for f in report["findings"]:
        fix = f["fix"]
        if fix["rule"] is None:
            continue
        rules.append(fix["rule"])
        assert any(covers(h, f["pointer"]) for h in fix["hides"]), f
        desired = next(d for d in ran.desired if d["metadata"]["name"] == f["resource"]["name"]
                       and d["kind"] == f["resource"]["kind"])  # fmt: skip
        drifted = {g["pointer"] for g in report["findings"] if g["resource"] == f["resource"]}
        for hidden in fix["hides"]:
            over = {p for p in git_managed(desired) if covers(hidden, p) or covers(p, hidden)}
            stray = {p for p in over if not any(covers(d, p) or covers(p, d) for d in drifted)}
            assert not stray, f"the rule for {f['pointer']} also hides {sorted(stray)} that Git manages"
    return rules


@pytest.mark.parametrize("name", params())
def test_explain_gives_the_scripted_verdict(
    name: str, run: Callable[[str], Ran], tmp_path: Path, argocd_diff: ArgoDiff, kube_server: KubeServer
) -> None:
    ran = run(name)
    ahead = ran.applied is not None
    report = explain_cli(ran, tmp_path, application(ran.namespace, ran.scenario.sync, git_ahead=ahead))
    found = verdicts(report["findings"])
    assert found == expected(ran.scenario), (sorted(found, key=str), [f["explanation"] for f in report["findings"]])
    confidences = {(e.kind, e.name, e.pointer): e.confidence for e in ran.scenario.expect if e.confidence}
    for f in report["findings"]:
        want = confidences.get((f["resource"]["kind"], f["resource"]["name"], f["pointer"]))
        assert want in (None, f["confidence"]), (f["pointer"], f["confidence"], f["explanation"])
    # resources only one side has, and what Argo CD does not compare (hooks, IgnoreExtraneous)
    assert one_sided(report["resources"]) == set(ran.scenario.resources), report["resources"]
    assert {(x["resource"]["kind"], x["resource"]["name"], x["reason"]) for x in report["skipped"]} == set(
        ran.scenario.skipped
    )
    # The app's diff mode is said, and under the legacy diff, where server-side diff is the better fix.
    assert report["diff_mode"] == "legacy" and DIFF_MODE_NOTE["legacy"].format(app=APP) in report["notes"]
    by_pointer = {(e.kind, e.name, e.pointer): e for e in ran.scenario.expect}
    for f in report["findings"]:
        e = by_pointer[(f["resource"]["kind"], f["resource"]["name"], f["pointer"])]
        assert (SERVER_SIDE_DIFF_BETTER in f["explanation"]) == (e.legacy and not e.ssd), f["explanation"]
    # explain says which findings Argo CD's diff shows: in each mode, the ones `why` finds in Argo CD's own diff
    # (test_why_reports_what_the_diff_mode_shows holds those to argodiff)
    shown = [f for f in report["findings"] if f["shown_by_argocd"]]
    assert verdicts(shown) == expected(ran.scenario, "legacy"), [f["explanation"] for f in report["findings"]]
    ssd_app = application(ran.namespace, ran.scenario.sync, server_side_diff=True, git_ahead=ahead)
    ssd_report = explain_cli(ran, tmp_path, ssd_app)
    assert ssd_report["diff_mode"] == "server-side"
    assert not any(SERVER_SIDE_DIFF_BETTER in f["explanation"] for f in ssd_report["findings"])
    ssd_shown = [f for f in ssd_report["findings"] if f["shown_by_argocd"]]
    if not ran.scenario.ssd_error:  # else Argo CD shows its dry-run's error, not a diff
        assert verdicts(ssd_shown) == expected(ran.scenario, "server-side"), ssd_report["findings"]
    rules = check_rules_hide_exactly_the_drift(ran, report)
    if rules:  # Argo CD's own diff, with the proposed rules as the Application's ignoreDifferences
        mode = diff_mode(ran.scenario, False)
        answer = argocd_diff.diff(
            ran.compared, mode=mode, ignore_differences=rules,
            kubeconfig=kube_server.kubeconfig if mode != "legacy" else None,
        )  # fmt: skip
        drifted = {f["pointer"] for f in report["findings"]}
        left = [(r.name, p) for r in answer if r.modified for p in differing_pointers(r)]
        assert not [x for x in left if any(covers(d, x[1]) or covers(x[1], d) for d in drifted)], differences(answer)
        assert not answer.modified, differences(answer)
        # and the blast radius, judged by Argo CD leaf by leaf (tests/harness/argocd_judge.py) in the app's diff mode
        for desired, live in ran.compared:
            key = (desired["kind"], desired["metadata"]["name"])
            mine = [
                f for f in report["findings"]
                if f["fix"]["rule"] is not None and (f["resource"]["kind"], f["resource"]["name"]) == key
            ]  # fmt: skip
            if mine:
                assert_rule_holds(
                    argocd_diff, desired, live, [f["fix"]["rule"] for f in mine],
                    hides=sorted({h for f in mine for h in f["fix"]["hides"]}), mode=mode,
                    kubeconfig=kube_server.kubeconfig if mode != "legacy" else None, label=f"{name}: {desired['kind']}",
                )  # fmt: skip


FILES = [s.name for s in SCENARIOS if any(e.files for e in s.expect)]


@pytest.mark.parametrize("name", FILES)
def test_the_files_alone_claim_no_more_than_they_show(name: str, run: Callable[[str], Ran], tmp_path: Path) -> None:
    """Without the Application, server-side apply leaves no trace of what Argo CD sent: Git ahead and a webhook's
    rewrite look the same, and Gatekeeper's catch-all webhook proves neither, so the verdict is unknown, no rule."""
    ran = run(name)
    argv = [sys.executable, "-m", "bot", "explain", "--format", "json", "--app", APP,
            "--desired", write(tmp_path / "desired.yaml", ran.desired),
            "--live", write(tmp_path / "live.yaml", ran.live),
            "--context", write(tmp_path / "context.yaml", ran.context)]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    report = json.loads(proc.stdout)
    want = {(e.kind, e.name, e.pointer, e.files or e.cause, e.manager) for e in ran.scenario.expect}
    assert verdicts(report["findings"]) == want, [f["explanation"] for f in report["findings"]]
    assert all(f["fix"]["rule"] is None for f in report["findings"])


def differing_pointers(r: Any) -> dict[str, tuple[Any, Any]]:
    """The leaves where Argo CD's predicted and normalized live states differ: pointer -> (predicted, live)."""
    predicted = {p: _at(r.predicted_live, p) for p in leaves(r.predicted_live or {})}
    live = {p: _at(r.normalized_live, p) for p in leaves(r.normalized_live or {})}
    return {p: (predicted.get(p, "<none>"), live.get(p, "<none>")) for p in predicted.keys() | live.keys()
            if predicted.get(p, "<none>") != live.get(p, "<none>")}  # fmt: skip


def differences(answer: Any) -> list[tuple[str, dict[str, tuple[Any, Any]]]]:
    return [(r.name, differing_pointers(r)) for r in answer if r.modified]


def _at(obj: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        obj = obj[int(token)] if isinstance(obj, list) else obj[token]
    return obj


def diff_mode(scenario: Scenario, server_side_diff: bool) -> Mode:
    if server_side_diff:
        return "server-side"
    return "structured-merge" if scenario.sync == "ssa" else "legacy"


def resource_diffs(ran: Ran, answer: Any) -> list[Obj]:
    """``managed-resources`` as Argo CD serves it, from Argo CD's own diff of every (desired, live) pair."""
    out = []
    for (desired, live), r in zip(ran.pairs, answer.resources, strict=True):
        diff: Obj = {"kind": r.kind, "name": r.name, "namespace": r.namespace}
        if r.group:
            diff["group"] = r.group
        diff.update(targetState=_state(desired), liveState=_state(live), normalizedLiveState=_state(r.normalized_live),
                    predictedLiveState=_state(r.predicted_live))  # fmt: skip
        if r.modified:
            diff["modified"] = True
        if is_argocd_hook(live if live is not None else desired or {}):
            diff["hook"] = True  # managed-resources never serves hooks
        out.append(diff)
    return out


@pytest.fixture(scope="module")
def why_settings(argocd: FakeArgoCD, kube_server: KubeServer) -> ArgoCDSettings:
    return ArgoCDSettings(
        url=argocd.url, token=SecretStr(argocd.token), retries=2, timeout=10.0,
        kubeconfig=str(kube_server.kubeconfig), cluster_contexts={"https://kubernetes.default.svc": "argo-why-test"},
    )  # fmt: skip


@pytest.mark.parametrize("server_side_diff", [False, True], ids=["legacy", "server-side-diff"])
@pytest.mark.parametrize("name", params())
async def test_why_reports_what_the_diff_mode_shows(
    name: str, server_side_diff: bool, run: Callable[[str], Ran], argocd: FakeArgoCD, argocd_diff: ArgoDiff,
    kube_server: KubeServer, why_settings: ArgoCDSettings,
) -> None:  # fmt: skip
    ran = run(name)
    mode = diff_mode(ran.scenario, server_side_diff)
    pairs = ran.pairs
    if server_side_diff and ran.scenario.ssd_error:  # the dry-run apply is refused: Argo CD shows the error
        with pytest.raises(ArgoDiffError, match=re.escape(ran.scenario.ssd_error)):
            argocd_diff.diff(pairs, mode=mode, kubeconfig=kube_server.kubeconfig)
        return
    answer = argocd_diff.diff(pairs, mode=mode, kubeconfig=kube_server.kubeconfig if mode != "legacy" else None)
    diffs = resource_diffs(ran, answer)
    ahead = ran.applied is not None
    app = application(ran.namespace, ran.scenario.sync, server_side_diff=server_side_diff, git_ahead=ahead)
    app = {**app, "status": build_application(APP, ran.namespace, diffs, git_at=GIT_AT if ahead else None)["status"]}
    argocd.reset()
    renders = [ran.desired] + ([ran.desired_again] if ran.desired_again is not None else [])
    argocd.add_app(app, diffs, renders, revision_renders={REVISION: ran.applied} if ran.applied else None)
    async with argocd_factory(why_settings)() as client:
        report = await investigate(APP, argocd=client, cluster=clusters(why_settings))
    found = verdicts([f.to_dict() for f in report.findings])
    assert found == expected(ran.scenario, "server-side" if server_side_diff else "legacy"), found
    if ahead:  # what Argo CD sent is read from the synced revision's render: proven, and said once, calmly
        assert {f.confidence for f in report.findings} == {"confirmed"}, [f.explanation for f in report.findings]
        assert report.git_ahead is not None and report.notes[0] == report.git_ahead["text"] and not report.warnings
    assert one_sided([r.to_dict() for r in report.resources]) == set(ran.scenario.resources), report.resources
    assert report.nothing_differs is None
    assert report.application is not None
    assert report.application["diff_mode"] == report.diff_mode == ("server-side" if server_side_diff else "legacy")
    assert not (server_side_diff and any(SERVER_SIDE_DIFF_BETTER in f.explanation for f in report.findings))


@pytest.mark.parametrize("name", ["webhook-injects-csa", "webhook-injects-ssa"])
def test_webhook_mutations_are_recorded_as_the_real_server_records_them(
    name: str,
    run: Callable[[str], Ran],
    sidecar_injector: SidecarInjector,  # noqa: F811
) -> None:
    """The API server computes managedFields before mutating admission: what the webhook adds (the sidecar, the
    label) belongs to nobody, and the image it rewrote stays owned by the requester, Argo CD."""
    ran = run(name)
    [live] = ran.live
    [entry] = live["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"]) == ("argocd-controller", "Update" if "csa" in name else "Apply")
    owned = entry["fieldsV1"]
    containers = owned["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert set(containers) == {'k:{"name":"web"}'}  # not the injected 'k:{"name":"proxy"}'
    assert "f:image" in containers['k:{"name":"web"}']
    assert f"f:{INJECTED_LABEL}" not in owned["f:metadata"]["f:labels"]
    assert live["metadata"]["labels"][INJECTED_LABEL] == "true"
    web, proxy = live["spec"]["template"]["spec"]["containers"]
    assert web["image"] == f"nginx@{DIGEST}" and proxy["name"] == "proxy"
    assert ("CREATE", False, ran.namespace) in sidecar_injector.calls
    if "csa" in name:  # an Update owns what it sent, the API server's defaults included; an Apply only what it sent
        assert "f:terminationMessagePath" in containers['k:{"name":"web"}']
    else:
        assert "f:terminationMessagePath" not in containers['k:{"name":"web"}']


def defaulted(live: Any, git: set[str], pointer: str = "") -> Iterator[str]:
    """The fields of ``live`` Git does not set (a list of scalars counts as one field)."""
    if pointer in git:
        return
    if isinstance(value := live, dict) and value:
        for k, v in value.items():
            yield from defaulted(v, git, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(live, list) and live and any(isinstance(v, dict | list) for v in live):
        for i, v in enumerate(live):
            yield from defaulted(v, git, f"{pointer}/{i}")
    elif not any(covers(pointer, g) for g in git):
        yield pointer


@pytest.mark.parametrize("name", ["clean-ssa", "networkpolicy-protocol-default-ssa", "crd-defaults-and-pruned-field"])
def test_every_value_the_server_fills_in_is_a_known_default(name: str, run: Callable[[str], Ran]) -> None:
    """Against the real server's defaulting: every field of the live objects that Git did not write is proven a
    default by the analysis' tables (bot/analysis/data/defaults.json) or by the CRD's schema."""
    from bot.analysis.defaulting import proves
    from bot.analysis.pointer import split

    ran = run(name)
    crds = {(c["spec"]["group"], c["spec"]["names"]["kind"]): c for c in ran.context
            if c["kind"] == "CustomResourceDefinition"}  # fmt: skip
    unproven = []
    for desired, live in zip(ran.desired, ran.live, strict=True):
        group, _, version = str(desired["apiVersion"]).rpartition("/")
        body = {k: live[k] for k in ("spec", "data") if k in live}
        for p in defaulted(body, git_managed(desired)):
            path = tuple(int(t) if t.isdigit() else t for t in split(p))
            if proves(group, desired["kind"], version, path, _at(live, p), crds.get((group, desired["kind"]))) is None:
                unproven.append((desired["kind"], p, _at(live, p)))
    assert not unproven
