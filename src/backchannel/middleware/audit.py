"""``Audit``: a record of the reverse channel: each question the server asks the client, and its answer."""

from __future__ import annotations

__all__ = ["REVERSE_METHODS", "Audit", "AuditEvent"]

import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from ..composition.middleware import Call, CallNext
from ..types.errors import MCPError
from ..types.versions import Era
from .calls import item_name

#: The questions a server asks its client.
REVERSE_METHODS = frozenset(("elicitation/create", "sampling/createMessage", "roots/list"))


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One question asked of the client (``asked``), its answer (``answered``) or its failure
    (``failed``: a JSON-RPC error, as ``{"code", "message"}``)."""

    kind: Literal["asked", "answered", "failed"]
    #: ``elicitation/create``, ``sampling/createMessage``, ``roots/list``; for a stateless-era
    #: answer, the method its shape says (None when it says none).
    method: str | None
    #: The question's params, or the answer.
    body: dict[str, Any]
    era: Era | None
    principal: str | None
    session: str | None
    #: The client's request the question belongs to (``tools/call ev_ask``), when known.
    request: str | None
    #: Stateless era: the question's key in ``inputRequests`` / ``inputResponses``.
    key: str | None = None
    at: float = field(default_factory=time.time)


class Audit:
    """Middleware: an ``AuditEvent`` for every question the server asks the client (of
    ``methods``: elicitation, sampling, roots) and for each answer, as they cross the wire.

    Handshake era: a question is a request the server sends (a ``"sent"`` call), the answer is
    what the client replies. Stateless era: the questions are the ``inputRequests`` of an
    ``input_required`` result (or of a task waiting for input, in a ``tasks/get`` answer), and the
    answers the ``inputResponses`` of the client's retry (or ``tasks/update``), each recorded with
    its ``key``. (A handshake-era task's questions are not seen yet: they are sent by the task,
    not through the middleware.) Questions of a mount are recorded as those of the server's own
    tools. Events are kept in ``events`` (the last ``keep``) and passed to ``record`` as made
    (make it quick: it runs on the request's path; an exception it raises fails the request).
    The bodies are recorded as they are: a form's answers may be personal data."""

    def __init__(
        self,
        record: Callable[[AuditEvent], None] | None = None,
        *,
        methods: Collection[str] = REVERSE_METHODS,
        keep: int = 1000,
    ) -> None:
        self.record = record
        self.methods = frozenset(methods)
        self.events: deque[AuditEvent] = deque(maxlen=keep)
        self._keep = keep
        # The client's requests being served, as it named them (``tools/call ev_ask``), by
        # connection and id: a handshake-era question names the request it is asked for.
        self._serving: dict[tuple[int, int | str], str] = {}
        # The questions of tasks already recorded, by task id and key (a task is polled).
        self._task_questions: dict[tuple[str, str], None] = {}

    async def __call__(self, call: Call, call_next: CallNext) -> Any:
        if call.kind != "request":
            return await call_next(call)
        if call.direction == "sent":
            if call.method not in self.methods:
                return await call_next(call)
            asked_for = call.request_id
            request = None if asked_for is None else self._serving.get((id(call.connection), asked_for))
            self._add(call, "asked", call.method, call.params, request)
            try:
                answer = await call_next(call)
            except MCPError as failure:
                self._add(call, "failed", call.method, {"code": failure.code, "message": failure.message}, request)
                raise
            self._add(call, "answered", call.method, answer if isinstance(answer, dict) else {}, request)
            return answer
        request = _label(call.method, call.params)
        responses = call.params.get("inputResponses")
        if isinstance(responses, dict):
            for key, answer in responses.items():
                if isinstance(answer, dict):
                    self._add(call, "answered", _answered_method(answer), answer, request, str(key))
        serving = (id(call.connection), call.request_id) if call.request_id is not None else None
        if serving is not None:
            self._serving[serving] = request
        try:
            result = await call_next(call)
        finally:
            if serving is not None:
                self._serving.pop(serving, None)
        if isinstance(result, dict) and "input_required" in (result.get("resultType"), result.get("status")):
            self._asked(call, result, request)
        return result

    def _asked(self, call: Call, result: dict[str, Any], request: str) -> None:
        """The ``inputRequests`` of an ``input_required`` result, or of a task waiting for input
        (a ``tasks/get`` answer, each question recorded once however often the task is polled)."""
        asked = result.get("inputRequests")
        task = result.get("taskId") if result.get("status") == "input_required" else None
        for key, question in asked.items() if isinstance(asked, dict) else ():
            method = question.get("method") if isinstance(question, dict) else None
            if method not in self.methods:
                continue
            if isinstance(task, str):
                if (task, key) in self._task_questions:
                    continue
                self._task_questions[task, key] = None
                while len(self._task_questions) > self._keep:
                    del self._task_questions[next(iter(self._task_questions))]
            params = question.get("params")
            self._add(call, "asked", method, params if isinstance(params, dict) else {}, request, str(key))

    def _add(
        self,
        call: Call,
        kind: Literal["asked", "answered", "failed"],
        method: str | None,
        body: dict[str, Any],
        request: str | None,
        key: str | None = None,
    ) -> None:
        event = AuditEvent(kind, method, body, call.era, call.principal, call.session, request, key)
        self.events.append(event)
        if self.record is not None:
            self.record(event)


def _label(method: str, params: dict[str, Any]) -> str:
    name = item_name(params)
    return method if name is None else f"{method} {name}"


def _answered_method(answer: dict[str, Any]) -> str | None:
    """The question a stateless-era answer answers, by its shape (the retry does not name it)."""
    if "action" in answer:
        return "elicitation/create"
    if "roots" in answer:
        return "roots/list"
    if "role" in answer or "model" in answer:
        return "sampling/createMessage"
    return None
