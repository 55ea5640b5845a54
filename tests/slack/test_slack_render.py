"""Slack rendering (bot/slack/render/): golden files, Block Kit limits, escaping, Secrets, ``--format slack``.

Golden files live in tests/slack/golden/; ``UPDATE_GOLDEN=1 pytest tests/slack/test_slack_render.py`` rewrites them
(review the diff before committing). Goldens are built from hand-made Reports and from the casebook's scenarios
(the real analysis, on the copy vendored in tests/scenarios/casebook).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from slack_sdk.models.blocks import Block

from bot.cli import build_parser, main
from bot.model import Finding, Fix, ObjectRef, Report, ResourceRef, Writer
from bot.slack.render import (
    ACTIONS_BLOCK_ID,
    MAX_BLOCKS,
    MAX_SECTION,
    MESSAGE_BUDGET,
    Alert,
    Buttons,
    Message,
    analysis_failed_message,
    diff_message,
    digest_message,
    error_message,
    help_message,
    parent_message,
    thread_messages,
)
from bot.slack.render.digest import DigestEntry, digest_list, digest_summary
from bot.wording import slack as wording
from bot.wording.report import ALTERNATIVES, FIELDS, MASK, SELF_HEAL_ATTEMPTS, SYNCS, WRITE_LOOP, plural
from tests.builders import deployment, entry, live_of
from tests.paths import CASEBOOK

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = CASEBOOK / "cases"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
SHA = "4f1c2b9e8d7a6c5b4a3928171615141312111009"
BUTTONS = Buttons(show_diff="st:diff:7f3a", mute="st:mute:7f3a", recheck="st:recheck:7f3a")


# --- helpers --------------------------------------------------------------------------------------------


def check_golden(name: str, data: Any) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run UPDATE_GOLDEN=1 pytest {Path(__file__).name}"
    assert json.loads(path.read_text(encoding="utf-8")) == data, f"{path.name} changed (UPDATE_GOLDEN=1 rewrites)"


def texts(block: Any) -> Iterator[tuple[str, str]]:
    """Every (kind, text) of a block: mrkdwn or plain_text, anywhere inside it."""
    if isinstance(block, dict):
        if block.get("type") in ("mrkdwn", "plain_text") and isinstance(block.get("text"), str):
            yield block["type"], block["text"]
        for value in block.values():
            if isinstance(value, dict | list):
                yield from texts(value)
    elif isinstance(block, list):
        for item in block:
            yield from texts(item)


def assert_valid(message: Message) -> None:
    """What the renderer promises for every message: fallback text, limits, slack_sdk's models."""
    assert message.text.strip()
    assert 0 < len(message.blocks) <= MAX_BLOCKS
    assert len(json.dumps(message.blocks, ensure_ascii=False)) <= MESSAGE_BUDGET
    for block in message.blocks:
        parsed = Block.parse(block)
        assert parsed is not None, block
        parsed.to_dict()  # raises SlackObjectFormationError on a limit breach
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= MAX_SECTION
            assert block["text"]["text"].count("```") % 2 == 0
        for _, text in texts(block):
            assert len(text) <= MAX_SECTION
    assert message.to_dict() == {"text": message.text, "blocks": message.blocks}


def all_texts(messages: list[Message]) -> list[str]:
    out = []
    for m in messages:
        out.append(m.text)
        out += [t for b in m.blocks for kind, t in texts(b) if kind == "mrkdwn"]
    return out


def action_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for m in messages for b in m["blocks"] if b["type"] == "actions"]


def finding(
    pointer: str = "/spec/replicas",
    *,
    kind: str = "Deployment",
    group: str = "apps",
    namespace: str = "shop",
    name: str = "web",
    desired: Any = 2,
    live: Any = 7,
    cause: Any = "autoscaler",
    confidence: Any = "confirmed",
    writer: Writer | None = None,
    explanation: str = "",
    fix: Fix | None = None,
    evidence: list[str] | None = None,
) -> Finding:
    return Finding(
        resource=ResourceRef(group=group, kind=kind, namespace=namespace, name=name, version="v1"),
        pointer=pointer,
        desired=desired,
        live=live,
        cause=cause,
        confidence=confidence,
        writer=writer or Writer(),
        explanation=explanation or f"{pointer} of {kind} {namespace}/{name} differs.",
        fix=fix or Fix(action="investigate"),
        evidence=evidence or [],
    )


