"""What `argo-why demo` prints of the Slack messages (issue 28, item 15): a continued line is indented under its
first line (no fresh "· " bullet), a link's label is never split over two lines, and the "Show diff" reply shows a
long opaque value (the cert-manager caBundle) by its length and hash, as the thread, the text report and the page do.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import yaml

from bot.demo import EXAMPLES
from bot.demo.runner import run
from bot.demo.transcript import render_message


async def test_the_demo_transcript_keeps_links_whole_bullets_single_and_the_cabundle_summarised(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    assert await run(EXAMPLES, out, pages=tmp_path) == 0
    text = out.getvalue()
    lines = text.splitlines()
    # every <url|label> link on one line, its label whole
    assert "|Full diff>" in text
    assert not [line for line in lines if re.search(r"<https?://[^\s>]*\|[^>]*$", line)], "a link label was split"
    # a wrapped context line continues indented: the old printer began its second line with a bullet of its own
    assert not [line for line in lines if re.match(r"^┃\s*· (diff>|option\))", line)], "a continued line got a bullet"
    # the Show diff reply: the caBundle by its length and hash, never its 1,564 characters
    live = yaml.safe_load((EXAMPLES / "cert-manager-cabundle" / "live.yaml").read_text())["items"]
    bundle = next(w["clientConfig"]["caBundle"] for o in live for w in o.get("webhooks", [])
                  if len(w["clientConfig"].get("caBundle", "")) > 120)  # fmt: skip
    assert bundle[:40] not in text
    diff = text[text.index("Git (-) against live (+)") :]
    assert re.search(r"\+\[1,564 characters, sha256 [0-9a-f]{12}\]", diff[:1500]), diff[:1500]


def test_a_wrapped_context_line_is_indented_not_bulleted_again() -> None:
    words = " ".join(["Argo CD compares tenant-guard with its legacy three-way diff"] * 3)
    lines = render_message({"blocks": [{"type": "context", "elements": [{"type": "mrkdwn", "text": words}]}]},
                           width=60).splitlines()  # fmt: skip
    assert len(lines) > 1 and lines[0].startswith("· ")
    assert all(line.startswith("  ") and not line.startswith("  · ") for line in lines[1:]), lines


def test_a_link_label_is_never_split() -> None:
    link = "<http://127.0.0.1:8080/view/" + "x" * 70 + "|Full diff>"
    text = f"{link}: Git beside the live objects, every line with its writer (link valid 24 h)"
    lines = render_message({"blocks": [{"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}]},
                           width=96).splitlines()  # fmt: skip
    assert any(line.endswith("|Full diff>:") for line in lines), lines
    assert not any(line.rstrip().endswith("|Full") for line in lines), lines
