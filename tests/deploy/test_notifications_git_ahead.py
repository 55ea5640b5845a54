"""The shipped trigger leaves Git ahead of the cluster to Argo CD (issue 30, item 1), checked by Argo CD's own
notifications engine (tests/tools/notify): it fires for a sync of the revision Git is at that did not settle the app,
and not when the last sync applied another revision than Git's (one source or several), which is not drift.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from bot.config import Settings
from tests.deploy.test_notifications import SHAPES, notify, run_notify, settings  # noqa: F401  (fixtures)
from tests.harness.service_kit import running

OLD, NEW = "9f3c2a1d5be4c1a0e2f7b8c9d0a1b2c3d4e5f607", "c0ffee0000000000000000000000000000000001"


def _synced(shape: str, applied: Any) -> dict[str, Any]:
    """The shape's Application whose last sync applied ``applied`` (a revision, or a list per source)."""
    app = copy.deepcopy(SHAPES[shape])
    result = {"revisions": applied} if isinstance(applied, list) else {"revision": applied}
    app["status"]["operationState"]["syncResult"] = {"resources": [], **result}
    return app


async def test_the_trigger_leaves_git_ahead_to_argocd(notify: Path, settings: Settings) -> None:  # noqa: F811
    cases = {
        "same revision": (_synced("deployment", OLD), True),
        "git ahead": (_synced("deployment", NEW), False),
        "multi-source, same revisions": (_synced("multi-source", ["1.2.3", OLD]), True),
        "multi-source, values ahead": (_synced("multi-source", ["1.2.3", NEW]), False),
        "multi-source, chart ahead": (_synced("multi-source", ["1.2.2", OLD]), False),
    }
    async with running(settings, workers=0) as bot:
        for label, (app, fires) in cases.items():
            answer = await run_notify(notify, bot, app)
            assert answer["triggers"]["on-drift-after-sync"][0]["triggered"] is fires, label
            assert answer["sent"] == int(fires), label
