"""Middleware: code that wraps every message a server receives, and every question it sends.

A middleware is an async function ``(call, call_next) -> result``::

    async def timing(call: Call, call_next: CallNext) -> Any:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            print(call.method, time.perf_counter() - started)

    server.add_middleware(timing)

``call`` says what is passing (``Call``): its ``method`` and ``params``, whether it is a
``"request"`` or a ``"notification"``, its ``direction`` (``"received"`` from the client, or
``"sent"`` to it: ``elicitation/create``, ``sampling/createMessage``, ``roots/list``), the
``era``, the ``principal``, the ``session`` and the ``request_id`` (of the client's request,
or of the request a question is asked for). ``call_next(call)`` passes it on (with the params
it holds, which a middleware may replace) and returns the result: a request's result dict, the
client's answer to a question sent, None for a notification. A middleware may instead return a
result of its own or raise an ``MCPError`` (the client gets that error), and the message goes no
further. Middleware run in the order added, the first outermost, for requests of both eras and of
every mount (a mount is reached through its mounting server's chain).

The reverse channel is seen as it crosses the wire. In the handshake era a question is a request
the server sends: a ``"sent"`` call whose ``call_next`` returns the client's answer. In the
stateless era it is part of the answer to the client's request: the ``inputRequests`` of the
``InputRequiredResult`` that ``call_next`` returns, and the answers come back in the
``inputResponses`` of the retry's params. A cancellation reaches a middleware as the
``CancelledError`` of ``call_next``.

A server keeps what it added as a ``Chain`` (``server.middleware``), made at its first. With no
middleware added, nothing here runs, nor is this module loaded: the server's paths are the same as
without it.
"""

from __future__ import annotations

__all__ = ["Call", "CallNext", "Chain", "Middleware", "chain", "sent_through"]

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..protocol.events import NotificationReceived, RequestReceived
    from ..runtime.connection import Connection
    from ..types.versions import Era


@dataclass(slots=True)
class Call:
    """One message passing through the middleware (see the module docstring)."""

    method: str
    params: dict[str, Any]
    kind: Literal["request", "notification"]
    direction: Literal["received", "sent"]
    era: Era | None
    principal: str | None
    #: The HTTP session id (handshake era over HTTP), else None.
    session: str | None
    connection: Connection = field(repr=False)
    #: What middleware keep for this call between their before and after parts.
    state: dict[str, Any] = field(default_factory=dict, repr=False)
    #: The JSON-RPC id of the client's request: the one received, or the one a question sent is
    #: asked for (what ties a question to its request in the handshake era); None for a notification.
    request_id: int | str | None = None


CallNext = Callable[[Call], Awaitable[Any]]
Middleware = Callable[[Call, CallNext], Awaitable[Any]]


class Chain(list[Middleware]):
    """A server's middleware in the order added, the first outermost (``Server.add_middleware``
    makes it at the first), and each kind of message run through them to what answers it."""

    __slots__ = ()

    def received(
        self,
        request: RequestReceived,
        connection: Connection,
        answer: Callable[[RequestReceived, Connection], Awaitable[dict[str, Any]]],
    ) -> Awaitable[Any]:
        """The result of a client's ``request``: ``answer`` gives it at the end of the chain, for the
        request with the params the middleware pass on."""

        async def last(call: Call) -> dict[str, Any]:
            passed = request if call.params is request.params else dataclasses.replace(request, params=call.params)
            return await answer(passed, connection)

        principal = getattr(connection.transport, "principal", None)
        principal = principal if isinstance(principal, str) else None
        method, params, era = request.method, request.params, request.era
        return chain(self, last)(call_of(method, params, "request", "received", connection, era, principal, request.id))

    def notified(
        self,
        notification: NotificationReceived,
        connection: Connection,
        act: Callable[[NotificationReceived, Connection], None],
    ) -> Awaitable[Any]:
        """A client's ``notification``, which ``act`` takes at the end of the chain."""

        async def last(call: Call) -> None:
            act(notification, connection)

        method, params, era = notification.method, notification.params, connection.session.era
        return chain(self, last)(call_of(method, params, "notification", "received", connection, era, None))

    def asked(
        self,
        method: str,
        params: dict[str, Any],
        connection: Connection,
        era: Era,
        principal: str | None,
        request_id: int | str,
        ask: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
    ) -> Awaitable[dict[str, Any]]:
        """The client's answer to a question (``method``, ``params``) a handler asks it while serving
        request ``request_id``: ``ask(params)`` sends it at the end of the chain."""
        sent = call_of(method, params, "request", "sent", connection, era, principal, request_id)
        return sent_through(self, sent, ask)


def chain(middleware: Sequence[Middleware], last: CallNext) -> CallNext:
    """``last`` wrapped in ``middleware``, the first outermost."""
    run = last
    for outer in reversed(middleware):
        run = _wrapped(outer, run)
    return run


def _wrapped(outer: Middleware, inner: CallNext) -> CallNext:
    async def run(call: Call) -> Any:
        return await outer(call, inner)

    return run


def call_of(
    method: str,
    params: dict[str, Any],
    kind: Literal["request", "notification"],
    direction: Literal["received", "sent"],
    connection: Connection,
    era: Era | None,
    principal: str | None,
    request_id: int | str | None = None,
) -> Call:
    """The ``Call`` of a message on ``connection`` (``request_id``: see ``Call``)."""
    session = getattr(connection.transport, "session_id", None)
    session = session if isinstance(session, str) else None
    return Call(method, params, kind, direction, era, principal, session, connection, request_id=request_id)


async def sent_through(
    middleware: Sequence[Middleware],
    sent: Call,
    ask: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """The client's answer to the question ``sent`` (a handler's ``ctx.request_input``), through ``middleware``."""

    async def last(call: Call) -> dict[str, Any]:
        return await ask(call.params)

    call = sent
    answer: dict[str, Any] = await chain(middleware, last)(call)
    return answer
