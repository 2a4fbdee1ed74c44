"""Multi round-trip requests (2026-07-28 mrtr.mdx): one handler, both eras.

In the stateless era a server may not send requests of its own. A handler that
asks the client something (``ctx.elicit``, ``ctx.list_roots``, ``ctx.sample``)
instead stops with ``InputRequired``; the request is answered with an
``InputRequiredResult``, and the client retries it with the answers. The handler
then runs again from the top, and this time the question is answered from
``inputResponses``. Answers of earlier rounds ride along in ``requestState``,
sealed here: HMAC-SHA256 under the server's key, an expiry, and bound to the
method and its arguments, so a client can neither forge nor reuse them elsewhere,
and any worker that shares the key can serve the retry.

Work a handler must not repeat across its re-runs goes through ``ctx.once``
(``once.py``), whose results a request's states rely on: a state never outlives them,
and it names the generation of the store its request began in (``store_generation.py``),
so that a state older than a loss of the store's data is told apart.
"""

from __future__ import annotations

__all__ = ["InputRequired", "Round", "StateSealer", "binding_of"]

import base64
import binascii
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..telemetry import metrics
from ..types.errors import InvalidParams
from .state import StateStore
from .store_generation import Generation, spans_workers

_encode = msgspec.json.Encoder(order="sorted").encode
_decode = msgspec.json.decode
_B64URL = re.compile(r"[A-Za-z0-9_-]*")
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
# By the length of the last group: the low bits of its last character that carry no data
# (2 characters hold 1 byte and 4 spare bits, 3 hold 2 bytes and 2 spare bits).
_UNUSED_BITS = (0, 0, 0b1111, 0b11)
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")
_MALFORMED = "requestState is malformed; send back exactly what the server sent"
_ONCE_MEMO = "onceKeptUntil"  # memo entry: when each ``once`` result of this request is forgotten
_ASKED_AT = "askedAt"  # memo entry, while metrics are on: when each form question went out
_GENERATION_MEMO = "gen"  # memo entry: the generation of the store the request began in