def hand_report() -> Report:
    """A small Report with one finding of each kind of fix: rule + syncOptions, fallback rule, no rule, Secret."""
    hpa = finding(
        writer=Writer(
            "kube-controller-manager",
            "Update",
            "scale",
            "2026-11-02T10:00:00Z",
            ObjectRef("HorizontalPodAutoscaler", "web", "shop"),
        ),
        explanation="/spec/replicas of Deployment shop/web is 7 live but 2 in Git: HorizontalPodAutoscaler shop/web "
        "sets the replica count (kube-controller-manager through the scale subresource).",
        fix=Fix(
            "ignore",
            {
                "group": "apps",
                "kind": "Deployment",
                "name": "web",
                "namespace": "shop",
                "jsonPointers": ["/spec/replicas"],
            },
            ["RespectIgnoreDifferences=true"],
            ALTERNATIVES["autoscaler"],
            ["/spec/replicas"],
            True,
        ),
        evidence=[
            "HorizontalPodAutoscaler shop/web targets this object",
            "managedFields: kube-controller-manager (Update, subresource scale) at 2026-11-02T10:00:00Z owns "
            "this field",
        ],
    )
    cpu = finding(
        "/spec/template/spec/containers/0/resources/requests/cpu",
        desired="1000m",
        live="1",
        cause="normalization",
        writer=Writer("argocd-controller", "Apply", None, "2026-11-01T10:00:00Z"),
        fix=Fix(
            "change-source",
            {
                "group": "apps",
                "kind": "Deployment",
                "name": "web",
                "namespace": "shop",
                "jqPathExpressions": [
                    '.spec.template.spec.containers[] | select(.name == "app") | .resources.requests.cpu'
                ],
            },
            [],
            ALTERNATIVES["normalization"],
            ["/spec/template/spec/containers/0/resources/requests/cpu"],
            True,
            fallback=True,
        ),
    )
    image = finding(
        "/spec/template/spec/containers/1/image",
        desired="envoyproxy/envoy:v1.31.0",
        live="envoyproxy/envoy:v1.31.1",
        cause="manual-edit",
        writer=Writer("kubectl-edit", "Update", None, "2026-11-03T08:30:00Z"),
        fix=Fix("revert", alternative=ALTERNATIVES["manual-edit"]),
    )
    token = finding(
        "/data/token",
        kind="Secret",
        group="",
        name="web-token",
        desired=MASK,
        live=MASK,
        cause="nondeterministic-render",
        writer=Writer("argocd-controller", "Update", None, "2026-11-03T09:00:00Z"),
        fix=Fix("change-source", alternative=ALTERNATIVES["nondeterministic-render"]),
        evidence=["--desired and --desired-again differ at this field"],
    )
    return Report(
        app="shop",
        findings=[hpa, cpu, image, token],
        notes=["Service shop/web has no managedFields: ownership is unknown."],
        resources_compared=4,
        warnings=[
            WRITE_LOOP.format(
                writers="HorizontalPodAutoscaler shop/web",
                fields=plural(FIELDS, 1),
                attempts=plural(SELF_HEAL_ATTEMPTS, 5),
                syncs=plural(SYNCS, 4),
            )
        ],
        application={
            "name": "shop",
            "namespace": "argocd",
            "project": "default",
            "revision": SHA,
            "automated": True,
            "self_heal": True,
            "respect_ignore_differences": False,
            "ignore_differences": [],
            "syncs_same_revision_last_hour": 4,
        },
    )


def hand_alert(**kw: Any) -> Alert:
    args: dict[str, Any] = {
        "app": "shop",
        "app_namespace": "argocd",
        "project": "default",
        "revision": SHA,
        "unsettled_syncs": 3,
        "argocd_url": "https://argocd.example.com/",
    }
    args.update(kw)
    return Alert(**args)


