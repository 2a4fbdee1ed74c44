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
``check_modern_headers`` (SEP-2243). The rest applies to both.
"""

from __future__ import annotations

__all__ = [
    "LOCALHOST_HOSTS",
    "LOCALHOST_ORIGINS",
    "MAX_SAFE_INTEGER",
    "NAMED_METHODS",
    "Rejection",
    "XMcpHeaderError",
    "check_accept",
    "check_host_and_origin",
    "check_http_method",
    "check_modern_headers",
    "check_protocol_version_header",
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

import base64
import binascii
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

import msgspec

from ..types.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    HeaderMismatch,
    InvalidParams,
    InvalidRequest,
    MCPError,
    ParseError,
    UnsupportedProtocolVersion,
)
from ..types.meta import PROTOCOL_VERSION

#: What a server bound to the loopback interface answers to, on any port.
LOCALHOST_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
#: The browser origins such a server trusts: pages served from the same machine.
LOCALHOST_ORIGINS: tuple[str, ...] = ("http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*")

#: The largest integer an ``x-mcp-header`` argument may carry (JavaScript's safe range).
MAX_SAFE_INTEGER = 2**53 - 1

#: Methods whose ``Mcp-Name`` header mirrors a body field, and which field.
NAMED_METHODS: Mapping[str, str] = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_VERSION_ASSUMED_WITHOUT_HEADER = "2025-03-26"
_B64_PREFIX = "=?base64?"
_B64_SUFFIX = "?="
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_HEADER_SAFE = re.compile(r"[\t\x20-\x7e]*")
_PLAIN_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")
_PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})
# JSON Schema keywords whose values are schemas, maps of schemas or lists of schemas.
_SUBSCHEMA: tuple[str, ...] = (
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
_SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SUBSCHEMA_MAPS = ("patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")

_encode_json = msgspec.json.Encoder().encode
_decode_json = msgspec.json.Decoder().decode


@dataclass(frozen=True, slots=True)
class Rejection:
    """A response that ends the request here.

    ``body()`` is a JSON-RPC error response for ``error`` (``id`` null when the
    request's id is unknown), or empty when ``error`` is None. ``headers``
    already include ``content-type`` when there is a body.
    """

    status: int
    error: MCPError | None
    headers: dict[str, str] = field(default_factory=dict)
    request_id: str | int | None = None

    def body(self) -> bytes:
        if self.error is None:
            return b""
        return _encode_json({"jsonrpc": "2.0", "id": self.request_id, "error": self.error.to_error()})


def _reject(
    status: int, error: MCPError, request_id: object = None, headers: dict[str, str] | None = None
) -> Rejection:
    all_headers = {"content-type": "application/json"}
    if headers:
        all_headers.update(headers)
    return Rejection(status, error, all_headers, _valid_id(request_id))


def _valid_id(value: object) -> str | int | None:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else value.strip(" \t")


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
    accept = _header(headers, "accept")
    if accept is None:
        return None
    needed = {"POST": ("application/json", "text/event-stream"), "GET": ("text/event-stream",)}
    required = needed.get(method.upper(), ())
    types = _accepted_types(accept)
    missing = [media for media in required if not _accepts(types, media)]
    if not missing:
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
    content_type = _header(headers, "content-type") or ""
    media, *params = (part.strip().lower() for part in content_type.split(";"))
    charset_ok = all(
        name.strip() != "charset" or value.strip().strip('"') in {"utf-8", "utf8"}
        for name, _, value in (param.partition("=") for param in params)
    )
    if media != "application/json" or not charset_ok:
        shown = repr(content_type) if content_type else "missing"
        return _reject(415, InvalidRequest(f"Unsupported Media Type: Content-Type is {shown}, not application/json"))
    if len(body) > max_bytes:
        return _reject(413, InvalidRequest(f"Payload Too Large: the body exceeds {max_bytes} bytes"))
    try:
        message = _decode_json(body)
    except msgspec.DecodeError as exc:
        return _reject(400, ParseError(f"Parse error: {exc}"))
    if isinstance(message, list):
        return _reject(400, InvalidRequest("JSON-RPC batches are not supported; send one message per POST"))
    if not isinstance(message, dict):
        return _reject(400, InvalidRequest("the body must be a JSON-RPC message object"))
    return message


def classify_message(message: dict[str, Any]) -> Literal["request", "notification", "response"] | Rejection:
    """What kind of JSON-RPC message this is, or 400 + -32600 for a broken envelope.

    Only the envelope is checked: ``jsonrpc``, an ``id`` that is a string or an
    integer, a string ``method``, an object ``params``, and exactly one of
    ``result`` / ``error`` on a response. Whether a response may be posted at
    all is the caller's decision: handshake-era clients post answers to server
    requests; stateless-era clients never do.
    """
    request_id = message.get("id")

    def invalid(reason: str) -> Rejection:
        return _reject(400, InvalidRequest(f"Invalid Request: {reason}"), request_id)

    if message.get("jsonrpc") != "2.0":
        return invalid('"jsonrpc" must be "2.0"')
    has_id = "id" in message
    if has_id and _valid_id(request_id) is None and not (request_id is None and "method" not in message):
        return invalid('"id" must be a string or an integer')
    if "method" in message:
        if not isinstance(message["method"], str):
            return invalid('"method" must be a string')
        if "result" in message or "error" in message:
            return invalid("a message cannot have both a method and a result or error")
        if "params" in message and not isinstance(message["params"], dict):
            return invalid('"params" must be an object')
        return "request" if has_id else "notification"
    if not has_id:
        return invalid('a message needs a "method" or an "id"')
    if ("result" in message) == ("error" in message):
        return invalid('a response has exactly one of "result" and "error"')
    if "error" in message and not isinstance(message["error"], dict):
        return invalid('"error" must be an object')
    return "response"


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


# -- stateless era: SEP-2243 mirrored headers -------------------------------------------


def encode_header_value(value: str | int | bool | float) -> str:
    """A JSON value as an ``Mcp-Name`` / ``Mcp-Param-*`` header value.

    Booleans become ``true``/``false``, integers their decimal form; a string
    goes as is when it is visible ASCII with inner spaces only, and as
    ``=?base64?<UTF-8 in base64>?=`` otherwise (non-ASCII, control characters,
    leading or trailing space or tab, or text that looks like that sentinel).
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise ValueError(f"{value} is outside the safe integer range of x-mcp-header values")
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if value == "" or (
        _PLAIN_VALUE.fullmatch(value) and not (value.startswith(_B64_PREFIX) and value.endswith(_B64_SUFFIX))
    ):
        return value
    return f"{_B64_PREFIX}{base64.b64encode(value.encode()).decode('ascii')}{_B64_SUFFIX}"


def decode_header_value(text: str) -> str:
    """The value a header carries: sentinel-wrapped base64 decoded, anything else as is.

    Raises ``ValueError`` for a sentinel whose content is not padded base64 of
    UTF-8 text. The markers are case-sensitive: ``=?BASE64?...?=`` is literal.
    """
    if len(text) >= len(_B64_PREFIX) + len(_B64_SUFFIX) and text.startswith(_B64_PREFIX) and text.endswith(_B64_SUFFIX):
        inner = text[len(_B64_PREFIX) : -len(_B64_SUFFIX)]
        try:
            return base64.b64decode(inner, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"invalid base64 header value: {exc}") from exc
    return text


class XMcpHeaderError(ValueError):
    """A tool's ``x-mcp-header`` annotations break a rule; the client drops the tool."""


def parse_x_mcp_headers(input_schema: Any) -> dict[str, tuple[str, ...]]:
    """``x-mcp-header`` name -> the property path of the argument it mirrors.

    A path is the chain of ``properties`` keys from the schema root: ``("region",)``
    for a top-level argument, ``("target", "region")`` for a nested one. Raises
    ``XMcpHeaderError`` naming the broken rule (2026-07-28 tools.mdx §x-mcp-header):
    a name that is empty or not an HTTP token; names equal ignoring case; an
    annotation on a property whose ``type`` is not string, integer or boolean
    (a ``["string", "null"]`` style union with null counts as that type); an
    annotation not reachable from the root through ``properties`` alone (under
    ``items``, a composition or conditional keyword, ``$defs``, or on the root).
    """
    found: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}

    def visit(schema: Any, path: tuple[str, ...] | None) -> None:
        if not isinstance(schema, dict):
            return
        if "x-mcp-header" in schema:
            name = schema["x-mcp-header"]
            if not path:
                raise XMcpHeaderError(
                    f"x-mcp-header {name!r} is not on a property reachable from the root through 'properties' alone"
                )
            where = "/".join(path)
            if not isinstance(name, str) or not _TOKEN.fullmatch(name):
                raise XMcpHeaderError(f"x-mcp-header {name!r} on {where} is not an HTTP header token")
            if name.lower() in seen:
                raise XMcpHeaderError(f"x-mcp-header {name!r} on {where} repeats {seen[name.lower()]!r}")
            if not _is_primitive(schema.get("type")):
                raise XMcpHeaderError(f"x-mcp-header {name!r} on {where}: the type must be string, integer or boolean")
            seen[name.lower()] = name
            found[name] = path
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for key, sub in properties.items():
                visit(sub, None if path is None else (*path, key))
        for keyword in _SUBSCHEMA:
            visit(schema.get(keyword), None)
        for keyword in _SUBSCHEMA_LISTS:
            subs = schema.get(keyword)
            if isinstance(subs, list):
                for sub in subs:
                    visit(sub, None)
        for keyword in _SUBSCHEMA_MAPS:
            subs = schema.get(keyword)
            if isinstance(subs, dict):
                for sub in subs.values():
                    visit(sub, None)

    visit(input_schema, ())
    return found


