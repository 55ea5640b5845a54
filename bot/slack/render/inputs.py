"""What a caller passes to the messages beyond the Report: the :class:`Alert` and the :class:`Buttons` ids.

Plain frozen data; nothing here renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.model import Report


@dataclass(frozen=True)
class Alert:
    """What the parent message shows beyond the Report."""

    app: str
    app_namespace: str | None = None
    project: str | None = None
    revision: str | None = None
    unsettled_syncs: int = 1
    """How many syncs did not settle the drift in this episode."""
    argocd_url: str | None = None
    """Argo CD's base URL; the app links to ``{argocd_url}/applications/{app_namespace}/{app}``."""
    status: Literal["drift", "synced", "failed"] = "drift"

    @classmethod
    def from_report(cls, report: Report) -> Alert:
        """The alert a Report alone implies: name, namespace, project, revision and recent syncs of the revision
        from ``report.application`` when ``argo-why why`` filled it in (no sync count otherwise)."""
        facts = report.application or {}

        def text(key: str) -> str | None:
            value = facts.get(key)
            return str(value) if value else None

        return cls(
            app=text("name") or report.app or "app",
            app_namespace=text("namespace"),
            project=text("project"),
            revision=text("revision"),
            unsettled_syncs=int(facts.get("syncs_same_revision_last_hour") or 0),
        )


@dataclass(frozen=True)
class Buttons:
    """Opaque state ids (kept in Redis by the caller), used as the buttons' values."""

    show_diff: str
    mute: str
    recheck: str