def rendered(report: Report, alert: Alert, buttons: Buttons | None = BUTTONS) -> dict[str, Any]:
    parent = parent_message(report, alert, buttons)
    thread = thread_messages(report, alert)
    diff, file = diff_message(report, alert)
    for m in [parent, *thread, diff]:
        assert_valid(m)
    return {
        "parent": parent.to_dict(),
        "thread": [m.to_dict() for m in thread],
        "diff": {"message": diff.to_dict(), "file": file},
    }


# --- golden files: hand-built reports ------------------------------------------------------------------


def test_golden_hand_report() -> None:
    check_golden("hand-report", rendered(hand_report(), hand_alert()))


def test_golden_parent_synced_and_failed() -> None:
    report = hand_report()
    synced = parent_message(report, hand_alert(status="synced"), BUTTONS)
    failed = parent_message(Report(app="shop"), hand_alert(status="failed"), BUTTONS)
    for m in (synced, failed):
        assert_valid(m)
    assert synced.blocks[0]["text"]["text"].startswith(":large_green_circle:")
    assert "is Synced again" in synced.blocks[0]["text"]["text"]
    assert not action_blocks([synced.to_dict()])
    [actions] = action_blocks([failed.to_dict()])
    assert [e["action_id"] for e in actions["elements"]] == ["mute", "recheck"]
    check_golden("hand-synced", synced.to_dict())
    check_golden("hand-failed", failed.to_dict())


def test_golden_clean_report() -> None:
    report = Report(app="shop", resources_compared=3, notes=["No --app given."])
    check_golden("hand-clean", rendered(report, hand_alert(argocd_url=None)))


def test_golden_small_messages() -> None:
    messages = {
        "help": help_message(),
        "analysis-failed": analysis_failed_message("shop", "Argo CD answered 503 Service Unavailable 3 times"),
        "error": error_message("`/argo mute` needs a duration such as 24h."),
    }
    for name, m in messages.items():
        assert_valid(m)
        check_golden(name, m.to_dict())
    help_text = json.dumps(messages["help"].to_dict())
    for command in ("/argo why", "/argo diff", "/argo mute", "/argo help"):
        assert command in help_text


def summarized(items: list[tuple[Alert, Report | None]]) -> list[DigestEntry]:
    """What the digest is given of each app: its summary, as the runtime keeps it."""
    return [(alert, digest_summary(alert, report)) for alert, report in items]


def test_golden_digest() -> None:
    report = hand_report()
    items: list[tuple[Alert, Report | None]] = []
    for i in range(12):
        status = "failed" if i == 3 else "synced" if i == 7 else "drift"
        items.append((hand_alert(app=f"shop-{i:02d}", status=status), None if i == 5 else report))
    buttons = {f"shop-{i:02d}": Buttons(f"d{i}", f"m{i}", f"r{i}") for i in range(12) if i != 11}
    message = digest_message(summarized(items), buttons)
    assert_valid(message)
    sections = [b for b in message.blocks if b["type"] == "section"][1:]
    assert len(sections) == 12  # everything fits: no "more"
    details = [b["accessory"] for b in sections if "accessory" in b]
    assert [d["value"] for d in details] == [f"r{i}" for i in range(11)]
    assert {d["action_id"] for d in details} == {"recheck"}
    assert "top cause: rewritten by an autoscaler" in sections[0]["text"]["text"]
    check_golden("hand-digest", message.to_dict())


# --- golden files: the real analysis on casebook scenarios ---------------------------------------------


def case_report(name: str, *, again: bool = True) -> tuple[Report, dict[str, Any]]:
    from bot.analysis import explain, load_documents

    folder = CASES / name
    spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))

    def load(file: str) -> list[dict[str, Any]]:
        path = folder / file
        return load_documents(path.read_text(encoding="utf-8"), str(path)) if path.exists() else []

    desired_again = load("desired-again.yaml") if again else []
    report = explain(
        load("desired.yaml"),
        load("live.yaml"),
        load("context.yaml"),
        app=spec.get("app"),
        desired_again=desired_again or None,
    )
    return report, spec


