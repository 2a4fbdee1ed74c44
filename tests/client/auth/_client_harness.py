"""What the client-side authorization tests share: the authorization server's configuration
(oidc-provider, as the resource-server tests run it, plus a client that authenticates with a
private key), a "browser" that follows the login's redirects, and taps on both HTTP clients so
a test reads what crossed the wire: the authorization server's requests, and the scheme and
proof of every request to the MCP endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import socket
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx2
from _auth_harness import AS_CONFIG, SECRET
from joserfc.jwk import ECKey

from backchannel import Server
from backchannel.auth import ResourceAuth

REDIRECT = "http://127.0.0.1:1/callback"
#: A service that authenticates with a private key (``private_key_jwt``, RFC 7523).
KEYED_CLIENT = "svc-keyed"
SERVICE_KEY = ECKey.generate_key("P-256", parameters={"kid": "svc-keyed-1"})
SERVICE_KEY_PEM = SERVICE_KEY.as_pem(private=True).decode()

__all__ = [
    "KEYED_CLIENT",
    "REDIRECT",
    "SECRET",
    "SERVICE_KEY_PEM",
    "FollowingBrowser",
    "Tap",
    "provider_config",
    "serving_at",
]


def provider_config() -> dict[str, Any]:
    """The resource-server tests' oidc-provider configuration, plus ``svc-keyed``."""
    config = copy.deepcopy(AS_CONFIG)
    config["clients"].append(
        {
            "client_id": KEYED_CLIENT,
            "grant_types": ["client_credentials"],
            "response_types": [],
            "redirect_uris": [],
            "token_endpoint_auth_method": "private_key_jwt",
            "token_endpoint_auth_signing_alg": "ES256",
            "jwks": {"keys": [SERVICE_KEY.as_dict(private=False)]},
        }
    )
    return config


class FollowingBrowser:
    """The person's browser for an authorization server that logs them in without a page: it
    follows the redirects (keeping cookies, so a second login is the same person's session) until
    they reach the redirect URI, and records each authorization request's parameters."""

    redirect_uri = REDIRECT

    def __init__(self) -> None:
        self.asked: list[dict[str, str]] = []
        self.cookies = httpx2.Cookies()

    async def authorize(self, url: str) -> Mapping[str, str]:
        self.asked.append(dict(parse_qsl(urlsplit(url).query)))
        async with httpx2.AsyncClient(timeout=10, cookies=self.cookies) as http:
            for _ in range(10):
                answer = await http.get(url)
                assert answer.status_code in (302, 303), answer.text
                url = urljoin(url, answer.headers["location"])
                if url.startswith(REDIRECT):
                    return dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
        raise AssertionError("the login never came back to the redirect URI")


@dataclass
class Exchange:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    status: int | None = None


@dataclass
class Tap:
    """An ``httpx2.AsyncClient`` that records every request it sends and the status it got."""

    exchanges: list[Exchange] = field(default_factory=list)

    def client(self) -> httpx2.AsyncClient:
        async def request(request: httpx2.Request) -> None:
            try:
                body = request.content  # a form or JSON body; the MCP transport's bodies stream, unread here
            except httpx2.RequestNotRead:
                body = b""
            self.exchanges.append(Exchange(request.method, str(request.url), dict(request.headers), body))
            request.extensions["tap"] = self.exchanges[-1]

        async def response(answer: httpx2.Response) -> None:
            answer.request.extensions["tap"].status = answer.status_code

        hooks: dict[str, list[Callable[[Any], Any]]] = {"request": [request], "response": [response]}
        return httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None), event_hooks=hooks)

    def forms(self, url_part: str) -> list[dict[str, str]]:
        """The form bodies POSTed to URLs containing ``url_part``."""
        return [
            dict(parse_qsl(e.body.decode(), keep_blank_values=True))
            for e in self.exchanges
            if e.method == "POST" and url_part in e.url and not e.body.startswith(b"{")
        ]

    def json_posts(self, url_part: str) -> list[dict[str, Any]]:
        return [json.loads(e.body) for e in self.exchanges if e.method == "POST" and url_part in e.url and e.body]

    def to(self, url: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.url.split("?")[0] == url]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.asynccontextmanager
async def serving_at(
    server: Server, make_auth: Callable[[str], ResourceAuth], port: int, *, path: str = "/mcp"
) -> AsyncIterator[str]:
    """``server`` protected by ``make_auth(its URL)`` under uvicorn on 127.0.0.1:``port`` (a port a
    test reuses to put another authorization server in front of the same URL)."""
    import uvicorn

    url = f"http://127.0.0.1:{port}{path}"
    app = server.http_app(path, auth=make_auth(url))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)
    runner = uvicorn.Server(config)
    runner.capture_signals = contextlib.nullcontext  # type: ignore[method-assign, assignment]
    task = asyncio.get_running_loop().create_task(runner.serve())
    try:
        async with asyncio.timeout(5):
            while not runner.started:  # noqa: ASYNC110 - uvicorn sets a flag, not an event
                await asyncio.sleep(0.01)
        yield url
    finally:
        runner.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, 5)
