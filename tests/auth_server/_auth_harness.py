"""What the resource-server tests share: a real authorization server (oidc-provider, started by
the tests), our server protected by ``ResourceAuth`` on a loopback port or in process, raw MCP
requests with a token and a DPoP proof, and a local issuer for tokens no honest server mints
(expired, another issuer's, signed by a key it does not publish)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from backchannel import Context, Server
from backchannel.auth import Dpop, JwtVerifier, ResourceAuth
from backchannel.auth.dpop import access_token_hash
from backchannel.http_host.app import HttpApp
from backchannel.types import meta as M
from peers.paths import NODE22, PEERS_DIR

HANDSHAKE = "2025-11-25"
STATELESS = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
#: Scopes of our resource servers at the authorization server; ``mcp`` is the base one.
SCOPES = "mcp mcp:admin mcp:reports files:read files:write"
SECRET = "s3cret-0123456789abcdef0123456789abcdef"
#: Static clients: two services acting on their own behalf (two principals), and our
#: resource server's own credentials for introspection.
CLIENTS = [
    *(
        {
            "client_id": name,
            "client_secret": SECRET,
            "grant_types": ["client_credentials"],
            "response_types": [],
            "redirect_uris": [],
        }
        for name in ("svc-alice", "svc-bob")
    ),
    {"client_id": "mcp-rs", "client_secret": SECRET, "grant_types": [], "response_types": [], "redirect_uris": []},
]
AS_CONFIG = {
    "resources": [
        {"match": "/opaque/mcp$", "scope": SCOPES, "format": "opaque"},
        {"match": "^http://(127\\.0\\.0\\.1|localhost):\\d+/", "scope": SCOPES, "format": "jwt"},
    ],
    "scopes": SCOPES.split(),
    "clients": CLIENTS,
    "account": "alice",
}


@dataclass
class AuthorizationServer:
    issuer: str
    process: subprocess.Popen[str]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token"

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/jwks"

    @property
    def introspection_endpoint(self) -> str:
        return f"{self.issuer}/token/introspection"

    async def token(
        self, client: str, resource: str, scope: str = "mcp", *, dpop: DpopKey | None = None
    ) -> dict[str, Any]:
        """A client-credentials token of ``client`` for ``resource`` (DPoP-bound with ``dpop``)."""
        headers = {}
        if dpop is not None:
            headers["dpop"] = dpop.proof("POST", self.token_endpoint)
        async with httpx2.AsyncClient(timeout=10) as http:
            answer = await http.post(
                self.token_endpoint,
                data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
                auth=(client, SECRET),
                headers=headers,
            )
        assert answer.status_code == 200, answer.text
        token: dict[str, Any] = answer.json()
        return token


@contextlib.contextmanager
def authorization_server(config: dict[str, Any] = AS_CONFIG) -> Iterator[AuthorizationServer]:
    """oidc-provider on a free loopback port, until the block ends."""
    process = subprocess.Popen(
        [str(NODE22), str(PEERS_DIR / "oidc_provider.mjs"), json.dumps(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("oidc-provider did not start")
        issuer = json.loads(line)["issuer"]
        metadata = httpx2.get(f"{issuer}/.well-known/openid-configuration", timeout=10).json()
        yield AuthorizationServer(issuer, process, metadata)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class DpopKey:
    """A client's DPoP key pair, making proofs (RFC 9449 §4.2)."""

    def __init__(self) -> None:
        self.key = ECKey.generate_key("P-256")
        self.jkt = self.key.thumbprint()

    def proof(
        self,
        method: str,
        url: str,
        *,
        token: str | None = None,
        nonce: str | None = None,
        iat: float | None = None,
        jti: str | None = None,
    ) -> str:
        claims: dict[str, Any] = {
            "jti": jti or secrets.token_urlsafe(16),
            "htm": method,
            "htu": url,
            "iat": int(time.time() if iat is None else iat),
        }
        if token is not None:
            claims["ath"] = access_token_hash(token)
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.key.as_dict(private=False)}
        return jwt.encode(header, claims, self.key)


class LocalIssuer:
    """An issuer whose keys the test holds: it mints any token, honest or not."""

    def __init__(self, issuer: str = "https://issuer.test", kid: str = "k1") -> None:
        self.issuer = issuer
        self.key = ECKey.generate_key("P-256", parameters={"kid": kid, "use": "sig"})

    def jwks(self) -> dict[str, Any]:
        return KeySet([self.key]).as_dict(private=False)

    def token(self, audience: str, scope: str = "mcp", *, subject: str = "carol", **claims: Any) -> str:
        now = int(time.time())
        payload = {"iss": self.issuer, "sub": subject, "aud": audience, "scope": scope, "iat": now, "exp": now + 300}
        payload.update(claims)
        payload = {name: value for name, value in payload.items() if value is not None}
        return jwt.encode({"alg": "ES256", "typ": "at+jwt", "kid": self.key.kid}, payload, self.key)


# --------------------------------------------------------------------------- our server


