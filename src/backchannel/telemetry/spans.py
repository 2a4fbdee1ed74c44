"""Server and client spans of MCP requests, their events, and the request metrics recorded as they end.

The runtime calls ``start_server`` as a request is read and ``start_client`` as one is sent; each
returns an :class:`Operation`, or None when neither tracing nor metrics is on (then nothing else
here is called). The operation ends exactly once: ``finish`` with the answer, or ``finish_unanswered``
(cancelled, timed out, connection closed). The span and the ``mcp.*.operation.duration`` histogram
share the attributes; the histogram keeps only the low-cardinality ones.

``opentelemetry`` is imported here only inside functions that run when a signal is on.
"""

from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from . import conventions as C
from .activation import signals, tracer
from .metrics import InFlightKey, request_ended, request_started
from .propagation import api, context_from_meta, inject_meta

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Span

__all__ = [
    "CurrentSpan",
    "Operation",
    "add_cancelled",
    "add_progress",
    "finish",
    "finish_unanswered",
    "handler_context",
    "internal_span",
    "on_pipe",
    "sent",
    "start_client",
    "start_server",
]


T = TypeVar("T")
_modules = sys.modules


class Operation:
    """One request in flight, as telemetry sees it: its span (None when tracing is off), start time,
    attributes; ``context`` is the OpenTelemetry context with the span current (for the handler);
    ``duration`` the histogram its time goes to and ``in_flight`` its key in the in-flight counts
    (both None when metrics were off as it started)."""

    __slots__ = ("attributes", "cancel_reason", "cancelled", "context", "duration", "in_flight", "span", "started")

    def __init__(
        self,
        span: Span | None,
        context: Context | None,
        attributes: dict[str, Any],
        duration: Histogram | None,
        in_flight: InFlightKey | None,
    ) -> None:
        self.span = span
        self.context = context
        self.attributes = attributes
        self.duration = duration
        self.in_flight = in_flight
        #: The peer cancelled it (server side) or we did (client side), giving ``cancel_reason``.
        self.cancelled = False
        self.cancel_reason: str | None = None
        self.started = time.perf_counter()


def start_server(request: Any, connection: Any) -> Operation | None:
    """A request we received (a ``RequestReceived`` of ``connection``), read just now: its ``SERVER``
    span, parented on the context in its ``_meta`` (linking the ambient one), else on the ambient
    context (an HTTP request's headers)."""
    if "opentelemetry" not in _modules:  # nobody configured anything: the common case, first
        return None
    found = signals()
    if found is None:
        return None
    found_tracer, found_meter = found
    method = request.method
    params = request.params
    version = request.version or connection.session.protocol_version
    attributes = _attributes(method, params, version, _connection_attributes(connection))
    attributes[C.JSONRPC_REQUEST_ID] = str(request.id)
    span = context = None
    if found_tracer is not None:
        trace = api("opentelemetry.trace")
        parent = context_from_meta(params.get("_meta"))
        links = None
        if parent is not None:
            ambient = trace.get_current_span().get_span_context()
            if ambient.is_valid:
                links = [trace.Link(ambient)]
        span = found_tracer.start_span(
            C.span_name(method, params), context=parent, kind=trace.SpanKind.SERVER, attributes=attributes, links=links
        )
        context = trace.set_span_in_context(
            span, parent if parent is not None else api("opentelemetry.context").get_current()
        )
    if found_meter is None:
        return Operation(span, context, attributes, None, None)
    return Operation(span, context, attributes, *request_started(found_meter, attributes, served=True))


