"""An app with ``ServerSideDiff=true`` whose only difference from Git is a mutating webhook's (a sidecar injector
that also pins the image to a digest, tests/live/webhook.py): Argo CD's server-side diff asks the API server for a
dry-run apply, which runs the webhook too, so Argo CD shows no drift: no alert, and ``/argo why`` says so."""

from __future__ import annotations

import pytest

from tests.harness.argocd_e2e import E2E, namespace_for
from tests.harness.argocd_objects import deployment, ref
from tests.live.webhook import DIGEST, SidecarInjector, sidecar_injector  # noqa: F401  (fixture)

pytestmark = pytest.mark.argocd


def test_a_webhooks_change_under_server_side_diff_is_no_drift_and_why_says_so(
    e2e: E2E,
    sidecar_injector: SidecarInjector,  # noqa: F811
) -> None:
    name = "ssd-webhook"
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    e2e.cluster.create(sidecar_injector.configuration(ns))
    web = deployment(name, replicas=1)
    e2e.add_files({f"apps/{name}/deployment.yaml": web})
    e2e.create_app(name, f"apps/{name}", ns,
                   annotations={"argocd.argoproj.io/compare-options": "ServerSideDiff=true"})  # fmt: skip
    e2e.sync(name)  # Synced although the live image is a digest: the dry run gets the same digest
    live = e2e.cluster.get(ref(web, ns))
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == f"nginx@{DIGEST}"
    e2e.quiet_after_sync(name)
    assert e2e.app(name)["status"]["sync"]["status"] == "Synced"
    assert e2e.tap.for_app(name) == [] and e2e.parents(name) == []

    e2e.why(name)

    [answer] = e2e.wait_parents(name, "the answer to /argo why")
    assert "Synced" in answer["text"] and "OutOfSync" not in answer["text"], answer["text"]
