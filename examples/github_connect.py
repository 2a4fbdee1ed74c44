"""Connect GitHub from a tool: URL-mode elicitation running a real OAuth 2.0 flow.

    pip install -e '.[examples]'
    python examples/github_connect.py

Three parties, all on 127.0.0.1:

- **"GitHub"**, a small OAuth 2.0 provider built with authlib's ``AuthorizationServer``:
  the authorization-code grant with PKCE (S256, required), a confidential client
  (``client_secret_basic``), a sign-in and consent page, a token endpoint and a
  ``/user`` API. Accounts: ``octocat`` / ``hubot`` (password: the name + ``-pass``).
- **The MCP server** (Streamable HTTP at ``/mcp``, both protocol eras) with the
  URL-elicitation pages at ``/elicit``. Bearer tokens name the MCP user
  (``alice-token`` → ``alice``). ``github_profile`` connects GitHub on first use with
  ``ctx.elicit_url`` and finishes once the flow is done; ``github_repos`` does the
  same through ``-32042`` (handshake era) and the client's retry. The server is the
  OAuth client (authlib's ``AsyncOAuth2Client``); the GitHub token is stored here,
  keyed by the MCP user, and never crosses the MCP channel: tools answer with the
  login name and repository names only.
- **The MCP client** (this process): its URL handler shows who asks, the message,
  the full URL with its host, and asks before it opens your browser.

Who may finish the flow (the phishing rule): the URL the client shows points at the
MCP server's own ``/elicit/<token>`` page, never at GitHub. The token is one-time,
256-bit, expiring and bound to the MCP user; the page first asks for the
confirmation code that only the client shows (it is not in the URL), so a forwarded
link alone gets nowhere. The browser that types the right code uses the link up and
receives a per-flow HttpOnly cookie; only then is it sent to GitHub, with a one-time
OAuth ``state``. GitHub's redirect back is accepted only with that ``state`` *and*
that cookie, so a link or an authorization URL finished in someone else's browser is
refused, and the token lands with the MCP user who asked. (A server that has a web
login can also pass ``identify=`` to compare the browser's user with the MCP user;
see ``backchannel.server.url_elicitation``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import json
import socket
import sys
import time
import webbrowser
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import httpx2
import uvicorn
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from authlib.oauth2 import AuthorizationServer, OAuth2Error, OAuth2Request
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7636 import CodeChallenge
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from backchannel import Client, Context, Server, ToolError
from backchannel.client.url_flow import UrlElicitation
from backchannel.http_host.app import HttpApp
from backchannel.http_host.authenticator import BearerTokens
from backchannel.server.url_elicitation import UrlElicitations, UrlFlow

CLIENT_ID = "mcp-github-connect"
ACCOUNTS = {"octocat": "octocat-pass", "hubot": "hubot-pass"}
REPOS = {"octocat": ["hello-world", "Spoon-Knife"], "hubot": ["hubot-scripts"]}
MCP_USERS = {"alice-token": "alice", "bob-token": "bob"}
SCOPE = "read:user"

# --------------------------------------------------------------------------- the provider


class _OAuthClient(ClientMixin):  # type: ignore[misc]
    """The one registered client: the MCP server."""

    def __init__(self, client_id: str, secret: str, redirect_uri: str) -> None:
        self.client_id, self.secret, self.redirect_uri = client_id, secret, redirect_uri

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_allowed_scope(self, scope: str | None) -> str:
        return " ".join(part for part in (scope or "").split() if part == SCOPE)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri == self.redirect_uri

    def check_client_secret(self, client_secret: str) -> bool:
        return hmac.compare_digest(client_secret.encode(), self.secret.encode())

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "client_secret_basic"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class _Code(AuthorizationCodeMixin):  # type: ignore[misc]
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


class _CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic"]

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        self.server.codes[code] = _Code(
            code,
            request.client.get_client_id(),
            data.get("redirect_uri", ""),
            request.scope or "",
            request.user,
            data.get("code_challenge"),
            data.get("code_challenge_method"),
            time.time() + 60,
        )

    def query_authorization_code(self, code: str, client: _OAuthClient) -> _Code | None:
        found: _Code | None = self.server.codes.get(code)
        if found and found.client_id == client.get_client_id() and found.expires_at > time.time():
            return found
        return None

    def delete_authorization_code(self, authorization_code: _Code) -> None:
        self.server.codes.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: _Code) -> str:
        return authorization_code.user


class _Request(OAuth2Request):  # type: ignore[misc]
    """An authlib request from a Starlette one whose body was already read (authlib is synchronous)."""

    def __init__(self, request: Request, form: Mapping[str, str]) -> None:
        super().__init__(request.method, str(request.url), headers=request.headers)
        self._args = dict(request.query_params)
        self._form = dict(form)
        self.payload = BasicOAuth2Payload({**self._args, **self._form})

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class Provider(AuthorizationServer):  # type: ignore[misc]
    """The "GitHub" authorization server; ``issued`` maps each access token to its user."""

    def __init__(self, client: _OAuthClient) -> None:
        super().__init__(scopes_supported=[SCOPE])
        self.client = client
        self.codes: dict[str, _Code] = {}
        self.issued: dict[str, str] = {}
        self.register_grant(_CodeGrant, [CodeChallenge(required=True)])
        self.register_token_generator("default", BearerTokenGenerator(lambda **_: generate_token(40)))

    def query_client(self, client_id: str) -> _OAuthClient | None:
        return self.client if client_id == self.client.client_id else None

    def save_token(self, token: dict[str, Any], request: OAuth2Request) -> None:
        self.issued[token["access_token"]] = request.user

    def create_oauth2_request(self, request: _Request) -> _Request:
        return request

    def create_json_request(self, request: _Request) -> _Request:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Response:
        content = json.dumps(body) if isinstance(body, dict) else body
        return Response(content, status_code=status, headers=dict(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None


def build_provider(redirect_uri: str, client_secret: str) -> tuple[Starlette, Provider]:
    provider = Provider(_OAuthClient(CLIENT_ID, client_secret, redirect_uri))

    def page(title: str, body: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(
            f"<!doctype html><title>{html.escape(title)}</title><h1>{html.escape(title)}</h1>{body}",
            status_code=status,
            headers={"cache-control": "no-store", "referrer-policy": "no-referrer"},
        )

    def sign_in(request: Request, client_name: str, problem: str = "") -> HTMLResponse:
        note = f'<p id="problem">{html.escape(problem)}</p>' if problem else ""
        return page(
            "Sign in to GitHub",
            f"<p><strong>{html.escape(client_name)}</strong> wants to read your profile ({SCOPE}).</p>{note}"
            '<form method="post"><p><label>Login <input id="login" name="login" autocomplete="username"></label></p>'
            '<p><label>Password <input id="password" name="password" type="password"></label></p>'
            '<button id="allow" name="decision" value="allow">Authorize</button> '
            '<button id="deny" name="decision" value="deny">Cancel</button></form>',
            401 if problem else 200,
        )

    async def authorize(request: Request) -> Response:
        oauth_request = _Request(request, {})
        try:
            grant = provider.get_consent_grant(oauth_request, end_user=None)
        except OAuth2Error as error:
            return page("Bad request", f"<p>{html.escape(error.error)}</p>", 400)
        if oauth_request.payload.data.get("code_challenge_method") != "S256":
            return page("Bad request", "<p>PKCE with S256 is required.</p>", 400)
        if request.method == "GET":
            return sign_in(request, CLIENT_ID)
        form = dict(parse_qsl((await request.body()).decode()))
        if form.get("decision") != "allow":
            return provider.create_authorization_response(oauth_request, grant_user=None, grant=grant)  # type: ignore[no-any-return]
        login = form.get("login", "")
        password = ACCOUNTS.get(login)
        if password is None or not hmac.compare_digest(password.encode(), form.get("password", "").encode()):
            return sign_in(request, CLIENT_ID, "Incorrect login or password.")
        return provider.create_authorization_response(oauth_request, grant_user=login, grant=grant)  # type: ignore[no-any-return]

    async def token(request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode()))
        return provider.create_token_response(_Request(request, form))  # type: ignore[no-any-return]

    def user_of(request: Request) -> str | None:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return provider.issued.get(value) if scheme.lower() == "bearer" else None

    async def user(request: Request) -> Response:
        login = user_of(request)
        if login is None:
            return JSONResponse({"message": "Requires authentication"}, status_code=401)
        return JSONResponse({"login": login, "id": sorted(ACCOUNTS).index(login) + 1})

    async def repos(request: Request) -> Response:
        login = user_of(request)
        if login is None:
            return JSONResponse({"message": "Requires authentication"}, status_code=401)
        return JSONResponse([{"name": name} for name in REPOS.get(login, [])])

    app = Starlette(
        routes=[
            Route("/login/oauth/authorize", authorize, methods=["GET", "POST"]),
            Route("/login/oauth/access_token", token, methods=["POST"]),
            Route("/user", user),
            Route("/user/repos", repos),
        ]
    )
    return app, provider


# ------------------------------------------------------------------------- the MCP server


class GitHubConnect:
    """The URL flow: the MCP server acts as GitHub's OAuth client (authorization code + PKCE)."""

    def __init__(self, flows: UrlElicitations, provider_url: str, client_secret: str) -> None:
        self.flows = flows
        self.provider_url = provider_url
        self.client_secret = client_secret
        #: GitHub access tokens by MCP user. They stay here: no tool ever returns one.
        self.vault: dict[str | None, str] = {}

    def _oauth(self) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            CLIENT_ID,
            self.client_secret,
            redirect_uri=self.flows.callback_url,
            scope=SCOPE,
            code_challenge_method="S256",
        )

    async def begin(self, flow: UrlFlow) -> str:
        verifier = generate_token(64)
        flow.data["code_verifier"] = verifier
        async with self._oauth() as oauth:
            url, _ = oauth.create_authorization_url(
                f"{self.provider_url}/login/oauth/authorize", state=flow.state, code_verifier=verifier
            )
        return str(url)

    async def finish(self, flow: UrlFlow, params: Mapping[str, str]) -> None:
        async with self._oauth() as oauth:
            token = await oauth.fetch_token(
                f"{self.provider_url}/login/oauth/access_token",
                code=params["code"],
                code_verifier=flow.data.pop("code_verifier"),
            )
        self.vault[flow.owner] = token["access_token"]

    async def api(self, owner: str | None, path: str) -> Any:
        token = self.vault.get(owner)
        if token is None:
            return None
        async with httpx2.AsyncClient() as http:
            response = await http.get(f"{self.provider_url}{path}", headers={"authorization": f"Bearer {token}"})
        if response.status_code == 401:
            self.vault.pop(owner, None)  # revoked or expired: connect again
            return None
        response.raise_for_status()
        return response.json()


