"""The list of applications read one Application at a time and cut down to what the bot reads of it (issue 29: a
replica's memory; bot/sources/applist.py).

Against the stand-in Argo CD serving every bundled example and casebook scenario as an Application, through the real
client: the lean list gives the sweep, the fleet check and the names exactly what the whole list gives them.
"""

from __future__ import annotations

import asyncio
import copy
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.demo import EXAMPLES
from bot.demo.fake_argocd import app_from_case
from bot.intake.jobs import WebhookBody
from bot.runtime.sweep import settled_after_sync, synced_git_revision
from bot.sources.applist import BRIEF, LEAN, ItemReader, Keep
from bot.sources.argocd import READ_AHEAD_BYTES, ArgoCDClient, ArgoCDError, _names
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


async def test_the_lean_list_gives_the_sweep_and_the_brief_one_the_others_what_the_whole_list_gives(
    argocd: FakeArgoCD,
) -> None:
    async with ArgoCDClient(argocd.url, argocd.token) as client:
        whole = await client.applications()
        lean = await client.applications(keep=LEAN)
        brief = await client.applications(keep=BRIEF)
    assert len(whole) == len(lean) == len(brief) == len(CASES) > 3
    for full, slim, least in zip(whole, lean, brief, strict=True):
        assert len(json.dumps(least)) < len(json.dumps(slim)) < len(json.dumps(full))
        # the sweep: its alert body and its settled-after-sync test
        assert WebhookBody.of_application(slim) == WebhookBody.of_application(full)
        assert WebhookBody.of_application(slim) is not None
        assert settled_after_sync(slim, 2e9) == settled_after_sync(full, 2e9)
        assert synced_git_revision(slim) == synced_git_revision(full)
        # the fleet check's stamp and drift, the follow-up's sync status, the names and projects
        assert stamp_of(least) == stamp_of(slim) == stamp_of(full)
        assert least["status"]["sync"]["status"] == full["status"]["sync"]["status"]
        assert least["metadata"] == {k: full["metadata"][k] for k in ("name", "namespace") if k in full["metadata"]}
    assert _names(brief) == _names(lean) == _names(whole)


def test_the_strings_kept_of_a_list_are_shared_between_its_applications() -> None:
    keep = Keep(LEAN)
    apps = [json.loads(json.dumps({"metadata": {"name": f"a{i}", "namespace": "argocd"},
                                   "status": {"sync": {"status": "OutOfSync", "revision": "r" * 40},
                                              "resources": [{"kind": "Deployment", "name": "web"}]}}))
            for i in range(3)]  # fmt: skip
    kept = [keep(a) for a in apps]
    assert kept[0]["metadata"]["namespace"] is kept[2]["metadata"]["namespace"]
    assert kept[0]["status"]["sync"]["revision"] is kept[1]["status"]["sync"]["revision"]
    assert kept[0]["status"]["resources"][0]["kind"] is kept[2]["status"]["resources"][0]["kind"]
    assert [k["metadata"]["name"] for k in kept] == ["a0", "a1", "a2"] and kept == [Keep(LEAN)(a) for a in apps]


def test_items_are_decoded_one_at_a_time_as_json_would() -> None:
    body = {"metadata": {"resourceVersion": "7"}, "items": [{"metadata": {"name": "a"}}, 3, {"b": [1, {"c": None}]}]}
    for text in (json.dumps(body), json.dumps(body, indent=2), json.dumps({"items": body["items"], "x": {"items": 1}})):
        assert _read_in_pieces(text, []) == [{"metadata": {"name": "a"}}, {"b": [1, {"c": None}]}]
    for empty in ('{"metadata":{},"items":null}', "{}", ' { "items" : [ ] } '):
        assert _read_in_pieces(empty, []) == []
    for bad in ("<html>", '{"items": [1,', '{"items": []} x', "[]", "{1: 2}"):
        with pytest.raises(ValueError):
            _read_in_pieces(bad, [])


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
_BODIES = st.fixed_dictionaries(
    {"items": st.lists(st.dictionaries(st.text(max_size=5), _VALUES, max_size=4) | _SCALARS, max_size=6)},
    optional={"metadata": _VALUES, "kind": st.text(max_size=5)},
)


