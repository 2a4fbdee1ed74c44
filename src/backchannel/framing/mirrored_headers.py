"""SEP-2243: request fields mirrored into HTTP headers, and the checks that they agree.

A stateless-era request names its method, its target and chosen tool arguments in
headers (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``) so that proxies can route on
them; the server refuses a request whose headers and body disagree (400 + -32020).
Values that are not plain visible ASCII travel as ``=?base64?...?=``.
"""

from __future__ import annotations

__all__ = [
    "MAX_SAFE_INTEGER",
    "NAMED_METHODS",
    "XMcpHeaderError",
    "check_stateless_headers",
    "decode_header_value",
    "encode_header_value",
    "parse_x_mcp_headers",
    "request_headers",
    "x_mcp_headers",
]

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from ..types.errors import HeaderMismatch, InvalidParams
from ..types.meta import PROTOCOL_VERSION
from .rejection import Rejection
from .rejection import header as _header
from .rejection import reject as _reject

#: The largest integer an ``x-mcp-header`` argument may carry (JavaScript's safe range).
MAX_SAFE_INTEGER = 2**53 - 1

#: Methods whose ``Mcp-Name`` header mirrors a body field, and which field.
NAMED_METHODS: Mapping[str, str] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension (SEP-2663 §Routing Headers): the task id, so a balancer finds its worker.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

#: Methods whose ``Mcp-Name`` may be missing (not mismatched): the tasks extension's.
_NAME_MAY_BE_MISSING = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})

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


def check_stateless_headers(
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
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    body_version = meta.get(PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if is_request and not isinstance(body_version, str):
        return _reject(400, InvalidParams(f"params._meta is missing the required {PROTOCOL_VERSION!r}"), request_id)

    # (each header read as ``rejection.header`` reads it: surrounding spaces and tabs stripped)
    version = headers.get("mcp-protocol-version")
    if version is not None:
        version = version.strip(" \t")
    if not version:
        return _mismatch("the required MCP-Protocol-Version header is missing", request_id)
    if body_version is not None and version != body_version:
        return _mismatch(
            f"MCP-Protocol-Version header value {version!r} does not match body value {body_version!r}", request_id
        )

    method = message.get("method")
    header_method = headers.get("mcp-method")
    if header_method is None:
        if is_request:
            return _mismatch("the required Mcp-Method header is missing", request_id)
    elif (header_method := header_method.strip(" \t")) != method:
        return _mismatch(f"Mcp-Method header value {header_method!r} does not match body value {method!r}", request_id)

    source = NAMED_METHODS.get(method) if isinstance(method, str) and is_request else None
    if source is not None:
        body_name = params.get(source)
        if not isinstance(body_name, str):
            return _reject(400, InvalidParams(f"params.{source} must be a string"), request_id)
        # A task id's header only routes the client's own later requests (SEP-2663): one left out
        # is tolerated, as the official Python SDK 2.3.0 (under FastMCP's tasks) leaves it out.
        tolerated = method in _NAME_MAY_BE_MISSING and _header(headers, "mcp-name") is None
        problem = None if tolerated else _compare_header(headers, "mcp-name", "Mcp-Name", body_name)
        if problem is not None:
            return _mismatch(problem, request_id)

    if method == "tools/call" and is_request and param_headers:
        arguments = params.get("arguments")
        for name, path in param_headers.items():
            header_name = f"Mcp-Param-{name}"
            key = header_name.lower()
            value = _argument(arguments, path)
            if value is _MISSING or value is None:
                if _header(headers, key) is not None:
                    return _mismatch(f"{header_name} header is present but the argument is absent or null", request_id)
                continue
            problem = _compare_header(headers, key, header_name, value)
            if problem is not None:
                return _mismatch(problem, request_id)
    return None


def _mismatch(text: str, request_id: object) -> Rejection:
    return _reject(400, HeaderMismatch(f"Header mismatch: {text}"), request_id)


def _compare_header(headers: Mapping[str, str], key: str, name: str, body: Any) -> str | None:
    """Why header ``name`` (``key``: lowercase) does not carry ``body``, or None when it does."""
    raw = headers.get(key)
    if raw is None:
        return f"the required {name} header is missing"
    # Most often the header is the body's string as it is: a plain value (visible ASCII at both
    # ends, printable ASCII between) is one that stripping, the character check and the base64
    # sentinel leave as it is, unless it looks like that sentinel itself.
    if (
        raw == body
        and type(body) is str
        and _PLAIN_VALUE.fullmatch(body)
        and not (body.startswith(_B64_PREFIX) and body.endswith(_B64_SUFFIX))
    ):
        return None
    raw = raw.strip(" \t")
    if not _HEADER_SAFE.fullmatch(raw):
        return f"{name} header contains characters not allowed in a header value"
    try:
        value = decode_header_value(raw)
    except ValueError:
        return f"{name} header value {raw!r} is not valid base64"
    if not _same_value(value, body):
        return f"{name} header value {value!r} does not match body value {body!r}"
    return None