def build_server(mcp_url: str, provider_url: str, client_secret: str) -> tuple[Server, GitHubConnect]:
    server = Server("github-connect", "1.0", instructions="Tools that use your GitHub account.")
    flows = UrlElicitations(mcp_url, title="github-connect")
    server.url_elicitations = flows
    github = GitHubConnect(flows, provider_url, client_secret)

    @server.tool()
    async def github_profile(ctx: Context) -> str:
        """Your GitHub login. Connects your GitHub account first if needed."""
        profile = await github.api(ctx.principal, "/user")
        if profile is None:
            outcome = await ctx.elicit_url("Connect your GitHub account so that I can read your profile.", flow=github)
            profile = await github.api(ctx.principal, "/user") if outcome.accepted else None
            if profile is None:
                return "GitHub is not connected: the browser step was declined or did not finish."
        return f"Connected to GitHub as {profile['login']}."

    @server.tool()
    async def github_repos(ctx: Context) -> list[str]:
        """Your GitHub repositories. Not connected yet: the call fails with -32042 (handshake era)
        and your client retries it once you have connected in the browser."""
        repos = await github.api(ctx.principal, "/user/repos")
        if repos is None:
            outcome = await ctx.elicit_url(
                "Connect your GitHub account so that I can list your repositories.", flow=github, via="error"
            )
            # Reached in the stateless era only, once the flow is over (MRTR rounds).
            repos = await github.api(ctx.principal, "/user/repos") if outcome.accepted else None
            if repos is None:
                raise ToolError("GitHub is not connected.")
        return [repo["name"] for repo in repos]

    return server, github


