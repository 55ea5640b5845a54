"""The drift page (bot/report/html.py): golden files, alignment, escaping, masking, its policy, the CLI's --format html.

Golden files live in tests/report/golden/; ``UPDATE_GOLDEN=1 pytest tests/report/test_report_html.py`` rewrites them
(open them in a browser, or read the diff, before committing). The browser itself is tests/report/test_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from bot.analysis import explain, load_documents, side_by_side
from bot.cli import main
from bot.demo import EXAMPLES
from bot.model import Alert, ComparedObject, Report, report_from_dict
from bot.report.html import content_security_policy, render_html
from bot.report.page_model import Card, Fold, Line, build_page
from bot.store.state import ViewState
from tests.builders import deployment, entry, live_of
from tests.paths import CASEBOOK

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
MARKUP = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def folder_report(folder: Path) -> Report:
    spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))

    def load(name: str) -> list[dict[str, Any]]:
        path = folder / name
        return load_documents(path.read_text(encoding="utf-8"), str(path)) if path.exists() else []

    again = load("desired-again.yaml")
    return explain(load("desired.yaml"), load("live.yaml"), load("context.yaml"), app=spec.get("app"),
                   desired_again=again or None)  # fmt: skip


def check_golden(name: str, html: str) -> None:
    path = GOLDEN / f"{name}.html"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run UPDATE_GOLDEN=1 pytest {Path(__file__).name}"
    assert path.read_text(encoding="utf-8") == html, f"{path.name} changed (UPDATE_GOLDEN=1 rewrites)"


class _Page(HTMLParser):
    """The parts of a page the tests look at: elements by tag and class, the text, script and style bodies."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.raw: dict[str, list[str]] = {"script": [], "style": []}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in self.raw else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.raw[self._in].append(data)
        else:
            self.text.append(data)


def parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "case.json").exists())
GOLDEN_CASES = ["hpa-replicas-ssa", "helm-randalphanum-secret", "kyverno-label-webhook", "clean-no-findings"]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_golden_demo_examples(name: str) -> None:
    check_golden(f"demo-{name}", render_html(folder_report(EXAMPLES / name)))


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_golden_casebook(case: str) -> None:
    check_golden(f"case-{case}", render_html(folder_report(CASEBOOK / "cases" / case)))


@pytest.mark.parametrize("folder", [*(EXAMPLES / n for n in EXAMPLE_NAMES),
                                    *sorted((CASEBOOK / "cases").iterdir())], ids=lambda p: p.name)  # fmt: skip
def test_every_finding_is_on_the_page_once_beside_its_differing_lines(folder: Path) -> None:
    report = folder_report(folder)
    page = build_page(report)
    cards = [c.number for c in page.unplaced] + [
        b.number for o in page.objects for b in o.blocks if isinstance(b, Card)
    ]
    assert sorted(cards) == list(range(1, len(report.findings) + 1))
    assert not page.unplaced, "every finding's object pair is in the report"
    html = render_html(report)
    for n in range(1, len(report.findings) + 1):
        assert html.count(f'id="f{n}"') == 1
    lines = [b for o in page.objects for b in o.blocks if isinstance(b, Line)]
    for n in range(1, len(report.findings) + 1):
        assert any(n in ln.findings for ln in lines), f"finding {n} marks no line"


def test_no_secret_value_reaches_the_page() -> None:
    folder = CASEBOOK / "cases" / "helm-randalphanum-secret"
    html = render_html(folder_report(folder))
    secrets: set[str] = set()
    for name in ("desired.yaml", "live.yaml", "desired-again.yaml"):
        path = folder / name
        if not path.exists():
            continue
        for obj in load_documents(path.read_text(encoding="utf-8"), name):
            if obj.get("kind") == "Secret":
                for key in ("data", "stringData"):
                    for value in (obj.get(key) or {}).values():
                        secrets.add(str(value))
                        if key == "data":
                            secrets.add(base64.b64decode(str(value)).decode(errors="replace"))
    secrets = {s for s in secrets if len(s) >= 6}
    assert secrets and not [s for s in secrets if s in html]
    assert "&lt;redacted&gt;" in html


def test_markup_in_any_value_is_shown_as_text() -> None:
    desired = deployment("web", replicas=2)
    desired["metadata"]["annotations"] = {"note": MARKUP}
    live = live_of(desired, entry(MARKUP, {"f:spec": {"f:replicas": {}}}))
    live["spec"]["replicas"] = 5
    live["metadata"]["annotations"] = {"note": MARKUP + "!"}
    report = explain([desired], [live], app=MARKUP)
    html = render_html(report)
    page = parse(html)
    assert [t for t, _ in page.tags].count("script") == 1  # the page's own, nothing injected
    assert not [a for _, a in page.tags if any(k.startswith("on") for k in a)]
    assert not [a for t, a in page.tags if t == "img"]
    text = "".join(page.text)
    assert MARKUP in text  # shown, as text: the app name, the value and the manager
    assert text.count(MARKUP) >= 3


