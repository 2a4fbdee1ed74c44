"""The MCP server as an OAuth protected resource: ``ResourceAuth``.

``server.http_app(auth=ResourceAuth(resource=..., issuer=..., verifier=...))`` makes the app

- serve its protected-resource metadata (RFC 9728) at the path-aware well-known URL
  (``/.well-known/oauth-protected-resource/mcp`` for ``https://host/mcp``) and at the root one;
- admit a request only with a valid access token (``admit``): verified by the ``verifier``,
  issued by one of ``issuer``, for this resource (its ``aud`` is the canonical URI, RFC 8707),
  not expired (``leeway`` seconds of clock skew allowed), DPoP-bound tokens with a valid proof
  (``dpop.py``), and holding ``scopes_required``. Anything else is refused with a
  ``WWW-Authenticate`` challenge naming the metadata (``challenge``): 401 without a token or
  with a bad one, 403 ``insufficient_scope`` listing every scope the request needs;
- refuse a call of a tool, prompt or resource registered with ``scopes=`` that the token does
  not grant, with that 403 (``require``), while lists hide what the caller may not use.

Scope hierarchies: ``scope_implies={"files:write": ["files:read"]}`` makes a token granting
``files:write`` hold ``files:read`` too (transitively).
"""

from __future__ import annotations

__all__ = ["ResourceAuth", "challenge_header"]

import dataclasses
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ..state.store import StateStore
from ..types.errors import (
    AuthError,
    InsufficientScope,
    InvalidAuthRequest,
    InvalidDpopProof,
    InvalidToken,
    UseDpopNonce,
)
from .principal import Principal, TokenVerifier
from .urls import audience_form, normalized_url

if TYPE_CHECKING:
    from .dpop import Dpop

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def _quoted(value: str) -> str:
    # RFC 6750 §3: no '"' or '\' inside, printable ASCII only.
    cleaned = "".join(c for c in value.replace('"', "'") if " " <= c <= "~" and c != "\\")
    return f'"{cleaned}"'


def challenge_header(scheme: str, params: Sequence[tuple[str, str]]) -> str:
    """One ``WWW-Authenticate`` challenge: ``scheme`` and its quoted parameters."""
    rendered = ", ".join(f"{name}={_quoted(value)}" for name, value in params)
    return f"{scheme} {rendered}" if rendered else scheme


def _closure(scopes: frozenset[str], implies: Mapping[str, frozenset[str]]) -> frozenset[str]:
    held = set(scopes)
    frontier = list(scopes)
    while frontier:
        for implied in implies.get(frontier.pop(), ()):
            if implied not in held:
                held.add(implied)
                frontier.append(implied)
    return frozenset(held)