# ------------------------------------------------------------------------------- running


@dataclass
class Deployment:
    """Everything the example runs: the URLs, the apps and their state."""

    mcp_url: str
    provider_url: str
    server: Server
    github: GitHubConnect
    provider: Provider
    apps: list[Any] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"{self.mcp_url}/mcp"


def _bind() -> tuple[socket.socket, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextlib.asynccontextmanager
async def _serve(app: Any, sock: socket.socket) -> AsyncIterator[None]:
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    async with asyncio.timeout(10):
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
    try:
        yield
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, 5)
        sock.close()


@contextlib.asynccontextmanager
async def running() -> AsyncIterator[Deployment]:
    """Start the provider and the MCP server on free 127.0.0.1 ports, in this event loop."""
    mcp_sock, mcp_url = _bind()
    provider_sock, provider_url = _bind()
    secret = generate_token(32)
    server, github = build_server(mcp_url, provider_url, secret)
    provider_app, provider = build_provider(github.flows.callback_url, secret)
    mcp_app: HttpApp = server.http_app(authenticator=BearerTokens(MCP_USERS))
    async with _serve(provider_app, provider_sock), _serve(mcp_app, mcp_sock):
        yield Deployment(mcp_url, provider_url, server, github, provider, [provider_app, mcp_app])


async def ask_in_terminal(request: UrlElicitation) -> str:
    """Show who asks, why, and exactly where the link goes; open it only on "yes"."""
    print(f"\n{request.server_name} asks you to open a link:\n\n{request.message}\n")
    print(f"  URL:  {request.url}\n  Site: >>> {request.host} <<<")
    for warning in request.warnings:
        print(f"  Warning: {warning}")
    answer = await asyncio.to_thread(input, "\nOpen it in your browser? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        return "decline"
    webbrowser.open(request.url)
    print(f"Sign in as one of {', '.join(ACCOUNTS)} (password: the login followed by '-pass').")
    return "accept"


async def main() -> None:
    async with (
        running() as deployment,
        Client.http(
            deployment.endpoint,
            headers={"authorization": "Bearer alice-token"},
            url_elicitation=ask_in_terminal,
            request_timeout=None,  # the tool waits while you are in the browser
        ) as client,
    ):
        print(f"MCP server at {deployment.endpoint} ({client.era} era); GitHub stand-in at {deployment.provider_url}")
        for tool in ("github_profile", "github_repos"):
            result = await client.call_tool(tool)
            print(f"{tool}: {result.structured_content or ''.join(getattr(b, 'text', '') for b in result.content)}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
