"""The drift page: one self-contained HTML document from a Report (Git beside live, every line blamed, the fix).

Pure: :func:`render_html` takes the Report (and the bot's :class:`~bot.model.Alert`, when it has one) and returns
text; the layout is :mod:`bot.report.page_model`'s, the markup the Jinja2 templates of ``templates/`` (package
data, read once). What it guarantees:

* every value from outside (app and resource names, field values, managers, explanations, notes) goes through
  Jinja2's autoescaping: markup in a value is shown as text, never interpreted;
* the document makes no request: its CSS and JavaScript are inline, the icon is a ``data:`` URL, there is no font,
  image, frame or form; :func:`content_security_policy` allows exactly the inline style and script by their
  SHA-256 hashes (no ``'unsafe-inline'``), and the same policy is in the document's ``<meta>`` so that a saved
  file keeps it;
* Secret values are shown as the Report holds them: masked;
* the output is deterministic (no clock, no random nonce), so it can be compared with golden files.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from bot.model import Alert, Report
from bot.report.page_model import build_page
from bot.wording import report as wording

if TYPE_CHECKING:
    from jinja2 import Environment

MEDIA_TYPE = "text/html; charset=utf-8"


@cache
def _environment() -> Environment:
    # Jinja2 is imported when the first page is drawn, not when the bot starts: a replica nobody asks for a page
    # never holds it (about 9 MB resident)
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(
        loader=PackageLoader("bot.report", "templates"),
        autoescape=True,  # every template, whatever its name: the page is all HTML
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


@cache
def _asset(name: str) -> str:
    return resources.files("bot.report").joinpath("templates", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


@cache
def content_security_policy(*, frame_ancestors: bool = False) -> str:
    """The page's policy: nothing but its own inline style and script (by hash) and the ``data:`` icon.

    ``frame_ancestors``: add ``frame-ancestors 'none'`` (only an HTTP header may carry it; a ``<meta>`` may not).
    """
    policy = (
        f"default-src 'none'; style-src {_sha256(_asset('page.css'))}; script-src {_sha256(_asset('page.js'))}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    return policy + ("; frame-ancestors 'none'" if frame_ancestors else "")


def render_html(report: Report, alert: Alert | None = None) -> str:
    """The page of ``report`` (``alert``: what the bot knows beyond the report, such as the revision)."""
    page = build_page(report, alert)
    template = _environment().get_template("page.html")
    return template.render(
        page=page,
        title=wording.PAGE_TITLE.format(app=page.app) if page.cards else f"{page.app}: argo-why",
        css=_asset("page.css"),
        js=_asset("page.js"),
        csp=content_security_policy(),
    )