class InputRequired(Exception):
    """Raised inside a handler to stop this round and ask the client ``request``."""

    def __init__(
        self,
        key: str,
        request: dict[str, Any] | None,
        *,
        more: dict[str, dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        # ``request`` None asks nothing: "not yet", a requestState-only result the client retries.
        super().__init__(f"input required: {request.get('method') if request else 'retry later'}")
        self.key = key
        self.request = request
        #: Further questions asked in the same round (``Context.gather``).
        self.more = more or {}
        #: The ``_meta`` of the ``InputRequiredResult`` (what the server says about its questions).
        self.meta = meta or {}

    @property
    def requests(self) -> dict[str, dict[str, Any]]:
        """Every question of this round, by key."""
        first = {self.key: self.request} if self.request is not None else {}
        return {**first, **self.more}

    @classmethod
    def together(cls, questions: list[InputRequired]) -> InputRequired:
        """One signal for several questions stopped in the same round."""
        merged: dict[str, dict[str, Any]] = {}
        meta: dict[str, Any] = {}
        for question in questions:
            merged.update(question.requests)
            meta = _merged(meta, question.meta)
        (key, request), *rest = merged.items()
        return cls(key, request, more=dict(rest), meta=meta)


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
        #: The generation of the store new requests begin in (``store_generation.py``).
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


@dataclass(slots=True)
class Round:
    """One run of a handler in the stateless era: the answers it may use and the questions asked.

    ``answers`` are those of earlier rounds (sealed in ``requestState``) plus the ones
    this run used; ``responses`` are this retry's ``inputResponses``. A response is
    used when the handler asks its key, whether or not an earlier round asked it (a
    client may answer ahead, or retry without state); keys never asked are ignored.
    An answer sealed in an earlier round is never replaced by a later response.
    """

    binding: str
    answers: dict[str, Any] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)
    asked: int = 0
    keys: set[str] = field(default_factory=set)
    #: What a handler keeps across rounds, sealed with the answers (e.g. a URL flow's id).
    memo: dict[str, Any] = field(default_factory=dict)
    #: True for a request's first round (no ``requestState``): nothing of it can have been lost.
    first: bool = False
    #: True once this round read the store's generation into ``memo`` (a first round, shared store).
    generation_read: bool = False

    def next_key(self, method: str, key: str | None = None) -> str:
        """The ``inputRequests`` key of the next question: ``key``, or one numbered in the
        order the handler asks (which a re-run repeats). A key is used once per run."""
        self.asked += 1
        key = key if key is not None else f"q{self.asked}:{method}"
        if key in self.keys:
            raise ValueError(f"the input key {key!r} was used twice in one request; give each question its own key")
        self.keys.add(key)
        return key

    def answer(self, key: str) -> dict[str, Any] | None:
        """The client's answer to question ``key``, or None when it has not given one."""
        if key in self.answers:
            return self.answers[key]  # type: ignore[no-any-return]
        response = self.responses.get(key)
        if response is not None:
            self.answers[key] = response
            asked = self.memo.get(_ASKED_AT)
            if asked and key in asked:  # a form question timed when it went out: its answer is here
                _person_answered(asked.pop(key), response)
        return response

    @classmethod
    def start(cls, sealer: StateSealer, method: str, params: dict[str, Any], principal: str | None = None) -> Round:
        """The round for a (re)try: earlier answers from ``requestState``, new ones from ``inputResponses``."""
        binding = binding_of(method, params, principal)
        answers: dict[str, Any] = {}
        memo: dict[str, Any] = {}
        state = params.get("requestState")
        if state is not None:
            payload = sealer.open(state, binding)
            answers.update(payload.get("answers", {}))
            memo.update(payload.get("memo", {}))
        responses: dict[str, Any] = {}
        if "inputResponses" in params:
            given = params["inputResponses"]
            if not isinstance(given, dict):
                raise InvalidParams("inputResponses must be an object keyed like the inputRequests")
            for key, value in given.items():
                if not isinstance(value, dict):
                    raise InvalidParams(f"inputResponses[{key!r}] must be an object (the answer to that input request)")
            responses = given
        # Every request's rounds share one lineage id, sealed from the first round on, so
        # work done "once" is recognised however the client replays its states; and the
        # generation of the store it began in, so a state older than a loss is told apart.
        first = "lineage" not in memo
        if first:  # (a retry's come sealed: no random bytes drawn for it)
            memo["lineage"] = os.urandom(16).hex()  # (secrets.token_hex(16))
            memo[_GENERATION_MEMO] = sealer.generation.id
        return cls(binding, answers, responses, memo=memo, first=first)

    @property
    def generation(self) -> str | None:
        """The generation of the store this request began in (sealed from its first round on)."""
        generation = self.memo.get(_GENERATION_MEMO)
        return generation if isinstance(generation, str) else None

    def begin_in(self, generation: str) -> None:
        """Note that this request, in its first round, begins in the store's ``generation``."""
        self.memo[_GENERATION_MEMO] = generation
        self.generation_read = True

    def relies_on(self, name: str) -> bool:
        """Whether this request's states say the ``once`` result ``name`` was kept."""
        kept = self.memo.get(_ONCE_MEMO)
        return isinstance(kept, dict) and name in kept

    def keep_until(self, name: str, expires: float) -> None:
        """Note that the ``once`` result ``name`` is kept until ``expires`` (sealer time):
        states sealed from now on expire no later than that."""
        kept = self.memo.setdefault(_ONCE_MEMO, {})
        kept[name] = expires

    @property
    def not_after(self) -> float | None:
        """When the earliest ``once`` result this request relies on is forgotten, if any."""
        kept = self.memo.get(_ONCE_MEMO)
        if not isinstance(kept, dict):
            return None
        return min((value for value in kept.values() if isinstance(value, (int, float))), default=None)

    async def ended_by(self, needed: InputRequired, store: StateStore, sealer: StateSealer) -> dict[str, Any]:
        """The ``InputRequiredResult`` that ends this round (``input_required``). A request's first
        state, sealed for a store shared by workers, names the generation the store was seen in
        lately (its heartbeat reads it), or read now: the store may have lost its data since this
        worker last read it (``store_generation.py`` says why a stale one never runs work twice)."""
        if self.first and not self.generation_read and spans_workers(store):
            known = sealer.generation.begun(store)
            self.begin_in(known if known is not None else await sealer.generation.read(store))
        return self.input_required(sealer, needed)

    def input_required(self, sealer: StateSealer, needed: InputRequired) -> dict[str, Any]:
        """The ``InputRequiredResult`` that ends this round."""
        if needed.request is not None and metrics.instruments() is not None:
            self._time_questions(needed.requests)
        payload: dict[str, Any] = {"answers": self.answers}
        if self.memo:
            payload["memo"] = self.memo
        # A state that outlived a ``once`` result could replay the work; it expires first.
        state = sealer.seal(payload, self.binding, not_after=self.not_after)
        result: dict[str, Any] = {"resultType": "input_required", "requestState": state}
        if needed.request is not None:  # else nothing to ask: the client retries with the state alone
            result["inputRequests"] = needed.requests
        if needed.meta:
            result["_meta"] = needed.meta
        return result

    def _time_questions(self, requests: dict[str, dict[str, Any]]) -> None:
        """Note when each form question of this round went out (wall clock: the answer may
        reach another worker), sealed with the state, so that the round that gets its answer
        can tell how long the person took. URL flows are timed by the flows themselves."""
        asked = self.memo.get(_ASKED_AT)
        asked = dict(asked) if isinstance(asked, dict) else {}
        now = time.time()
        for key, request in requests.items():
            params = request.get("params") or {}
            if request.get("method") == "elicitation/create" and params.get("mode", "form") == "form":
                asked.setdefault(key, now)  # asked again unanswered: the person's time runs from the first
        if asked:
            self.memo[_ASKED_AT] = asked


def _person_answered(asked: Any, response: dict[str, Any]) -> None:
    seconds = time.time() - asked if isinstance(asked, (int, float)) else None
    metrics.elicitation_answered("form", response.get("action"), seconds)


def _merged(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two ``_meta`` objects as one, objects under the same key merged in turn."""
    merged = dict(first)
    for key, value in second.items():
        held = merged.get(key)
        merged[key] = _merged(held, value) if isinstance(held, dict) and isinstance(value, dict) else value
    return merged


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
