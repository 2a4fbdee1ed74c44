"""Multi Round-Trip Requests on the client (stateless era, mrtr.mdx): answer, retry, repeat.

A stateless-era server that needs something before it can answer (a form, roots, a
sample) returns ``resultType: "input_required"`` with its ``inputRequests`` and a
``requestState``. The client answers each question with its handlers and sends the
request again under a new id, with the same method and arguments, the answers in
``inputResponses`` and ``requestState`` echoed exactly, until the result is complete.

With tracing on, all the rounds of one operation are one trace (docs/observability.md):
``rounds_span`` wraps them in an ``INTERNAL`` span named like the operation, each round's
``CLIENT`` span its child, and each answer (a person filling a form) is an ``INTERNAL`` span
named by the input request's method, in between.
"""

from __future__ import annotations

__all__ = ["answer_input_rounds", "rounds_span"]

import contextlib
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from ..telemetry.conventions import MCP_METHOD_NAME, request_attributes, span_name
from ..telemetry.spans import internal_span
from ..types.errors import MCPError, RemoteProtocolError
from ..types.methods import METHODS
from ..types.wording import counted
from .inputs import InputHandlers
from .url_controls import UrlWords

_UNTRACED = contextlib.nullcontext()


async def answer_input_rounds(
    method: str,
    params: dict[str, Any] | None,
    result: dict[str, Any],
    send: Callable[[dict[str, Any] | None], Awaitable[dict[str, Any]]],
    inputs: InputHandlers,
    max_rounds: int,
) -> dict[str, Any]:
    """The first result of ``method`` that asks for nothing more (``result`` itself when it
    asks for nothing); ``MCPError`` after ``max_rounds`` rounds, ``RemoteProtocolError`` for a
    malformed ``inputRequests`` or ``requestState``. ``send(params)`` sends one attempt."""
    rounds = 0
    words = UrlWords()  # a URL flow's "done" / "cancel" / "fresh link" rides the retries
    while result.get("resultType") == "input_required":
        # Stateless era (mrtr.mdx): answer what the server asks, then retry with a new id,
        # the same method and arguments, and requestState echoed exactly.
        rounds += 1
        if rounds > max_rounds:
            raise MCPError(f"{method}: the server still asked for input after {counted(max_rounds, 'round')}")
        retry = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
        requests = _input_requests(method, result)
        if requests:
            retry["inputResponses"] = {
                key: await _answer(inputs, question, words.asked(result, key, question_params))
                for key, (question, question_params) in requests.items()
            }
        if "requestState" in result:
            state = result["requestState"]
            if not isinstance(state, str):
                raise RemoteProtocolError(
                    f"{method}: the server's requestState must be a string, not {_json_type(state)}"
                )
            retry["requestState"] = state
        result = await words.send(send, retry)
    return result


def rounds_span(era: str | None, method: str, params: dict[str, Any] | None) -> contextlib.AbstractContextManager[Any]:
    """Around a stateless-era request that may take input rounds (``tools/call``, ``prompts/get``,
    ``resources/read``): its ``INTERNAL`` operation span, current while the rounds run. It starts
    before the first round, as no one knows yet whether rounds will follow; a shared no-op when
    tracing is off or the request cannot take rounds."""
    if era != "stateless" or "opentelemetry" not in sys.modules:  # not this era, or surely no SDK
        return _UNTRACED
    spec = METHODS.get(method)
    if spec is None or not spec.mrtr:
        return _UNTRACED
    span = internal_span(span_name(method, params), request_attributes(method, params))
    return _UNTRACED if span is None else span


async def _answer(inputs: InputHandlers, question: str, params: dict[str, Any]) -> Any:
    """One input request answered by our handlers, in an ``INTERNAL`` span when tracing is on."""
    span = internal_span(question, {MCP_METHOD_NAME: question})
    if span is None:
        return await inputs.answer(question, params)
    with span:
        return await inputs.answer(question, params)


def _input_requests(method: str, result: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The questions of an ``InputRequiredResult`` as ``{key: (method, params)}``; a malformed
    one is the server's fault (``RemoteProtocolError`` naming it), never a crash here."""
    requests = result.get("inputRequests")
    if requests is None:
        return {}
    if not isinstance(requests, dict):
        raise RemoteProtocolError(f"{method}: the server's inputRequests must be an object, not {_json_type(requests)}")
    questions: dict[str, tuple[str, dict[str, Any]]] = {}
    for key, request in requests.items():
        question = request.get("method") if isinstance(request, dict) else None
        params = (request.get("params") or {}) if isinstance(request, dict) else None
        if not isinstance(question, str) or not isinstance(params, dict):
            raise RemoteProtocolError(
                f"{method}: the server's inputRequests[{key!r}] must be an object with a string method "
                "and object params"
            )
        questions[key] = (question, params)
    return questions


def _json_type(value: Any) -> str:
    """The JSON name of ``value``'s type, for messages that must not echo a huge value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
