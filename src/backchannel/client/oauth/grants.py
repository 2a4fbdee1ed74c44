"""How a token is obtained once the authorization server is known: the grants.

- ``AuthorizationCode``: a person logs in in a browser (``Redirect``); PKCE S256, ``state``,
  ``resource`` and the RFC 9207 ``iss`` check; the client is pre-registered, a metadata
  document URL, or registered on the spot.
- ``ClientCredentials``: a program on its own behalf, with a secret (``client_secret_basic`` or
  ``client_secret_post``) or a private key (``private_key_jwt``, RFC 7523).
- ``WorkloadIdentity``: a workload's own JWT from its platform, as an RFC 7523 JWT-bearer grant
  (SEP-1933); a refusal is final, never retried with another grant.
- ``EnterpriseManaged``: the enterprise identity provider exchanges the person's ID token for an
  ID-JAG (RFC 8693 token exchange), which the authorization server takes as a JWT-bearer grant
  (SEP-990).
- ``KeptLogin``: the tokens a person's earlier login left in the store, refreshed as they run
  out, never a new login (a script's run: ``backchannel call``).

``OAuth`` calls ``obtain`` with the scopes to ask for (None: no ``scope`` parameter) and
``authentication`` when it refreshes a token; a grant never chooses the server or the resource.
"""

from __future__ import annotations

__all__ = [
    "AuthorizationCode",
    "ClientCredentials",
    "EnterpriseManaged",
    "Grant",
    "GrantContext",
    "KeptLogin",
    "WorkloadIdentity",
]

import inspect
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

import httpx2

from .authorize import AuthorizationRequest
from .browser import Redirect
from .discovery import find_server
from .errors import AuthorizationFailed, LoginNeeded
from .metadata import ServerMetadata
from .registration import RegisteredClient, register, registration_method, validate_metadata_url
from .signing import DpopKey
from .store import TokenStore
from .tokens import ClientAuthentication, TokenSet, token_request

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"

#: A value, or something that produces it (sync or async): a token file to read at each use.
Source = str | Callable[[], str | Awaitable[str]]


async def _resolve(source: Source) -> str:
    if isinstance(source, str):
        return source
    value = source()
    return await value if inspect.isawaitable(value) else value


def _scoped(form: dict[str, str], scopes: tuple[str, ...] | None) -> dict[str, str]:
    if scopes:
        form["scope"] = " ".join(scopes)
    return form


@dataclass(slots=True)
class GrantContext:
    """What a grant works with: the chosen server, the resource, and how to reach the token endpoint."""

    http: httpx2.AsyncClient
    server: ServerMetadata
    resource: str
    store: TokenStore
    dpop: DpopKey | None = None
    nonces: MutableMapping[str, str] | None = None

    async def token(
        self, form: dict[str, str], client: ClientAuthentication | None, requested: tuple[str, ...] | None
    ) -> TokenSet:
        """``form`` at this server's token endpoint, with DPoP when the tokens are to be bound."""
        return await token_request(
            self.http,
            self.server.token_endpoint,
            self.server.issuer,
            form,
            client,
            dpop=self.dpop,
            nonces=self.nonces,
            resource=self.resource,
            requested=requested,
        )


@runtime_checkable
class Grant(Protocol):
    """How ``OAuth`` gets tokens: ``obtain`` a new set, and the ``authentication`` to refresh one with;
    ``interactive`` when a person takes part."""

    #: Whether it needs a person (a browser): such a grant runs only for a request that can wait.
    interactive: bool

    async def obtain(self, context: GrantContext, scopes: tuple[str, ...] | None) -> TokenSet:
        """Get a new token set for ``context.resource`` from ``context.server``, asking for ``scopes`` (``None``:
        the server's default); ``OAuth`` calls this when it has no token that will do."""

    async def authentication(self, context: GrantContext) -> ClientAuthentication | None:
        """The client authentication for a refresh at ``context.server``."""
        ...


def _loopback_alike(a: str, b: str) -> bool:
    """Two redirect URIs that differ at most in a loopback port (RFC 8252 §7.3: any port goes)."""
    x, y = urlsplit(a), urlsplit(b)
    loopback = ("127.0.0.1", "localhost", "::1")
    return a == b or (x.scheme == y.scheme == "http" and x.hostname == y.hostname in loopback and x.path == y.path)


