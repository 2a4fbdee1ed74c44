"""Access-token verifiers: a token in, the ``Principal`` it names out (or ``InvalidToken``).

One interface, ``TokenVerifier``: ``await verifier.verify(token)``. Three come with the kit:

- ``JwtVerifier``: JWT access tokens (RFC 9068) signed by a key of the authorization server's
  JWKS (``jwks.py``: cached, rotated, a bounded refetch on an unknown ``kid``);
- ``IntrospectionVerifier``: opaque tokens, asked of the authorization server (RFC 7662), each
  answer cached no longer than the token lives (nor ``cache_ttl``);
- ``StaticTokens``: a fixed table, for tests and development.

A verifier proves where the token came from and reads its claims. What every token must
then satisfy, whoever verified it (the issuer, ``exp``/``nbf`` with a leeway, the audience
being this server's canonical URI, RFC 8707) is checked once, by ``ResourceAuth``, so a
custom verifier cannot forget it.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_ALGORITHMS",
    "IntrospectionVerifier",
    "JwtVerifier",
    "StaticTokens",
    "TokenVerifier",
    "principal_from_claims",
]

import hashlib
import hmac
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from typing import Any

import httpx2
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from ..types.errors import InvalidToken, VerifierUnavailable
from .jwks import KeyCache, signed_claims
from .principal import Principal, TokenVerifier

logger = logging.getLogger("backchannel.auth")

#: Asymmetric algorithms only: a resource server holds no secret an authorization server signs with.
DEFAULT_ALGORITHMS: tuple[str, ...] = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidToken(f"the token's {name!r} claim is not a number")
    return float(value)


def _first_text(claims: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = claims.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def principal_from_claims(claims: Mapping[str, Any], *, issuer: str | None = None) -> Principal:
    """The ``Principal`` a token's claims (or an introspection answer) describe.

    ``scope`` (space-separated) or ``scp`` (a list) give the scopes; ``client_id`` (or ``azp``,
    ``cid``) the client; ``sub`` the subject, the client itself when absent (a client acting on
    its own behalf); ``cnf.jkt`` the DPoP key binding. ``issuer`` stands in for a missing ``iss``."""
    found_issuer = _first_text(claims, "iss") or issuer
    client_id = _first_text(claims, "client_id", "azp", "cid")
    subject = _first_text(claims, "sub") or client_id
    if found_issuer is None:
        raise InvalidToken("the token names no issuer")
    if subject is None:
        raise InvalidToken("the token names no subject")
    aud = claims.get("aud")
    audiences: tuple[str, ...] = ()
    if isinstance(aud, str):
        audiences = (aud,)
    elif isinstance(aud, list):
        audiences = tuple(a for a in aud if isinstance(a, str))
    scope = claims.get("scope")
    scp = claims.get("scp")
    if isinstance(scope, str):
        scopes = frozenset(scope.split())
    elif isinstance(scp, list):
        scopes = frozenset(s for s in scp if isinstance(s, str))
    else:
        scopes = frozenset(scp.split()) if isinstance(scp, str) else frozenset()
    cnf = claims.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, dict) and isinstance(cnf.get("jkt"), str) else None
    return Principal(
        issuer=found_issuer,
        subject=subject,
        client_id=client_id,
        scopes=scopes,
        audiences=audiences,
        expires_at=_number(claims, "exp"),
        not_before=_number(claims, "nbf"),
        jkt=jkt,
        claims=dict(claims),
    )


class JwtVerifier:
    """JWT access tokens signed by a key of the JWKS at ``jwks_uri`` (or of the fixed ``keys``).

    ``algorithms`` are the JWS algorithms accepted (asymmetric ones by default, never ``none``);
    ``token_types``, when given, the ``typ`` headers accepted (RFC 9068: ``at+jwt``). A token
    without ``exp`` is refused (RFC 9068 §2.2). ``refresh``, ``refetch_interval`` and ``clock``
    (monotonic seconds): see ``KeyCache``."""

    def __init__(
        self,
        jwks_uri: str | None = None,
        *,
        keys: KeySet | Mapping[str, Any] | None = None,
        algorithms: Collection[str] = DEFAULT_ALGORITHMS,
        token_types: Collection[str] | None = None,
        refresh: float = 3600.0,
        refetch_interval: float = 30.0,
        http: httpx2.AsyncClient | None = None,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        key_set = KeySet.import_key_set(dict(keys)) if isinstance(keys, Mapping) else keys  # type: ignore[arg-type]
        self.keys = KeyCache(
            jwks_uri,
            keys=key_set,
            refresh=refresh,
            refetch_interval=refetch_interval,
            http=http,
            timeout=timeout,
            clock=clock,
        )
        self.algorithms = tuple(algorithms)
        self.token_types = None if token_types is None else {t.lower() for t in token_types}

    async def verify(self, token: str) -> Principal:
        """The caller a signed JWT names, its signature checked against the issuer's JWKS; raises ``InvalidToken``
        for a token that is not one of theirs."""
        try:
            header = jws.extract_compact(token.encode("ascii")).protected
        except (JoseError, ValueError, UnicodeEncodeError, RecursionError):  # (JSON nested past the stack)
            raise InvalidToken("the access token is not a signed JWT") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken(f"the token's algorithm {alg!r} is not accepted")
        typ = header.get("typ")
        if self.token_types is not None and (not isinstance(typ, str) or typ.lower() not in self.token_types):
            raise InvalidToken(f"the token's type {typ!r} is not an access token's")
        kid = header.get("kid")
        key = await self.keys.key_for(kid if isinstance(kid, str) else None, _KEY_TYPES.get(alg[:2], ""))
        claims = signed_claims(token, key, alg, InvalidToken, "the token")
        if "exp" not in claims:
            raise InvalidToken("the token has no expiry ('exp')")
        return principal_from_claims(claims)


class IntrospectionVerifier:
    """Opaque (or any) tokens, asked of the authorization server's introspection endpoint (RFC 7662).

    The resource server authenticates as ``client_id``/``client_secret`` (HTTP Basic). An active
    token's answer is cached for at most ``cache_ttl`` seconds and never past its ``exp``; at most
    ``max_cached`` answers are kept. ``issuer`` stands in for an answer without ``iss``."""

    def __init__(
        self,
        endpoint: str,
        *,
        client_id: str,
        client_secret: str,
        issuer: str | None = None,
        cache_ttl: float = 60.0,
        max_cached: int = 10_000,
        http: httpx2.AsyncClient | None = None,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.endpoint = endpoint
        self.issuer = issuer
        self.cache_ttl = cache_ttl
        self.max_cached = max_cached
        self.timeout = timeout
        self._auth = httpx2.BasicAuth(client_id, client_secret)
        self._http = http
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        #: How many introspection requests were sent (for tests and metrics).
        self.requests = 0

    async def verify(self, token: str) -> Principal:
        """The caller the authorization server says ``token`` names (RFC 7662), cached for a while; raises
        ``InvalidToken`` for an inactive token, ``VerifierUnavailable`` when the server cannot be asked."""
        digest = hashlib.sha256(token.encode()).hexdigest()  # the cache never holds the token itself
        now = self._clock()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(digest)
            return cached[1]
        self._cache.pop(digest, None)
        answer = await self._introspect(token)
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        principal = principal_from_claims(answer, issuer=self.issuer)
        until = now + self.cache_ttl
        if principal.expires_at is not None:
            until = min(until, principal.expires_at)
        if until > now:
            self._cache[digest] = (until, principal)
            while len(self._cache) > self.max_cached:
                self._cache.popitem(last=False)
        return principal

    async def _introspect(self, token: str) -> dict[str, Any]:
        self.requests += 1
        form = {"token": token, "token_type_hint": "access_token"}
        try:
            if self._http is not None:
                response = await self._http.post(self.endpoint, data=form, auth=self._auth, timeout=self.timeout)
            else:
                async with httpx2.AsyncClient(timeout=self.timeout) as http:
                    response = await http.post(self.endpoint, data=form, auth=self._auth)
            response.raise_for_status()
            answer = response.json()
        except (httpx2.HTTPError, ValueError, RecursionError) as failure:
            logger.warning("introspection at %s failed: %s", self.endpoint, failure)
            raise VerifierUnavailable("the token could not be checked with its authorization server") from None
        if not isinstance(answer, dict):
            raise VerifierUnavailable("the introspection endpoint answered something other than a JSON object")
        return answer


class StaticTokens:
    """A fixed table ``{token: Principal}`` (tests, development): a table is a verifier too."""

    def __init__(self, tokens: Mapping[str, Principal]) -> None:
        self._tokens = dict(tokens)

    async def verify(self, token: str) -> Principal:
        """The principal this table gives ``token``; raises ``InvalidToken`` for a token it does not hold."""
        for known, principal in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return principal
        raise InvalidToken("the token is not known")