def scoped_server(name: str = "protected") -> Server:
    """A server with a tool for everyone, tools needing more scopes, a scoped prompt and resource."""
    server = Server(name, "1.0")

    @server.tool()
    def whoami(ctx: Context) -> str:
        """The principal the caller is bound by."""
        return str(ctx.principal)

    @server.tool(scopes=["mcp:admin"])
    def purge() -> str:
        return "purged"

    @server.tool(scopes=["files:write", "mcp:reports"])
    async def publish(title: str) -> str:
        return f"published {title}"

    @server.tool(scopes=["files:read"])
    def read_file() -> str:
        return "contents"

    @server.prompt(scopes=["mcp:admin"])
    def admin_prompt() -> str:
        return "be careful"

    @server.resource("memo://secret", scopes=["mcp:admin"])
    def secret() -> str:
        return "the secret"

    @server.resource("memo://public")
    def public() -> str:
        return "public"

    return server


def jwt_auth(issuer: str, jwks_uri: str, **options: Any) -> Callable[[str], ResourceAuth]:
    """``resource -> ResourceAuth`` verifying the JWTs of ``issuer``."""

    def make(resource: str) -> ResourceAuth:
        options.setdefault("scopes_required", ["mcp"])
        return ResourceAuth(resource, issuer, JwtVerifier(jwks_uri), **options)

    return make


@contextlib.asynccontextmanager
async def serving(
    server: Server,
    make_auth: Callable[[str], ResourceAuth],
    *,
    path: str = "/mcp",
    ours: bool = False,
    **app_options: Any,
) -> AsyncIterator[tuple[str, HttpApp]]:
    """``server`` protected by ``make_auth(its URL)`` under uvicorn (``ours``: ``run_http``'s own
    HTTP server) on a free loopback port; yields (the endpoint's URL, the app)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}{path}"
    app = server.http_app(path, auth=make_auth(url), **app_options)
    if ours:
        async with _on_our_server(app, sock):
            yield url, app
        return
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    runner = uvicorn.Server(config)
    runner.capture_signals = contextlib.nullcontext  # type: ignore[method-assign, assignment]
    task = asyncio.get_running_loop().create_task(runner.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(5):
            while not runner.started:  # noqa: ASYNC110 - uvicorn sets a flag, not an event
                await asyncio.sleep(0.01)
        yield url, app
    finally:
        runner.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, 5)
        sock.close()


@contextlib.asynccontextmanager
async def _on_our_server(app: Any, sock: socket.socket) -> AsyncIterator[None]:
    from backchannel.http_host.h1.serving import HttpServer
    from backchannel.testing import within

    runner = HttpServer(app, grace=1.0)
    task = asyncio.get_running_loop().create_task(runner.serve(sock=sock, signals=False))
    try:
        await within(lambda: runner.started or task.done(), timeout=5)
        if task.done():
            task.result()
        yield
    finally:
        runner.stop()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, 10)
        sock.close()


def in_process(app: Any, base: str = "http://127.0.0.1:8000") -> httpx2.AsyncClient:
    """An HTTP client that reaches ``app`` in this process (no socket)."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=base, timeout=10)


# --------------------------------------------------------------------------- requests


def auth_headers(token: str | None, *, scheme: str = "Bearer", proof: str | None = None) -> dict[str, str]:
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"{scheme} {token}"
    if proof is not None:
        headers["dpop"] = proof
    return headers


def stateless(
    method: str, params: dict[str, Any] | None = None, request_id: int = 1
) -> tuple[dict[str, Any], dict[str, str]]:
    """A stateless-era request and the headers SEP-2243 wants beside it."""
    meta = {M.PROTOCOL_VERSION: STATELESS, M.CLIENT_CAPABILITIES: {"elicitation": {}}}
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}
    headers = {"mcp-protocol-version": STATELESS, "mcp-method": method}
    name = (params or {}).get("name", (params or {}).get("uri"))
    if isinstance(name, str):
        headers["mcp-name"] = name
    return message, headers


async def call(
    http: httpx2.AsyncClient,
    url: str,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    token: str | None,
    scheme: str = "Bearer",
    proof: str | None = None,
) -> httpx2.Response:
    """One stateless-era request with ``token`` (and a DPoP ``proof``)."""
    message, extra = stateless(method, params)
    return await http.post(url, json=message, headers={**auth_headers(token, scheme=scheme, proof=proof), **extra})


def challenge_params(response: httpx2.Response) -> dict[str, str]:
    """The scheme (``scheme``) and quoted parameters of ``WWW-Authenticate``, the first of each name."""
    value = response.headers["www-authenticate"]
    found = {"scheme": value.split(" ", 1)[0]}
    for name, quoted in re.findall(r'([A-Za-z_]+)="([^"]*)"', value):
        found.setdefault(name, quoted)
    return found


def result_text(response: httpx2.Response) -> str:
    body = response.json()
    assert "result" in body, body
    text: str = body["result"]["content"][0]["text"]
    return text


__all__ = [
    "ACCEPT",
    "AS_CONFIG",
    "HANDSHAKE",
    "SCOPES",
    "STATELESS",
    "AuthorizationServer",
    "Dpop",
    "DpopKey",
    "LocalIssuer",
    "authorization_server",
    "call",
    "challenge_params",
    "in_process",
    "jwt_auth",
    "result_text",
    "scoped_server",
    "serving",
    "stateless",
]