def start_client(
    method: str, params: dict[str, Any] | None, connection: Any
) -> tuple[Operation | None, dict[str, Any] | None]:
    """A request we are about to send: its ``CLIENT`` span (child of whatever is current), and the
    params to send, a copy whose ``_meta`` carries the span's context. The caller's dict is never
    changed; with tracing off the params come back as they were (no ``_meta`` key is added).
    Tell it the request's id with ``sent``."""
    if "opentelemetry" not in _modules:
        return None, params
    found = signals()
    if found is None:
        return None, params
    found_tracer, found_meter = found
    attributes = _attributes(method, params, None, _connection_attributes(connection))
    span = context = None
    if found_tracer is not None:
        trace = api("opentelemetry.trace")
        span = found_tracer.start_span(C.span_name(method, params), kind=trace.SpanKind.CLIENT, attributes=attributes)
        context = trace.set_span_in_context(span)
        carried: dict[str, Any] = {}
        inject_meta(carried, context)
        if carried:  # the configured propagators may add nothing: then neither do we
            params = dict(params or {})
            meta = params.get("_meta")
            params["_meta"] = {**meta, **carried} if type(meta) is dict else carried
    if found_meter is None:
        return Operation(span, context, attributes, None, None), params
    return Operation(span, context, attributes, *request_started(found_meter, attributes, served=False)), params


def sent(operation: Operation, request_id: Any, version: str | None) -> None:
    """The client operation's request is queued as ``request_id``, in protocol ``version``."""
    operation.attributes[C.JSONRPC_REQUEST_ID] = request_id = str(request_id)
    if version is not None:
        operation.attributes[C.MCP_PROTOCOL_VERSION] = version
    span = operation.span
    if span is not None:
        span.set_attribute(C.JSONRPC_REQUEST_ID, request_id)
        if version is not None:
            span.set_attribute(C.MCP_PROTOCOL_VERSION, version)


def internal_span(name: str, attributes: Mapping[str, Any] | None = None) -> CurrentSpan | None:
    """An ``INTERNAL`` span, child of the current context, to use as ``with span:`` (current inside,
    ended after); None when tracing is off. The client's multi round-trip operation uses it."""
    found_tracer = tracer()
    if found_tracer is None:
        return None
    trace = api("opentelemetry.trace")
    span = found_tracer.start_span(name, kind=trace.SpanKind.INTERNAL, attributes=attributes)
    return CurrentSpan(span, trace.set_span_in_context(span))


class CurrentSpan:
    """A started span made current for a ``with`` block and ended after it (``ERROR`` if it raised)."""

    __slots__ = ("context", "span", "token")

    def __init__(self, span: Span, context: Context) -> None:
        self.span = span
        self.context = context
        self.token: object = None

    def __enter__(self) -> Span:
        self.token = api("opentelemetry.context").attach(self.context)
        return self.span

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        api("opentelemetry.context").detach(self.token)
        if error is not None:
            trace = api("opentelemetry.trace")
            self.span.set_attribute(C.ERROR_TYPE, _error_type(error))
            self.span.set_status(trace.Status(trace.StatusCode.ERROR, str(error)))
        self.span.end()


def _error_type(error: BaseException) -> str:
    """``error.type`` for an exception: its JSON-RPC code, ``cancelled``, ``timeout``, or its class."""
    import asyncio

    if isinstance(error, asyncio.CancelledError):
        return C.CANCELLED
    if isinstance(error, TimeoutError):
        return C.TIMEOUT
    code = getattr(error, "code", None)
    return str(code) if type(code) is int else type(error).__name__


def handler_context(operation: Operation) -> contextvars.Context | None:
    """A copy of the current ``contextvars`` context with the operation's span current, to run the
    request's handler task in; None when there is no span (run it in the usual context)."""
    if operation.context is None:
        return None
    copied = contextvars.copy_context()
    copied.run(api("opentelemetry.context").attach, operation.context)
    return copied


def add_progress(operation: Operation, progress: float, total: float | None) -> None:
    """A ``progress`` event, when the span records (sampled); nothing otherwise."""
    span = operation.span
    if span is not None and span.is_recording():
        attributes: dict[str, Any] = {C.PROGRESS_VALUE: progress}
        if total is not None:
            attributes[C.PROGRESS_TOTAL] = total
        span.add_event(C.EVENT_PROGRESS, attributes)


def add_cancelled(operation: Operation, reason: str | None) -> None:
    """A ``cancelled`` event: we sent a cancellation (client span) or received one (server span)."""
    operation.cancelled = True
    operation.cancel_reason = reason
    span = operation.span
    if span is not None and span.is_recording():
        span.add_event(C.EVENT_CANCELLED, {C.CANCEL_REASON: reason} if reason else None)


