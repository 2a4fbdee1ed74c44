"""Error codes and the exception tree, drawn once here.

Every exception that can become a JSON-RPC error carries its wire ``code``; the
runtime turns one into a response in exactly one place. An ``AuthError`` carries the HTTP
``status`` (and RFC 6750 ``error``) it is answered with instead: it refuses a request before
JSON-RPC is read, and the HTTP host's auth step (``http_host/gate.py``) makes each its
response, with a challenge and a JSON-RPC body (-32600, or -32603 for a 5xx).

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
    ├── ConnectionClosed           the transport ended; every pending request fails with it
    │   ├── TransportClosed        ... we closed it
    │   └── TransportBroken        ... the peer or the network ended it
    ├── StateUnavailable           -32603  the shared state (Redis) cannot be reached now: try again
    ├── StoreFull                  -32603  the state store refused a new key: a bound was reached
    ├── WorkerGone                 -32603  the fleet's worker that holds it no longer serves
    └── CallFailed                 -32603  another worker could not do what was asked
    ToolError (not an MCPError)    raised by a tool: becomes a result with ``isError: true``
    AuthError (not an MCPError)    HTTP status and RFC 6750 error: the request's credentials are refused
    ├── InvalidToken               401 invalid_token: unverifiable, expired, another resource's...
    ├── InvalidAuthRequest         400 invalid_request: two credentials, a token in the URL...
    ├── InsufficientScope          403 insufficient_scope: ``scopes`` lists what the request needs
    ├── InvalidDpopProof           401 invalid_dpop_proof (RFC 9449 §7.1)
    │   └── UseDpopNonce           401 use_dpop_nonce, with a fresh ``DPoP-Nonce``
    └── VerifierUnavailable        503: the authorization server could not be asked (JWKS, introspection)

A feature adds a leaf of its own where it raises it, under the error it is answered as
(``signatures.signature.InvalidArguments`` under ``InvalidParams``, say); a verifier raises
``InvalidToken`` (or ``VerifierUnavailable``), and ``auth.ResourceAuth`` gives each its
``WWW-Authenticate`` challenge.
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
    "AuthError",
    "CallFailed",
    "ConnectionClosed",
    "HeaderMismatch",
    "InsufficientScope",
    "InternalError",
    "InvalidAuthRequest",
    "InvalidDpopProof",
    "InvalidParams",
    "InvalidRequest",
    "InvalidToken",
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
    "StateUnavailable",
    "StoreFull",
    "ToolError",
    "TransportBroken",
    "TransportClosed",
    "UnsupportedProtocolVersion",
    "UpstreamUnavailable",
    "UrlElicitationRequired",
    "UseDpopNonce",
    "VerifierUnavailable",
    "WorkerGone",
]

from collections.abc import Sequence
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
    """Raise when a request's params are wrong (-32602); the message says what to fix."""

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
        """The error a JSON-RPC ``error`` member stands for; a malformed one becomes an internal error carrying it
        as ``data``."""
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


class TransportClosed(ConnectionClosed):
    """We closed the transport."""


class TransportBroken(ConnectionClosed):
    """The peer or the network ended the transport."""


class StateUnavailable(MCPError):
    """The shared state cannot be reached right now (Redis down, restarting, or too slow).

    Answered as -32603 with a message that names the store and says to try again; the state
    reconnects by itself. When the store stopped answering (rather than refused), the call
    may still have taken effect: a message published, a key set."""

    code = INTERNAL_ERROR


class UpstreamUnavailable(MCPError):
    """A bridge's upstream server (``backchannel proxy``, a mount) could not be started or
    reached, or went away: answered as -32603 naming it in the message and in ``data.upstream``."""

    code = INTERNAL_ERROR


class StoreFull(MCPError):
    """The server's state store refused a new key: a bound was reached.

    Answered as -32603 with the message given, which says whose bound it was and
    what the caller can do (usually: wait for earlier entries to expire)."""

    code = INTERNAL_ERROR


class WorkerGone(MCPError):
    """The worker that holds what was asked for no longer serves (it stopped, or was killed)."""

    code = INTERNAL_ERROR


class CallFailed(MCPError):
    """The other worker could not do what was asked: its message says why."""

    code = INTERNAL_ERROR


class ToolError(Exception):
    """Raise from a tool to report a failure the model should see.

    The runtime turns it into a ``CallToolResult`` with ``isError: true`` and the
    message as text content, rather than a JSON-RPC error.
    """


class AuthError(Exception):
    """A refusal; ``description`` is safe to show the client (``error_description``)."""

    status = 401
    error: str | None = None

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class InvalidToken(AuthError):
    """The access token is not genuine, has expired or is not for this resource: HTTP 401 with
    ``error="invalid_token"``."""

    error = "invalid_token"


class InvalidAuthRequest(AuthError):
    status = 400
    error = "invalid_request"


class InsufficientScope(AuthError):
    """The token is genuine but lacks a scope this needs: HTTP 403 with ``error="insufficient_scope"`` and the
    scopes to ask for."""

    status = 403
    error = "insufficient_scope"

    def __init__(self, description: str, scopes: Sequence[str]) -> None:
        super().__init__(description)
        #: Every scope the request needs, held or not (one challenge, never one scope at a time).
        self.scopes = tuple(scopes)


class InvalidDpopProof(AuthError):
    """The request's DPoP proof is missing, malformed or does not match the token: HTTP 401 with
    ``error="invalid_dpop_proof"``."""

    error = "invalid_dpop_proof"


class UseDpopNonce(InvalidDpopProof):
    """The DPoP proof must carry the server's nonce: HTTP 401 with ``error="use_dpop_nonce"`` and a fresh
    ``DPoP-Nonce`` to retry with."""

    error = "use_dpop_nonce"

    def __init__(self, description: str, nonce: str) -> None:
        super().__init__(description)
        self.nonce = nonce


class VerifierUnavailable(AuthError):
    """The authorization server could not be asked about the token: HTTP 503; the caller may retry later."""

    status = 503