class ResourceAuth:
    """What protects an MCP endpoint: see the module docstring.

    ``resource`` is the endpoint's canonical URI (what clients pass as ``resource`` and tokens
    carry as ``aud``); ``audience`` adds other accepted ``aud`` values. ``issuer`` is the
    authorization server (or a list of them) listed in the metadata and accepted as ``iss``.
    ``scopes_supported`` (default: ``scopes_required``) is advertised in the metadata;
    ``metadata`` adds fields to it. ``dpop`` turns DPoP on (``Dpop(required=True)`` to refuse
    bearer tokens). ``clock`` gives epoch seconds for ``exp``/``nbf``."""

    def __init__(
        self,
        resource: str,
        issuer: str | Sequence[str],
        verifier: TokenVerifier,
        *,
        scopes_required: Collection[str] = (),
        scopes_supported: Sequence[str] | None = None,
        scope_implies: Mapping[str, Collection[str]] | None = None,
        audience: str | Collection[str] = (),
        leeway: float = 60.0,
        dpop: Dpop | None = None,
        resource_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        from urllib.parse import urlsplit  # (0.5 MiB with ipaddress: not loaded by a server without auth)

        parts = urlsplit(resource)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc or parts.fragment:
            raise ValueError(f"resource must be an absolute http(s) URI without a fragment, not {resource!r}")
        self.resource = resource
        self.issuers = (issuer,) if isinstance(issuer, str) else tuple(issuer)
        if not self.issuers:
            raise ValueError("name at least one authorization server (issuer=)")
        self.verifier = verifier
        self.scopes_required = tuple(dict.fromkeys(scopes_required))
        self.scopes_supported = list(self.scopes_required if scopes_supported is None else scopes_supported)
        self.scope_implies = {name: frozenset(implied) for name, implied in (scope_implies or {}).items()}
        extra = (audience,) if isinstance(audience, str) else tuple(audience)
        self._audiences = {audience_form(a) for a in (resource, *extra)}
        self.leeway = leeway
        self.dpop = dpop
        self.resource_name = resource_name
        self.extra_metadata = dict(metadata or {})
        self.clock = clock
        path = parts.path.rstrip("/")
        self.metadata_paths = (WELL_KNOWN + path, WELL_KNOWN) if path else (WELL_KNOWN,)
        #: The absolute URL of the metadata, as ``resource_metadata`` in every challenge.
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{self.metadata_paths[0]}"
        self._origin = f"{parts.scheme}://{parts.netloc}"

    # ------------------------------------------------------------ metadata

    def metadata(self) -> dict[str, Any]:
        """The protected-resource metadata document (RFC 9728 §2)."""
        document: dict[str, Any] = {"resource": self.resource, "authorization_servers": list(self.issuers)}
        if self.scopes_supported:
            document["scopes_supported"] = self.scopes_supported
        document["bearer_methods_supported"] = ["header"]
        if self.resource_name:
            document["resource_name"] = self.resource_name
        if self.dpop is not None:
            document["dpop_signing_alg_values_supported"] = list(self.dpop.algorithms)
            document["dpop_bound_access_tokens_required"] = self.dpop.required
        return {**document, **self.extra_metadata}

    def serves(self, path: str) -> bool:
        """Whether ``path`` (the request's full path) is one of the metadata's well-known URLs."""
        return path.rstrip("/") in self.metadata_paths

    def metadata_body(self) -> bytes:
        """The protected resource metadata (RFC 9728) as JSON bytes: serve it at each of ``metadata_paths``."""
        return msgspec.json.encode(self.metadata())

    # ------------------------------------------------------------ admission

    async def admit(
        self, method: str, urls: Collection[str], headers: Mapping[str, str], state: StateStore
    ) -> Principal:
        """The verified caller of a request (``method`` at one of ``urls``, lowercase ``headers``).

        Raises an ``AuthError`` for ``challenge`` to answer. ``state`` holds the DPoP replay
        records and nonce key (shared by every worker of a fleet)."""
        scheme, _, token = headers.get("authorization", "").strip().partition(" ")
        scheme, token = scheme.lower(), token.strip()
        if not scheme:
            raise AuthError("authentication required: send an access token (Authorization: Bearer ...)")
        if scheme not in ("bearer", "dpop") or not token or " " in token:
            raise InvalidAuthRequest("the Authorization header must be 'Bearer <token>' or 'DPoP <token>'")
        dpop = self.dpop
        if scheme == "dpop" and dpop is None:
            raise InvalidToken("this server does not accept DPoP-bound tokens")
        if scheme == "bearer" and dpop is not None and dpop.required:
            raise InvalidToken("this server accepts DPoP-bound tokens only (Authorization: DPoP ...)")
        principal = await self.verifier.verify(token)
        self._check_claims(principal)
        if scheme == "bearer" and principal.jkt is not None:
            raise InvalidToken("the token is bound to a DPoP key: send it as 'Authorization: DPoP' with a proof")
        if scheme == "dpop":
            assert dpop is not None
            proof = headers.get("dpop")
            if not proof or "," in proof:  # repeated headers arrive joined with ", "
                raise InvalidDpopProof("send exactly one DPoP proof header")
            await dpop.check(proof.strip(), method=method, urls=urls, token=token, jkt=principal.jkt, state=state)
        if self.scope_implies:
            principal = dataclasses.replace(principal, scopes=_closure(principal.scopes, self.scope_implies))
        self.require(principal, ())
        return principal

    def _check_claims(self, principal: Principal) -> None:
        if principal.issuer not in self.issuers:
            raise InvalidToken("the token was issued by an authorization server this resource does not trust")
        if not any(audience_form(a) in self._audiences for a in principal.audiences):
            raise InvalidToken(f"the token was not issued for this resource ({self.resource})")
        now = self.clock()
        if principal.expires_at is not None and now > principal.expires_at + self.leeway:
            raise InvalidToken("the token has expired")
        if principal.not_before is not None and now + self.leeway < principal.not_before:
            raise InvalidToken("the token is not valid yet")

    def require(self, principal: Principal | None, needed: Collection[str]) -> None:
        """Raise ``InsufficientScope`` unless ``principal`` holds ``scopes_required`` and ``needed``;
        its scopes are all of them (one challenge lists everything the request needs)."""
        scopes = tuple(dict.fromkeys((*self.scopes_required, *needed)))
        held = principal.scopes if principal is not None else frozenset()
        if not held.issuperset(scopes):
            missing = ", ".join(s for s in scopes if s not in held)
            raise InsufficientScope(f"this request needs the scope(s) {missing}, not granted by the token", scopes)

    def urls_for(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> list[str]:
        """The URLs a DPoP proof's ``htu`` may name for this request: the public one (the resource's
        origin and the request's path, right behind a TLS-terminating proxy) and the one it reached.
        Raises ``InvalidAuthRequest`` (400, RFC 9112 §3.2) for a ``Host`` that is no ``host[:port]``
        (``:abc``, ``:99999``) when DPoP is on."""
        path = scope.get("path", "/")
        urls = [self._origin + path]
        host = headers.get("host")
        if host and self.dpop is not None:  # (only a proof's check reads them)
            url = f"{scope.get('scheme', 'http')}://{host}{path}"
            try:
                normalized_url(url)
            except ValueError:
                raise InvalidAuthRequest(f"the Host header {host[:100]!r} is not a valid host[:port]") from None
            urls.append(url)
        return urls

    # ------------------------------------------------------------ answers

    def challenge(self, error: AuthError) -> dict[str, str]:
        """The response headers refusing with ``error``: ``WWW-Authenticate`` (and ``DPoP-Nonce``)."""
        dpop = self.dpop
        on_dpop = isinstance(error, InvalidDpopProof) or (dpop is not None and dpop.required)
        params: list[tuple[str, str]] = []
        if error.error is not None:
            params += [("error", error.error), ("error_description", error.description)]
        scopes = error.scopes if isinstance(error, InsufficientScope) else self.scopes_required
        if scopes:
            params.append(("scope", " ".join(scopes)))
        params.append(("resource_metadata", self.metadata_url))
        headers: dict[str, str] = {}
        if on_dpop:
            assert dpop is not None
            value = challenge_header("DPoP", [*params, ("algs", " ".join(dpop.algorithms))])
        else:
            value = challenge_header("Bearer", params)
            if dpop is not None:  # both schemes are accepted: offer both (RFC 9449 §7.1)
                value += ", " + challenge_header("DPoP", [("algs", " ".join(dpop.algorithms))])
        headers["www-authenticate"] = value
        if isinstance(error, UseDpopNonce):
            headers["dpop-nonce"] = error.nonce
        if error.status == 503:
            headers = {"retry-after": "5"}
        return headers

    async def __call__(self, headers: Mapping[str, str]) -> str | None:
        """The plain ``Authenticator`` form, for code that has only the headers (``app.authenticator``):
        bearer tokens only, no DPoP (no method and URL to check a proof against); the principal's key,
        or None. The app itself calls ``admit``."""
        scheme, _, token = headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        try:
            principal = await self.verifier.verify(token.strip())
            self._check_claims(principal)
            if principal.jkt is not None:
                return None
            self.require(principal, ())
        except AuthError:
            return None
        return principal.key