def _is_primitive(declared: Any) -> bool:
    if isinstance(declared, str):
        return declared in _PRIMITIVE_TYPES
    if isinstance(declared, list):
        kinds = {kind for kind in declared if kind != "null"}
        return len(kinds) == 1 and kinds <= _PRIMITIVE_TYPES
    return False


def x_mcp_headers(input_schema: Any) -> dict[str, tuple[str, ...]] | None:
    """Like ``parse_x_mcp_headers``, but None for a tool to drop (no reason given)."""
    try:
        return parse_x_mcp_headers(input_schema)
    except XMcpHeaderError:
        return None


_MISSING = object()


def _argument(arguments: Any, path: str | Sequence[str]) -> Any:
    """The value at a property path, or ``_MISSING``."""
    value = arguments
    for key in (path,) if isinstance(path, str) else path:
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _same_value(header: str, body: Any) -> bool:
    if isinstance(body, bool):
        return header == ("true" if body else "false")
    if isinstance(body, int | float):
        # Numerically, so that "42.0" matches 42 (SEP-2243 implementation note).
        if not _NUMBER.fullmatch(header):
            return False
        try:
            return Decimal(header) == Decimal(repr(body) if isinstance(body, float) else body)
        except InvalidOperation:
            return False
    return isinstance(body, str) and header == body


