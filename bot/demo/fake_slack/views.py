"""``views.publish`` as Slack answers it: the App Home tab of one user, replaced on every call.

Checked as Slack checks it: ``user_id`` required, ``view`` an object (or its JSON text) of ``type: home`` with at
most 100 blocks; the answer carries the view with an id. The published views are kept by user (``homes``).
"""

from __future__ import annotations

import json
from typing import Any

from bot.demo.fake_slack.wire import JSON, MAX_BLOCKS, _error, _str_or_none


def publish(homes: dict[str, JSON], params: JSON) -> JSON:
    user = _str_or_none(params.get("user_id"))
    if user is None:
        return _error("invalid_arguments")
    view: Any = params.get("view")
    if isinstance(view, str):
        try:
            view = json.loads(view)
        except ValueError:
            return _error("invalid_arguments")
    if not isinstance(view, dict) or view.get("type") != "home":
        return _error("invalid_arguments")
    blocks = view.get("blocks")
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        return _error("invalid_blocks")
    stored = {**view, "id": f"V{len(homes) + 1:08d}", "team_id": "T0FAKE"}
    homes[user] = stored
    return {"ok": True, "view": stored}
