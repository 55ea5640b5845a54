"""The list of applications read one Application at a time and cut down to what the bot reads of it (issue 29: a
replica's memory; bot/sources/applist.py).

Against the stand-in Argo CD serving every bundled example and casebook scenario as an Application, through the real
client: the lean list gives the sweep, the fleet check and the names exactly what the whole list gives them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.demo import EXAMPLES
from bot.demo.fake_argocd import app_from_case
from bot.intake.jobs import WebhookBody
from bot.runtime.sweep import settled_after_sync, synced_git_revision
from bot.sources.applist import lean_application, list_items
from bot.sources.argocd import ArgoCDClient, ArgoCDError, _names
from bot.store.fleetobjects import stamp_of
from tests.fakes.argocd import FakeArgoCD

CASES = sorted(p for p in (Path(__file__).resolve().parents[1] / "scenarios" / "casebook" / "cases").iterdir()
               if p.is_dir()) + sorted(p for p in EXAMPLES.iterdir() if p.is_dir())  # fmt: skip


@pytest.fixture(scope="module")
def argocd() -> Iterator[FakeArgoCD]:
    fake = FakeArgoCD()
    fake.__enter__()
    for i, case in enumerate(CASES):
        app, resources, renders = app_from_case(case)
        app = copy.deepcopy(app)
        app["metadata"]["name"] = f"app-{i:03d}"
        fake.add_app(app, resources, renders)
    yield fake
    fake.__exit__(None, None, None)


async def test_the_lean_list_gives_the_sweep_and_the_fleet_check_what_the_whole_list_gives(argocd: FakeArgoCD) -> None:
    async with ArgoCDClient(argocd.url, argocd.token) as client:
        whole = await client.applications()
        lean = await client.applications(lean=True)
    assert len(whole) == len(lean) == len(CASES) > 3
    for full, slim in zip(whole, lean, strict=True):
        assert len(json.dumps(slim)) < len(json.dumps(full))
        assert WebhookBody.of_application(slim) == WebhookBody.of_application(full)
        assert WebhookBody.of_application(slim) is not None
        assert settled_after_sync(slim, 2e9) == settled_after_sync(full, 2e9)
        assert synced_git_revision(slim) == synced_git_revision(full)
        assert stamp_of(slim) == stamp_of(full)
    assert _names(lean) == _names(whole)


def test_items_are_decoded_one_at_a_time_as_json_would() -> None:
    body = {"metadata": {"resourceVersion": "7"}, "items": [{"metadata": {"name": "a"}}, 3, {"b": [1, {"c": None}]}]}
    for text in (json.dumps(body), json.dumps(body, indent=2), json.dumps({"items": body["items"], "x": {"items": 1}})):
        assert list(list_items(text)) == [{"metadata": {"name": "a"}}, {"b": [1, {"c": None}]}]
    for empty in ('{"metadata":{},"items":null}', "{}", ' { "items" : [ ] } '):
        assert list(list_items(empty)) == []
    for bad in ("<html>", '{"items": [1,', '{"items": []} x', "[]", "{1: 2}"):
        with pytest.raises(ValueError):
            list(list_items(bad))


def test_the_lean_application_keeps_only_what_is_read() -> None:
    app = {"metadata": {"name": "a", "namespace": "argocd", "labels": {"x": "y"}, "managedFields": [{}]},
           "spec": {"project": "p", "source": {"repoURL": "r"}},
           "status": {"history": [{}], "sync": {"status": "OutOfSync", "revision": "abc", "comparedTo": {}},
                      "operationState": {"phase": "Succeeded", "syncResult": {"revision": "abc", "resources": [{}]}},
                      "resources": [{"kind": "Deployment", "name": "w", "status": "OutOfSync", "health": {}}]},
           }  # fmt: skip
    assert lean_application(app) == {
        "metadata": {"name": "a", "namespace": "argocd"}, "spec": {"project": "p"},
        "status": {"sync": {"status": "OutOfSync", "revision": "abc"},
                   "operationState": {"phase": "Succeeded", "syncResult": {"revision": "abc"}},
                   "resources": [{"kind": "Deployment", "name": "w", "status": "OutOfSync"}]}}  # fmt: skip


async def test_a_list_that_is_not_json_is_said_in_words() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>login</html>", headers={"content-type": "text/html"})

    async with ArgoCDClient("http://argocd.test", "t", transport=httpx.MockTransport(handler), retries=0) as client:
        with pytest.raises(ArgoCDError, match="not JSON .200, text/html.: ARGOCD_URL must be the Argo CD API server"):
            await client.applications(lean=True)
