"""``requestState`` sealed: what a stateless-era server hands the client to keep for it.

A multi-round request (2026-07-28 mrtr.mdx) carries the answers of its earlier rounds, and what
the handler kept across them, in ``requestState``. The server keeps nothing of it: the client
sends it back with the retry, and any worker that shares the key serves that retry. So the state
is sealed here: HMAC-SHA256 under the server's key, an expiry, and bound (``binding_of``) to the
caller, the method, its target and its arguments, so a client can neither forge it nor use it
for another call or another user. It also names the generation of the state store its request
began in (``generation.py``), so that a state older than a loss of the store's data is told apart.

What goes in a state and when a handler stops to ask is the server's (``server/mrtr.py``:
``Round``, ``InputRequired``); this module needs nothing of the server.
"""

from __future__ import annotations

__all__ = ["StateSealer", "binding_of"]

import base64
import binascii
import os
import re
import time
from collections.abc import Callable
from typing import Any

import msgspec

from ..types.errors import InvalidParams
from .generation import Generation

_encode = msgspec.json.Encoder(order="sorted").encode
_decode = msgspec.json.decode
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
# By the length of the last group: the low bits of its last character that carry no data
# (2 characters hold 1 byte and 4 spare bits, 3 hold 2 bytes and 2 spare bits).
_UNUSED_BITS = (0, 0, 0b1111, 0b11)
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")
_MALFORMED = "requestState is malformed; send back exactly what the server sent"


def binding_of(method: str, params: dict[str, Any], principal: str | None = None) -> str:
    """What a sealed state is bound to: the caller (when authenticated), the method, the
    target, and a digest of the arguments, so it cannot be replayed by someone else or
    for another call."""
    target = params.get("name", params.get("uri", ""))
    import hashlib  # (with hmac: OpenSSL's 0.6 MiB, loaded when a first state is sealed, not at start)

    arguments = _encode(params.get("arguments") or {})
    return f"{principal or ''}\x00{method}\x00{target}\x00{hashlib.sha256(arguments).hexdigest()}"


class StateSealer:
    """Seals ``requestState``; its keys must be shared by every worker that may serve a retry.

    The first key seals; any key of the ring opens, so a key can be rotated in (sealing with
    the new one) while states sealed with the old one are still honoured until it is dropped."""

    def __init__(self, key: bytes | None = None, ttl: float = 600.0, clock: Callable[[], float] = time.time) -> None:
        self.keys: list[bytes] = [key or os.urandom(32)]  # (what secrets.token_bytes reads)
        self.ttl = ttl
        self._clock = clock
        #: The generation of the store new requests begin in (``generation.py``).
        self.generation = Generation()

    @property
    def key(self) -> bytes:
        """The key that seals."""
        return self.keys[0]

    def use_keys(self, keys: list[bytes]) -> None:
        """Seal with ``keys[0]`` from now on, and open with any of ``keys``."""
        if not keys:
            raise ValueError("a keyring needs at least one key")
        self.keys = list(keys)

    def now(self) -> float:
        """The time expiries are measured in (seconds, on this sealer's clock)."""
        return self._clock()

    def seal(self, payload: dict[str, Any], binding: str, *, not_after: float | None = None) -> str:
        """A state valid for ``ttl`` seconds, and never past ``not_after`` (``now()`` time)."""
        expires = self._clock() + self.ttl
        if not_after is not None:
            expires = min(expires, not_after)
        import hashlib
        import hmac

        body = _encode({"b": binding, "exp": expires, "p": payload})
        mac = hmac.new(self.key, body, hashlib.sha256).digest()
        return f"{_b64(body)}.{_b64(mac)}"

    def open(self, token: Any, binding: str) -> dict[str, Any]:
        """The payload of a state we sealed for ``binding``; ``InvalidParams`` for anything else."""
        if not isinstance(token, str) or token.count(".") != 1:
            raise InvalidParams(_MALFORMED)
        import hashlib
        import hmac

        body_text, mac_text = token.split(".")
        try:
            body, mac = _unb64(body_text), _unb64(mac_text)
        except ValueError:
            raise InvalidParams(_MALFORMED) from None
        if not any(hmac.compare_digest(mac, hmac.new(key, body, hashlib.sha256).digest()) for key in self.keys):
            raise InvalidParams("requestState failed verification: it was altered or sealed by another server")
        state = _decode(body)
        sealed_for = state.get("b")
        if (
            isinstance(sealed_for, str)
            and sealed_for != binding
            and sealed_for.split("\x00")[1:] == binding.split("\x00")[1:]
        ):
            raise InvalidParams("requestState was issued to another user; start the request again")
        if sealed_for != binding:
            raise InvalidParams("requestState belongs to a different request; retry with the same method and arguments")
        if state.get("exp", 0) < self._clock():
            raise InvalidParams("requestState has expired; start the request again")
        payload = state.get("p")
        return payload if isinstance(payload, dict) else {}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """Strictly the inverse of ``_b64``: the URL-safe alphabet only, no padding, no
    whitespace, and the one canonical spelling of the bytes. (The standard decoder
    skips characters outside the alphabet and reads ``+``/``/`` as ``-``/``_``, so
    one sealed state would have many accepted spellings.)"""
    if not _B64URL.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded URL-safe base64")
    try:  # (``base64.urlsafe_b64decode``'s own steps, without its checks of what the match settled)
        data = binascii.a2b_base64((text + "=" * (-len(text) % 4)).encode("ascii").translate(_FROM_URLSAFE))
    except binascii.Error as exc:
        raise ValueError(str(exc)) from exc
    # The one spelling left to rule out: a last character whose unused low bits are set
    # (checked on that character, not by encoding the bytes again to compare).
    unused = _UNUSED_BITS[len(text) % 4]
    if unused and _ALPHABET.index(text[-1]) & unused:
        raise ValueError("not the canonical base64 of its bytes")
    return data
