"""Streamable HTTP request checks, without a server: statuses, JSON-RPC codes, SEP-2243 headers.

Header mappings here use lowercase names, as the module requires of its caller
(HTTP names are case-insensitive; the transport lowercases them once).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backchannel.framing.http import (
    LOCALHOST_HOSTS,
    LOCALHOST_ORIGINS,
    Rejection,
    XMcpHeaderError,
    check_accept,
    check_host_and_origin,
    check_http_method,
    check_protocol_version_header,
    check_stateless_headers,
    classify_message,
    decode_header_value,
    encode_header_value,
    parse_post_body,
    parse_x_mcp_headers,
    protocol_version_header,
    request_headers,
    status_for_error,
    x_mcp_headers,
)
from backchannel.types.meta import CLIENT_CAPABILITIES, PROTOCOL_VERSION

JSON = {"content-type": "application/json"}


def body_of(rejection: Rejection) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(rejection.body())
    return decoded


def assert_rejected(result: object, status: int, code: int, request_id: object = None) -> Rejection:
    assert isinstance(result, Rejection), result
    assert result.status == status
    body = body_of(result)
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == request_id
    assert body["error"]["code"] == code
    assert result.headers["content-type"] == "application/json"
    return result


# -- Rejection -----------------------------------------------------------------------------


def test_rejection_without_error_has_no_body() -> None:
    assert Rejection(202, None).body() == b""


def test_check_http_method() -> None:
    assert check_http_method("POST") is None
    assert check_http_method("post") is None
    rejected = assert_rejected(check_http_method("GET"), 405, -32600)
    assert rejected.headers["allow"] == "POST"
    rejected = assert_rejected(check_http_method("PUT", ("GET", "POST", "DELETE")), 405, -32600)
    assert rejected.headers["allow"] == "DELETE, GET, POST"


# -- Host and Origin ---------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:1", "[::1]", "[::1]:3000", "LOCALHOST:80"])
def test_local_hosts_pass(host: str) -> None:
    assert check_host_and_origin({"host": host}) is None


@pytest.mark.parametrize(
    "host", ["evil.com", "evil.com:8000", "localhost.evil.com", "127.0.0.2", "[::2]:80", "localhost:x"]
)
def test_other_hosts_are_forbidden(host: str) -> None:
    rejected = assert_rejected(check_host_and_origin({"host": host}), 403, -32600)
    assert "Host" in body_of(rejected)["error"]["message"]


def test_missing_host_is_forbidden() -> None:
    assert_rejected(check_host_and_origin({}), 403, -32600)


def test_host_patterns_with_ports() -> None:
    allowed = ("api.example.com:8443", "internal:*")
    assert check_host_and_origin({"host": "api.example.com:8443"}, allowed_hosts=allowed) is None
    assert check_host_and_origin({"host": "internal:9"}, allowed_hosts=allowed) is None
    assert check_host_and_origin({"host": "internal"}, allowed_hosts=allowed) is None
    assert isinstance(check_host_and_origin({"host": "api.example.com:443"}, allowed_hosts=allowed), Rejection)
    assert check_host_and_origin({"host": "anything"}, allowed_hosts=("*",)) is None


@pytest.mark.parametrize(
    "origin", ["http://localhost:5173", "http://127.0.0.1:80", "http://[::1]:1", "http://localhost"]
)
def test_local_origins_pass(origin: str) -> None:
    assert check_host_and_origin({"host": "localhost:8000", "origin": origin}) is None


@pytest.mark.parametrize(
    "origin", ["http://evil.com", "https://localhost:5173", "http://localhost.evil.com:80", "null", "localhost:80"]
)
def test_other_origins_are_forbidden(origin: str) -> None:
    rejected = assert_rejected(check_host_and_origin({"host": "localhost", "origin": origin}), 403, -32600)
    assert "Origin" in body_of(rejected)["error"]["message"]


def test_origin_patterns() -> None:
    allowed = ("https://app.example.com", "https://dev.example.com:*")
    headers = {"host": "localhost"}
    assert check_host_and_origin({**headers, "origin": "https://app.example.com"}, allowed_origins=allowed) is None
    assert check_host_and_origin({**headers, "origin": "https://dev.example.com:3000"}, allowed_origins=allowed) is None
    refused = check_host_and_origin({**headers, "origin": "https://app.example.com:444"}, allowed_origins=allowed)
    assert isinstance(refused, Rejection)
    assert LOCALHOST_ORIGINS and LOCALHOST_HOSTS


# -- Accept --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "accept",
    [
        None,  # absent: anything goes (lenient, RFC 9110)
        "application/json, text/event-stream",
        "text/event-stream;q=0.9, application/json",
        "*/*",
        "application/*, text/*",
        "Application/JSON, Text/Event-Stream",
    ],
)
def test_post_accept_passes(accept: str | None) -> None:
    headers = {} if accept is None else {"accept": accept}
    assert check_accept("POST", headers) is None


@pytest.mark.parametrize(
    "accept", ["application/json", "text/event-stream", "text/html", "application/json, text/event-stream;q=0"]
)
def test_post_accept_refused(accept: str) -> None:
    assert_rejected(check_accept("POST", {"accept": accept}), 406, -32600)


def test_get_accept() -> None:
    assert check_accept("GET", {"accept": "text/event-stream"}) is None
    assert check_accept("GET", {}) is None
    assert_rejected(check_accept("GET", {"accept": "application/json"}), 406, -32600)
    assert check_accept("DELETE", {"accept": "text/html"}) is None


# -- body ----------------------------------------------------------------------------------


def test_parse_post_body_gives_the_object() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert parse_post_body(JSON, body, max_bytes=1000) == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    utf8 = {"content-type": "application/json; charset=UTF-8"}
    assert isinstance(parse_post_body(utf8, body, max_bytes=1000), dict)


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/json-seq", "application/json; charset=latin-1"]
)
def test_wrong_content_type_is_415(content_type: str | None) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    assert_rejected(parse_post_body(headers, b"{}", max_bytes=100), 415, -32600)


def test_body_over_the_limit_is_413() -> None:
    assert_rejected(parse_post_body(JSON, b'{"a":"' + b"x" * 100 + b'"}', max_bytes=50), 413, -32600)


@pytest.mark.parametrize("body", [b"", b"{", b"not json", b'{"a":1}x', b'"\xff"'])
def test_malformed_json_is_400_parse_error(body: bytes) -> None:
    assert_rejected(parse_post_body(JSON, body, max_bytes=100), 400, -32700)


def test_batch_is_400_invalid_request() -> None:
    body = b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
    rejected = assert_rejected(parse_post_body(JSON, body, max_bytes=100), 400, -32600)
    assert "batch" in body_of(rejected)["error"]["message"]


@pytest.mark.parametrize("body", [b"1", b'"x"', b"null", b"true"])
def test_non_object_is_400_invalid_request(body: bytes) -> None:
    assert_rejected(parse_post_body(JSON, body, max_bytes=100), 400, -32600)


# -- envelope ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}}, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "response"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}}, "response"),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}, "response"),
    ],
)
def test_classify(message: dict[str, Any], kind: str) -> None:
    assert classify_message(message) == kind


@pytest.mark.parametrize(
    ("message", "echoed_id"),
    [
        ({"id": 1, "method": "ping"}, 1),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 1),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 2, "method": 5}, 2),
        ({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]}, 3),
        ({"jsonrpc": "2.0", "id": 4, "method": "ping", "result": {}}, 4),
        ({"jsonrpc": "2.0"}, None),
        ({"jsonrpc": "2.0", "id": 5}, 5),
        ({"jsonrpc": "2.0", "id": 6, "result": {}, "error": {"code": 1, "message": ""}}, 6),
        ({"jsonrpc": "2.0", "id": 7, "error": "boom"}, 7),
    ],
)
def test_classify_rejects_broken_envelopes(message: dict[str, Any], echoed_id: object) -> None:
    assert_rejected(classify_message(message), 400, -32600, echoed_id)


# -- handshake era: MCP-Protocol-Version --------------------------------------------------------

LEGACY = ("2025-03-26", "2025-06-18", "2025-11-25")


def test_protocol_version_header_value() -> None:
    assert protocol_version_header({"mcp-protocol-version": " 2025-11-25 "}) == "2025-11-25"
    assert protocol_version_header({}) is None
    assert protocol_version_header({"mcp-protocol-version": ""}) is None


def test_supported_header_passes() -> None:
    headers = {"mcp-protocol-version": "2025-06-18"}
    assert check_protocol_version_header(headers, expected="2025-06-18", supported=LEGACY) is None
    assert check_protocol_version_header(headers, expected=None, supported=LEGACY) is None


def test_unsupported_header_is_400_with_the_supported_list() -> None:
    headers = {"mcp-protocol-version": "1999-01-01"}
    rejected = assert_rejected(check_protocol_version_header(headers, expected=None, supported=LEGACY), 400, -32022)
    assert body_of(rejected)["error"]["data"] == {"supported": sorted(LEGACY, reverse=True), "requested": "1999-01-01"}


def test_header_other_than_the_negotiated_version_is_400() -> None:
    headers = {"mcp-protocol-version": "2025-06-18"}
    rejected = assert_rejected(
        check_protocol_version_header(headers, expected="2025-11-25", supported=LEGACY), 400, -32022
    )
    assert body_of(rejected)["error"]["data"]["supported"] == ["2025-11-25"]


def test_absent_header_assumes_2025_03_26_only_when_supported() -> None:
    assert check_protocol_version_header({}, expected=None, supported=LEGACY) is None
    assert_rejected(check_protocol_version_header({}, expected=None, supported=LEGACY[1:]), 400, -32600)


def test_absent_header_uses_the_negotiated_version() -> None:
    assert check_protocol_version_header({}, expected="2025-11-25", supported=LEGACY[1:]) is None


# -- header value encoding -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
        ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
        (" us-west1 ", "=?base64?IHVzLXdlc3QxIA==?="),
        ("us west 1", "us west 1"),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-7, "-7"),
        (3.14159, "3.14159"),
        ("日本語", "=?base64?5pel5pys6Kqe?="),
        ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        ("", ""),
        ("a\tb", "=?base64?YQli?="),
    ],
)
def test_encode_header_value_matches_the_sep_table(value: str | int | bool | float, encoded: str) -> None:
    assert encode_header_value(value) == encoded


def test_encode_refuses_unsafe_integers() -> None:
    assert encode_header_value(2**53 - 1) == str(2**53 - 1)
    with pytest.raises(ValueError):
        encode_header_value(2**53)


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("SGVsbG8=", "SGVsbG8="),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),
        ("=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?="),
        ("=?base64??=", ""),
        ("=?base64?=", "=?base64?="),
    ],
)
def test_decode_header_value(text: str, decoded: str) -> None:
    assert decode_header_value(text) == decoded


@pytest.mark.parametrize("text", ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?/w==?="])
def test_decode_rejects_bad_base64(text: str) -> None:
    with pytest.raises(ValueError):
        decode_header_value(text)


@given(st.text())
def test_header_value_round_trip(value: str) -> None:
    encoded = encode_header_value(value)
    assert all(" " <= char <= "~" for char in encoded)
    assert encoded == encoded.strip(" \t")  # survives HTTP's whitespace trimming
    assert decode_header_value(encoded) == value


# -- x-mcp-header annotations ---------------------------------------------------------------


def schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_x_mcp_headers_from_the_spec_example() -> None:
    input_schema = schema(
        region={"type": "string", "x-mcp-header": "Region"},
        query={"type": "string"},
    )
    assert x_mcp_headers(input_schema) == {"Region": ("region",)}
    assert x_mcp_headers(schema(query={"type": "string"})) == {}


def test_x_mcp_headers_nested_and_typed() -> None:
    input_schema = schema(
        target=schema(region={"type": "string", "x-mcp-header": "Region"}),
        count={"type": "integer", "x-mcp-header": "Count"},
        dry={"type": "boolean", "x-mcp-header": "Dry-Run"},
        tenant={"type": ["string", "null"], "x-mcp-header": "Method"},  # allowed: becomes Mcp-Param-Method
    )
    assert x_mcp_headers(input_schema) == {
        "Region": ("target", "region"),
        "Count": ("count",),
        "Dry-Run": ("dry",),
        "Method": ("tenant",),
    }


@pytest.mark.parametrize(
    "input_schema",
    [
        schema(a={"type": "string", "x-mcp-header": "Region"}, b={"type": "string", "x-mcp-header": "Region"}),
        schema(a={"type": "string", "x-mcp-header": "Region"}, b={"type": "string", "x-mcp-header": "REGION"}),
        schema(a={"type": "string", "x-mcp-header": ""}),
        schema(a={"type": "string", "x-mcp-header": "My Region"}),
        schema(a={"type": "string", "x-mcp-header": "Region:Primary"}),
        schema(a={"type": "string", "x-mcp-header": "Région"}),
        schema(a={"type": "string", "x-mcp-header": "Region\t1"}),
        schema(a={"type": "string", "x-mcp-header": "Region\r\nX"}),
        schema(a={"type": "string", "x-mcp-header": 5}),
        schema(a={"type": "array", "x-mcp-header": "A"}),
        schema(a={"type": "object", "x-mcp-header": "A"}),
        schema(a={"type": "null", "x-mcp-header": "A"}),
        schema(a={"type": "number", "x-mcp-header": "A"}),
        schema(a={"x-mcp-header": "A"}),
        schema(a={"type": ["string", "integer"], "x-mcp-header": "A"}),
        schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}),
        schema(a={"anyOf": [{"type": "string", "x-mcp-header": "A"}]}),
        schema(a={"type": "object", "if": {"properties": {"b": {"type": "string", "x-mcp-header": "A"}}}}),
        {"type": "object", "$defs": {"r": {"type": "string", "x-mcp-header": "A"}}},
        {"type": "string", "x-mcp-header": "Root"},
    ],
)
def test_invalid_x_mcp_headers(input_schema: dict[str, Any]) -> None:
    assert x_mcp_headers(input_schema) is None
    with pytest.raises(XMcpHeaderError):
        parse_x_mcp_headers(input_schema)


def test_a_property_named_x_mcp_header_is_not_an_annotation() -> None:
    input_schema = schema(**{"x-mcp-header": {"type": "string"}})
    assert x_mcp_headers(input_schema) == {}


def test_annotation_text_in_a_default_is_not_an_annotation() -> None:
    input_schema = schema(a={"type": "object", "default": {"x-mcp-header": "A"}})
    assert x_mcp_headers(input_schema) == {}


# -- stateless era: SEP-2243 ---------------------------------------------------------------------

MODERN = "2026-07-28"


def modern(method: str, request_id: int | None = 1, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "jsonrpc": "2.0",
        "method": method,
        "params": {**params, "_meta": {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}},
    }
    if request_id is not None:
        message["id"] = request_id
    return message


def lowered(headers: dict[str, str]) -> dict[str, str]:
    """What the transport does before calling in: header names are case-insensitive."""
    return {name.lower(): value for name, value in headers.items()}


def test_matching_headers_pass() -> None:
    message = modern("tools/call", name="get_weather", arguments={"location": "Seattle, WA"})
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "get_weather"}
    assert check_stateless_headers(headers, message) is None


@pytest.mark.parametrize("name", ["mcp-method", "MCP-METHOD", "Mcp-Method"])
def test_header_name_case_is_the_callers_lowering(name: str) -> None:
    message = modern("tools/list")
    assert check_stateless_headers(lowered({"MCP-Protocol-Version": MODERN, name: "tools/list"}), message) is None


def test_surrounding_whitespace_is_trimmed() -> None:
    message = modern("tools/call", name="foo")
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "  foo "}
    assert check_stateless_headers(headers, message) is None


def test_named_methods_use_name_or_uri() -> None:
    uri = "file:///projects/myapp/config.json"
    read = modern("resources/read", uri=uri)
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "resources/read", "mcp-name": uri}
    assert check_stateless_headers(headers, read) is None
    prompt = modern("prompts/get", name="code_review")
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "prompts/get", "mcp-name": "code_review"}
    assert check_stateless_headers(headers, prompt) is None


def test_base64_mcp_name_is_decoded() -> None:
    message = modern("tools/call", name="天気")
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": encode_header_value("天気")}
    assert check_stateless_headers(headers, message) is None


@pytest.mark.parametrize(
    ("headers", "needle"),
    [
        ({"mcp-method": "tools/call", "mcp-name": "foo"}, "MCP-Protocol-Version"),
        ({"mcp-protocol-version": "2025-11-25", "mcp-method": "tools/call", "mcp-name": "foo"}, "MCP-Protocol-Version"),
        ({"mcp-protocol-version": MODERN, "mcp-name": "foo"}, "Mcp-Method"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "prompts/get", "mcp-name": "foo"}, "Mcp-Method"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "TOOLS/CALL", "mcp-name": "foo"}, "Mcp-Method"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "tools/call"}, "Mcp-Name"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "bar"}, "Mcp-Name"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "=?base64?Zm9v?"}, "Mcp-Name"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "=?base64?Zm9?="}, "Mcp-Name"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "f\x00o"}, "Mcp-Name"),
        ({"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "fóo"}, "Mcp-Name"),
    ],
)
def test_mismatch_is_400_header_mismatch(headers: dict[str, str], needle: str) -> None:
    message = modern("tools/call", request_id=7, name="foo")
    rejected = assert_rejected(check_stateless_headers(headers, message), 400, -32020, 7)
    assert needle in body_of(rejected)["error"]["message"]


def test_base64_encoded_name_equal_to_body_passes() -> None:
    message = modern("tools/call", name="foo")
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "=?base64?Zm9v?="}
    assert check_stateless_headers(headers, message) is None


def test_missing_meta_version_is_400_invalid_params() -> None:
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    assert_rejected(check_stateless_headers(headers, message), 400, -32602, 3)


def test_non_string_name_in_body_is_invalid_params() -> None:
    message = modern("tools/call", name=5)
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "5"}
    assert_rejected(check_stateless_headers(headers, message), 400, -32602, 1)


def test_mcp_name_is_ignored_on_other_methods() -> None:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list", "mcp-name": "whatever"}
    assert check_stateless_headers(headers, modern("tools/list")) is None


def test_notification_needs_only_the_version_header() -> None:
    message = modern("notifications/cancelled", request_id=None, requestId=1)
    assert check_stateless_headers({"mcp-protocol-version": MODERN}, message) is None
    wrong = {"mcp-protocol-version": MODERN, "mcp-method": "notifications/progress"}
    assert_rejected(check_stateless_headers(wrong, message), 400, -32020)
    assert_rejected(check_stateless_headers({}, message), 400, -32020)


# -- Mcp-Param-* ------------------------------------------------------------------------------

PARAMS = {"Region": "region", "Count": "count", "Flag": "flag", "Zone": ("target", "zone")}


def call(**arguments: Any) -> dict[str, Any]:
    return modern("tools/call", name="execute_sql", arguments=arguments)


def call_headers(**params: str) -> dict[str, str]:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "execute_sql"}
    headers.update({f"mcp-param-{name.lower()}": value for name, value in params.items()})
    return headers


def test_param_headers_match() -> None:
    message = call(region="us-west1", count=42, flag=True, target={"zone": "b"}, query="SELECT 1")
    headers = call_headers(Region="us-west1", Count="42", Flag="true", Zone="b")
    assert check_stateless_headers(headers, message, param_headers=PARAMS) is None


@pytest.mark.parametrize("header", ["42", "42.0", "4.2e1", "42.000"])
def test_integers_compare_numerically(header: str) -> None:
    assert check_stateless_headers(call_headers(Count=header), call(count=42), param_headers=PARAMS) is None


def test_float_body_compares_numerically() -> None:
    assert check_stateless_headers(call_headers(Count="42"), call(count=42.0), param_headers=PARAMS) is None


@pytest.mark.parametrize("header", ["43", "42x", "0x2a", "4_2", " ", "NaN", "forty-two"])
def test_integer_mismatch(header: str) -> None:
    rejected = check_stateless_headers(call_headers(Count=header), call(count=42), param_headers=PARAMS)
    assert "Mcp-Param-Count" in body_of(assert_rejected(rejected, 400, -32020, 1))["error"]["message"]


@pytest.mark.parametrize(("value", "header"), [(True, "True"), (True, "1"), (False, "true"), (False, "")])
def test_boolean_mismatch(value: bool, header: str) -> None:
    rejected = check_stateless_headers(call_headers(Flag=header), call(flag=value), param_headers=PARAMS)
    assert_rejected(rejected, 400, -32020, 1)


def test_param_value_in_body_without_header_is_a_mismatch() -> None:
    rejected = check_stateless_headers(call_headers(), call(region="us-west1"), param_headers=PARAMS)
    assert "Mcp-Param-Region" in body_of(assert_rejected(rejected, 400, -32020, 1))["error"]["message"]


def test_null_or_absent_argument_needs_no_header() -> None:
    assert check_stateless_headers(call_headers(), call(region=None), param_headers=PARAMS) is None
    assert check_stateless_headers(call_headers(), call(), param_headers=PARAMS) is None
    assert check_stateless_headers(call_headers(), call(target="not an object"), param_headers=PARAMS) is None


def test_header_without_a_body_value_is_a_mismatch() -> None:
    assert_rejected(check_stateless_headers(call_headers(Region="x"), call(), param_headers=PARAMS), 400, -32020, 1)


def test_param_values_are_base64_decoded() -> None:
    headers = call_headers(Region=encode_header_value(" padded "))
    assert check_stateless_headers(headers, call(region=" padded "), param_headers=PARAMS) is None
    bad = call_headers(Region="=?base64?SGVsbG8?=")
    assert_rejected(check_stateless_headers(bad, call(region="Hello"), param_headers=PARAMS), 400, -32020, 1)


def test_unannotated_param_headers_are_ignored() -> None:
    headers = call_headers(Other="anything")
    assert check_stateless_headers(headers, call(), param_headers=PARAMS) is None


def test_param_headers_unchecked_when_the_tool_is_unknown() -> None:
    assert check_stateless_headers(call_headers(), call(region="x"), param_headers=None) is None


def test_param_headers_only_apply_to_tools_call() -> None:
    message = modern("prompts/get", name="p", arguments={"region": "x"})
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "prompts/get", "mcp-name": "p"}
    assert check_stateless_headers(headers, message, param_headers=PARAMS) is None


def test_param_headers_from_x_mcp_headers_round_trip() -> None:
    tool_schema = schema(
        region={"type": "string", "x-mcp-header": "Region"},
        target=schema(zone={"type": "string", "x-mcp-header": "Zone"}),
        count={"type": "integer", "x-mcp-header": "Count"},
    )
    mapping = x_mcp_headers(tool_schema)
    assert mapping is not None
    message = call(region="日本", target={"zone": " a "}, count=7, query="q")
    sent = request_headers(message, param_headers=mapping)
    assert sent == {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "execute_sql",
        "Mcp-Param-Region": "=?base64?5pel5pys?=",
        "Mcp-Param-Zone": "=?base64?IGEg?=",
        "Mcp-Param-Count": "7",
    }
    assert check_stateless_headers(lowered(sent), message, param_headers=mapping) is None


_json_scalar = st.one_of(st.text(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.none())


@given(name=st.text(min_size=1), region=_json_scalar, count=_json_scalar)
def test_headers_a_client_builds_always_pass(name: str, region: object, count: object) -> None:
    message = modern("tools/call", name=name, arguments={"region": region, "count": count})
    mapping = {"Region": "region", "Count": "count"}
    assert (
        check_stateless_headers(
            lowered(request_headers(message, param_headers=mapping)), message, param_headers=mapping
        )
        is None
    )


def test_request_headers_refuses_non_primitive_arguments() -> None:
    with pytest.raises(ValueError):
        request_headers(call(region=["a"]), param_headers=PARAMS)


# -- statuses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (-32022, 400),
        (-32021, 400),
        (-32020, 400),
        (-32602, 400),
        (-32601, 404),
        (-32700, 400),
        (-32600, 400),
        (-32603, 200),
        (-32002, 200),
        (1234, 200),
    ],
)
def test_status_for_error(code: int, status: int) -> None:
    assert status_for_error(code) == status
