"""Streamable HTTP, minus the I/O: is this request to the MCP endpoint acceptable?

Every check takes plain values (the HTTP method, a header mapping, the body
bytes) and returns ``None`` (or the parsed value) when the request may go on, or
a ``Rejection`` that the transport sends as is: ``status``, ``headers`` and
``body()``. The transport runs the checks it needs, in order, and stops at the
first rejection.

Header mappings must have **lowercase names** (``"mcp-method"``, not
``"Mcp-Method"``): HTTP field names are case-insensitive (RFC 9110 §5.1), and
lowercasing once at the edge is how this module honours that. ASGI already
delivers them lowercase. Repeated fields should be joined with ``", "``
(RFC 9110 §5.3); a repeated ``Mcp-*`` field then fails to match, as it should.
Values may carry the surrounding whitespace HTTP allows; it is stripped here.

Both eras meet here. Handshake-era requests (2025-03-26 .. 2025-11-25) need
``check_protocol_version_header``; stateless-era requests (2026-07-28) need
``check_stateless_headers`` (SEP-2243, in ``mirrored_headers``, re-exported here).
The rest applies to both.
"""

from __future__ import annotations

__all__ = [
    "LOCALHOST_HOSTS",
    "LOCALHOST_ORIGINS",
    "MAX_SAFE_INTEGER",
    "NAMED_METHODS",
    "HostOriginCheck",
    "Rejection",
    "XMcpHeaderError",
    "check_accept",
    "check_host_and_origin",
    "check_http_method",
    "check_protocol_version_header",
    "check_stateless_headers",
    "classify_message",
    "decode_header_value",
    "encode_header_value",
    "parse_post_body",
    "parse_x_mcp_headers",
    "protocol_version_header",
    "request_headers",
    "status_for_error",
    "x_mcp_headers",
]

import functools
from collections.abc import Collection, Mapping
from typing import Any, Literal

from ..types.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    RATE_LIMITED,
    UNSUPPORTED_PROTOCOL_VERSION,
    InvalidRequest,
    ParseError,
    UnsupportedProtocolVersion,
)
from .codec import decode_json
from .mirrored_headers import (
    MAX_SAFE_INTEGER,
    NAMED_METHODS,
    XMcpHeaderError,
    check_stateless_headers,
    decode_header_value,
    encode_header_value,
    parse_x_mcp_headers,
    request_headers,
    x_mcp_headers,
)
from .rejection import Rejection
from .rejection import header as _header
from .rejection import reject as _reject
from .rejection import valid_id as _valid_id

#: What a server bound to the loopback interface answers to, on any port.
LOCALHOST_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
#: The browser origins such a server trusts: pages served from the same machine.
LOCALHOST_ORIGINS: tuple[str, ...] = ("http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*")

_VERSION_ASSUMED_WITHOUT_HEADER = "2025-03-26"


# -- the endpoint: HTTP method, Host and Origin, Accept --------------------------------


def check_http_method(method: str, allowed: Collection[str] = ("POST",)) -> Rejection | None:
    """405 with ``Allow`` for a method the endpoint does not serve.

    A stateless-only server allows just POST (the spec's advice for GET and
    DELETE); a handshake-era server with sessions also allows GET and DELETE.
    """
    if method.upper() in {m.upper() for m in allowed}:
        return None
    allow = ", ".join(sorted(m.upper() for m in allowed))
    return _reject(405, InvalidRequest(f"Method Not Allowed: use {allow}"), headers={"allow": allow})


def _split_host_port(value: str) -> tuple[str, str | None] | None:
    """``host[:port]`` with a bracketed IPv6 host; None when it cannot be a host."""
    if value.startswith("["):
        close = value.find("]")
        if close < 0:
            return None
        host, rest = value[: close + 1], value[close + 1 :]
        if not rest:
            return host, None
        return (host, rest[1:]) if rest.startswith(":") else None
    host, colon, port = value.partition(":")
    if not host or ":" in port:
        return None
    return host, port if colon else None