GOLDEN_CASES = [
    "hpa-replicas-ssa",
    "multi-resource-three-causes",
    "registry-mirror-webhook-image",
    "helm-randalphanum-secret",
    "shared-namespace-two-apps",
    "sts-volumeclaimtemplates-defaults",
    "cainjector-cabundle-vwc",
    "clean-no-findings",
]


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_golden_casebook(case: str) -> None:
    report, spec = case_report(case)
    alert = hand_alert(app=spec.get("app") or report.app or case, unsettled_syncs=2)
    check_golden(f"case-{case}", rendered(report, alert))


def test_golden_casebook_digest() -> None:
    items: list[tuple[Alert, Report | None]] = []
    for folder in sorted(CASES.iterdir()):
        report, spec = case_report(folder.name)
        items.append((hand_alert(app=spec.get("app") or folder.name), report))
    buttons = {a.app: Buttons(f"d:{a.app}", f"m:{a.app}", f"r:{a.app}") for a, _ in items}
    message = digest_message(summarized(items), buttons)
    assert_valid(message)
    check_golden("case-digest", message.to_dict())


# --- limits ---------------------------------------------------------------------------------------------


def big_report(count: int = 200) -> Report:
    """Findings with long pointers, long and nested values, long explanations, many evidence lines and rules."""
    findings = []
    for i in range(count):
        pointer = f"/metadata/annotations/{'very-long-annotation-' * (i % 15)}key-{i}"
        desired: Any = {"items": [{"name": f"n{j}", "value": "x" * 40} for j in range(i % 50)]}
        live: Any = "y" * (i * 60)
        rule = {
            "group": "apps",
            "kind": "Deployment",
            "name": f"web-{i}",
            "namespace": "shop",
            "jqPathExpressions": [
                f'.spec.template.spec.containers[] | select(.name == "c{j}") | .image' for j in range(i % 40)
            ],
        }
        findings.append(
            finding(
                pointer,
                name=f"web-{i:03d}",
                desired=desired,
                live=live,
                cause=["autoscaler", "operator", "manual-edit", "normalization"][i % 4],
                writer=Writer(
                    f"controller-{i}",
                    "Update",
                    "scale" if i % 2 else None,
                    "2026-11-02T10:00:00Z",
                    ObjectRef("HorizontalPodAutoscaler", f"web-{i}", "shop"),
                    ("a", "b"),
                ),
                explanation="The reason, at length. " * (i * 5),
                fix=Fix(
                    "ignore",
                    rule if i % 4 != 2 else None,
                    ["RespectIgnoreDifferences=true"],
                    "Do the better thing. " * (i % 30),
                    [f"/spec/p{j}" for j in range(i % 12)],
                    i % 3 != 0,
                    fallback=i % 4 == 3,
                ),
                evidence=[f"evidence line {j}: " + "z" * 50 for j in range(i % 60)],
            )
        )
    return Report(
        app="shop",
        findings=findings,
        notes=[f"note {i}: " + "n" * (i * 10) for i in range(45)],
        resources_compared=count,
        warnings=["Write loop: " + "w" * 5000],
    )