class AuthorizationCode:
    """A person logs in: the authorization code grant with PKCE (see the module docstring).

    Registration: ``client_id`` (and ``client_secret``) when the client is registered already,
    bound to ``client_issuer`` or else to the first server it meets; else ``client_metadata_url``
    where the server takes metadata documents; else dynamic registration as ``client_name``.
    ``offline_access`` adds that scope when the server lists it, asking for a refresh token.
    """

    interactive = True

    def __init__(
        self,
        redirect: Redirect,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_issuer: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "backchannel",
        offline_access: bool = True,
    ) -> None:
        self.redirect = redirect
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_issuer = client_issuer
        self.client_metadata_url = validate_metadata_url(client_metadata_url) if client_metadata_url else None
        self.client_name = client_name
        self.offline_access = offline_access

    async def client(self, context: GrantContext, *, may_register: bool = True) -> RegisteredClient | None:
        """Who we are at ``context.server`` (registering if need be and ``may_register``)."""
        server = context.server
        if self.client_id is not None:
            if self.client_issuer is None:
                self.client_issuer = server.issuer  # pre-registered credentials belong to one server
            if self.client_issuer != server.issuer:
                raise AuthorizationFailed(
                    f"the client {self.client_id!r} is registered with {self.client_issuer}, but {context.resource} "
                    f"now uses the authorization server {server.issuer}: register a client there"
                )
            method = registration_method(server, has_secret=self.client_secret is not None)
            return RegisteredClient(self.client_id, self.client_secret, method, (), server.issuer)
        if self.client_metadata_url is not None and server.cimd:
            return RegisteredClient(self.client_metadata_url, None, "none", (), server.issuer)
        key = f"client {server.issuer}"
        stored = await context.store.get(key)
        known = RegisteredClient.from_dict(stored) if stored is not None else None
        usable = known is not None and known.issuer == server.issuer
        if not may_register:
            return known if usable else None  # a refresh: the redirect URI plays no part (nor takes a port)
        uri = self.redirect.redirect_uri
        if known is not None and usable and any(_loopback_alike(u, uri) for u in known.redirect_uris):
            return known
        registered = await register(
            context.http,
            server,
            client_name=self.client_name,
            redirect_uri=uri,
            grant_types=("authorization_code", "refresh_token"),
        )
        await context.store.set(key, registered.to_dict())
        return registered

    async def obtain(self, context: GrantContext, scopes: tuple[str, ...] | None) -> TokenSet:
        """Log the person in through ``redirect`` (PKCE, the client registered first if need be) and trade the code
        for tokens."""
        client = await self.client(context)
        assert client is not None
        offered = context.server.scopes_supported or ()
        if self.offline_access and "offline_access" in offered and "offline_access" not in (scopes or ()):
            scopes = (*(scopes or ()), "offline_access")  # SEP-2207: only when the server lists it
        request = AuthorizationRequest.start(
            context.server,
            client_id=client.client_id,
            redirect_uri=self.redirect.redirect_uri,
            resource=context.resource,
            scopes=scopes,
        )
        code = request.code(await self.redirect.authorize(request.url))
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": request.redirect_uri,
            "code_verifier": request.verifier,
            "resource": context.resource,
        }
        return await context.token(form, client.authentication(), scopes)

    async def authentication(self, context: GrantContext) -> ClientAuthentication | None:
        """The client this grant registered at ``context.server``, to refresh with; ``None`` before it registered."""
        client = await self.client(context, may_register=False)
        return client.authentication() if client is not None else None


class KeptLogin:
    """The login a person made before with ``AuthorizationCode`` (``backchannel connect``), as the
    ``store`` keeps it: its tokens, refreshed with the client that registered for them when they
    run out or are refused, and never a new login, for a run with nobody at the keyboard.

    When no kept token will do (none kept, or a refresh refused), ``obtain`` raises ``LoginNeeded``
    and ``needed`` turns True, so the program can say what to do: log in once, the usual way.
    """

    interactive = False

    def __init__(self) -> None:
        #: True once a request needed a login that this grant could not give.
        self.needed = False

    async def obtain(self, context: GrantContext, scopes: tuple[str, ...] | None) -> TokenSet:
        """Always raises ``LoginNeeded``: this grant never starts a login; keep one with ``AuthorizationCode`` first."""
        self.needed = True
        raise LoginNeeded(f"{context.resource} needs a login (no kept login will do), and this client starts none")

    async def authentication(self, context: GrantContext) -> ClientAuthentication | None:
        """The client the person's login registered at ``context.server`` (``AuthorizationCode``)."""
        stored = await context.store.get(f"client {context.server.issuer}")
        client = RegisteredClient.from_dict(stored) if stored is not None else None
        if client is None or client.issuer != context.server.issuer:
            return None
        return client.authentication()