# A client sends the same Host, Origin, Accept and Content-Type on every request: the checks
# below are pure functions of those strings, so each distinct value is parsed once (bounded).
@functools.lru_cache(maxsize=256)
def _host_matches(value: str, pattern: str) -> bool:
    """``pattern`` without a port, or with port ``*``, matches any port."""
    if pattern == "*":
        return True
    got, want = _split_host_port(value.lower()), _split_host_port(pattern.lower())
    if got is None or want is None or got[0] != want[0]:
        return False
    port = got[1]
    if port is not None and not port.isdigit():
        return False
    return want[1] is None or want[1] == "*" or want[1] == port


@functools.lru_cache(maxsize=256)
def _origin_matches(value: str, pattern: str) -> bool:
    """``scheme://host[:port]``; port ``*`` in the pattern matches any port or none."""
    if pattern == "*":
        return True
    value, pattern = value.lower(), pattern.lower()
    scheme, sep, rest = value.partition("://")
    want_scheme, want_sep, want_rest = pattern.partition("://")
    if not sep or not want_sep or scheme != want_scheme:
        return False
    got, want = _split_host_port(rest), _split_host_port(want_rest)
    if got is None or want is None or got[0] != want[0]:
        return False
    if got[1] is not None and not got[1].isdigit():
        return False
    return want[1] == "*" or want[1] == got[1]


def check_host_and_origin(
    headers: Mapping[str, str],
    *,
    allowed_hosts: Collection[str] = LOCALHOST_HOSTS,
    allowed_origins: Collection[str] = LOCALHOST_ORIGINS,
) -> Rejection | None:
    """403 unless ``Host`` and any ``Origin`` are ones this server expects (DNS rebinding).

    A rebinding attack points an attacker's domain at 127.0.0.1, so the browser
    sends that domain as ``Host`` and the attacker's page as ``Origin``. Allowed
    hosts are ``host`` (any port), ``host:port`` or ``host:*``; allowed origins
    are ``scheme://host``, ``scheme://host:port`` or ``scheme://host:*``. ``"*"``
    in either list turns that check off, for a server on a public interface that
    relies on authentication instead. A missing ``Host`` fails: it cannot be
    vouched for. A missing ``Origin`` passes: non-browser clients send none.
    """
    host = _header(headers, "host")
    if host is None or not any(_host_matches(host, pattern) for pattern in allowed_hosts):
        shown = "missing" if host is None else repr(host)
        return _reject(403, InvalidRequest(f"Forbidden: Host header {shown} is not allowed"))
    origin = _header(headers, "origin")
    if origin is not None and not any(_origin_matches(origin, pattern) for pattern in allowed_origins):
        return _reject(403, InvalidRequest(f"Forbidden: Origin header {origin!r} is not allowed"))
    return None


class HostOriginCheck:
    """``check_host_and_origin`` for one endpoint's allowed hosts and origins, each decision kept
    per (``Host``, ``Origin``) pair: a client sends the same pair on every request, and the
    decision depends on nothing else. At most ``size`` pairs are kept (all are forgotten when one
    more comes), so a client sending a new ``Host`` each time costs time, never memory. A
    ``Rejection`` kept here is shared by the requests it refuses: send it, don't change it."""

    __slots__ = ("_decided", "allowed_hosts", "allowed_origins", "size")

    def __init__(
        self,
        allowed_hosts: Collection[str] = LOCALHOST_HOSTS,
        allowed_origins: Collection[str] = LOCALHOST_ORIGINS,
        *,
        size: int = 1024,
    ) -> None:
        self.allowed_hosts = tuple(allowed_hosts)
        self.allowed_origins = tuple(allowed_origins)
        self.size = size
        self._decided: dict[tuple[str | None, str | None], Rejection | None] = {}

    def __call__(self, headers: Mapping[str, str]) -> Rejection | None:
        """None when the request may go on, else the 403 to send (as ``check_host_and_origin``)."""
        pair = (headers.get("host"), headers.get("origin"))
        decided = self._decided
        try:
            return decided[pair]
        except KeyError:
            pass
        decision = check_host_and_origin(
            headers, allowed_hosts=self.allowed_hosts, allowed_origins=self.allowed_origins
        )
        if len(decided) >= self.size:
            decided.clear()
        decided[pair] = decision
        return decision


