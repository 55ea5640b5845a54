"""How the report reads, through the command line, the Slack blocks and the drift page (issue 28, items 8, 9, 10, 17
and 18): values cut at a whole word or entry, "added" for an added item, the objects named when no app is known,
an app of another namespace written as people write it, each note said once, the Writer column agreeing with the
finding, and the fix box saying what Slack and the text say.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli import main

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
FOLDERS = sorted(p for p in [*(SCENARIOS / "casebook" / "cases").iterdir(), *(SCENARIOS / "extra").iterdir()]
                 if (p / "desired.yaml").exists())  # fmt: skip


def explain(capsys: pytest.CaptureFixture[str], desired: str, live: str, *more: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["explain", "--desired", desired, "--live", live, *more])
    out, err = capsys.readouterr()
    return code, out, err


def folder_args(folder: Path) -> list[str]:
    context = folder / "context.yaml"
    return [str(folder / "desired.yaml"), str(folder / "live.yaml"), *(["--context", str(context)]
                                                                      if context.exists() else [])]  # fmt: skip


def write(tmp: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def page_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


# --- item 8: values cut at a whole word or entry; "added"; who owns apart from what filled it ---------------------


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_a_long_value_is_never_cut_inside_a_word_or_an_entry(capsys: pytest.CaptureFixture[str],
                                                             folder: Path) -> None:  # fmt: skip
    code, out, _ = explain(capsys, *folder_args(folder), "--format", "json")
    assert code in (0, 1)
    for f in json.loads(out)["findings"]:
        # "…" stands for whole entries (", …}") or the words after a cut (" …"), never the end of a word or value
        assert not re.search(r"[^\s]…", f["explanation"]), f["explanation"]


def test_the_spot_toleration_keeps_whole_entries(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = explain(capsys, *folder_args(SCENARIOS / "extra" / "spot-webhook-appends-toleration"))
    assert '{"effect": "NoSchedule", …} live, absent in Git' in out
    assert "node-lifecycle…" not in out


def _operator_adds_a_toleration(tmp: Path) -> tuple[str, str]:
    toleration = {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}
    spot = {"key": "spotinst.io/node-lifecycle", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    desired = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}], "tolerations": [toleration]},
            },
        },
    }
    live = json.loads(json.dumps(desired))
    live["spec"]["template"]["spec"]["tolerations"].append(spot)
    argocd = {
        "f:spec": {
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {'k:{"name":"web"}': {".": {}, "f:name": {}, "f:image": {}}},
                    "f:tolerations": {},
                },
            },
        }
    }
    live["metadata"]["managedFields"] = [
        {"manager": "argocd-controller", "operation": "Apply", "apiVersion": "apps/v1", "time": "2026-01-01T00:00:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": argocd},
        {"manager": "spot-operator", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-01-02T00:00:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:tolerations": {}}}}}},
    ]  # fmt: skip
    return write(tmp, "desired.yaml", desired), write(tmp, "live.yaml", live)


def test_an_added_list_item_is_said_added_not_rewritten(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    desired, live = _operator_adds_a_toleration(tmp_path)
    _, text, _ = explain(capsys, desired, live, "--app", "shop")
    assert "verdict:  operator (likely): added by a controller" in text and "rewritten" not in text
    _, slack, _ = explain(capsys, desired, live, "--app", "shop", "--format", "slack")
    assert "is added by `spot-operator`" in slack and "is rewritten by" not in slack
    _, page, _ = explain(capsys, desired, live, "--app", "shop", "--format", "html")
    assert "added by a controller" in page_text(page) and "rewritten by a controller" not in page_text(page)
    _, webhook, _ = explain(capsys, *folder_args(SCENARIOS / "extra" / "spot-webhook-appends-toleration"))
    assert "added by a mutating admission webhook" in webhook


def test_the_pages_findings_name_the_field_owner_apart_from_what_filled_it(capsys: pytest.CaptureFixture[str]) -> None:
    _, page, _ = explain(capsys, *folder_args(SCENARIOS / "extra" / "istio-validator-failurepolicy"), "--format",
                         "html")  # fmt: skip
    items = [page_text(li) for li in re.findall(r'<li><a href="#f\d+">.*?</li>', page)]
    defaulted = next(i for i in items if "filled in by API defaulting" in i)
    assert "(argocd-controller)" not in defaulted
    assert defaulted.endswith("filled in by API defaulting · field owned by argocd-controller in managedFields")


# --- item 9: no app named: the objects are; team-a_shop is team-a/shop --------------------------------------------


def _drifted_deployment(tmp: Path, annotations: dict[str, str] | None = None) -> tuple[str, str]:
    meta: dict[str, Any] = {"name": "web", "namespace": "shop", **({"annotations": annotations} if annotations else {})}
    desired = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {"replicas": 2}}
    live = json.loads(json.dumps(desired))
    live["spec"]["replicas"] = 5
    live["metadata"]["managedFields"] = [
        {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-01-02T00:00:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]  # fmt: skip
    return write(tmp, "desired.yaml", desired), write(tmp, "live.yaml", live)


def test_without_an_app_the_report_names_the_objects(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    desired, live = _drifted_deployment(tmp_path)
    _, text, _ = explain(capsys, desired, live)
    assert text.startswith("Deployment shop/web: 1 difference in 1 resource")
    _, page, _ = explain(capsys, desired, live, "--format", "html")
    assert "<title>Why Deployment shop/web is OutOfSync</title>" in page
    _, slack, _ = explain(capsys, desired, live, "--format", "slack")
    assert "Why Deployment shop/web is OutOfSync" in slack
    for said in (text, page_text(page), slack):
        assert not re.search(r"\bapp: 1 difference|Why app is|\*app\*", said), said
    _, clean, _ = explain(capsys, desired, desired)
    assert clean.startswith("No drift: 1 resource matches Git.")


def test_an_app_of_another_namespace_is_written_as_people_write_it(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:  # fmt: skip
    tracking = {"argocd.argoproj.io/tracking-id": "team-a_shop:apps/Deployment:shop/web"}
    desired, live = _drifted_deployment(tmp_path, tracking)
    _, text, _ = explain(capsys, desired, live)
    assert text.startswith("team-a/shop: ")
    _, page, _ = explain(capsys, desired, live, "--format", "html")
    assert "<title>Why team-a/shop is OutOfSync</title>" in page
    code, out, _ = explain(capsys, desired, live, "--format", "json")
    assert code == 1 and json.loads(out)["app"] == "team-a_shop"  # the JSON keeps the tracking name (the contract)


# --- item 10: each note once, on one stream -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "slack", "html"])
def test_each_note_is_said_once_on_one_stream(capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str) -> None:
    desired, live = _drifted_deployment(tmp_path)
    application = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "shop", "namespace": "argocd"},
        "spec": {"destination": {"namespace": "shop"}, "source": {"repoURL": "https://x", "path": "."}},
    }
    context = write(tmp_path, "context.yaml", application)  # fmt: skip
    _, out, err = explain(capsys, desired, live, "--context", context, "--app", "shop", "--format", fmt)
    note = "Argo CD compares shop with its legacy three-way diff"
    on_stdout = out.count(note) if fmt == "text" else 0  # a machine format holds its notes in its document
    assert on_stdout + err.count(note) == 1, (out, err)
    assert (err == "") == (fmt == "text")


# --- items 17 and 18: the page's Writer column, its fix box, its paths and its quotes ------------------------------


def test_a_field_nobody_owns_says_no_owner_and_the_italics_are_explained(capsys: pytest.CaptureFixture[str]) -> None:
    _, page, _ = explain(capsys, *folder_args(SCENARIOS / "casebook" / "cases" / "kyverno-label-webhook"),
                         "--format", "html")  # fmt: skip
    [row] = re.findall(r'<div class="row diff"[^>]*data-pointer="/metadata/labels/cost-center">.*?</div></div>', page)
    writer = page_text(row.rsplit('<div class="who"', 1)[1])
    assert "no owner" in writer and "argocd-controller" not in writer
    assert "no field manager owns" in page_text(page) or "no managedFields entry owns" in page_text(page)
    assert re.search(r'class="legend">[^<]*<em>in italics</em>', page)


def test_the_fix_box_says_better_fix_and_proposed_rule_like_slack(capsys: pytest.CaptureFixture[str]) -> None:
    _, page, _ = explain(capsys, *folder_args(SCENARIOS / "casebook" / "cases" / "hpa-replicas-ssa"),
                         "--format", "html")  # fmt: skip
    text = page_text(page)
    assert "Better fix: Remove spec.replicas from the manifest" in text
    assert "Proposed rule, to add under spec.ignoreDifferences of the Application" in text
    assert "Fix (ignore)" not in text


def test_people_read_paths_and_paste_pointers(capsys: pytest.CaptureFixture[str]) -> None:
    _, page, _ = explain(capsys, *folder_args(SCENARIOS / "casebook" / "cases" / "registry-mirror-webhook-image"),
                         "--format", "html")  # fmt: skip
    headings = [page_text(h) for h in re.findall(r"<h3>.*?</h3>", page)]
    listed = [page_text(li) for li in re.findall(r'<li><a href="#f\d+">.*?</li>', page)]
    assert headings and listed
    for said in headings + listed:
        assert "containers[name=nginx].image" in said and "/containers/0/" not in said, said
    rule = page_text(re.search(r'<pre id="rule-1"[^>]*>.*?</pre>', page, re.S).group(0))  # type: ignore[union-attr]
    assert "containers[]" in rule or "/spec/" in rule  # the rule keeps what Argo CD reads


def test_an_empty_string_is_spelled_the_same_in_git_and_in_the_advice(capsys: pytest.CaptureFixture[str]) -> None:
    _, page, _ = explain(capsys, *folder_args(SCENARIOS / "extra" / "service-clusterip-empty-string"),
                         "--format", "html")  # fmt: skip
    text = page_text(page)
    assert 'Delete `clusterIP: ""` from Git' in text
    assert re.search(r'<div class="cell l" role="cell">\s*clusterIP: &#34;&#34;</div>', page), "Git's side as advised"
    assert "clusterIP: ''" not in text
