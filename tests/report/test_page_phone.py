"""The drift page on a phone (390 px), in Debian's chromium: nothing cut off (issue 28, item 16).

Every visible block whose content is wider than its box must be a box that scrolls (a long rule), and such a box
shows that it scrolls; anything else (a long path in an explanation, a heading, a card) wraps. Checked on every
demo report and on a scenario whose explanation and rule hold long unbroken paths, with every fold open.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.demo import EXAMPLES
from bot.report.html import render_html
from tests.report.test_browser import EXAMPLE_NAMES, PHONE, browser_context, open_page, page_file
from tests.report.test_report_html import folder_report

EXTRA = Path(__file__).resolve().parents[1] / "scenarios" / "extra"
LONG = ["spot-webhook-appends-toleration"]

# Every visible block-level element whose content is wider than its box, unless the box scrolls sideways; and every
# box that does scroll, unless it says so (the hint of its .rule wrapper).
CLIPPED = """() => {
  const cut = [], silent = [];
  for (const el of document.querySelectorAll("body *")) {
    if (!el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.display === "inline" || style.display === "contents") continue;
    if (el.scrollWidth <= el.clientWidth + 1) continue;
    const what = `${el.tagName.toLowerCase()}.${el.className}: ${el.scrollWidth} > ${el.clientWidth} px: `
      + el.textContent.trim().slice(0, 80);
    if (style.overflowX !== "auto" && style.overflowX !== "scroll") { cut.push(what); continue; }
    const box = el.closest(".rule");
    const hint = box ? getComputedStyle(box, "::after").content : "none";
    if (!box || !box.hasAttribute("data-scrolls") || !/scroll/.test(hint)) silent.push(what);
  }
  return {cut, silent};
}"""


@pytest.mark.parametrize(("folder"), [EXAMPLES / n for n in EXAMPLE_NAMES] + [EXTRA / n for n in LONG],
                         ids=lambda p: p.name)  # fmt: skip
async def test_nothing_is_cut_off_at_phone_width(tmp_path: Path, folder: Path) -> None:
    url = page_file(tmp_path, folder.name, render_html(folder_report(folder)))
    async with browser_context(viewport=PHONE) as (context, watch):
        page = await open_page(context, watch, url)
        await page.get_by_role("button", name="Unfold all", exact=True).click()
        found = await page.evaluate(CLIPPED)
        assert found["cut"] == [], "\n".join(found["cut"])
        assert found["silent"] == [], "\n".join(found["silent"])
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        if folder.name in LONG:  # its rule's jq expression is wider than a phone: it scrolls, and says so
            hint = page.locator(".rule[data-scrolls]").first
            assert await hint.is_visible()
            await page.screenshot(path=str(tmp_path / "phone.png"), full_page=True)
        watch.clean()
