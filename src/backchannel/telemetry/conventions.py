"""Every name backchannel's telemetry uses, as data: attribute keys, span names, metrics, units, buckets.

Most come from the OpenTelemetry semantic conventions for MCP
(``open-telemetry/semantic-conventions-genai``, ``docs/gen-ai/mcp.md``, v0.1.0, status Development);
the few that are ours say so, and are listed in docs/observability.md. Nothing here imports
``opentelemetry``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "CANCELLED",
    "CANCEL_REASON",
    "CLIENT_ADDRESS",
    "CLIENT_OPERATION_DURATION",
    "CLIENT_PORT",
    "CLIENT_REQUESTS_IN_FLIGHT",
    "CLIENT_SESSION_DURATION",
    "CONNECTION_CLOSED",
    "DURATION_BUCKETS",
    "DURATION_UNIT",
    "ERROR_TYPE",
    "EVENT_CANCELLED",
    "EVENT_PROGRESS",
    "EXECUTE_TOOL",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROMPT_NAME",
    "GEN_AI_TOOL_NAME",
    "JSONRPC_REQUEST_ID",
    "MCP_METHOD_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_RESOURCE_URI",
    "MCP_SESSION_ID",
    "METRIC_ATTRIBUTES",
    "NETWORK_PROTOCOL_NAME",
    "NETWORK_PROTOCOL_VERSION",
    "NETWORK_TRANSPORT",
    "PROGRESS_TOTAL",
    "PROGRESS_VALUE",
    "RPC_RESPONSE_STATUS_CODE",
    "SERVER_ADDRESS",
    "SERVER_OPERATION_DURATION",
    "SERVER_PORT",
    "SERVER_REQUESTS_IN_FLIGHT",
    "SERVER_SESSION_DURATION",
    "TIMEOUT",
    "TOOL_ERROR",
    "TRACE_META_KEYS",
    "request_attributes",
    "span_name",
]

# --- attribute keys (the conventions') -----------------------------------------------------------

MCP_METHOD_NAME = "mcp.method.name"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_SESSION_ID = "mcp.session.id"
MCP_RESOURCE_URI = "mcp.resource.uri"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
ERROR_TYPE = "error.type"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"
NETWORK_PROTOCOL_VERSION = "network.protocol.version"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
CLIENT_ADDRESS = "client.address"
CLIENT_PORT = "client.port"

#: ``gen_ai.operation.name`` of a ``tools/call``.
EXECUTE_TOOL = "execute_tool"

# --- error.type values ---------------------------------------------------------------------------

#: A ``tools/call`` answered with ``isError: true`` (the conventions' value).
TOOL_ERROR = "tool_error"
#: Ours: the request was cancelled (by the peer, on the server side; by the caller, on the client side).
CANCELLED = "cancelled"
#: The conventions' example value: the client stopped waiting after its timeout.
TIMEOUT = "timeout"
#: Ours: the connection ended before an answer came.
CONNECTION_CLOSED = "connection_closed"

# --- span events (ours: the conventions name none) -----------------------------------------------

EVENT_PROGRESS = "progress"
EVENT_CANCELLED = "cancelled"
#: On a ``progress`` event: the progress value and the total, when the sender gave one.
PROGRESS_VALUE = "mcp.progress.value"
PROGRESS_TOTAL = "mcp.progress.total"
#: On a ``cancelled`` event: the reason the canceller gave, when it gave one.
CANCEL_REASON = "mcp.cancel.reason"

# --- metrics -------------------------------------------------------------------------------------

CLIENT_OPERATION_DURATION = "mcp.client.operation.duration"
SERVER_OPERATION_DURATION = "mcp.server.operation.duration"
CLIENT_SESSION_DURATION = "mcp.client.session.duration"
SERVER_SESSION_DURATION = "mcp.server.session.duration"
#: Ours: requests being served (server) or awaiting their answer (client) right now.
SERVER_REQUESTS_IN_FLIGHT = "backchannel.server.requests.in_flight"
CLIENT_REQUESTS_IN_FLIGHT = "backchannel.client.requests.in_flight"
DURATION_UNIT = "s"
#: The conventions' ``ExplicitBucketBoundaries`` for all four duration histograms.
DURATION_BUCKETS: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

#: The span attributes a duration metric keeps: the low-cardinality ones (no request id, no
#: session id, no peer address or port, no resource URI: opt-in for metrics in the conventions).
METRIC_ATTRIBUTES: frozenset[str] = frozenset(
    {
        MCP_METHOD_NAME,
        ERROR_TYPE,
        RPC_RESPONSE_STATUS_CODE,
        GEN_AI_TOOL_NAME,
        GEN_AI_PROMPT_NAME,
        GEN_AI_OPERATION_NAME,
        MCP_PROTOCOL_VERSION,
        NETWORK_TRANSPORT,
        NETWORK_PROTOCOL_NAME,
        NETWORK_PROTOCOL_VERSION,
        SERVER_ADDRESS,
        SERVER_PORT,
    }
)

# --- propagation ---------------------------------------------------------------------------------

#: The ``_meta`` keys reserved for trace context (SEP-414; 2026-07-28 ``basic/index.mdx``), unprefixed.
TRACE_META_KEYS: tuple[str, ...] = ("traceparent", "tracestate", "baggage")

# --- span names and per-method attributes --------------------------------------------------------

#: Methods whose ``params.name`` is the low-cardinality target of the span name, and its attribute.
_TARGETS: Mapping[str, str] = {"tools/call": GEN_AI_TOOL_NAME, "prompts/get": GEN_AI_PROMPT_NAME}
_URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


def span_name(method: str, params: Mapping[str, Any] | None) -> str:
    """``{mcp.method.name} {target}``: the tool or prompt name when there is one, never a resource URI."""
    if method in _TARGETS and params is not None:
        name = params.get("name")
        if type(name) is str and name:
            return f"{method} {name}"
    return method


def request_attributes(method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The attributes a request's method and params give its span (no argument values, ever)."""
    attributes: dict[str, Any] = {MCP_METHOD_NAME: method}
    if params is None:
        return attributes
    target = _TARGETS.get(method)
    if target is not None:
        name = params.get("name")
        if type(name) is str:
            attributes[target] = name
        if method == "tools/call":
            attributes[GEN_AI_OPERATION_NAME] = EXECUTE_TOOL
    elif method in _URI_METHODS:
        uri = params.get("uri")
        if type(uri) is str:
            attributes[MCP_RESOURCE_URI] = uri
    return attributes