def finish(
    operation: Operation,
    result: Mapping[str, Any] | None,
    error_code: int | None = None,
    error_message: str | None = None,
    connection: Any = None,
) -> None:
    """The request was answered: with ``result``, or with the JSON-RPC error ``error_code``.
    ``connection``: the one the request was sent on (client side), whose attributes ``initialize``
    may have added to (the session id it brought)."""
    attributes = operation.attributes
    description = None
    if error_code is not None:
        attributes[C.ERROR_TYPE] = attributes[C.RPC_RESPONSE_STATUS_CODE] = str(error_code)
        description = error_message
    elif result is not None:
        method = attributes[C.MCP_METHOD_NAME]
        if method == "tools/call" and result.get("isError") is True:
            attributes[C.ERROR_TYPE] = C.TOOL_ERROR
            description = _first_text(result)
        elif method == "initialize":
            _initialized(operation, result, connection)
    _end(operation, description)


def _initialized(operation: Operation, result: Mapping[str, Any], connection: Any) -> None:
    """``initialize`` was answered: its span takes the version the server chose (the client asked
    for one; the server may answer with another) and, on the client, what the answer told the
    connection (``mcp.session.id`` over HTTP), as the conventions' ``initialize`` example shows."""
    joined: dict[str, Any] = {}
    version = result.get("protocolVersion")
    if type(version) is str:
        joined[C.MCP_PROTOCOL_VERSION] = version
    if connection is not None:
        found = _connection_attributes(connection) or {}
        joined.update({key: value for key, value in found.items() if key not in operation.attributes})
    operation.attributes.update(joined)
    if operation.span is not None and joined:
        operation.span.set_attributes(joined)


def finish_unanswered(operation: Operation, error_type: str, description: str | None = None) -> None:
    """The request ended with no answer: ``cancelled``, ``timeout`` or ``connection_closed``."""
    operation.attributes[C.ERROR_TYPE] = error_type
    _end(operation, description)


# --- internals ---------------------------------------------------------------------------------------


def _attributes(
    method: str, params: Mapping[str, Any] | None, version: str | None, connection: Mapping[str, Any] | None
) -> dict[str, Any]:
    attributes = C.request_attributes(method, params)
    if version is not None:
        attributes[C.MCP_PROTOCOL_VERSION] = version
    if connection:
        attributes.update(connection)
    return attributes


def _connection_attributes(connection: Any) -> Mapping[str, Any] | None:
    """What the host said of the connection, else of its transport (``on_pipe``)."""
    found = connection.telemetry_attributes
    return found if found is not None else getattr(connection.transport, "telemetry_attributes", None)


def on_pipe(transport: T) -> T:
    """``transport`` (stdio), marked for telemetry as a pipe (``network.transport=pipe``); returns it.

    One shared dict on the one transport object: nothing per request, nothing when telemetry is off.
    """
    transport.telemetry_attributes = _PIPE  # type: ignore[attr-defined]
    return transport


_PIPE: Mapping[str, Any] = {C.NETWORK_TRANSPORT: "pipe"}


def _first_text(result: Mapping[str, Any]) -> str | None:
    content = result.get("content")
    if type(content) is list:
        for block in content:
            if type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str:
                return block["text"][:1024]  # type: ignore[no-any-return]
    return None


def _end(operation: Operation, description: str | None) -> None:
    attributes = operation.attributes
    span = operation.span
    if span is not None:
        error_type = attributes.get(C.ERROR_TYPE)
        if error_type is not None:
            trace = api("opentelemetry.trace")
            span.set_attribute(C.ERROR_TYPE, error_type)
            code = attributes.get(C.RPC_RESPONSE_STATUS_CODE)
            if code is not None:
                span.set_attribute(C.RPC_RESPONSE_STATUS_CODE, code)
            span.set_status(trace.Status(trace.StatusCode.ERROR, description))
        span.end()
    if operation.duration is not None:
        seconds = time.perf_counter() - operation.started
        request_ended(operation.duration, operation.in_flight, seconds, attributes)
