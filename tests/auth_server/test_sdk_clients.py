"""Both official SDK clients log in to our protected server through a real authorization server
(oidc-provider) with their own OAuth code, and call tools: discovery from our 401 (RFC 9728
metadata), dynamic registration, authorization code + PKCE with our canonical URI as
``resource`` (RFC 8707), and a step-up when a tool answers 403 ``insufficient_scope``.

The authorization server logs the person in without a page (its interaction auto-approves:
``tests/peers/oidc_provider.mjs``), so each client's "browser" is an HTTP client following the
redirects, with cookies, to the client's redirect URI."""

from __future__ import annotations

import asyncio
import json
import subprocess
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import pytest
from _auth_harness import AuthorizationServer, jwt_auth, scoped_server, serving

from backchannel.testing import run
from peers.paths import NODE22

pytestmark = pytest.mark.interop
REDIRECT = "http://127.0.0.1:1/callback"
TS_CLIENT = __file__.rsplit("/", 1)[0] + "/ts_oauth_client.mjs"


class Browser:
    """Follows an authorization URL's redirects to ``REDIRECT`` and keeps what came back."""

    def __init__(self) -> None:
        self.http = httpx2.AsyncClient(timeout=10)
        self.asked: list[dict[str, list[str]]] = []
        self.landed: str | None = None

    async def open(self, url: str) -> None:
        self.asked.append(parse_qs(urlsplit(url).query))
        for _ in range(10):
            answer = await self.http.get(url)
            assert answer.status_code in (302, 303), answer.text
            url = urljoin(url, answer.headers["location"])
            if url.startswith(REDIRECT):
                self.landed = url
                return
        raise AssertionError("too many redirects")

    async def callback(self) -> Any:
        from mcp.shared.auth import AuthorizationCodeResult

        assert self.landed is not None
        query = parse_qs(urlsplit(self.landed).query)
        assert "code" in query, self.landed
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query.get("iss", [None])[0])


class Tokens:
    """The Python SDK's ``TokenStorage``, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_python_sdk_client_logs_in_steps_up_and_calls_tools(oauth: AuthorizationServer, mode: str) -> None:
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.client import Client as SdkClient
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientMetadata

    browser = Browser()

    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(oauth.issuer, oauth.jwks_uri)) as (url, _):
            provider = OAuthClientProvider(
                server_url=url,
                client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="pysdk auth test"),  # type: ignore[list-item]
                storage=Tokens(),
                redirect_handler=browser.open,
                callback_handler=browser.callback,
            )
            async with (
                httpx2.AsyncClient(auth=provider, timeout=30) as http,
                SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
            ):
                whoami = await client.call_tool("whoami", {})
                assert whoami.content[0].text.startswith(f"{oauth.issuer}#alice#")  # type: ignore[union-attr]
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert tools == {"whoami"}  # only what "mcp" grants
                purged = await client.call_tool("purge", {})  # 403 insufficient_scope: a step-up, then the call
                assert purged.content[0].text == "purged"  # type: ignore[union-attr]
            first, second = browser.asked  # ("offline_access" too: the SDK asks for refresh tokens where offered)
            assert first["resource"] == [url] and first["code_challenge_method"] == ["S256"]
            assert set(first["scope"][0].split()) - {"offline_access"} == {"mcp"}  # the 401's scope
            assert second["resource"] == [url]
            assert set(second["scope"][0].split()) - {"offline_access"} == {"mcp", "mcp:admin"}  # the 403's

    run(body, timeout=60)


def test_the_typescript_sdk_client_logs_in_steps_up_and_calls_tools(oauth: AuthorizationServer) -> None:
    async def body() -> None:
        async with serving(scoped_server(), jwt_auth(oauth.issuer, oauth.jwks_uri)) as (url, _):
            process = await asyncio.create_subprocess_exec(
                str(NODE22),
                TS_CLIENT,
                url,
                json.dumps(["whoami", "purge"]),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(process.communicate(), 60)
            assert process.returncode == 0, err.decode()
            report = json.loads(out)
            assert report["results"]["whoami"].startswith(f"{oauth.issuer}#alice#")
            assert report["results"]["purge"] == "purged"
            first, second = report["authorizations"]
            assert first == {"scope": "mcp", "resource": url}
            assert second["resource"] == url and set(second["scope"].split()) == {"mcp", "mcp:admin"}

    run(body, timeout=90)
