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
"""

from __future__ import annotations

__all__ = ["InputRequired", "Round", "StateSealer", "binding_of"]

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..types.errors import InvalidParams

_encode = msgspec.json.Encoder(order="sorted").encode
_decode = msgspec.json.decode


class InputRequired(Exception):
    """Raised inside a handler to stop this round and ask the client ``request``."""

    def __init__(
        self, key: str, request: dict[str, Any] | None, *, more: dict[str, dict[str, Any]] | None = None
    ) -> None:
        # ``request`` None asks nothing: "not yet", a requestState-only result the client retries.
        super().__init__(f"input required: {request.get('method') if request else 'retry later'}")
        self.key = key
        self.request = request
        #: Further questions asked in the same round (``Context.gather``).
        self.more = more or {}

    @property
    def requests(self) -> dict[str, dict[str, Any]]:
        """Every question of this round, by key."""
        first = {self.key: self.request} if self.request is not None else {}
        return {**first, **self.more}

    @classmethod
    def together(cls, questions: list[InputRequired]) -> InputRequired:
        """One signal for several questions stopped in the same round."""
        merged: dict[str, dict[str, Any]] = {}
        for question in questions:
            merged.update(question.requests)
        (key, request), *rest = merged.items()
        return cls(key, request, more=dict(rest))


def binding_of(method: str, params: dict[str, Any], principal: str | None = None) -> str:
    """What a sealed state is bound to: the caller (when authenticated), the method, the
    target, and a digest of the arguments, so it cannot be replayed by someone else or
    for another call."""
    target = params.get("name", params.get("uri", ""))
    arguments = _encode(params.get("arguments") or {})
    return f"{principal or ''}\x00{method}\x00{target}\x00{hashlib.sha256(arguments).hexdigest()}"


class StateSealer:
    """Seals ``requestState``; ``key`` must be shared by every worker that may serve a retry."""

    def __init__(self, key: bytes | None = None, ttl: float = 600.0, clock: Callable[[], float] = time.time) -> None:
        self.key = key or secrets.token_bytes(32)
        self.ttl = ttl
        self._clock = clock

    def seal(self, payload: dict[str, Any], binding: str) -> str:
        body = _encode({"b": binding, "exp": self._clock() + self.ttl, "p": payload})
        mac = hmac.new(self.key, body, hashlib.sha256).digest()
        return f"{_b64(body)}.{_b64(mac)}"

    def open(self, token: Any, binding: str) -> dict[str, Any]:
        """The payload of a state we sealed for ``binding``; ``InvalidParams`` for anything else."""
        if not isinstance(token, str) or token.count(".") != 1:
            raise InvalidParams("requestState is malformed; send back exactly what the server sent")
        body_text, mac_text = token.split(".")
        try:
            body, mac = _unb64(body_text), _unb64(mac_text)
        except ValueError:
            raise InvalidParams("requestState is malformed; send back exactly what the server sent") from None
        if not hmac.compare_digest(mac, hmac.new(self.key, body, hashlib.sha256).digest()):
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
        # work done "once" is recognised however the client replays its states.
        memo.setdefault("lineage", secrets.token_hex(16))
        return cls(binding, answers, responses, memo=memo)

    def input_required(self, sealer: StateSealer, needed: InputRequired) -> dict[str, Any]:
        """The ``InputRequiredResult`` that ends this round."""
        payload: dict[str, Any] = {"answers": self.answers}
        if self.memo:
            payload["memo"] = self.memo
        state = sealer.seal(payload, self.binding)
        if needed.request is None:  # nothing to ask: the client retries with the state alone
            return {"resultType": "input_required", "requestState": state}
        return {"resultType": "input_required", "inputRequests": needed.requests, "requestState": state}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise ValueError(str(exc)) from exc