def request_headers(
    message: Mapping[str, Any], *, param_headers: Mapping[str, str | Sequence[str]] | None = None
) -> dict[str, str]:
    """The SEP-2243 headers a stateless-era client sends with ``message``.

    ``MCP-Protocol-Version`` from ``_meta``, ``Mcp-Method``, ``Mcp-Name`` for
    the named methods, and for ``tools/call`` one ``Mcp-Param-<Name>`` per
    ``param_headers`` entry (from ``x_mcp_headers``) whose argument is present
    and not null. Raises ``ValueError`` for an argument that cannot be a header
    (an object, a list, an unsafe integer).
    """
    out: dict[str, str] = {}
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(PROTOCOL_VERSION), str):
        out["MCP-Protocol-Version"] = meta[PROTOCOL_VERSION]
    method = message.get("method")
    if isinstance(method, str):
        out["Mcp-Method"] = method
        source = NAMED_METHODS.get(method)
        if source is not None and isinstance(params.get(source), str):
            out["Mcp-Name"] = encode_header_value(params[source])
    if method == "tools/call" and param_headers:
        for name, path in param_headers.items():
            value = _argument(params.get("arguments"), path)
            if value is _MISSING or value is None:
                continue
            if not isinstance(value, str | int | float):
                raise ValueError(f"argument for Mcp-Param-{name} is not a string, integer or boolean")
            out[f"Mcp-Param-{name}"] = encode_header_value(value)
    return out


