"""DPoP on the resource server (RFC 9449 §4.3, §7, §9; SEP-1932): a token bound to a key is
only accepted with a fresh proof signed by that key, for this request.

``Dpop.check`` verifies a proof: type ``dpop+jwt``, an accepted asymmetric algorithm, the
signature with the public key in its header, ``htm`` and ``htu`` naming this request, ``iat``
within ``window`` seconds of now, ``ath`` the hash of the token it comes with, the key being
the one the token is bound to (``cnf.jkt``), and ``jti`` never seen before. Replay is caught
in the server's shared state (``StateStore.add`` is an atomic set-if-absent), so a proof
replayed to another worker of a fleet is refused there too.

Nonces (``nonce=True``) are stateless: a time and its HMAC under a key that every worker
shares through the state (or ``nonce_key``), so any worker accepts any worker's nonce for
``nonce_lifetime`` seconds. A proof without a valid one is answered ``use_dpop_nonce`` with a
fresh nonce in ``DPoP-Nonce``.
"""

from __future__ import annotations

__all__ = ["DEFAULT_DPOP_ALGORITHMS", "Dpop", "access_token_hash"]

import base64
import hashlib
import hmac
import secrets
import struct
import time
from collections.abc import Callable, Collection

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import Key, import_key

from ..state.store import StateStore, slot_of
from ..types.errors import InvalidDpopProof, UseDpopNonce
from .jwks import signed_claims
from .urls import normalized_url

DEFAULT_DPOP_ALGORITHMS: tuple[str, ...] = ("ES256", "ES384", "EdDSA", "PS256", "RS256")
_NONCE_KEY = "dpop:nonce-key"
_NONCE_KEY_TTL = 30 * 24 * 3600.0
_NONCE_KEY_REREAD = 3600.0  # a worker reads the shared key again this often (it may have expired)
_PROOFS_PER_KEY = 100_000  # live jti records one key may hold before its proofs are refused


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _normalized(url: object) -> str | None:
    """``url`` as ``htu`` compares, or None when it is no URL (not text, or a port that is none)."""
    if not isinstance(url, str):
        return None
    try:
        return normalized_url(url)
    except ValueError:
        return None


def access_token_hash(token: str) -> str:
    """The ``ath`` claim for ``token``: base64url(SHA-256(token)) (RFC 9449 §4.2)."""
    return _b64(hashlib.sha256(token.encode("ascii")).digest())


