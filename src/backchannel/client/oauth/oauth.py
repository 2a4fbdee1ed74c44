"""``OAuth``: the HTTP client's authorization, as an ``httpx2.Auth`` flow (2026-07-28 authorization).

Every request to the MCP endpoint goes through ``async_auth_flow``: the token (refreshed first
when it is about to expire) goes in ``Authorization`` (``Bearer``, or ``DPoP`` with a fresh
proof); a 401 or a 403 ``insufficient_scope`` is answered here and the request sent again:

- a 401 re-reads the resource's metadata (its authorization server may have changed: a new one
  means new tokens and a new registration, never the old ones), tries the refresh token, then
  the grant, with the challenge's scopes, else the metadata's ``scopes_supported``, else none;
- a 403 asks for the union of the scopes asked for before and those the challenge names (a
  step-up), unless the token already holds them: then more of the same cannot help;
- a DPoP ``use_dpop_nonce`` challenge is answered once with the nonce the server named.

At most ``max_authorizations`` authorizations per request; then the request fails with
``AuthorizationFailed`` and the reason. A grant that needs a person (the browser login) runs only
for a POST: the background GET stream never opens a browser. One login at a time: requests
refused meanwhile wait for it and then use its token.

Across processes too, when the store is shared (``FileTokenStore``): each login and each refresh
holds the store's lock for its authorization server, and reads the store again once it holds it.
Tokens another process kept meanwhile are used as they are (or refreshed, when they run out), so
one person logs in once, and a rotating refresh token is spent once, however many processes start
together. The PKCE verifier and ``state`` stay in this process's memory, never in the store.
"""

from __future__ import annotations

__all__ = ["OAuth"]

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import urlsplit

import httpx2

from . import endpoints
from .browser import Redirect
from .challenge import Challenge, challenges_of
from .discovery import find_legacy_server, find_resource, find_server
from .endpoints import Endpoint
from .errors import AuthorizationFailed, TokenRequestFailed
from .grants import AuthorizationCode, Grant, GrantContext
from .metadata import ResourceMetadata, ServerMetadata, canonical_resource
from .signing import DpopKey
from .store import MemoryTokenStore, SharedTokenStore, TokenStore
from .tokens import TokenSet, revoke, token_request

logger = logging.getLogger("backchannel.oauth")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _union(*groups: Sequence[str] | None) -> tuple[str, ...] | None:
    merged: list[str] = []
    for group in groups:
        merged.extend(scope for scope in group or () if scope not in merged)
    return tuple(merged) or None