class ClientCredentials:
    """A program on its own behalf (RFC 6749 §4.4): ``client_secret`` (basic, or post when the
    server takes only that, or ``method``) or ``private_key`` (PEM or JWK) for ``private_key_jwt``."""

    interactive = False

    def __init__(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        private_key: str | dict[str, Any] | None = None,
        algorithm: str = "ES256",
        method: str | None = None,
    ) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.private_key = private_key
        self.algorithm = algorithm
        self.method = method

    def _authentication(self, server: ServerMetadata) -> ClientAuthentication:
        if self.private_key is not None:
            return ClientAuthentication(self.client_id, "private_key_jwt", None, self.private_key, self.algorithm)
        method = self.method or registration_method(server, has_secret=self.client_secret is not None)
        return ClientAuthentication(self.client_id, method, self.client_secret)

    async def obtain(self, context: GrantContext, scopes: tuple[str, ...] | None) -> TokenSet:
        """Ask ``context.server``'s token endpoint for tokens with this client's own id and secret."""
        form = _scoped({"grant_type": "client_credentials", "resource": context.resource}, scopes)
        return await context.token(form, self._authentication(context.server), scopes)

    async def authentication(self, context: GrantContext) -> ClientAuthentication | None:
        """This client's id and secret, in the way ``context.server`` takes them, for a refresh."""
        return self._authentication(context.server)


class WorkloadIdentity:
    """A workload's platform-issued JWT as the grant (RFC 7523 §2.1, SEP-1933). ``assertion`` is
    the JWT, or a function returning a fresh one (read a projected token file, ask a metadata
    server); ``client_id`` and ``client_secret`` if the server wants the client named."""

    interactive = False

    def __init__(self, assertion: Source, *, client_id: str | None = None, client_secret: str | None = None) -> None:
        self.assertion = assertion
        self.client_id = client_id
        self.client_secret = client_secret

    async def obtain(self, context: GrantContext, scopes: tuple[str, ...] | None) -> TokenSet:
        """Trade the workload's JWT (``assertion``, read afresh each time) for tokens at ``context.server``."""
        form = {"grant_type": JWT_BEARER, "assertion": await _resolve(self.assertion), "resource": context.resource}
        return await context.token(_scoped(form, scopes), await self.authentication(context), scopes)

    async def authentication(self, context: GrantContext) -> ClientAuthentication | None:
        """The client's id (and secret) for ``context.server``, or ``None`` when this grant names no client."""
        if self.client_id is None:
            return None
        method = registration_method(context.server, has_secret=self.client_secret is not None)
        return ClientAuthentication(self.client_id, method, self.client_secret)


class EnterpriseManaged:
    """Enterprise-managed authorization (SEP-990): the identity provider at ``idp_issuer`` (or its
    ``idp_token_endpoint``) exchanges ``id_token`` for an ID-JAG naming this authorization server
    and resource; the authorization server takes it as a JWT-bearer grant from ``client_id``."""

    interactive = False

    def __init__(
        self,
        *,
        id_token: Source,
        client_id: str,
        client_secret: str | None = None,
        idp_issuer: str | None = None,
        idp_token_endpoint: str | None = None,
        idp_client_id: str | None = None,
        idp_client_secret: str | None = None,
    ) -> None:
        if idp_issuer is None and idp_token_endpoint is None:
            raise ValueError("EnterpriseManaged needs the identity provider: idp_issuer or idp_token_endpoint")
        self.id_token = id_token
        self.client_id = client_id
        self.client_secret = client_secret
        self.idp_issuer = idp_issuer
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id
        self.idp_client_secret = idp_client_secret

    async def obtain(self, context: GrantContext, scopes: tuple[str, ...] | None) -> TokenSet:
        """Exchange ``id_token`` at the identity provider for an ID-JAG, then that for an access token at
        ``context.server``."""
        endpoint = self.idp_token_endpoint
        if endpoint is None:
            assert self.idp_issuer is not None
            endpoint = (await find_server(context.http, self.idp_issuer)).token_endpoint
        exchange = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": context.server.issuer,
            "resource": context.resource,
            "subject_token": await _resolve(self.id_token),
            "subject_token_type": ID_TOKEN,
        }
        idp_client = None
        if self.idp_client_id is not None:
            method = "client_secret_basic" if self.idp_client_secret is not None else "none"
            idp_client = ClientAuthentication(self.idp_client_id, method, self.idp_client_secret)
        grant = await token_request(
            context.http, endpoint, self.idp_issuer or endpoint, _scoped(exchange, scopes), idp_client
        )
        form = {"grant_type": JWT_BEARER, "assertion": grant.access_token, "resource": context.resource}
        return await context.token(_scoped(form, scopes), await self.authentication(context), scopes)

    async def authentication(self, context: GrantContext) -> ClientAuthentication | None:
        """This client's id (and secret), in the way ``context.server`` takes them, for a refresh."""
        method = registration_method(context.server, has_secret=self.client_secret is not None)
        return ClientAuthentication(self.client_id, method, self.client_secret)