def test_two_hundred_findings_stay_within_slack_limits() -> None:
    report = big_report()
    alert = hand_alert()
    parent = parent_message(report, alert, BUTTONS)
    thread = thread_messages(report, alert)
    diff, file = diff_message(report, alert)
    digest = digest_message(summarized([(hand_alert(app=f"a{i}"), report) for i in range(80)]), None)
    for m in [parent, *thread, diff, digest]:
        assert_valid(m)
    # every finding is in the thread exactly once, in order, and the thread ends with the notes
    numbered = [
        re.match(r"\*(\d+) of 200\*", t)
        for m in thread
        for t in (s["text"]["text"] for s in m.blocks if s["type"] == "section")
    ]
    assert [int(n.group(1)) for n in numbered if n] == list(range(1, 201))
    notes = [i for i, m in enumerate(thread) if m.text == wording.SLACK_TEXT_NOTES.format(app="shop")]
    assert notes and notes == list(range(notes[0], len(thread)))
    assert not any(re.match(r"\*\d+ of 200\*", t) for t in all_texts(thread[notes[0] :]))
    # bounded: at most two cut sections (plus a divider) per finding, then the closing message(s)
    total = sum(len(json.dumps(m.blocks, ensure_ascii=False)) for m in thread)
    assert total <= 200 * (2 * (MAX_SECTION + 200) + 50) + 2 * MESSAGE_BUDGET
    assert len(thread) <= 200 + 5
    # cut sections say so; nothing is cut mid-code-block
    cut = wording.SLACK_CUT.format(app="shop")
    assert any(cut in t for t in all_texts(thread))
    # the parent shows the first verdicts and points to the thread for the rest
    assert "more in the thread" in json.dumps(parent.blocks)
    assert parent.blocks[1]["text"]["text"].startswith(":rotating_light: Write loop")
    # the diff does not fit: a short message and the whole text as a file
    assert file is not None and len(diff.blocks) == 1
    assert all(f.pointer in file for f in report.findings)
    # the digest groups what does not fit, and says where the full list is
    grouped = json.dumps(digest.blocks, ensure_ascii=False)
    assert "80 apps went OutOfSync" in digest.text and "*80* · rewritten by an autoscaler" in grouped
    assert "full list of 80 apps" in grouped


def test_worst_case_text_still_fits() -> None:
    """Text that doubles in JSON (quotes, newlines), control characters, and the longest button values allowed."""
    nasty = '"\\\n\x01' * 3000
    f = finding(
        nasty[:400],
        desired=nasty,
        live=nasty,
        explanation=nasty,
        evidence=[nasty] * 5,
        writer=Writer(nasty, nasty, nasty, nasty, ObjectRef(nasty, nasty, nasty), (nasty,)),
        fix=Fix("ignore", {"kind": nasty, "jsonPointers": [nasty]}, [nasty], nasty, [nasty] * 20),
    )
    report = Report(app=nasty[:50], findings=[f] * 30, notes=[nasty] * 30, warnings=[nasty] * 3)
    alert = hand_alert(app=nasty[:200], project=nasty, revision=nasty)
    wide = Buttons("d" * 2000, "m" * 2000, "r" * 2000)
    for status in ("drift", "synced", "failed"):
        assert_valid(parent_message(report, hand_alert(app="shop", project=nasty, status=status), wide))
    messages = [
        parent_message(report, alert, wide),
        *thread_messages(report, alert),
        diff_message(report, alert)[0],
        digest_message(summarized([(alert, report)] * 60), {alert.app: wide}),
        analysis_failed_message(nasty, nasty),
        error_message(nasty),
    ]
    for m in messages:
        assert_valid(m)
        assert "\x01" not in json.loads(json.dumps(m.to_dict()))["text"]


def test_long_text_is_cut_with_a_note() -> None:
    f = finding(explanation="word " * 2000, evidence=["e" * 500] * 20)
    [first] = thread_messages(Report(app="shop", findings=[f], resources_compared=1), hand_alert())
    section = first.blocks[1]["text"]["text"]
    assert len(section) <= MAX_SECTION
    assert section.endswith(wording.SLACK_CUT.format(app="shop"))