def test_the_policy_allows_exactly_the_inline_style_and_script() -> None:
    html = render_html(folder_report(EXAMPLES / EXAMPLE_NAMES[0]))
    page = parse(html)
    [style], [script] = page.raw["style"], page.raw["script"]

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    policy = content_security_policy()
    assert f"style-src {digest(style)};" in policy and f"script-src {digest(script)};" in policy
    assert policy.startswith("default-src 'none';") and "unsafe" not in policy
    metas = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert [m["content"] for m in metas] == [policy]
    assert "frame-ancestors 'none'" in content_security_policy(frame_ancestors=True)
    # nothing that would make a request: no src, no external href, no import
    assert not [a for _, a in page.tags if a.get("src")]
    hrefs = {a.get("href") for t, a in page.tags if t in ("a", "link") and a.get("href")}
    assert all(h is not None and (h.startswith("#") or h == "data:,") for h in hrefs), hrefs
    assert "url(" not in style and "@import" not in style and "http" not in script


def test_list_items_are_aligned_by_merge_key_not_position() -> None:
    containers = [{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "proxy:1"}]
    desired = deployment("web", template={"metadata": {}, "spec": {"containers": containers}})
    live = live_of(desired)
    live["spec"]["template"]["spec"]["containers"] = [
        {"name": "istio-proxy", "image": "istio:1"}, {"name": "sidecar", "image": "proxy:2"},
        {"name": "app", "image": "app:1"},
    ]  # fmt: skip
    rows = side_by_side(desired, live).rows
    pairs = {(r.left.text.strip() if r.left else None, r.right.text.strip() if r.right else None) for r in rows}
    assert ("- name: app", "- name: app") in pairs and ("- name: sidecar", "- name: sidecar") in pairs
    assert (None, "- name: istio-proxy") in pairs
    image = next(r for r in rows if r.right and r.right.text.strip() == "image: proxy:2")
    assert image.left is not None and image.left.text.strip() == "image: proxy:1"
    assert image.pointer == "/spec/template/spec/containers/1/image"  # the live index, as findings name it


def test_embedded_text_is_compared_line_by_line() -> None:
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "shop"},
               "data": {"app.yaml": "a: 1\nb: 2\nc: 3\n", "small": "x"}}  # fmt: skip
    live = json.loads(json.dumps(desired))
    live["data"]["app.yaml"] = "a: 1\nb: 20\nc: 3\nd: 4\n"
    live["metadata"]["managedFields"] = [entry("kubectl-edit", {"f:data": {"f:app.yaml": {}}})]
    report = explain([desired], [live], app="shop")
    [obj] = build_page(report).objects
    lines = [b for b in obj.blocks if isinstance(b, Line)] + [ln for b in obj.blocks if isinstance(b, Fold)
                                                              for ln in b.lines]  # fmt: skip
    diff = {(ln.left.text.strip() if ln.left else None, ln.right.text.strip() if ln.right else None)
            for ln in lines if ln.state == "diff"}  # fmt: skip
    assert diff == {("app.yaml: |", "app.yaml: |"), ("b: 2", "b: 20"), (None, "d: 4")}  # the field, its lines
    same = [ln for ln in lines if ln.left and ln.left.text.strip() == "a: 1"]
    assert same and same[0].state == "same" and same[0].owners[0].manager == "kubectl-edit"


def test_json_annotations_are_pretty_printed_and_long_values_folded() -> None:
    bundle = base64.b64encode(os.urandom(900)).decode()
    desired = deployment("web")
    desired["metadata"]["annotations"] = {"cfg": json.dumps({"a": 1, "b": [1, 2], "long": "x" * 30}), "ca": bundle}
    live = live_of(desired)
    live["metadata"]["annotations"] = {"cfg": json.dumps({"a": 2, "b": [1, 2], "long": "x" * 30}), "ca": bundle[::-1]}
    html = render_html(explain([desired], [live], app="shop"))
    assert "&#34;a&#34;: 1," in html and "&#34;a&#34;: 2," in html  # one line each side, inside the field
    short = hashlib.sha256(bundle.encode()).hexdigest()[:12]
    assert f"{len(bundle)} characters, sha256 {short}" in html
    assert re.search(r'<details class="long">', html)


def test_a_view_state_gives_the_same_page_as_the_report() -> None:
    report = folder_report(EXAMPLES / EXAMPLE_NAMES[0])
    state = ViewState.of(Alert.from_report(report), report)
    again = ViewState.model_validate(json.loads(json.dumps(state.model_dump(mode="json"))))  # as the store keeps it
    assert render_html(again.parsed_report(), again.alert) == render_html(report)
    assert build_page(report).objects


def test_a_report_without_objects_still_lists_its_findings() -> None:
    report = report_from_dict(folder_report(EXAMPLES / EXAMPLE_NAMES[0]).to_dict())  # as JSON: no objects
    page = build_page(report)
    assert not page.objects and len(page.unplaced) == len(report.findings) > 0
    assert 'id="f1"' in render_html(report)


def test_objects_are_kept_out_of_the_json_report() -> None:
    report = folder_report(EXAMPLES / EXAMPLE_NAMES[0])
    assert report.objects and "objects" not in report.to_dict()
    assert all(isinstance(o, ComparedObject) for o in report.objects)


def test_cli_explain_format_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = EXAMPLES / "checkout-hpa-and-hotfix"
    code = main(["explain", "--desired", str(folder / "desired.yaml"), "--live", str(folder / "live.yaml"),
                 "--context", str(folder / "context.yaml"), "--format", "html"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1 and out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert 'class="row diff"' in out and "kube-controller-manager" in out
