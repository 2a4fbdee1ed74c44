"""What the HTTP host tells telemetry: each HTTP request's W3C trace context, and each connection's transport.

``HttpApp`` calls :func:`begin` as an HTTP request arrives and :func:`end` when it is served.
With telemetry on (a tracer or a meter configured: ``telemetry/activation.py``), ``begin``
makes the context of the request's ``traceparent``/``tracestate``/``baggage`` headers the
current one while the request is served, so the runtime's server span of a message the POST
carries parents on it when the message's ``_meta`` carries no context, and links it when it
does (the MCP conventions: one HTTP request may carry several MCP messages, and one MCP
request may take several HTTP requests). An outer instrumentation (an ASGI middleware) that
made its own HTTP span current already wins: that span is the ambient context then.

The connections made while a request is served (a handshake-era session at ``initialize``, or
where a fleet's worker takes one up; a stateless-era request's own) get their transport's
attributes from :func:`connection_attributes`. With telemetry off, ``begin`` returns None after
one check (``activation.signals``) and nothing is kept per session (``telemetry_attributes`` stays
the class's None). At the app's lifespan shutdown, :func:`flush` exports what the SDK still holds.
"""

from __future__ import annotations

__all__ = ["TracedRequest", "begin", "connection_attributes", "describe", "end", "flush"]

import asyncio
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..telemetry import activation
from ..telemetry import conventions as C
from ..telemetry.activation import otel_logger, signals
from ..telemetry.propagation import context_from_headers
from .asgi import Scope

if TYPE_CHECKING:
    from ..runtime.connection import Connection


@dataclass(slots=True)
class TracedRequest:
    """One HTTP request served with telemetry on: its connection attributes, and what to undo."""

    attributes: dict[str, Any]
    described: Token[dict[str, Any] | None]
    attached: object | None = None  # the token of the context attached from the headers


_DESCRIBED: ContextVar[dict[str, Any] | None] = ContextVar("backchannel_http_request", default=None)


def begin(scope: Scope) -> TracedRequest | None:
    """Start serving the HTTP request ``scope`` with telemetry, when it is on; pass what this
    returns to :func:`end` when the request is served, however it ends."""
    found = signals()  # (tracer, meter): one check per HTTP request
    if found is None:
        return None
    attributes: dict[str, Any] = {
        C.NETWORK_TRANSPORT: "tcp",
        C.NETWORK_PROTOCOL_NAME: "http",
        C.NETWORK_PROTOCOL_VERSION: str(scope.get("http_version") or "1.1"),
    }
    peer = scope.get("client")
    if peer:  # (host, port); None under some test transports and unix sockets
        attributes[C.CLIENT_ADDRESS] = str(peer[0])
        if peer[1] is not None:
            attributes[C.CLIENT_PORT] = int(peer[1])
    traced = TracedRequest(attributes, _DESCRIBED.set(attributes))
    if found[0] is not None:
        traced.attached = _attach_headers(scope)
    return traced


def end(traced: TracedRequest | None) -> None:
    """The request ``begin`` started is served: restore the context it changed."""
    if traced is None:
        return
    if traced.attached is not None:
        from opentelemetry import context  # imported already: a tracer was configured

        context.detach(traced.attached)  # type: ignore[arg-type]
    _DESCRIBED.reset(traced.described)


def connection_attributes(session_id: str | None = None) -> dict[str, Any] | None:
    """The ``telemetry_attributes`` of a connection made while serving this HTTP request
    (``mcp.session.id`` for a handshake-era session); None when telemetry is off."""
    described = _DESCRIBED.get()
    if described is None:
        return None
    if session_id is None:
        return dict(described)
    return {**described, C.MCP_SESSION_ID: session_id}


def describe(connection: Connection, session_id: str | None = None) -> None:
    """Give ``connection`` (made while serving this HTTP request) its ``telemetry_attributes``;
    with telemetry off it is left alone, so an idle session keeps nothing more."""
    described = connection_attributes(session_id)
    if described is not None:
        connection.telemetry_attributes = described


async def flush() -> None:
    """The app is shutting down (ASGI lifespan): make the configured OpenTelemetry providers export
    what they hold (``activation.flush``, in a thread: exporters block). Under uvicorn (an app mounted
    by its user) a SIGTERM ends the process right after this, by the signal uvicorn re-raises, before
    the SDK's ``atexit`` flush: the spans of the last requests, still in a batch processor's queue,
    would be lost. (``run_http`` returns and lets ``atexit`` run; flushing here costs it nothing.)"""
    if signals() is not None or otel_logger() is not None:
        await asyncio.to_thread(activation.flush)


def _attach_headers(scope: Scope) -> object | None:
    from opentelemetry import context, trace

    if trace.get_current_span().get_span_context().is_valid:
        return None  # an outer instrumentation's HTTP span is the ambient context already
    # Every header, not only the W3C ones: the configured propagators may read others (B3...).
    found = context_from_headers(scope.get("headers") or ())
    return None if found is None else context.attach(found)