def test_a_digest_too_long_for_a_line_per_app_groups_them_by_cause_and_writer_and_lists_every_app() -> None:
    """Issue 10, point 7: hundreds of apps were "and 960 more"; every app must be findable."""
    hpa = hand_report()
    manual = Report(app="x", findings=[finding(cause="manual-edit", writer=Writer("kubectl-edit", "Update"))])
    items: list[tuple[Alert, Report | None]] = []
    for i in range(960):
        alert = hand_alert(app=f"app-{i:03d}", status="failed" if i % 100 == 7 else "drift")
        items.append((alert, manual if i % 3 == 0 else hpa))
    buttons = {a.app: Buttons("d", "m", f"recheck-{a.app}") for a, _ in items}
    entries = summarized(items)
    reasons = {a.app: "Argo CD at https://argocd.example.com failed (503: unavailable)" for a, _ in items}
    message = digest_message(entries, buttons, reasons=reasons)
    assert_valid(message)
    text = json.dumps(message.blocks, ensure_ascii=False)
    assert "and 9" not in message.text and "more apps" not in text
    counts = [int(n) for n in re.findall(r"\*(\d+)\* · ", text)]
    assert sum(counts) == 960 and len(counts) == 3  # manual edits, autoscaler, failed
    assert "rewritten by an autoscaler · kube-controller-manager" in text and "changed by hand · kubectl-edit" in text
    assert "goes into the thread when the burst is over" in text
    attached = digest_message(entries, None, reasons=reasons, listed="attached")
    assert "is attached in the thread" in json.dumps(attached.blocks)
    rows = list(csv.reader(io.StringIO(digest_list(entries, reasons))))
    assert rows[0][0] == "app" and len(rows) == 961 and {r[0] for r in rows[1:]} == {a.app for a, _ in items}
    failed = next(r for r in rows if r[0] == "app-007")
    assert failed[2] == "the analysis failed" and "503" in failed[6]
    assert "accessory" not in json.dumps(digest_message(entries[:11], None).blocks)
    few = digest_message(entries[:11], buttons)
    assert len([b for b in few.blocks if "accessory" in b]) == 11  # a line (and a button) per app when they fit


def test_diff_fits_in_a_code_block() -> None:
    report = hand_report()
    message, file = diff_message(report, hand_alert())
    assert file is None
    code = message.blocks[1]["text"]["text"]
    assert code.startswith("```\n") and code.endswith("\n```")
    assert "-2\n+7" in code and "@@ /spec/replicas of Deployment shop/web @@" in code
    small, full = diff_message(report, hand_alert(), limit=200)
    assert full is not None and "@@ /data/token of Secret shop/web-token @@" in full
    assert_valid(small)


# --- buttons --------------------------------------------------------------------------------------------


def test_parent_buttons_are_the_contract() -> None:
    message = parent_message(hand_report(), hand_alert(), BUTTONS)
    [actions] = action_blocks([message.to_dict()])
    assert actions["block_id"] == ACTIONS_BLOCK_ID
    assert [(e["action_id"], e["value"]) for e in actions["elements"]] == [
        ("show_diff", BUTTONS.show_diff),
        ("mute", BUTTONS.mute),
        ("recheck", BUTTONS.recheck),
    ]
    mute = actions["elements"][1]
    assert set(mute["confirm"]) == {"title", "text", "confirm", "deny"}
    assert not action_blocks([parent_message(hand_report(), hand_alert(), None).to_dict()])
    with pytest.raises(ValueError, match="2000"):
        parent_message(hand_report(), hand_alert(), Buttons("x" * 2001, "m", "r"))


def test_parent_verdict_line_and_link() -> None:
    message = parent_message(hand_report(), hand_alert(), None)
    body = json.dumps(message.blocks, ensure_ascii=False)
    assert (
        "`/spec/replicas` of Deployment `shop/web` is rewritten by HorizontalPodAutoscaler `shop/web` "
        "(kube-controller-manager, via the scale subresource)"
    ) in body
    assert "<https://argocd.example.com/applications/argocd/shop|shop>" in body
    assert "revision `4f1c2b9`" in body and "3 syncs did not settle it" in body
    # warnings come before the verdicts
    assert body.index("Write loop") < body.index("/spec/replicas")


# --- safety: escaping and Secrets ----------------------------------------------------------------------

HOSTILE = "<!channel> & <@U0123> <https://evil.example|click> ```"


def test_user_data_is_escaped() -> None:
    f = finding(
        "/metadata/annotations/a<b>&c",
        name="web<!here>",
        desired=HOSTILE,
        live={"k": HOSTILE},
        cause="manual-edit",
        writer=Writer("kubectl<!everyone>", "Update", None, "<time>", ObjectRef("K<i>nd", "n&m", "ns")),
        explanation=HOSTILE,
        fix=Fix("ignore", {"kind": "Deployment", "jqPathExpressions": [HOSTILE]}, [HOSTILE], HOSTILE, [HOSTILE]),
        evidence=[HOSTILE],
    )
    report = Report(app="sh<op>", findings=[f], notes=[HOSTILE], warnings=[HOSTILE], resources_compared=1)
    alert = hand_alert(app="sh<op>&", project=HOSTILE, revision=HOSTILE)
    messages = [
        parent_message(report, alert, BUTTONS),
        *thread_messages(report, alert),
        diff_message(report, alert)[0],
        digest_message(summarized([(alert, report)]), None),
        analysis_failed_message(HOSTILE, HOSTILE),
        error_message(HOSTILE),
    ]
    for m in messages:
        assert_valid(m)
    for text in all_texts(messages):
        for link in re.findall(r"<([^>]*)>", text):
            assert link.startswith("https://argocd.example.com/applications/argocd/sh%3Cop%3E%26|"), link
        assert not re.search(r"&(?!amp;|lt;|gt;)", text), text
        assert "<!" not in text and "<@" not in text and "<https://evil" not in text


