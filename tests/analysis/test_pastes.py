"""Real inputs, as people paste them: no apiVersion, no kind, no namespace, UTF-16 and byte order marks."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.analysis import explain, load_documents
from bot.analysis.pairing import managed_api_version, pair_objects
from bot.cli import main
from bot.errors import BadInput
from tests.builders import deployment, entry, live_of


def edited(desired: dict[str, Any]) -> dict[str, Any]:
    """The live Deployment after ``kubectl edit`` changed the image."""
    live = live_of(desired, entry("kubectl-edit", {"f:spec": {"f:template": {"f:spec": {"f:containers": {
        'k:{"name":"app"}': {"f:image": {}}}}}}}))  # fmt: skip
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:hotfix"
    return live


def without(obj: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in copy.deepcopy(obj).items() if k not in keys}


def verdicts(desired: list[dict[str, Any]], live: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    report = explain(desired, live, app="shop")
    assert not report.not_compared
    return [(f.resource.group, f.pointer, f.cause) for f in report.findings]


IMAGE = ("apps", "/spec/template/spec/containers/0/image", "manual-edit")


def test_live_without_api_version_is_matched_by_kind_namespace_and_name() -> None:
    d = deployment()
    assert verdicts([d], [without(edited(d), "apiVersion")]) == [IMAGE]


def test_live_pasted_from_metadata_on_is_matched_by_namespace_and_name() -> None:
    d = deployment()
    assert verdicts([d], [without(edited(d), "apiVersion", "kind")]) == [IMAGE]


def test_live_without_namespace_is_matched_when_unique() -> None:
    d = deployment()
    live = edited(d)
    del live["metadata"]["namespace"]
    assert verdicts([d], [live]) == [IMAGE]


def test_group_and_version_come_from_managed_fields_when_they_agree() -> None:
    d = deployment()
    live = without(edited(d), "apiVersion")
    assert managed_api_version(live) == "apps/v1"
    [(_, completed)] = pair_objects([d], [live])
    assert completed is not None and completed["apiVersion"] == "apps/v1" and completed["kind"] == "Deployment"
    # managedFields written in another group: another object, whatever its name
    for e in live["metadata"]["managedFields"]:
        e["apiVersion"] = "argoproj.io/v1alpha1"
    assert pair_objects([d], [live]) == [(d, None)]


def test_an_ambiguous_paste_is_not_matched() -> None:
    """Two desired objects of the same kind, namespace and name (two API groups): a paste without apiVersion and
    without managedFields could be either, so neither is compared."""
    d = deployment()
    other = copy.deepcopy(d)
    other["apiVersion"] = "example.com/v1"
    live = without(edited(d), "apiVersion")
    del live["metadata"]["managedFields"]
    report = explain([d, other], [live], app="shop")
    assert report.resources_compared == 0 and len(report.not_compared) == 2


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"), ("utf-16-le", b"")],
)
def test_files_in_utf16_or_with_a_byte_order_mark_are_decoded(encoding: str, bom: bytes) -> None:
    d = deployment()
    d["metadata"]["annotations"]["note"] = "café"  # something beyond ASCII
    data = bom + yaml.safe_dump(d, allow_unicode=True).encode(encoding)
    assert load_documents(data, "d.yaml") == [d]
    assert load_documents(bom + json.dumps(d).encode(encoding), "d.json") == [d]


def test_undecodable_bytes_are_bad_input() -> None:
    with pytest.raises(BadInput, match=r"d\.yaml: not UTF-8 or UTF-16 text"):
        load_documents(b"kind: Deployment\nname: \xff\xfe\xfa", "d.yaml")


def test_cli_reads_a_utf16_live_file_pasted_without_api_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = deployment()
    (tmp_path / "d.yaml").write_text(yaml.safe_dump(d), encoding="utf-8-sig")
    (tmp_path / "l.yaml").write_bytes(
        b"\xff\xfe" + yaml.safe_dump(without(edited(d), "apiVersion")).encode("utf-16-le")
    )
    code = main(["explain", "--desired", str(tmp_path / "d.yaml"), "--live", str(tmp_path / "l.yaml"), "--format",
                 "json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and [(f["resource"]["version"], f["cause"]) for f in report["findings"]] == [("v1", "manual-edit")]


def test_desired_objects_still_need_a_kind() -> None:
    with pytest.raises(BadInput, match="object has no kind"):
        load_documents("metadata:\n  name: web\n", "d.yaml")
    assert load_documents("metadata:\n  name: web\n", "l.yaml", require_kind=False) == [{"metadata": {"name": "web"}}]