def _missing_types(accept: str, required: tuple[str, ...]) -> tuple[str, ...]:
    types = _accepted_types(accept)
    return tuple(media for media in required if not _accepts(types, media))


def _accepted_types(accept: str) -> set[str]:
    types: set[str] = set()
    for item in accept.split(","):
        media, *params = (part.strip().lower() for part in item.split(";"))
        if not media:
            continue
        refused = False
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    refused = float(value.strip()) == 0
                except ValueError:
                    refused = False
        if not refused:
            types.add(media)
    return types


def _accepts(types: set[str], media: str) -> bool:
    return media in types or "*/*" in types or f"{media.partition('/')[0]}/*" in types


def check_accept(method: str, headers: Mapping[str, str]) -> Rejection | None:
    """406 unless the client can read what this endpoint may send back.

    POST needs ``application/json`` and ``text/event-stream`` (the server picks
    per request); GET needs ``text/event-stream``. We are lenient where the
    standard is: no ``Accept`` at all means "anything" (RFC 9110 §12.5.1), and
    ``*/*`` or ``type/*`` ranges count, since curl and some HTTP libraries send
    exactly those. ``q=0`` excludes a type.
    """
    accept = headers.get("accept")
    if accept is None:
        return None
    return _accept_refusal(method, accept)


_ACCEPT_NEEDED: Mapping[str, tuple[str, ...]] = {
    "POST": ("application/json", "text/event-stream"),
    "GET": ("text/event-stream",),
}


@functools.lru_cache(maxsize=256)
def _accept_refusal(method: str, accept: str) -> Rejection | None:
    """``check_accept``'s decision for one method and ``Accept`` value (kept: a shared ``Rejection``)."""
    required = _ACCEPT_NEEDED.get(method.upper(), ())
    if not _missing_types(accept.strip(" \t"), required):
        return None
    return _reject(406, InvalidRequest(f"Not Acceptable: the client must accept {' and '.join(required)}"))


# -- the body -------------------------------------------------------------------------


def parse_post_body(headers: Mapping[str, str], body: bytes, *, max_bytes: int) -> Any | Rejection:
    """The JSON object in a POST body, or why there is none.

    415 unless ``Content-Type`` is ``application/json`` (charset absent or
    UTF-8); 413 over ``max_bytes`` (the transport should also stop reading at
    the limit rather than buffer first); 400 with -32700 for malformed JSON; 400
    with -32600 for a batch (removed in 2025-06-18; no revision we serve over
    HTTP uses it) or any other non-object.
    """
    refused = _content_type_refusal(headers.get("content-type"))
    if refused is not None:
        return refused
    if len(body) > max_bytes:
        return _reject(413, InvalidRequest(f"Payload Too Large: the body exceeds {max_bytes} bytes"))
    try:
        message = decode_json(body)
    except ParseError as exc:  # bad JSON, or nested deeper than codec.MAX_NESTING_DEPTH
        return _reject(400, exc)
    if type(message) is dict:  # (what the decoder makes of an object)
        return message
    if isinstance(message, list):
        return _reject(400, InvalidRequest("JSON-RPC batches are not supported; send one message per POST"))
    return _reject(400, InvalidRequest("the body must be a JSON-RPC message object"))


@functools.lru_cache(maxsize=256)
def _content_type_refusal(raw: str | None) -> Rejection | None:
    """``parse_post_body``'s decision on one ``Content-Type`` value (kept: a shared ``Rejection``)."""
    content_type = raw.strip(" \t") if raw is not None else ""
    if _is_json_utf8(content_type):
        return None
    shown = repr(content_type) if content_type else "missing"
    return _reject(415, InvalidRequest(f"Unsupported Media Type: Content-Type is {shown}, not application/json"))


def _is_json_utf8(content_type: str) -> bool:
    media, *params = (part.strip().lower() for part in content_type.split(";"))
    charset_ok = all(
        name.strip() != "charset" or value.strip().strip('"') in {"utf-8", "utf8"}
        for name, _, value in (param.partition("=") for param in params)
    )
    return media == "application/json" and charset_ok