def check_modern_headers(
    headers: Mapping[str, str],
    message: Mapping[str, Any],
    *,
    param_headers: Mapping[str, str | Sequence[str]] | None = None,
) -> Rejection | None:
    """400 + -32020 (HeaderMismatch) unless the mirrored headers agree with the body.

    For a stateless-era request (2026-07-28 streamable-http.mdx §Request Metadata):

    * ``MCP-Protocol-Version`` present and equal to ``_meta`` protocolVersion;
      a request without that ``_meta`` field gets 400 + -32602 instead (it is
      malformed whatever the headers say). Whether the version is *supported*
      (else -32022) is the caller's next check.
    * ``Mcp-Method`` present and equal to ``method`` (values are case-sensitive).
    * ``Mcp-Name`` present for ``tools/call`` / ``prompts/get`` (``params.name``)
      and ``resources/read`` (``params.uri``), base64 sentinel decoded.
    * for ``tools/call``, each ``param_headers`` entry (header name -> argument
      name or property path, from ``x_mcp_headers``): an argument present and
      not null needs its ``Mcp-Param-<Name>`` header with an equal value
      (numbers compared numerically, booleans as ``true``/``false``); an absent
      or null argument must have no header. Unannotated ``Mcp-Param-*`` headers
      are ignored. Pass None when the tool is unknown; the call fails anyway.

    A notification needs only the version header; its ``Mcp-Method`` and
    ``_meta`` are compared when present (the spec leaves notification headers
    undefined).
    """
    request_id = message.get("id")
    is_request = "id" in message

    def mismatch(text: str) -> Rejection:
        return _reject(400, HeaderMismatch(f"Header mismatch: {text}"), request_id)

    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if is_request and not isinstance(body_version, str):
        return _reject(400, InvalidParams(f"params._meta is missing the required {PROTOCOL_VERSION!r}"), request_id)

    version = _header(headers, "mcp-protocol-version")
    if not version:
        return mismatch("the required MCP-Protocol-Version header is missing")
    if body_version is not None and version != body_version:
        return mismatch(f"MCP-Protocol-Version header value {version!r} does not match body value {body_version!r}")

    method = message.get("method")
    header_method = _header(headers, "mcp-method")
    if header_method is None:
        if is_request:
            return mismatch("the required Mcp-Method header is missing")
    elif header_method != method:
        return mismatch(f"Mcp-Method header value {header_method!r} does not match body value {method!r}")

    source = NAMED_METHODS.get(method) if isinstance(method, str) and is_request else None
    if source is not None:
        body_name = params.get(source)
        if not isinstance(body_name, str):
            return _reject(400, InvalidParams(f"params.{source} must be a string"), request_id)
        problem = _compare_header(headers, "Mcp-Name", body_name)
        if problem is not None:
            return mismatch(problem)

    if method == "tools/call" and is_request and param_headers:
        arguments = params.get("arguments")
        for name, path in param_headers.items():
            header_name = f"Mcp-Param-{name}"
            value = _argument(arguments, path)
            if value is _MISSING or value is None:
                if _header(headers, header_name.lower()) is not None:
                    return mismatch(f"{header_name} header is present but the argument is absent or null")
                continue
            problem = _compare_header(headers, header_name, value)
            if problem is not None:
                return mismatch(problem)
    return None


def _compare_header(headers: Mapping[str, str], name: str, body: Any) -> str | None:
    """Why header ``name`` does not carry ``body``, or None when it does."""
    raw = _header(headers, name.lower())
    if raw is None:
        return f"the required {name} header is missing"
    if not _HEADER_SAFE.fullmatch(raw):
        return f"{name} header contains characters not allowed in a header value"
    try:
        value = decode_header_value(raw)
    except ValueError:
        return f"{name} header value {raw!r} is not valid base64"
    if not _same_value(value, body):
        return f"{name} header value {value!r} does not match body value {body!r}"
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
}


def status_for_error(code: int) -> int:
    """The HTTP status of a stateless-era response whose whole body is this JSON-RPC error.

    The spec (2026-07-28 streamable-http.mdx, basic/index.mdx) fixes: -32022,
    -32021, -32020 and -32602 for missing ``_meta`` fields -> 400; -32601 -> 404.
    Our reading for the rest: an error meaning "the request itself is wrong"
    (-32700, -32600, and -32602 in general, which the code alone cannot tell
    apart from the missing-``_meta`` case) -> 400; anything else (-32603,
    application codes) is a valid request that failed: 200, the status of a
    delivered JSON-RPC response. Once an SSE stream has begun the status is
    already sent (200) and this does not apply; nor does it to handshake-era
    responses, which are 200 apart from transport-level rejections.
    """
    return _STATUS_BY_CODE.get(code, 200)
