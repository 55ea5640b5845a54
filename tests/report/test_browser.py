"""The drift page in a real browser: Debian's chromium driven by Playwright, from a file and served by a running bot.

Every page is opened with every request watched: a request to anything but the page's own origin (the bot on
127.0.0.1, or the file) is aborted and fails the test, and so does any console error (a Content-Security-Policy
violation is one: the inline style and script must match their hashes). Screenshots of the demo's reports, light
and dark, desktop and phone, are written to ``screenshots/`` (not committed) for a reviewer to look at.

Chromium comes from Debian (``scripts/ensure-tools.sh chromium`` in ``make test``); Playwright drives it with
``executable_path``: nothing is downloaded (``playwright install`` is never run).
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import BrowserContext, Page, Route, async_playwright
from pydantic import SecretStr

from bot.analysis import explain
from bot.config import Settings, ViewSettings
from bot.demo import EXAMPLES
from bot.intake.jobs import webhook_body_of
from bot.model import Alert, Report
from bot.report.html import render_html
from bot.report.page_model import Line, build_page
from bot.store import RedisStore
from bot.web import viewlinks
from bot.web.view import save_page
from tests.builders import deployment, entry, live_of
from tests.fakes.argocd import FakeArgoCD, app_from_case
from tests.fakes.kube import FakeKubernetes, context_from_case
from tests.fakes.slack import FakeSlack
from tests.harness.redis_server import free_port
from tests.harness.service_kit import CHANNEL, ROOT, BotProcess, service_settings, until
from tests.report.test_report_html import MARKUP, folder_report

pytestmark = pytest.mark.browser  # Debian's chromium: the cost tests/conftest.py marks by module

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
SCREENSHOTS = ROOT / "screenshots"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "case.json").exists())
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 1000}


@dataclass
class Watch:
    """What the pages of one browser context did: every request, the ones aborted, console errors, dialogs."""

    local: tuple[str, ...]
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def is_local(self, url: str) -> bool:
        return url.startswith(self.local) or url.startswith("data:")

    def clean(self) -> None:
        assert not self.blocked, f"requests leaving the machine: {self.blocked}"
        assert all(self.is_local(u) for u in self.requests), self.requests
        assert not self.errors, f"console errors: {self.errors}"
        assert not self.dialogs, f"a script ran: {self.dialogs}"


@contextlib.asynccontextmanager
async def browser_context(*local: str, **options: Any) -> AsyncIterator[tuple[BrowserContext, Watch]]:
    watch = Watch(("file://", *local))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            context = await browser.new_context(**options)

            async def route(r: Route) -> None:
                if watch.is_local(r.request.url):
                    await r.continue_()
                else:
                    watch.blocked.append(r.request.url)
                    await r.abort()

            await context.route("**/*", route)
            context.on("request", lambda req: watch.requests.append(req.url))
            context.on("console", lambda m: watch.errors.append(m.text) if m.type == "error" else None)
            context.on("weberror", lambda e: watch.errors.append(str(e.error)))
            yield context, watch
        finally:
            await browser.close()


async def open_page(context: BrowserContext, watch: Watch, url: str) -> Page:
    page = await context.new_page()

    async def dialog(d: Any) -> None:
        watch.dialogs.append(d.message)
        await d.dismiss()

    page.on("dialog", dialog)
    response = await page.goto(url, wait_until="load")
    assert response is None or response.status == 200  # a file has no response
    return page


async def screenshots(url: str, name: str, *local: str) -> None:
    """Light and dark, desktop and phone: the page must read well in all four."""
    SCREENSHOTS.mkdir(exist_ok=True)
    for scheme in ("light", "dark"):
        for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            async with browser_context(*local, color_scheme=scheme, viewport=viewport) as (context, watch):
                page = await open_page(context, watch, url)
                await page.screenshot(path=str(SCREENSHOTS / f"{name}-{scheme}-{size}.png"), full_page=size == "phone")
                if size == "phone":  # nothing wider than the screen: no sideways scrolling to read a line
                    width = await page.evaluate("document.documentElement.scrollWidth")
                    assert width <= viewport["width"], f"{name}: {width} px wide on a {viewport['width']} px phone"
                watch.clean()


async def differing_lines_and_writers_are_visible(page: Page, writers: set[str]) -> None:
    diff = page.locator(".row.diff")
    assert await diff.count() >= 1
    shown = ""
    for i in range(await diff.count()):
        row = diff.nth(i)
        if await row.is_visible():
            shown += await row.inner_text() + "\n"
    assert shown, "no differing line is visible without unfolding"
    assert any(w in shown for w in writers), (writers, shown)
    assert await page.locator("aside.card").first.is_visible()


def diff_writers(report: Report) -> set[str]:
    """The managers the page names beside its differing lines (the owner of the field, or of its nearest owned
    ancestor: a webhook's change stays with the requester)."""
    lines = [b for o in build_page(report).objects for b in o.blocks if isinstance(b, Line) and b.state == "diff"]
    # a line whose finding says nobody owns the field says "no owner", never an ancestor's writer (issue 28, item 17)
    return {w.manager for line in lines for w in line.owners} | ({"no owner"} if any(ln.unowned for ln in lines)
                                                                 else set())  # fmt: skip


def page_file(tmp_path: Path, name: str, html: str) -> str:
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    return path.as_uri()


# --- the file ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
async def test_the_file_of_each_demo_report_loads_alone_and_shows_differences_and_writers(
    tmp_path: Path, name: str
) -> None:
    report = folder_report(EXAMPLES / name)
    url = page_file(tmp_path, name, render_html(report))
    async with browser_context() as (context, watch):
        page = await open_page(context, watch, url)
        await differing_lines_and_writers_are_visible(page, diff_writers(report))
        assert await page.locator("h1").inner_text() == f"Why {report.app} is OutOfSync"
        watch.clean()
    await screenshots(url, f"file-{name}")


async def test_folds_open_and_close_and_long_values_expand(tmp_path: Path) -> None:
    url = page_file(tmp_path, "cabundle", render_html(folder_report(EXAMPLES / "cert-manager-cabundle")))
    async with browser_context() as (context, watch):
        page = await open_page(context, watch, url)
        fold = page.locator("details.fold").first
        inside = fold.locator(".row").first
        assert not await inside.is_visible()
        await fold.locator(":scope > summary").click()
        assert await inside.is_visible()
        await page.get_by_role("button", name="Fold all", exact=True).click()
        assert not await inside.is_visible()
        await page.get_by_role("button", name="Unfold all", exact=True).click()
        assert await page.locator("details.fold:not([open])").count() == 0
        long = page.locator("details.long").first
        summary = await long.locator(":scope > summary").inner_text()
        assert re.fullmatch(r"\d+ characters, sha256 [0-9a-f]{12}", summary), summary
        assert not await long.locator(".full").is_visible()
        await long.locator(":scope > summary").click()
        assert await long.locator(".full").is_visible()
        watch.clean()


async def test_the_copy_button_copies_the_rule(tmp_path: Path) -> None:
    report = folder_report(EXAMPLES / "checkout-hpa-and-hotfix")
    url = page_file(tmp_path, "checkout", render_html(report))
    async with browser_context() as (context, watch):
        page = await open_page(context, watch, url)
        button = page.locator("#f1 button[data-copy]")
        await button.click()
        await until(lambda: _text_is(button, "Copied"), 5)
        pasted = await page.evaluate("""() => { const t = document.createElement('textarea'); document.body.append(t);
                                        t.focus(); document.execCommand('paste'); return t.value; }""")
        rule = await page.locator("#rule-1").inner_text()
        assert "ignoreDifferences:" in rule and "/spec/replicas" in rule
        assert pasted in ("", rule)  # headless chromium may refuse a paste from script; the copy itself succeeded
        watch.clean()


async def _text_is(locator: Any, text: str) -> bool:
    return bool(await locator.inner_text() == text)


async def test_markup_in_a_value_a_manager_or_the_app_name_is_shown_as_text(tmp_path: Path) -> None:
    desired = deployment("web", replicas=2)
    desired["metadata"]["annotations"] = {"note": MARKUP}
    live = live_of(desired, entry(MARKUP, {"f:spec": {"f:replicas": {}}}))
    live["spec"]["replicas"] = 5
    live["metadata"]["annotations"] = {"note": MARKUP + "!"}
    url = page_file(tmp_path, "markup", render_html(explain([desired], [live], app=MARKUP)))
    async with browser_context() as (context, watch):
        page = await open_page(context, watch, url)
        await markup_is_text(page)
        watch.clean()


async def markup_is_text(page: Page) -> None:
    assert await page.locator("img").count() == 0 and await page.locator("script").count() == 1
    assert MARKUP in await page.locator("h1").inner_text()  # the app name
    assert MARKUP in await page.locator('.row.diff[data-pointer="/spec/replicas"] .who').inner_text()  # the manager
    await page.get_by_role("button", name="Unfold all", exact=True).click()
    body = await page.locator("main").inner_text()
    assert f"note: {MARKUP}" in body  # the value


# --- served by the bot -----------------------------------------------------------------------------------------------


@pytest.fixture
def view_settings(slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes, redis_url: str, tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> tuple[Settings, int]:  # fmt: skip
    settings = service_settings(slack, argocd, kube, redis_url, tmp_path, monkeypatch)
    port = free_port()
    settings.view = ViewSettings(link_key=SecretStr(secrets.token_hex(32)), base_url=f"http://127.0.0.1:{port}",
                                 link_ttl_s=3600)  # fmt: skip
    return settings, port


def full_diff_link(slack: FakeSlack, app: str) -> str:
    parent = next(m for m in slack.messages(CHANNEL) if app in m["text"])
    first = json.dumps(slack.thread(CHANNEL, parent["ts"])[0]["blocks"])
    match = re.search(r"<(http://127\.0\.0\.1:\d+/view/[^|>]+)\|Full diff>", first)
    assert match, first
    return match.group(1)


async def test_the_bot_serves_the_page_of_each_thread_behind_a_signed_link(
    view_settings: tuple[Settings, int], slack: FakeSlack, argocd: FakeArgoCD, kube: FakeKubernetes
) -> None:
    settings, port = view_settings
    apps = []
    for name in EXAMPLE_NAMES:
        app, resources, renders = app_from_case(EXAMPLES / name)
        argocd.add_app(app, resources, renders)
        kube.add(*context_from_case(EXAMPLES / name))
        apps.append(app)
    process = BotProcess(settings, serve=True, port=port)  # the real `argo-why serve`
    try:
        await process.ready()
        token = settings.runtime.webhook_token.get_secret_value() if settings.runtime.webhook_token else ""
        async with httpx.AsyncClient(base_url=process.url, timeout=10) as http:
            for app in apps:
                r = await http.post("/webhooks/argocd", json=webhook_body_of(app, "https://argocd.example.com"),
                                    headers={"Authorization": f"Bearer {token}"})  # fmt: skip
                assert r.status_code == 202
            await until(lambda: all(_threaded(slack, a["metadata"]["name"]) for a in apps), 60)
            links = {a["metadata"]["name"]: full_diff_link(slack, a["metadata"]["name"]) for a in apps}
            for link in links.values():
                r = await http.get(link)
                assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
                assert_strict_headers(r)
            await refused_links(http, settings, next(iter(links.values())))

        for name, link in links.items():
            async with browser_context(process.url + "/") as (context, watch):
                await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=process.url)
                page = await open_page(context, watch, link)
                writers = {m for m in re.findall(r'<span class="m">([^<]+)</span>', await page.content())}
                writers.add("no owner")  # a field no entry owns says so (a webhook's change: istio's annotation)
                await differing_lines_and_writers_are_visible(page, writers)
                copy = page.locator("aside.card button[data-copy]").first
                if await copy.count():
                    await copy.click()
                    await until(lambda b=copy: _text_is(b, "Copied"), 5)  # type: ignore[misc]
                    rule_id = await copy.get_attribute("data-copy")
                    copied = await page.evaluate("navigator.clipboard.readText()")
                    assert copied == await page.locator(f"#{rule_id}").inner_text() and "ignoreDifferences" in copied
                forged = await page.goto(link.rsplit("/", 1)[0] + "/" + _forged(link), wait_until="load")
                assert forged is not None and forged.status == 404 and "Why" not in await page.content()
                watch.errors = [e for e in watch.errors if "404" not in e]  # the refusal itself is logged
                watch.clean()
            await screenshots(link, f"served-{name}", process.url + "/")

        # markup through the bot's own store and link: shown as text there too
        await markup_served(settings, process)
    finally:
        process.close()


def _threaded(slack: FakeSlack, app: str) -> bool:
    parents = [m for m in slack.messages(CHANNEL) if app in m["text"]]
    return bool(parents) and bool(slack.thread(CHANNEL, parents[0]["ts"]))


def _forged(link: str) -> str:
    ident, expires, _ = link.rsplit("/", 1)[1].split(".")
    return viewlinks.sign(b"not the key" * 4, f"view:{ident}", int(expires))


def assert_strict_headers(r: httpx.Response) -> None:
    policy = r.headers["content-security-policy"]
    assert policy.startswith("default-src 'none';") and "frame-ancestors 'none'" in policy and "unsafe" not in policy
    assert r.headers["x-frame-options"] == "DENY" and r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-content-type-options"] == "nosniff" and "set-cookie" not in r.headers


async def refused_links(http: httpx.AsyncClient, settings: Settings, link: str) -> None:
    """Forged, altered, expired and unsigned links: the same bare 404, never the page."""
    path = "/view/" + link.rsplit("/", 1)[1]
    ident, expires, sig = path.removeprefix("/view/").split(".")
    key = settings.view.link_key.get_secret_value().encode() if settings.view.link_key else b""
    expired = viewlinks.sign(key, f"view:{ident}", int(time.time()) - 1)
    other_id = "A" + ident[1:] if ident[0] != "A" else "B" + ident[1:]
    bad = {
        "forged": f"/view/{_forged(link)}",
        "altered id": f"/view/{other_id}.{expires}.{sig}",
        "altered expiry": f"/view/{ident}.{int(expires) + 3600}.{sig}",
        "altered signature": f"/view/{ident}.{expires}.{sig[::-1]}",
        "expired": f"/view/{expired}",
        "unsigned": f"/view/{ident}",
        "state id": f"/view/view:{ident}",
        "nothing": "/view/",
    }
    for what, url in bad.items():
        r = await http.get(url)
        assert r.status_code == 404, what
        assert "Why" not in r.text and "set-cookie" not in r.headers, what
    assert (await http.get(path)).status_code == 200  # and the real one still works


async def markup_served(settings: Settings, process: BotProcess) -> None:
    desired = deployment("web", replicas=2)
    desired["metadata"]["annotations"] = {"note": MARKUP}
    live = live_of(desired, entry(MARKUP, {"f:spec": {"f:replicas": {}}}))
    live["spec"]["replicas"] = 5
    live["metadata"]["annotations"] = {"note": MARKUP + "!"}
    report = explain([desired], [live], app=MARKUP)
    store = RedisStore.from_url(settings.redis.url or "")
    try:
        link = await save_page(store, settings.view, Alert(app=MARKUP), report)
    finally:
        await store.close()
    assert link is not None
    async with browser_context(process.url + "/") as (context, watch):
        page = await open_page(context, watch, link)
        await markup_is_text(page)
        watch.clean()
