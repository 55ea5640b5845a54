"""A read-only client of the Argo CD REST API (async httpx).

Only ``GET`` requests, all of which need nothing more than ``applications, get``
in Argo CD's RBAC. Transient failures (connection errors, 5xx, 429) are retried
with exponential backoff (``Retry-After`` honoured), a bounded number of times.
Every failure reaches the caller as an :class:`ArgoCDError` whose message is
written for a person: what failed, why, and what to do (the RBAC line to add, the
close application names, the CA to trust). The token never appears in a message.

Redirects: ``argocd-server`` answers plain HTTP with a 307 to HTTPS unless it runs
with ``--insecure``. That one redirect (``http://`` to ``https://``, same host, default
ports) is followed and remembered for the client's later calls, with a warning that
names the URL to configure; any other redirect could carry the token elsewhere and
is refused with a message that says where it pointed. A certificate that does not
verify is said at once (no retry) with the ways to trust it.

Wire format: argocd-server 3.x's REST API (``server/application/application.proto``
in argoproj/argo-cd) and its ``ResourceDiff`` type; the four ``*State`` fields of
``managed-resources`` are JSON strings, ``"null"`` for a missing side.

Telling a missing app from a forbidden one takes the list of applications; an
:class:`AppList` shared by the clients of one process keeps it for a minute, so a
burst of alerts for unknown apps costs one list, not one per alert.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import os
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import quote
from urllib.request import getproxies

import httpx

from bot.errors import UpstreamError
from bot.sources.applist import BRIEF, ItemReader, Keep, Shape
from bot.wording import cli as wording

log = logging.getLogger(__name__)
_WARNED_UPGRADES: set[str] = set()
"""ARGOCD_URLs whose https redirect was already logged (a client is built per analysis: warn once per process)."""
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
READ_AHEAD_BYTES = 256 * 1024
"""The socket's receive buffer (``SO_RCVBUF``; Linux doubles it): how much of a response may wait unread. A list of
a fleet's applications is decoded while it arrives; with the kernel's default buffer (autotuned to megabytes) the
whole list was read into memory at once before the first item was decoded (3.6 MB of a storm replica's peak, for
1,000 apps). A 512 KB window still fills a 1 Gbit/s link at 4 ms of round trip."""
_STATES = ("targetState", "liveState", "normalizedLiveState", "predictedLiveState")


class ArgoCDError(UpstreamError):
    """Argo CD refused or failed a request; the message says what to do."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ResourceDiff:
    """One item of ``managed-resources``, with its four states parsed (``None`` for a missing side)."""

    group: str
    kind: str
    namespace: str
    name: str
    modified: bool
    target: dict[str, Any] | None
    live: dict[str, Any] | None
    normalized_live: dict[str, Any] | None
    predicted_live: dict[str, Any] | None

    @classmethod
    def from_api(cls, item: dict[str, Any]) -> ResourceDiff:
        states = [_parse_state(item.get(k)) for k in _STATES]
        return cls(
            group=str(item.get("group") or ""),
            kind=str(item.get("kind") or ""),
            namespace=str(item.get("namespace") or ""),
            name=str(item.get("name") or ""),
            modified=bool(item.get("modified", False)),
            target=states[0],
            live=states[1],
            normalized_live=states[2],
            predicted_live=states[3],
        )


def _parse_state(raw: Any) -> dict[str, Any] | None:
    if raw is None or raw == "" or raw == "null":
        return None
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as e:
        raise ArgoCDError(f"Argo CD returned a state that is not JSON ({e})") from e
    return value if isinstance(value, dict) else None


def tls_verify(ca_file: str | os.PathLike[str] | None = None, insecure: bool = False) -> ssl.SSLContext | bool:
    """What httpx's ``verify`` should be: ``False`` (lab only), a context trusting ``ca_file``, or ``True``."""
    if insecure:
        return False
    if ca_file:
        return ssl.create_default_context(cafile=str(ca_file))
    return True


class AppList:
    """The names and projects of the applications the account may see, kept ``ttl_s`` seconds for every client that
    shares it (concurrent misses wait for the one fetch)."""

    def __init__(self, ttl_s: float = 60.0) -> None:
        self.ttl_s = ttl_s
        self._apps: list[tuple[str, str]] = []
        self._at = float("-inf")
        self._lock = asyncio.Lock()

    async def get(self, fetch: Callable[[], Awaitable[list[dict[str, Any]]]]) -> list[tuple[str, str]]:
        async with self._lock:
            if time.monotonic() - self._at > self.ttl_s:
                self._apps = _names(await fetch())
                self._at = time.monotonic()
            return self._apps


