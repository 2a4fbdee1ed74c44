"""An authorization server's signing keys (a JWKS), fetched, cached and rotated.

The keys are fetched on first use and again once ``refresh`` seconds old (rotation by
publication). A token signed with a key we do not hold (its ``kid`` is unknown: the server
rotated since we fetched) makes us fetch again at once, but at most once per
``refetch_interval`` seconds: a stream of tokens with made-up ``kid`` values costs the
authorization server one request per interval, not one per token.

A fetch in flight is everyone's: a request that arrives while one is under way waits for its
answer before it looks for its key, whether the cache is cold (no keys yet) or the fetch is
the refetch for a rotated key. So eight requests at once to a fresh server, or with a newly
published key, cost one fetch and are all answered from it (none is refused because "the keys
were fetched a moment ago").
"""

from __future__ import annotations

__all__ = ["KeyCache", "signed_claims"]

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx2
from joserfc import jwt
from joserfc.errors import InvalidPayloadError, JoseError
from joserfc.jwk import Key, KeySet

from ..types.errors import AuthError, InvalidToken, VerifierUnavailable

logger = logging.getLogger("backchannel.auth")
_UNREACHABLE = "the authorization server's keys could not be fetched to check the token; try again shortly"


class KeyCache:
    """The keys at ``jwks_uri`` (or a fixed ``keys`` set, never fetched)."""

    def __init__(
        self,
        jwks_uri: str | None = None,
        *,
        keys: KeySet | None = None,
        refresh: float = 3600.0,
        refetch_interval: float = 30.0,
        http: httpx2.AsyncClient | None = None,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if jwks_uri is None and keys is None:
            raise ValueError("give the JWKS URL (jwks_uri=) or the keys themselves (keys=)")
        self.jwks_uri = jwks_uri
        self.refresh = refresh
        self.refetch_interval = refetch_interval
        self.timeout = timeout
        self._keys = keys
        self._fetched_at: float | None = None
        self._http = http
        self._clock = clock
        self._fetching: asyncio.Future[None] | None = None
        #: How many times the JWKS was fetched (for tests and metrics).
        self.fetches = 0

    async def key_for(self, kid: str | None, key_type: str) -> Key:
        """The key that signed a token with header ``kid`` (of JWK type ``key_type``).

        Raises ``InvalidToken`` when no such key is published (after the bounded refetch),
        ``VerifierUnavailable`` when the keys could never be fetched."""
        if self.jwks_uri is not None:
            if self._fetching is not None:  # its answer may hold our key: wait for it, don't judge without it
                await self._fetch()
            if self._fetched_at is None or self._clock() - self._fetched_at >= self.refresh:
                await self._fetch()
            elif self._keys is None:  # never fetched yet: the server is down, not the token bad
                if not self._may_refetch():
                    raise VerifierUnavailable(_UNREACHABLE)
                await self._fetch()
        key = self._find(kid, key_type)
        if key is None and self.jwks_uri is not None and self._may_refetch():
            await self._fetch()
            key = self._find(kid, key_type)
        if key is None:
            raise InvalidToken("the token was not signed by a key of its authorization server")
        return key

    def _may_refetch(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= self.refetch_interval

    def _find(self, kid: str | None, key_type: str) -> Key | None:
        if self._keys is None:
            return None
        candidates = [key for key in self._keys.keys if key.key_type == key_type]
        if kid is None:  # only unambiguous without a kid
            return candidates[0] if len(candidates) == 1 else None
        return next((key for key in candidates if key.kid == kid), None)

    async def _fetch(self) -> None:
        """Join the fetch in flight, or start one; returns once it has ended (raises what it raised)."""
        fetching = self._fetching
        if fetching is None:
            self.fetches += 1
            self._fetched_at = self._clock()  # a failure counts too: the refetch bound holds while it is down
            fetching = self._fetching = asyncio.ensure_future(self._download())
            fetching.add_done_callback(self._fetched)
        await asyncio.shield(fetching)  # one waiter cancelled does not cancel the others' fetch

    def _fetched(self, fetching: asyncio.Future[None]) -> None:
        # Runs before any waiter resumes: from then on a new request judges by what was fetched.
        if self._fetching is fetching:
            self._fetching = None
        if not fetching.cancelled():
            fetching.exception()  # (retrieved: every waiter may have been cancelled)

    async def _download(self) -> None:
        assert self.jwks_uri is not None
        try:
            if self._http is not None:
                response = await self._http.get(self.jwks_uri, timeout=self.timeout)
            else:
                async with httpx2.AsyncClient(timeout=self.timeout) as http:
                    response = await http.get(self.jwks_uri)
            response.raise_for_status()
            document: Any = response.json()
            keys = KeySet.import_key_set(document)
        except (httpx2.HTTPError, ValueError, TypeError, KeyError, JoseError, RecursionError) as failure:
            logger.warning("the JWKS at %s could not be fetched: %s", self.jwks_uri, failure)
            if self._keys is None:
                raise VerifierUnavailable(_UNREACHABLE) from None
            return  # keep the keys we have; the next refresh tries again
        self._keys = keys


def signed_claims(token: str, key: Key, alg: str, refused: type[AuthError], what: str) -> dict[str, Any]:
    """The claims of the JWT ``token`` (an access token, a DPoP proof: ``what`` names it in the
    message) once ``key`` verifies its ``alg`` signature; else ``refused``, one clear line."""
    try:
        claims: dict[str, Any] = jwt.decode(token, key, algorithms=[alg]).claims
    except (InvalidPayloadError, RecursionError):  # signed, but no claims we can read (nested past the stack)
        raise refused(f"{what}'s claims could not be read as a JSON object") from None
    except JoseError:
        raise refused(f"{what}'s signature does not verify") from None
    return claims