def classify_message(message: dict[str, Any]) -> Literal["request", "notification", "response"] | Rejection:
    """What kind of JSON-RPC message this is, or 400 + -32600 for a broken envelope.

    Only the envelope is checked: ``jsonrpc``, an ``id`` that is a string or an
    integer, a string ``method``, an object ``params``, and exactly one of
    ``result`` / ``error`` on a response. Whether a response may be posted at
    all is the caller's decision: handshake-era clients post answers to server
    requests; stateless-era clients never do.
    """
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0":
        return _invalid('"jsonrpc" must be "2.0"', request_id)
    has_id = "id" in message
    if has_id and _valid_id(request_id) is None and not (request_id is None and "method" not in message):
        return _invalid('"id" must be a string or an integer', request_id)
    method = message.get("method", _ABSENT)
    if method is not _ABSENT:
        if not isinstance(method, str):
            return _invalid('"method" must be a string', request_id)
        if "result" in message or "error" in message:
            return _invalid("a message cannot have both a method and a result or error", request_id)
        params = message.get("params", _ABSENT)
        if params is not _ABSENT and not isinstance(params, dict):
            return _invalid('"params" must be an object', request_id)
        return "request" if has_id else "notification"
    if not has_id:
        return _invalid('a message needs a "method" or an "id"', request_id)
    if ("result" in message) == ("error" in message):
        return _invalid('a response has exactly one of "result" and "error"', request_id)
    if "error" in message and not isinstance(message["error"], dict):
        return _invalid('"error" must be an object', request_id)
    return "response"


_ABSENT = object()


def _invalid(reason: str, request_id: object) -> Rejection:
    return _reject(400, InvalidRequest(f"Invalid Request: {reason}"), request_id)


# -- handshake era: MCP-Protocol-Version ----------------------------------------------


def protocol_version_header(headers: Mapping[str, str]) -> str | None:
    return _header(headers, "mcp-protocol-version") or None


def check_protocol_version_header(
    headers: Mapping[str, str], *, expected: str | None, supported: Collection[str]
) -> Rejection | None:
    """400 + -32022 unless ``MCP-Protocol-Version`` fits this handshake-era session.

    ``expected`` is the version negotiated at ``initialize`` (None when the
    server keeps no session). Not for ``initialize`` itself, which carries its
    version in the body. Rules, 2025-11-25 §Protocol Version Header:

    * absent: the negotiated version if there is one, else 2025-03-26 (whose
      clients never sent the header) if supported, else 400 + -32600;
    * present: must be supported, and (our reading of "invalid") equal to
      ``expected`` when there is one, since a session speaks one version.
    """
    version = protocol_version_header(headers)
    if version is None:
        if expected is not None or _VERSION_ASSUMED_WITHOUT_HEADER in supported:
            return None
        return _reject(400, InvalidRequest("Bad Request: the MCP-Protocol-Version header is required"))
    if version not in supported:
        return _reject(400, UnsupportedProtocolVersion(version, sorted(supported, reverse=True)))
    if expected is not None and version != expected:
        return _reject(400, UnsupportedProtocolVersion(version, [expected]))
    return None


# -- statuses ------------------------------------------------------------------------

_STATUS_BY_CODE: Mapping[int, int] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
    RATE_LIMITED: 429,
}


def status_for_error(code: int) -> int:
    """The HTTP status of a stateless-era response whose whole body is this JSON-RPC error.

    The spec (2026-07-28 streamable-http.mdx, basic/index.mdx) fixes: -32022,
    -32021, -32020 and -32602 for missing ``_meta`` fields -> 400; -32601 -> 404. Ours:
    -31429 (``RateLimited``) -> 429, with ``Retry-After`` from its ``data.retryAfterMs``.
    Our reading for the rest: an error meaning "the request itself is wrong"
    (-32700, -32600, and -32602 in general, which the code alone cannot tell
    apart from the missing-``_meta`` case) -> 400; anything else (-32603,
    application codes) is a valid request that failed: 200, the status of a
    delivered JSON-RPC response. Once an SSE stream has begun the status is
    already sent (200) and this does not apply; nor does it to handshake-era
    responses, which are 200 apart from transport-level rejections.
    """
    return _STATUS_BY_CODE.get(code, 200)