class ArgoCDClient:
    """``async with ArgoCDClient(url, token) as argocd: await argocd.application("shop")``.

    Plain arguments, as httpx's ``Client``: ``timeout`` per request in seconds, ``retries`` of connection
    errors, 5xx and 429, ``verify`` as httpx takes it (see :func:`tls_verify`).
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float = 15.0,
        retries: int = 3,
        verify: ssl.SSLContext | bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
        app_list: AppList | None = None,
    ) -> None:
        self.base_url = url.rstrip("/")
        self.retries = retries
        self.calls = 0
        self._app_list = app_list
        # a connection reads no more than READ_AHEAD_BYTES ahead of the decoder; not through a proxy of the environment
        # (HTTPS_PROXY...), which httpx honours only with the transport it makes itself
        if transport is None and not getproxies():
            options = [(socket.SOL_SOCKET, socket.SO_RCVBUF, READ_AHEAD_BYTES)]
            transport = httpx.AsyncHTTPTransport(verify=verify, socket_options=options)
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json", "User-Agent": "argo-why"},
            timeout=httpx.Timeout(timeout),
            verify=verify,
            transport=transport,
        )

    async def __aenter__(self) -> ArgoCDClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- the calls ------------------------------------------------------------------------------
    async def application(self, name: str, app_namespace: str | None = None) -> dict[str, Any]:
        try:
            return await self._get(f"/api/v1/applications/{quote(name, safe='')}", _ns(app_namespace), app=name)
        except ArgoCDError as e:
            if e.status in (403, 404):
                raise await self._explain_missing(name, app_namespace, e) from e
            raise

    async def version(self) -> dict[str, Any]:
        """``GET /api/version`` (anonymous): whether Argo CD answers at all."""
        return await self._get("/api/version", {})

    async def applicationset(self, name: str, appset_namespace: str | None = None) -> dict[str, Any]:
        """``GET /api/v1/applicationsets/{name}`` (``applicationsets, get`` in Argo CD's RBAC)."""
        params = {"appsetNamespace": appset_namespace} if appset_namespace else {}
        return await self._get(f"/api/v1/applicationsets/{quote(name, safe='')}", params)

    async def project(self, name: str) -> dict[str, Any]:
        """``GET /api/v1/projects/{name}``: the AppProject (``projects, get`` in Argo CD's RBAC)."""
        return await self._get(f"/api/v1/projects/{quote(name, safe='')}", {})

    async def applications(self, selector: str | None = None, *, keep: Shape | None = None) -> list[dict[str, Any]]:
        """The Applications Argo CD lists, whole, or each with only ``keep`` of it (``applist.LEAN``, ``BRIEF``:
        :class:`bot.sources.applist.Keep`), decoded one at a time while the list arrives (a fleet's whole list
        decoded at once is tens of MB)."""
        params = {"selector": selector} if selector else {}
        path = "/api/v1/applications"
        # read as it arrives: a fleet's list is megabytes, and its bytes, its text and the decoded list never exist
        # at once (only the text not yet decoded, at most READ_AHEAD_BYTES unread, and the items kept)
        resp = await self._response(path, params, stream=True)
        reader = ItemReader(Keep(keep) if keep is not None else None)
        items: list[dict[str, Any]] = []
        try:
            async for piece in resp.aiter_text():
                items += reader.feed(piece)
            return items + reader.close()
        except ValueError as e:
            raise self._not_json(path, resp) from e
        except httpx.TransportError as e:  # the body cut short: the request had its retries
            raise self._unreachable(e) from e
        finally:
            await resp.aclose()

    async def managed_resources(self, name: str, app_namespace: str | None = None) -> list[ResourceDiff]:
        body = await self._get(f"/api/v1/applications/{quote(name, safe='')}/managed-resources", _ns(app_namespace),
                               app=name)  # fmt: skip
        return [ResourceDiff.from_api(i) for i in body.get("items") or [] if isinstance(i, dict)]

    async def resource(
        self,
        name: str,
        *,
        group: str,
        version: str,
        kind: str,
        namespace: str,
        resource_name: str,
        app_namespace: str | None = None,
    ) -> dict[str, Any] | None:
        """A fresh live object (with managedFields) from the cluster, through Argo CD."""
        params = {"resourceName": resource_name, "kind": kind, "version": version, "group": group,
                  "namespace": namespace, **_ns(app_namespace)}  # fmt: skip
        body = await self._get(f"/api/v1/applications/{quote(name, safe='')}/resource", params, app=name)
        return _parse_state(body.get("manifest"))

    async def manifests(
        self, name: str, *, revision: str | None = None, no_cache: bool = False, app_namespace: str | None = None
    ) -> list[dict[str, Any]]:
        params = {**_ns(app_namespace)}
        if revision:
            params["revision"] = revision
        if no_cache:
            params["noCache"] = "true"
        body = await self._get(f"/api/v1/applications/{quote(name, safe='')}/manifests", params, app=name)
        out = []
        for raw in body.get("manifests") or []:
            obj = _parse_state(raw)
            if obj is not None:
                out.append(obj)
        return out

    async def resource_tree(self, name: str, app_namespace: str | None = None) -> dict[str, Any]:
        return await self._get(f"/api/v1/applications/{quote(name, safe='')}/resource-tree", _ns(app_namespace),
                               app=name)  # fmt: skip

    async def events(self, name: str, app_namespace: str | None = None) -> list[dict[str, Any]]:
        body = await self._get(f"/api/v1/applications/{quote(name, safe='')}/events", _ns(app_namespace), app=name)
        return list(body.get("items") or [])

    # --- transport and errors -----------------------------------------------------------------------
    async def _get(self, path: str, params: dict[str, str], *, app: str | None = None) -> dict[str, Any]:
        resp = await self._response(path, params, app=app)
        try:
            body = resp.json()
        except ValueError as e:
            raise self._not_json(path, resp) from e
        return body if isinstance(body, dict) else {}

    def _not_json(self, path: str, resp: httpx.Response) -> ArgoCDError:
        """The error for an answer to ``GET path`` that is not the JSON asked for."""
        content_type = resp.headers.get("content-type", "no content type").split(";")[0]
        return ArgoCDError(wording.ARGOCD_NOT_JSON.format(url=self.base_url, path=path, status=resp.status_code,
                                                          content_type=content_type))  # fmt: skip

    async def _response(
        self, path: str, params: dict[str, str], *, app: str | None = None, stream: bool = False
    ) -> httpx.Response:
        """A successful answer to ``GET path``, after the retries; every failure as an :class:`ArgoCDError`.
        ``stream``: the answer's body is left to read (and the answer to close) by the caller."""
        delay = 0.2
        for attempt in range(self.retries + 1):
            self.calls += 1
            try:
                resp = await self._send(self._http.build_request("GET", path, params=params), stream)
                if resp.is_redirect:
                    resp = await self._follow_https_upgrade(resp, stream)
            except httpx.TransportError as e:  # timeouts included
                if _untrusted_certificate(e):
                    raise ArgoCDError(wording.ARGOCD_TLS_UNTRUSTED.format(url=self.base_url, reason=_reason(e))) from e
                if attempt < self.retries:
                    await asyncio.sleep(delay)
                    delay *= 2
                    continue
                raise self._unreachable(e) from e
            if resp.status_code in _RETRY_STATUSES and attempt < self.retries:
                await asyncio.sleep(_retry_after(resp, delay))
                delay *= 2
                continue
            if resp.status_code >= 400:
                raise self._error(resp, app)
            return resp
        raise AssertionError("unreachable")  # pragma: no cover

    async def _send(self, request: httpx.Request, stream: bool) -> httpx.Response:
        resp = await self._http.send(request, stream=stream)
        if stream and not resp.is_success:
            await resp.aread()  # a redirect, a retry or an error: its few bytes are read whole, and it is closed
        return resp

    def _unreachable(self, e: httpx.TransportError) -> ArgoCDError:
        if isinstance(e, httpx.TimeoutException):
            return ArgoCDError(f"Argo CD at {self.base_url} did not answer in time ({type(e).__name__})")
        return ArgoCDError(f"cannot reach Argo CD at {self.base_url}: {_reason(e)}")

    async def _follow_https_upgrade(self, resp: httpx.Response, stream: bool) -> httpx.Response:
        """Follow ``resp`` (a redirect) when it only upgrades to HTTPS on the same host; else explain it."""
        target = resp.next_request.url if resp.next_request is not None else None
        if target is None or not _is_https_upgrade(resp.request.url, target):
            where = str(target) if target is not None else resp.headers.get("location", "nowhere")
            hint = wording.ARGOCD_REDIRECT_LOGIN_HINT if target is not None and target.host != resp.url.host else ""
            text = wording.ARGOCD_REDIRECT.format(url=self.base_url, status=resp.status_code, target=where, hint=hint)
            raise ArgoCDError(text, status=resp.status_code)
        upgraded = str(self._http.base_url.copy_with(scheme="https", port=None)).rstrip("/")
        if self.base_url not in _WARNED_UPGRADES:
            _WARNED_UPGRADES.add(self.base_url)
            log.warning(wording.ARGOCD_HTTPS_UPGRADE.format(url=self.base_url, target=upgraded))
        self._http.base_url = httpx.URL(upgraded + "/")
        self.base_url = upgraded
        # the same request on https: httpx sends Authorization there as well (same host, only the scheme changes)
        return await self._send(self._http.build_request("GET", target), stream)

    def _error(self, resp: httpx.Response, app: str | None) -> ArgoCDError:
        message = _message(resp)
        status = resp.status_code
        if status == 401:
            text = (
                f"Argo CD at {self.base_url} rejected the token (401: {message}): it is invalid or expired. "
                "Generate a new one with `argocd account generate-token --account argo-why` and set ARGOCD_TOKEN."
            )
        elif status == 403:
            text = (
                f"Argo CD at {self.base_url} denied access (403: {message}): the account lacks "
                f"`applications, get` on `*/{app or '*'}`. Add to argocd-rbac-cm policy.csv: "
                f"`p, argo-why, applications, get, */{app or '*'}, allow`"
            )
        elif status == 404:
            text = f"Argo CD at {self.base_url} has no such object (404: {message})"
        elif status == 429:
            text = f"Argo CD at {self.base_url} is rate-limiting requests (429); try again later"
        else:
            text = f"Argo CD at {self.base_url} failed ({status}: {message})"
        return ArgoCDError(text, status=status)

    async def _explain_missing(self, name: str, app_namespace: str | None, err: ArgoCDError) -> ArgoCDError:
        """Argo CD answers 403 for an app that does not exist: tell the two apart when the list allows."""
        try:
            if self._app_list is not None:
                visible = await self._app_list.get(partial(self.applications, keep=BRIEF))
            else:
                visible = _names(await self.applications(keep=BRIEF))
        except ArgoCDError:
            return err
        names = sorted({n for n, _ in visible})
        match = [p for n, p in visible if n == name]
        if match:
            project = match[0]
            return ArgoCDError(
                f"Argo CD at {self.base_url} denied access to application {name} (403): the account lacks "
                f"`applications, get` on `{project}/{name}`. Add to argocd-rbac-cm policy.csv: "
                f"`p, argo-why, applications, get, {project}/{name}, allow`", status=403)  # fmt: skip
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        where = f" in namespace {app_namespace}" if app_namespace else ""
        hint = f"; did you mean {', '.join(close)}?" if close else "."
        if err.status == 404:
            return ArgoCDError(f"no application {name}{where} in Argo CD at {self.base_url}{hint}", status=404)
        # Argo CD answers 403 both for a missing app and for one the account may not see: say both
        return ArgoCDError(
            f"no application {name}{where} visible in Argo CD at {self.base_url}{hint} If it exists, the account "
            f"lacks `applications, get` on it: add to argocd-rbac-cm policy.csv "
            f"`p, argo-why, applications, get, */{name}, allow`", status=404)  # fmt: skip


def _names(apps: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(name, project) of each application of a list."""
    return [(str((a.get("metadata") or {}).get("name")), str((a.get("spec") or {}).get("project") or "*"))
            for a in apps]  # fmt: skip


def _ns(app_namespace: str | None) -> dict[str, str]:
    return {"appNamespace": app_namespace} if app_namespace else {}


def _message(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.reason_phrase or "no details"
    if isinstance(body, dict):
        return str(body.get("message") or body.get("error") or resp.reason_phrase)
    return resp.reason_phrase or "no details"


def _retry_after(resp: httpx.Response, default: float) -> float:
    raw = resp.headers.get("Retry-After")
    try:
        return min(float(raw), 30.0) if raw is not None else default
    except ValueError:
        return default


def _is_https_upgrade(source: httpx.URL, target: httpx.URL) -> bool:
    return (source.scheme == "http" and target.scheme == "https" and source.host == target.host
            and source.port in (None, 80) and target.port in (None, 443))  # fmt: skip


def _untrusted_certificate(e: httpx.TransportError) -> bool:
    cause: BaseException | None = e
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _reason(e: httpx.TransportError) -> str:
    cause = e.__cause__ or e.__context__
    text = str(cause or e) or type(e).__name__
    return text.splitlines()[0][:200]
