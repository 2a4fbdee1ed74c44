"""Error codes and the exception tree.

Every exception that can become a JSON-RPC error carries its wire ``code``; the
runtime turns one into a response in exactly one place.

    MCPError                       an error with a JSON-RPC code and optional data
    ├── ProtocolError              a rule of the protocol was broken
    │   ├── LocalProtocolError     ... by us: a bug in the caller, never sent by itself
    │   └── RemoteProtocolError    ... by the peer: answered with the code it carries
    ├── ParseError                 -32700  malformed JSON
    ├── InvalidRequest             -32600  not a valid JSON-RPC message
    ├── MethodNotFound             -32601
    ├── InvalidParams              -32602  names the offending field
    ├── InternalError              -32603  safe message only; the traceback stays in the log
    ├── ResourceNotFound           -32002  (handshake era; -32602 in the stateless era)
    ├── UrlElicitationRequired     -32042  (handshake era only)
    ├── HeaderMismatch             -32020
    ├── MissingCapability          -32021  the client did not declare what this needs
    ├── UnsupportedProtocolVersion -32022  data lists the supported versions
    ├── RateLimited                -31429  too many requests from this caller; data.retryAfterMs
    ├── RequestError               an error response the peer sent us (any code)
    ├── RequestTimeout             no answer in time (also a TimeoutError)
    └── ConnectionClosed           the transport ended; every pending request fails with it
    ToolError (not an MCPError)    raised by a tool: becomes a result with ``isError: true``
"""

from __future__ import annotations

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_MESSAGE_CHARS",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RATE_LIMITED",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "ConnectionClosed",
    "HeaderMismatch",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalProtocolError",
    "MCPError",
    "MethodNotFound",
    "MissingCapability",
    "ParseError",
    "ProtocolError",
    "RateLimited",
    "RemoteProtocolError",
    "RequestError",
    "RequestTimeout",
    "ResourceNotFound",
    "ToolError",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
]

from typing import Any

#: Longest error message put on the wire; the rest is cut (the log keeps the whole error).
MAX_MESSAGE_CHARS = 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: Ours, not the spec's: it asks for codes outside -32768..-32000, and this one ends in HTTP's 429.
RATE_LIMITED = -31429


class MCPError(Exception):
    """An error that has a JSON-RPC form: ``{"code", "message", "data"?}``."""

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, *, data: Any = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code

    def to_error(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC response."""
        message = self.message
        if len(message) > MAX_MESSAGE_CHARS:
            # Messages name what was wrong, often by echoing it: a peer's 1 MB method name
            # must not come back whole.
            message = f"{message[:MAX_MESSAGE_CHARS]}... ({len(message) - MAX_MESSAGE_CHARS} characters cut)"
        error: dict[str, Any] = {"code": self.code, "message": message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ProtocolError(MCPError):
    code = INVALID_REQUEST


class LocalProtocolError(ProtocolError):
    """We tried to do something the protocol forbids. Fix the calling code."""


class RemoteProtocolError(ProtocolError):
    """The peer broke a rule; answer it with ``code``."""


class ParseError(MCPError):
    code = PARSE_ERROR


class InvalidRequest(MCPError):
    code = INVALID_REQUEST


class MethodNotFound(MCPError):
    code = METHOD_NOT_FOUND


class InvalidParams(MCPError):
    code = INVALID_PARAMS


class InternalError(MCPError):
    code = INTERNAL_ERROR


class ResourceNotFound(MCPError):
    """Raise from a resource handler when the URI names nothing.

    Sent as -32002 to handshake-era clients and -32602 in the stateless era,
    which reserves -32002.
    """

    code = RESOURCE_NOT_FOUND

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(message or f"Resource not found: {uri}", data={"uri": uri})
        self.uri = uri


class UrlElicitationRequired(MCPError):
    code = URL_ELICITATION_REQUIRED


class HeaderMismatch(MCPError):
    code = HEADER_MISMATCH


class MissingCapability(MCPError):
    """The request needs a client capability that the client did not declare."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(self, capability: str, message: str | None = None) -> None:
        required: dict[str, Any] = {}
        node = required
        for part in capability.split("."):
            node[part] = {}
            node = node[part]
        super().__init__(
            message or f"Server requires the {capability} client capability for this request",
            data={"requiredCapabilities": required},
        )
        self.capability = capability


class UnsupportedProtocolVersion(MCPError):
    code = UNSUPPORTED_PROTOCOL_VERSION

    def __init__(self, requested: object, supported: list[str]) -> None:
        super().__init__(
            "Unsupported protocol version",
            data={"supported": supported, "requested": requested},
        )


class RateLimited(MCPError):
    """The caller asked more often than the server allows; ``data.retryAfterMs`` says when to try again."""

    code = RATE_LIMITED


class RequestError(MCPError):
    """The peer answered our request with a JSON-RPC error."""

    @classmethod
    def from_error(cls, error: Any) -> RequestError:
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message")
            return cls(
                message if isinstance(message, str) else "error without a message",
                code=code if isinstance(code, int) else INTERNAL_ERROR,
                data=error.get("data"),
            )
        return cls("malformed error object", code=INTERNAL_ERROR, data=error)


class RequestTimeout(MCPError, TimeoutError):
    """Our request got no answer in time; it was cancelled on the wire."""

    code = INTERNAL_ERROR


class ConnectionClosed(MCPError):
    """The connection ended before an answer came. Pending requests fail with this."""

    code = INTERNAL_ERROR

    def __init__(self, message: str = "Connection closed") -> None:
        super().__init__(message)


class ToolError(Exception):
    """Raise from a tool to report a failure the model should see.

    The runtime turns it into a ``CallToolResult`` with ``isError: true`` and the
    message as text content, rather than a JSON-RPC error.
    """
