"""How the Argo CD client answers what stands between it and the API: argocd-server's 307 to HTTPS, other
redirects, a certificate it cannot verify, and pages that are not the API.

httpx's MockTransport plays the server (the wire format of the API itself is covered by the fake Argo CD tests).
"""

from __future__ import annotations

import logging
import ssl

import httpx
import pytest

from bot.sources.argocd import ArgoCDClient, ArgoCDError

APP = {"metadata": {"name": "shop", "namespace": "argocd"}, "spec": {"project": "default"}}


def _argocd_server(seen: list[httpx.Request]) -> httpx.MockTransport:
    """argocd-server without --insecure: plain HTTP is redirected to HTTPS (307), HTTPS needs the token."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.scheme == "http":
            return httpx.Response(307, headers={"Location": str(request.url.copy_with(scheme="https"))})
        if request.headers.get("authorization") != "Bearer t0ken":
            return httpx.Response(401, json={"error": "no session information", "code": 16})
        return httpx.Response(200, json=APP)

    return httpx.MockTransport(handle)


async def test_the_https_redirect_of_argocd_server_is_followed_once_with_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[httpx.Request] = []
    caplog.set_level(logging.WARNING)
    async with ArgoCDClient("http://argocd-server.argocd.svc", "t0ken", transport=_argocd_server(seen)) as argocd:
        assert await argocd.application("shop") == APP
        assert await argocd.application("shop") == APP
    assert [r.url.scheme for r in seen] == ["http", "https", "https"]  # later calls go to https directly
    assert str(seen[1].url) == "https://argocd-server.argocd.svc/api/v1/applications/shop"
    assert "Set ARGOCD_URL=https://argocd-server.argocd.svc" in caplog.text


@pytest.mark.parametrize(
    ("location", "says"),
    [
        ("https://sso.example.com/login?next=/api", "not a login page"),
        ("http://argocd-server.argocd.svc/other", "redirect to http://argocd-server.argocd.svc/other"),
        ("https://argocd-server.argocd.svc:8443/api/v1/applications/shop", "follows only an http:// to https://"),
    ],
)
async def test_any_other_redirect_is_refused_and_says_where_it_pointed(location: str, says: str) -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(302, headers={"Location": location})

    async with ArgoCDClient("http://argocd-server.argocd.svc", "t0ken", transport=httpx.MockTransport(handle)) as c:
        with pytest.raises(ArgoCDError) as err:
            await c.applications()
    assert says in str(err.value) and "t0ken" not in str(err.value)
    assert len(seen) == 1  # the token went nowhere else


async def test_an_untrusted_certificate_is_said_at_once_with_the_ways_to_trust_it() -> None:
    calls: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        cause = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] self-signed certificate")
        raise httpx.ConnectError("certificate verify failed", request=request) from cause

    async with ArgoCDClient("https://argocd-server.argocd.svc", "t0ken", retries=3,
                            transport=httpx.MockTransport(handle)) as argocd:  # fmt: skip
        with pytest.raises(ArgoCDError) as err:
            await argocd.applications()
    assert len(calls) == 1  # not retried: it will not verify on the next attempt either
    assert "ARGOCD_CA_FILE" in str(err.value) and "argocd.tls.caConfigMap" in str(err.value)


async def test_a_page_that_is_not_the_api_is_named_as_such() -> None:
    def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>login</html>", headers={"Content-Type": "text/html; charset=utf-8"})

    async with ArgoCDClient("https://argocd.example.com", "t0ken", transport=httpx.MockTransport(handle)) as argocd:
        with pytest.raises(ArgoCDError) as err:
            await argocd.applications()
    assert "not JSON (200, text/html)" in str(err.value) and "API server" in str(err.value)