def _read_in_pieces(text: str, cuts: list[int], keep: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                    ) -> list[dict[str, Any]]:  # fmt: skip
    reader, items, at = ItemReader(keep), [], 0
    for cut in sorted(c % (len(text) + 1) for c in cuts):
        items += reader.feed(text[at:cut])
        at = cut
    return items + reader.feed(text[at:]) + reader.close()


@settings(max_examples=300, deadline=None)
@given(body=_BODIES, indent=st.sampled_from([None, 1]), cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_a_body_read_in_pieces_gives_the_items_json_gives(body: dict[str, Any], indent: int | None,
                                                          cuts: list[int]) -> None:  # fmt: skip
    text = json.dumps(body, indent=indent, ensure_ascii=False)
    expected = [i for i in json.loads(text)["items"] if isinstance(i, dict)]
    assert _read_in_pieces(text, cuts) == expected
    assert _read_in_pieces(text, []) == expected
    # a number split between pieces is not taken for a shorter one
    for number in ("12345", "0.5", "-1.25e+3", "7E2"):
        split = f'{{"n": {number}, "items": [{number}, {{"a": {number}}}]}}'
        for cut in range(len(split)):
            assert _read_in_pieces(split, [cut]) == [{"a": json.loads(number)}], (split, cut)


@settings(max_examples=200, deadline=None)
@given(body=_BODIES, cut=st.integers(min_value=0), pieces=st.lists(st.integers(min_value=0), max_size=6))
def test_a_body_cut_short_or_with_extra_text_is_an_error_in_pieces_too(body: dict[str, Any], cut: int,
                                                                       pieces: list[int]) -> None:  # fmt: skip
    text = json.dumps(body)
    short = text[: cut % len(text)]
    for bad in (short, text + " x", text + "{}"):
        with pytest.raises(ValueError):
            _read_in_pieces(bad, pieces)


def test_a_long_item_arriving_in_small_pieces_is_tried_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    item = {"metadata": {"name": "big"}, "status": {"resources": [{"kind": "ConfigMap", "name": f"c{i}"}
                                                                  for i in range(6000)]}}  # fmt: skip
    text = json.dumps({"items": [item]})
    tries = 0
    real = ItemReader._read

    def counting(self: ItemReader, *, final: bool) -> list[dict[str, Any]]:
        nonlocal tries
        tries += 1
        return real(self, final=final)

    monkeypatch.setattr(ItemReader, "_read", counting)
    assert _read_in_pieces(text, list(range(0, len(text), 100))) == [item]
    assert len(text) // 100 > 2000 and tries < 40  # the text held doubles between tries: log2(len / 100) + a few


def test_the_lean_application_keeps_only_what_is_read() -> None:
    app = {"metadata": {"name": "a", "namespace": "argocd", "labels": {"x": "y"}, "managedFields": [{}]},
           "spec": {"project": "p", "source": {"repoURL": "r"}},
           "status": {"history": [{}], "sync": {"status": "OutOfSync", "revision": "abc", "comparedTo": {}},
                      "operationState": {"phase": "Succeeded", "syncResult": {"revision": "abc", "resources": [{}]}},
                      "resources": [{"kind": "Deployment", "name": "w", "status": "OutOfSync", "health": {}}]},
           }  # fmt: skip
    assert Keep(LEAN)(app) == {
        "metadata": {"name": "a", "namespace": "argocd"}, "spec": {"project": "p"},
        "status": {"sync": {"status": "OutOfSync", "revision": "abc"},
                   "operationState": {"phase": "Succeeded", "syncResult": {"revision": "abc"}},
                   "resources": [{"kind": "Deployment", "name": "w", "status": "OutOfSync"}]}}  # fmt: skip


async def test_a_list_that_is_not_json_is_said_in_words() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>login</html>", headers={"content-type": "text/html"})

    async with ArgoCDClient("http://argocd.test", "t", transport=httpx.MockTransport(handler), retries=0) as client:
        with pytest.raises(ArgoCDError, match="not JSON .200, text/html.: ARGOCD_URL must be the Argo CD API server"):
            await client.applications(keep=BRIEF)


class _RawServer:
    """A local HTTP/1.1 server that answers every request with ``head`` and then ``pieces``, one write each, and
    closes the connection: a body sent in small chunks, or one cut short."""

    def __init__(self, head: bytes, pieces: list[bytes]) -> None:
        self.head, self.pieces = head, pieces

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(self.head)
        for piece in self.pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0)
        writer.close()


