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

With no middleware added, nothing here runs, nor is this module loaded: the server's paths are the
same as without it.
"""

from __future__ import annotations

__all__ = ["Call", "CallNext", "Middleware", "chain", "sent_through"]

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
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
