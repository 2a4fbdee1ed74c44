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

__all__ = ["Call", "CallNext", "Chain", "Middleware", "chain", "received_call", "sent_through"]

import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from ..protocol.events import RequestReceived

if TYPE_CHECKING:
    from ..protocol.events import NotificationReceived
    from ..runtime.connection import Connection
    from ..types.versions import Era


class Call(msgspec.Struct):
    """One message passing through the middleware (see the module docstring). Its fields may be
    set (``call.params = ...``); ``msgspec.structs.replace`` makes a changed copy."""

    method: str
    params: dict[str, Any]
    kind: Literal["request", "notification"]
    direction: Literal["received", "sent"]
    era: Era | None
    principal: str | None
    #: The HTTP session id (handshake era over HTTP), else None.
    session: str | None
    connection: Connection
    #: What middleware keep for this call between their before and after parts.
    state: dict[str, Any] = msgspec.field(default_factory=dict)
    #: The JSON-RPC id of the client's request: the one received, or the one a question sent is
    #: asked for (what ties a question to its request in the handshake era); None for a notification.
    request_id: int | str | None = None
    #: The client's request or notification as received (None for a question sent): what the
    #: end of the chain answers, with the ``params`` the middleware passed on.
    message: RequestReceived | NotificationReceived | None = None

    def request(self) -> RequestReceived:
        """The client's request this received call carries, with the params it holds now."""
        request = self.message
        assert isinstance(request, RequestReceived)
        if self.params is request.params:
            return request
        return dataclasses.replace(request, params=self.params)


CallNext = Callable[[Call], Awaitable[Any]]
Middleware = Callable[[Call, CallNext], Awaitable[Any]]


class Chain(tuple[Middleware, ...]):
    """A server's middleware in the order added, the first outermost (``Server.add_middleware``
    makes a new one at each), and each kind of message run through them to what answers it.
    The layers are wrapped around an end once, at its first message, not at every message."""

    def __init__(self, layers: Iterable[Middleware] = ()) -> None:
        self._ends: dict[Any, CallNext] = {}

    def received(self, request: RequestReceived, connection: Connection, end: CallNext) -> Awaitable[Any]:
        """The result of a client's ``request``: ``end`` gives it at the end of the chain, from the
        ``Call`` the middleware pass on (``Call.request``: the request with the params it holds)."""
        run = self._ends.get(end)
        if run is None:
            run = self._ends[end] = chain(self, end)
        return run(received_call(request, connection))

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


def received_call(request: RequestReceived, connection: Connection) -> Call:
    """The ``Call`` of a client's ``request`` on ``connection``."""
    transport = connection.transport
    principal = getattr(transport, "principal", None)
    session = getattr(transport, "session_id", None)
    return Call(
        request.method,
        request.params,
        "request",
        "received",
        request.era,
        principal if isinstance(principal, str) else None,
        session if isinstance(session, str) else None,
        connection,
        {},
        request.id,
        request,
    )


def chain(middleware: Sequence[Middleware], last: CallNext) -> CallNext:
    """``last`` wrapped in ``middleware``, the first outermost."""
    run = last
    for outer in reversed(middleware):
        run = _wrapped(outer, run)
    return run


def _wrapped(outer: Middleware, inner: CallNext) -> CallNext:
    def run(call: Call) -> Awaitable[Any]:
        return outer(call, inner)

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
    message: RequestReceived | NotificationReceived | None = None,
) -> Call:
    """The ``Call`` of a message on ``connection`` (``request_id``, ``message``: see ``Call``)."""
    session = getattr(connection.transport, "session_id", None)
    session = session if isinstance(session, str) else None
    return Call(method, params, kind, direction, era, principal, session, connection, {}, request_id, message)


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