def _chunked(body: bytes, size: int) -> list[bytes]:
    return [b"%x\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size]) for i in range(0, len(body), size)] + [
        b"0\r\n\r\n"
    ]


async def test_the_list_is_decoded_while_it_arrives_in_small_chunks_through_the_real_client() -> None:
    apps = [{"metadata": {"name": f"app-{i}", "namespace": "argocd", "labels": {"é": "ü" * i}},
             "spec": {"project": "default"}, "status": {"sync": {"status": "OutOfSync", "revision": "r" * 40}}}
            for i in range(40)]  # fmt: skip
    body = json.dumps({"metadata": {"resourceVersion": "9"}, "items": apps}, ensure_ascii=False).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    async with _RawServer(head, _chunked(body, 7)) as url, ArgoCDClient(url, "t", retries=0) as client:
        assert await client.applications() == apps  # split inside names, numbers and two-byte characters
        assert [a["metadata"]["name"] for a in await client.applications(keep=BRIEF)] == [f"app-{i}" for i in range(40)]


async def test_a_list_cut_short_is_said_in_words_not_taken_for_a_shorter_list() -> None:
    body = json.dumps({"items": [{"metadata": {"name": f"app-{i}"}} for i in range(50)]}).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
    async with _RawServer(head, [body[: len(body) // 2]]) as url, ArgoCDClient(url, "t", retries=1) as client:
        with pytest.raises(ArgoCDError, match=r"^cannot reach Argo CD at http://127\.0\.0\.1:\d+: "):
            await client.applications(keep=BRIEF)
    # a body that ends early but says nothing of its length: the JSON itself is found incomplete
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n"
    async with _RawServer(head, [body[:-2]]) as url, ArgoCDClient(url, "t", retries=0) as client:
        with pytest.raises(ArgoCDError, match="not JSON .200, application/json."):
            await client.applications()


async def test_a_connection_to_argo_cd_holds_little_of_a_response_unread() -> None:
    """The list is decoded while it arrives; the kernel's receive buffer, autotuned to megabytes, let the whole list
    of a storm's thousand apps be read into memory before its first item was decoded (issue 29)."""
    body = json.dumps({"items": [{"metadata": {"name": f"app-{i}"}} for i in range(10)]}).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
    async with _RawServer(head, [body]) as url, ArgoCDClient(url, "t", retries=0) as client:
        resp = await client._http.send(client._http.build_request("GET", "/api/v1/applications"), stream=True)
        try:  # the client's own transport
            sock = resp.extensions["network_stream"].get_extra_info("socket")
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) <= 2 * READ_AHEAD_BYTES  # Linux doubles it
            assert json.loads(await resp.aread())["items"][9]["metadata"]["name"] == "app-9"
        finally:
            await resp.aclose()


async def test_a_proxy_of_the_environment_is_still_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounded read-ahead needs a transport of the bot's own, with which httpx ignores HTTP(S)_PROXY: behind a
    proxy, Argo CD is still reached through it."""
    body = json.dumps({"items": [{"metadata": {"name": "through-the-proxy"}}]}).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
    async with _RawServer(head, [body]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        async with ArgoCDClient("http://argocd.invalid", "t", retries=0) as client:  # a name that never resolves
            assert [a["metadata"]["name"] for a in await client.applications(keep=BRIEF)] == ["through-the-proxy"]