class OAuth(httpx2.Auth):
    """Log in where an MCP server asks: ``Client.http(url, auth=OAuth(LoopbackBrowser()))``.

    ``redirect`` (a ``Redirect``: ``LoopbackBrowser()``) makes the authorization code grant,
    with ``client_id``/``client_secret`` for a pre-registered client, ``client_metadata_url``
    for a client ID metadata document, else dynamic registration as ``client_name``; or give
    another ``grant`` (``ClientCredentials``, ``WorkloadIdentity``, ``EnterpriseManaged``).
    ``scopes`` are asked for when the server names none. ``dpop``: True to ask for DPoP-bound
    tokens wherever the authorization server offers them, False never, None (default) when the
    resource asks for them too. ``store`` keeps tokens (``FileTokenStore`` for across runs).
    ``allow_http`` allows plain-HTTP authorization servers off the loopback host (tests only).
    ``lock_timeout``: how long to wait for another process's login or refresh with a shared store
    (longer than a person's login, ``LoopbackBrowser.timeout``), then ``StoreLocked``.
    """

    def __init__(
        self,
        redirect: Redirect | None = None,
        *,
        grant: Grant | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "backchannel",
        scopes: Sequence[str] | None = None,
        offline_access: bool = True,
        dpop: bool | None = None,
        store: TokenStore | None = None,
        http_client: httpx2.AsyncClient | None = None,
        allow_http: bool = False,
        max_authorizations: int = 3,
        refresh_margin: float = 60.0,
        lock_timeout: float = 360.0,
    ) -> None:
        if grant is None:
            if redirect is None:
                raise TypeError("OAuth needs a redirect (LoopbackBrowser(), for a person) or a grant")
            grant = AuthorizationCode(
                redirect,
                client_id=client_id,
                client_secret=client_secret,
                client_metadata_url=client_metadata_url,
                client_name=client_name,
                offline_access=offline_access,
            )
        self.grant = grant
        self.scopes = tuple(scopes) if scopes else None
        self.dpop = dpop
        self.store = store if store is not None else MemoryTokenStore()
        self.http_client = http_client
        self.allow_http = allow_http
        self.max_authorizations = max_authorizations
        self.refresh_margin = refresh_margin
        self.lock_timeout = lock_timeout
        self._endpoints: dict[str, Endpoint] = {}
        self._nonces: dict[str, str] = {}
        self._lock = asyncio.Lock()
        self._pause: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext

    def pause_clocks_with(self, pause: Callable[[], AbstractContextManager[None]]) -> None:
        """While a login runs, ``pause()`` is entered (``Client`` stops its requests' clocks)."""
        self._pause = pause

    # ------------------------------------------------------------------ the flow

    def sync_auth_flow(self, request: httpx2.Request) -> Any:
        raise RuntimeError("OAuth works with httpx2.AsyncClient only")

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        endpoint = await self._endpoint(str(request.url))
        await self._freshen(endpoint)
        self._sign(request, endpoint)
        response = yield request
        rounds = 0
        nonce_answered = False
        while True:
            self._keep_nonce(response)
            if self._nonce_challenge(response) and not nonce_answered:
                nonce_answered = True  # RFC 9449 §9: the same request, once, with the server's nonce
                self._sign(request, endpoint)
                response = yield request
                continue
            refusal = self._refusal(response)
            if refusal is None:
                return
            if rounds >= self.max_authorizations:
                raise AuthorizationFailed(
                    f"{endpoint.url} still refuses the request (HTTP {response.status_code}"
                    f"{': ' + refusal.error if refusal.error else ''}) after {rounds} authorizations"
                )
            rounds += 1
            sent = endpoint.tokens
            with self._pause():
                await self._recover(endpoint, response, refusal, sent, interactive=request.method == "POST")
            nonce_answered = False
            self._sign(request, endpoint)
            response = yield request

    def _refusal(self, response: httpx2.Response) -> Challenge | None:
        """The challenge to answer: any 401, or a 403 whose challenge says ``insufficient_scope``."""
        challenges = challenges_of(response)
        if response.status_code == 401:
            return next((c for c in challenges if c.is_scheme("dpop")), None) or next(
                iter(challenges), Challenge("Bearer")
            )
        if response.status_code == 403:
            return next((c for c in challenges if c.error == "insufficient_scope"), None)
        return None

    def _nonce_challenge(self, response: httpx2.Response) -> bool:
        return (
            response.status_code == 401
            and "dpop-nonce" in response.headers
            and any(c.is_scheme("dpop") and c.error == "use_dpop_nonce" for c in challenges_of(response))
        )

    def _keep_nonce(self, response: httpx2.Response) -> None:
        nonce = response.headers.get("dpop-nonce")
        if nonce:
            self._nonces[_origin(str(response.request.url))] = nonce

    def _sign(self, request: httpx2.Request, endpoint: Endpoint) -> None:
        tokens = endpoint.tokens
        if tokens is None:
            return
        if tokens.bound:
            assert tokens.dpop_key is not None
            if endpoint.signer is None or endpoint.signer.to_dict() != tokens.dpop_key:
                endpoint.signer = DpopKey(tokens.dpop_key)
            nonce = self._nonces.get(_origin(str(request.url)))
            request.headers["authorization"] = f"DPoP {tokens.access_token}"
            request.headers["dpop"] = endpoint.signer.proof(
                request.method, str(request.url), nonce=nonce, access_token=tokens.access_token
            )
        else:
            request.headers["authorization"] = f"Bearer {tokens.access_token}"
            request.headers.pop("dpop", None)

    # ------------------------------------------------------------- recovering

    async def _recover(
        self,
        endpoint: Endpoint,
        response: httpx2.Response,
        refusal: Challenge,
        sent: TokenSet | None,
        *,
        interactive: bool,
    ) -> None:
        async with self._lock, self._http() as http:
            if response.status_code == 403:
                if endpoint.server is None:
                    await self._discover(http, endpoint, refusal)
                needed = refusal.scopes or ()
                held = endpoint.tokens.scopes or () if endpoint.tokens is not None else ()
                if endpoint.tokens is not sent and all(scope in held for scope in needed):
                    return  # another request stepped up meanwhile
                if needed and all(scope in held for scope in needed):
                    raise AuthorizationFailed(
                        f"{endpoint.url} refuses the request for want of scope {' '.join(needed)}, which the token "
                        "already holds: authorizing again would not help"
                    )
                assert endpoint.server is not None
                async with self._shared(endpoint.server.issuer):
                    kept = await self._kept(endpoint, sent)
                    if kept is not None and not kept.expiring(0) and all(s in (kept.scopes or ()) for s in needed):
                        endpoint.tokens = kept  # another process stepped up meanwhile
                        return
                    await self._obtain(http, endpoint, _union(endpoint.requested, needed), interactive)
                return
            if endpoint.tokens is not sent and endpoint.tokens is not None:
                return  # another request already replaced the token the server refused
            await self._discover(http, endpoint, refusal)
            if endpoint.tokens is not None and endpoint.tokens is not sent:
                return  # tokens its issuer gave before for this resource (a run before, another endpoint)
            assert endpoint.server is not None
            async with self._shared(endpoint.server.issuer):
                if await self._adopt(http, endpoint, sent):
                    return  # another process logged in or refreshed while this one waited for the lock
                if sent is not None and endpoint.tokens is sent:
                    endpoint.tokens = None  # refused: not to be sent again
                    if sent.refresh_token and await self._refresh(http, endpoint, sent):
                        return
                scopes = _union(endpoint.requested, refusal.scopes) if refusal.scopes else None
                if scopes is None:
                    scopes = endpoint.requested or (endpoint.metadata.scopes_supported if endpoint.metadata else None)
                await self._obtain(http, endpoint, scopes or self.scopes, interactive)

    async def _discover(self, http: httpx2.AsyncClient, endpoint: Endpoint, refusal: Challenge) -> None:
        """The resource's metadata and its authorization server's, read again on every 401."""
        metadata = await find_resource(http, endpoint.url, refusal.resource_metadata, allow_http=self.allow_http)
        if metadata is None:
            server = await find_legacy_server(http, endpoint.url, allow_http=self.allow_http)
        else:
            server = await self._first_server(http, metadata)
        resource = metadata.resource if metadata is not None else canonical_resource(endpoint.url)
        if endpoint.tokens is not None and (endpoint.tokens.issuer, endpoint.tokens.resource) != (
            server.issuer,
            resource,
        ):
            logger.info("%s now uses %s: its tokens from %s are dropped", endpoint.url, server.issuer, endpoint.issuer)
            endpoint.tokens = None
        if endpoint.issuer not in (None, server.issuer):
            endpoint.requested = None
        endpoint.metadata, endpoint.server, endpoint.resource = metadata, server, resource
        endpoint.issuer = server.issuer
        asked = self.dpop is True or (
            self.dpop is None
            and (refusal.is_scheme("dpop") or (metadata is not None and (metadata.dpop_required or metadata.dpop_algs)))
        )
        endpoint.dpop = bool(asked) and "ES256" in (server.dpop_algs or ())
        if endpoint.tokens is None:
            endpoint.tokens = await endpoints.stored_tokens(self.store, server.issuer, resource)

    async def _first_server(self, http: httpx2.AsyncClient, metadata: ResourceMetadata) -> ServerMetadata:
        problems: list[str] = []
        for issuer in metadata.authorization_servers:
            try:
                return await find_server(http, issuer, allow_http=self.allow_http)
            except AuthorizationFailed as exc:
                problems.append(str(exc))
        raise AuthorizationFailed("; ".join(problems))

    async def _obtain(
        self, http: httpx2.AsyncClient, endpoint: Endpoint, scopes: tuple[str, ...] | None, interactive: bool
    ) -> None:
        if self.grant.interactive and not interactive:
            raise AuthorizationFailed(f"{endpoint.url} needs a login, which only a request (a POST) starts")
        assert endpoint.server is not None
        context = self._context(http, endpoint, DpopKey() if endpoint.dpop else None)
        logger.info("authorizing with %s for %s (scopes: %s)", endpoint.server.issuer, endpoint.resource, scopes)
        endpoint.tokens = await self.grant.obtain(context, scopes)
        endpoint.requested = scopes
        await self._save(endpoint)

    async def _refresh(self, http: httpx2.AsyncClient, endpoint: Endpoint, tokens: TokenSet) -> bool:
        """Refresh ``tokens`` at the server that issued them, and only there; False when refused."""
        server = endpoint.server
        if server is None or server.issuer != tokens.issuer:
            server = await find_server(http, tokens.issuer, allow_http=self.allow_http)
        dpop = DpopKey(tokens.dpop_key) if tokens.dpop_key is not None else None
        context = self._context(http, endpoint, dpop, server)
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token or ""}
        form["resource"] = endpoint.resource
        try:
            client = await self.grant.authentication(context)
            fresh = await token_request(
                http,
                server.token_endpoint,
                server.issuer,
                form,
                client,
                dpop=dpop,
                nonces=self._nonces,
                resource=endpoint.resource,
                requested=tokens.scopes,
            )
        except TokenRequestFailed as exc:
            logger.info("refreshing the token for %s failed: %s", endpoint.url, exc)
            endpoint.tokens = None
            await self._save(endpoint)
            return False
        endpoint.tokens = tokens.refreshed(fresh)
        await self._save(endpoint)
        return True

    async def _freshen(self, endpoint: Endpoint) -> None:
        """Refresh a token that is about to expire before it is sent; drop one that has."""
        tokens = endpoint.tokens
        if tokens is None or not tokens.expiring(self.refresh_margin):
            return
        async with self._lock:
            if endpoint.tokens is not tokens:
                return
            with self._pause(), contextlib.suppress(AuthorizationFailed):
                async with self._http() as http, self._shared(tokens.issuer):
                    if await self._adopt(http, endpoint, tokens):
                        return  # another process refreshed it while this one waited for the lock
                    if endpoint.tokens is tokens and tokens.refresh_token:
                        await self._refresh(http, endpoint, tokens)
            if endpoint.tokens is tokens and tokens.expiring(0):
                endpoint.tokens = None  # expired and not renewable: the 401 it would get starts a login

    # ------------------------------------------------- other processes, one store

    @contextlib.asynccontextmanager
    async def _shared(self, issuer: str) -> AsyncIterator[None]:
        """Hold the store's lock for ``issuer`` when the store is shared with other processes: one login or refresh
        at a time, and what is read from the store under it is what the last holder left."""
        if not isinstance(self.store, SharedTokenStore):
            yield
            return
        doing = f"logging in to {issuer} or refreshing its token"
        async with self.store.lock(f"issuer {issuer}", self.lock_timeout, doing=doing):
            yield

    async def _kept(self, endpoint: Endpoint, held: TokenSet | None) -> TokenSet | None:
        """The tokens the store keeps for ``endpoint`` when they are not those ``held`` here (another process's, or
        another ``OAuth``'s with the same store); None when it keeps none or the same."""
        issuer = endpoint.issuer or (held.issuer if held is not None else None)
        if issuer is None:
            return None
        kept = await endpoints.stored_tokens(self.store, issuer, endpoint.resource)
        if kept is None or (held is not None and kept.access_token == held.access_token):
            return None
        return kept

    async def _adopt(self, http: httpx2.AsyncClient, endpoint: Endpoint, held: TokenSet | None) -> bool:
        """Under the store's lock: True when the store keeps newer tokens than ``held`` that will do, now the
        endpoint's (refreshed here first when they run out, with the newest refresh token)."""
        kept = await self._kept(endpoint, held)
        if kept is None:
            return False
        endpoint.tokens = kept
        if not kept.expiring(self.refresh_margin):
            return True
        if kept.refresh_token:
            return await self._refresh(http, endpoint, kept)
        return not kept.expiring(0)

    def _context(
        self, http: httpx2.AsyncClient, endpoint: Endpoint, dpop: DpopKey | None, server: ServerMetadata | None = None
    ) -> GrantContext:
        chosen = server or endpoint.server
        assert chosen is not None
        return GrantContext(http, chosen, endpoint.resource, self.store, dpop, self._nonces)

    # ------------------------------------------------------------- the store

    async def _endpoint(self, url: str) -> Endpoint:
        key = canonical_resource(url)
        endpoint = self._endpoints.get(key)
        if endpoint is None:
            async with self._lock:
                endpoint = self._endpoints.get(key) or await endpoints.load(self.store, key)
                self._endpoints[key] = endpoint
        return endpoint

    async def _save(self, endpoint: Endpoint) -> None:
        await endpoints.save(self.store, endpoint)

    @contextlib.asynccontextmanager
    async def _http(self) -> AsyncIterator[httpx2.AsyncClient]:
        if self.http_client is not None:
            yield self.http_client
            return
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http:
            yield http

    # ------------------------------------------------------------- logout

    async def logout(self, url: str) -> bool:
        """Forget the tokens for the MCP endpoint ``url`` (revoking the refresh token where its
        authorization server offers revocation); False when none were kept."""
        endpoint = await self._endpoint(url)
        tokens = endpoint.tokens
        if tokens is not None and tokens.refresh_token:
            with contextlib.suppress(AuthorizationFailed, httpx2.HTTPError):
                async with self._http() as http:
                    server = await find_server(http, tokens.issuer, allow_http=self.allow_http)
                    client = await self.grant.authentication(self._context(http, endpoint, None, server))
                    await revoke(http, server.revocation_endpoint, server.issuer, tokens.refresh_token, client)
        self._endpoints.pop(endpoint.url, None)
        return await endpoints.forget(self.store, endpoint)