def test_secret_values_never_reach_slack() -> None:
    report, spec = case_report("helm-randalphanum-secret")  # with --desired-again
    assert report.findings and {f.cause for f in report.findings} == {"nondeterministic-render"}
    alert = hand_alert(app=spec["app"])
    _, file = diff_message(report, alert)
    docs = [
        rendered(report, alert),
        digest_message(summarized([(alert, report)]), {alert.app: BUTTONS}).to_dict(),
        {"small-diff": diff_message(report, alert, limit=10)[1], "file": file},
        parent_message(report, hand_alert(app=spec["app"], status="synced"), None).to_dict(),
    ]
    dump = json.dumps(docs, ensure_ascii=False)
    for forbidden in spec["forbid_strings"]:
        assert forbidden not in dump
    assert "&lt;redacted&gt;" in dump  # the mask, escaped for mrkdwn


# --- the command line -----------------------------------------------------------------------------------


def test_cli_format_slack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = deployment()
    live = live_of(
        d,
        entry(
            "kubectl-edit",
            {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"app"}': {"f:image": {}}}}}}},
        ),
    )
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/web:1.0.1"
    (tmp_path / "desired.yaml").write_text(yaml.safe_dump(d))
    (tmp_path / "live.yaml").write_text(yaml.safe_dump(live))
    code = main(
        [
            "explain",
            "--desired",
            str(tmp_path / "desired.yaml"),
            "--live",
            str(tmp_path / "live.yaml"),
            "--app",
            "shop",
            "--format",
            "slack",
        ]
    )
    assert code == 1
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"parent", "thread"}
    assert doc["parent"]["text"] and doc["parent"]["blocks"]
    assert len(doc["thread"]) == 1 and all(m["text"] and m["blocks"] for m in doc["thread"])
    assert not action_blocks([doc["parent"], *doc["thread"]])
    assert "kubectl-edit" in json.dumps(doc)
    for m in [doc["parent"], *doc["thread"]]:
        assert_valid(Message(text=m["text"], blocks=m["blocks"]))
    assert build_parser().parse_args(["why", "shop", "--format", "slack"]).format == "slack"


# --- the "Full diff" link to the drift page -----------------------------------------------------------------------


def test_golden_thread_with_the_full_diff_link() -> None:
    report, spec = case_report("hpa-replicas-ssa")
    alert = hand_alert(app=spec.get("app") or report.app)
    url = "https://argo-why.example.com/view/AbCdEfGhIjKlMnOp.1800000000.sig"
    thread = thread_messages(report, alert, view_url=url, view_hours=24)
    for m in thread:
        assert_valid(m)
    first = json.dumps(thread[0].to_dict())
    assert f"<{url}|Full diff>" in first and "valid 24 h" in first
    assert all("/view/" not in json.dumps(m.to_dict()) for m in thread[1:])  # said once, under the title
    check_golden("case-hpa-replicas-ssa-full-diff", [m.to_dict() for m in thread])


def test_the_full_diff_link_cannot_break_out_of_its_mrkdwn_link() -> None:
    report, _ = case_report("hpa-replicas-ssa")
    thread = thread_messages(report, hand_alert(), view_url="https://x.example/view/a|<!here>&b", view_hours=1)
    text = json.dumps(thread[0].to_dict())
    assert "<!here>" not in text and "a%7C&lt;!here&gt;&amp;b|Full diff>" in text