class Dpop:
    """The DPoP policy of a resource server (``ResourceAuth(dpop=Dpop(...))``).

    ``required``: refuse bearer tokens altogether (``dpop_bound_access_tokens_required``);
    otherwise a bearer token is accepted unless it is bound (``cnf.jkt``), and a bound one only
    with a proof. ``algorithms``: accepted proof algorithms. ``window``: how far ``iat`` may be
    from now, in seconds. ``nonce``: demand a server nonce; ``nonce_key`` (32 bytes) fixes the
    key nonces are made with, else one is made once and shared through the state."""

    def __init__(
        self,
        *,
        required: bool = False,
        algorithms: Collection[str] = DEFAULT_DPOP_ALGORITHMS,
        window: float = 120.0,
        nonce: bool = False,
        nonce_lifetime: float = 300.0,
        nonce_key: bytes | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.required = required
        self.algorithms = tuple(algorithms)
        self.window = window
        self.nonce = nonce
        self.nonce_lifetime = nonce_lifetime
        self._fixed_key = nonce_key
        self._shared_key: tuple[float, bytes] | None = None  # (when read, the key) from the state
        self.clock = clock

    async def check(
        self, proof: str, *, method: str, urls: Collection[str], token: str, jkt: str | None, state: StateStore
    ) -> str:
        """Verify ``proof`` for a request (``method``, one of ``urls``) carrying ``token``, bound to
        ``jkt``; the proof key's thumbprint. Raises ``InvalidDpopProof`` or ``UseDpopNonce``."""
        key, claims = self._verified(proof)
        thumbprint = key.thumbprint()
        if jkt is None:
            raise InvalidDpopProof("the access token is not bound to a DPoP key; send it as a Bearer token")
        if not hmac.compare_digest(thumbprint, jkt):
            raise InvalidDpopProof("the proof is not signed by the key the access token is bound to")
        if claims.get("htm") != method:
            raise InvalidDpopProof(f"the proof is for {claims.get('htm')!r}, not {method}")
        if _normalized(claims.get("htu")) not in {_normalized(url) for url in urls} - {None}:
            raise InvalidDpopProof("the proof's 'htu' is not this request's URL")
        iat = claims.get("iat")
        now = self.clock()
        if isinstance(iat, bool) or not isinstance(iat, int | float) or abs(now - iat) > self.window:
            raise InvalidDpopProof("the proof's 'iat' is missing or too far from now")
        ath = claims.get("ath")
        if not isinstance(ath, str) or not hmac.compare_digest(ath, access_token_hash(token)):
            raise InvalidDpopProof("the proof's 'ath' is not the hash of the access token it came with")
        if self.nonce:
            await self._check_nonce(claims.get("nonce"), state)
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > 256:
            raise InvalidDpopProof("the proof has no usable 'jti'")
        slot = slot_of(thumbprint)  # the key's records and their bucket on one Redis Cluster node
        record = f"dpop:jti:{slot}:{hashlib.sha256(jti.encode()).hexdigest()}"
        added = await state.add(record, 1, ttl=2 * self.window, bucket=f"dpop:{slot}", limit=_PROOFS_PER_KEY)
        if added == "exists":
            raise InvalidDpopProof("the proof was already used (a replay)")
        if added == "full":
            raise InvalidDpopProof("too many proofs from this key in a short time; try again shortly")
        return thumbprint

    def _verified(self, proof: str) -> tuple[Key, dict[str, object]]:
        try:
            header = jws.extract_compact(proof.encode("ascii")).protected
        except (JoseError, ValueError, UnicodeEncodeError, RecursionError):  # (JSON nested past the stack)
            raise InvalidDpopProof("the DPoP header is not a signed JWT") from None
        if header.get("typ") != "dpop+jwt":
            raise InvalidDpopProof("the proof's type is not 'dpop+jwt'")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidDpopProof(f"the proof's algorithm {alg!r} is not accepted")
        public = header.get("jwk")
        try:
            key = import_key(public) if isinstance(public, dict) else None
        except (JoseError, ValueError, TypeError):
            key = None
        if key is None or key.is_private:
            raise InvalidDpopProof("the proof's 'jwk' header is not a public key")
        claims = signed_claims(proof, key, alg, InvalidDpopProof, "the proof")
        return key, claims

    # ---------------------------------------------------------------- nonces

    async def new_nonce(self, state: StateStore) -> str:
        """A nonce any worker sharing ``state`` accepts for ``nonce_lifetime`` seconds."""
        stamp = struct.pack(">Q", int(self.clock()))
        return f"{_b64(stamp)}.{_b64(self._mac(await self._key(state), stamp))}"

    async def _check_nonce(self, nonce: object, state: StateStore) -> None:
        if isinstance(nonce, str) and await self._valid_nonce(nonce, state):
            return
        said = "the proof carries no nonce" if nonce is None else "the proof's nonce is not current"
        raise UseDpopNonce(f"{said}; retry with the one in DPoP-Nonce", await self.new_nonce(state))

    async def _valid_nonce(self, nonce: str, state: StateStore) -> bool:
        stamp_text, _, mac_text = nonce.partition(".")
        try:
            stamp = base64.urlsafe_b64decode(stamp_text + "=" * (-len(stamp_text) % 4))
        except ValueError:
            return False
        if len(stamp) != 8 or not hmac.compare_digest(mac_text, _b64(self._mac(await self._key(state), stamp))):
            return False
        age: float = self.clock() - struct.unpack(">Q", stamp)[0]
        return -self.window <= age <= self.nonce_lifetime

    @staticmethod
    def _mac(key: bytes, stamp: bytes) -> bytes:
        return hmac.new(key, b"dpop-nonce\x00" + stamp, hashlib.sha256).digest()[:18]

    async def _key(self, state: StateStore) -> bytes:
        if self._fixed_key is not None:
            return self._fixed_key
        now = time.monotonic()
        if self._shared_key is None or now - self._shared_key[0] > _NONCE_KEY_REREAD:
            # The first worker's key wins; the others read it, so every worker's nonces agree.
            await state.add(_NONCE_KEY, secrets.token_hex(32), ttl=_NONCE_KEY_TTL)
            value = await state.get(_NONCE_KEY)
            if not isinstance(value, str):
                raise InvalidDpopProof("no nonce key could be agreed on; try again shortly")
            self._shared_key = (now, bytes.fromhex(value))
        return self._shared_key[1]
