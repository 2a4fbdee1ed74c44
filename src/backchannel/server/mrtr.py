"""Multi round-trip requests (2026-07-28 mrtr.mdx): one handler, both eras.

In the stateless era a server may not send requests of its own. A handler that
asks the client something (``ctx.elicit``, ``ctx.list_roots``, ``ctx.sample``)
instead stops with ``InputRequired``; the request is answered with an
``InputRequiredResult``, and the client retries it with the answers. The handler
then runs again from the top, and this time the question is answered from
``inputResponses``. Answers of earlier rounds ride along in ``requestState``,
sealed by the server's ``StateSealer`` (``state/sealer.py``: HMAC-SHA256 under the
server's key, an expiry, and bound to the method and its arguments, so a client can
neither forge nor reuse them elsewhere, and any worker that shares the key can serve
the retry). Here: what a round asks and keeps, and the result that ends it.

Work a handler must not repeat across its re-runs goes through ``ctx.once``
(``once.py``), whose results a request's states rely on: a state never outlives them,
and it names the generation of the store its request began in (``state/generation.py``),
so that a state older than a loss of the store's data is told apart.
"""

from __future__ import annotations

__all__ = ["InputRequired", "Round"]

import os
import time
from dataclasses import dataclass, field
from typing import Any

from ..state.generation import spans_workers
from ..state.sealer import StateSealer, binding_of
from ..state.store import StateStore
from ..telemetry import metrics
from ..types.errors import InvalidParams

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
        worker last read it (``state/generation.py`` says why a stale one never runs work twice)."""
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
