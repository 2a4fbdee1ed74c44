"""The HTTP endpoint's per-request checks, made cheaper (issue #32), decide exactly as before.

Each fast path is checked against the rule it shortcuts: the Host/Origin decision kept per pair
(``HostOriginCheck``), a mirrored header equal to the body's plain string (``Mcp-Name``), header
names looked up instead of decoded (``header_map``), and JSON too short to nest past the limit
left uncounted (``decode_json``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backchannel.framing import mirrored_headers
from backchannel.framing.codec import MAX_NESTING_DEPTH, decode_json
from backchannel.framing.http import (
    LOCALHOST_HOSTS,
    LOCALHOST_ORIGINS,
    HostOriginCheck,
    Rejection,
    check_host_and_origin,
    check_stateless_headers,
    decode_header_value,
)
from backchannel.http_host import asgi
from backchannel.types.errors import ParseError
from backchannel.types.meta import PROTOCOL_VERSION

HOSTS = ["127.0.0.1:8000", "localhost", "[::1]:9", "evil.example", "127.0.0.1:x", "", " localhost ", None]
ORIGINS = [None, "http://localhost:3000", "https://localhost", "http://evil.example", "null", "http://[::1]:1"]


def _decision(rejection: Rejection | None) -> tuple[int, bytes] | None:
    return None if rejection is None else (rejection.status, rejection.body())


def _headers(host: str | None, origin: str | None) -> dict[str, str]:
    found = {}
    if host is not None:
        found["host"] = host
    if origin is not None:
        found["origin"] = origin
    return found


@pytest.mark.parametrize(
    ("hosts", "origins"),
    [(LOCALHOST_HOSTS, LOCALHOST_ORIGINS), (["evil.example"], ["*"]), (["*"], ["http://localhost:3000"])],
)
def test_host_origin_check_decides_as_the_function(hosts: list[str], origins: list[str]) -> None:
    check = HostOriginCheck(hosts, origins)
    for _ in range(2):  # the second pass is answered from what the first kept
        for host in HOSTS:
            for origin in ORIGINS:
                headers = _headers(host, origin)
                expected = check_host_and_origin(headers, allowed_hosts=hosts, allowed_origins=origins)
                assert _decision(check(headers)) == _decision(expected), (host, origin)


def test_host_origin_check_keeps_at_most_size_pairs() -> None:
    check = HostOriginCheck(size=8)
    for i in range(100):
        rejection = check({"host": f"host-{i}.example"})
        assert rejection is not None and rejection.status == 403
        assert len(check._decided) <= 8
    assert check({"host": "127.0.0.1:1"}) is None


def test_the_apps_host_check_follows_allowed_hosts() -> None:
    from backchannel.server import Server

    app = Server("t").http_app()
    assert app._host_check({"host": "mcp.example.com"}) is not None
    app.allowed_hosts = ["mcp.example.com"]
    assert app._host_check({"host": "mcp.example.com"}) is None
    app.allowed_origins = ["https://app.example.com"]
    assert app._host_check({"host": "mcp.example.com", "origin": "https://app.example.com"}) is None
    assert app._host_check({"host": "mcp.example.com", "origin": "http://localhost:1"}) is not None


# -- Mcp-Name: the header against the body, by the rule (2026-07-28 streamable-http.mdx, SEP-2243)


def _name_matches(header: str, body: str) -> bool:
    """The rule the fast path must agree with: the header's value, its surrounding spaces and tabs
    stripped, holds only header-safe characters and is the body's value (base64 sentinel decoded)."""
    value = header.strip(" \t")
    if any(not (c == "\t" or " " <= c <= "~") for c in value):
        return False
    try:
        return decode_header_value(value) == body
    except ValueError:
        return False


_PIECES = st.sampled_from(["echo", " ", "\t", "=?base64?", "?=", "ZWNobw==", "é", "\x7f", "a b", "=?", "x"])
_NAMES = st.lists(_PIECES, max_size=5).map("".join) | st.text(max_size=12)


@given(body=_NAMES, header=_NAMES, same=st.booleans())
def test_mcp_name_fast_path_agrees_with_the_rule(body: str, header: str, same: bool) -> None:
    if same:
        header = body
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": body, "arguments": {}, "_meta": {PROTOCOL_VERSION: "2026-07-28"}},
    }
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": header}
    rejection = check_stateless_headers(headers, message)
    assert (rejection is None) == _name_matches(header, body), (header, body, rejection)


def test_a_sentinel_shaped_body_is_not_taken_as_its_own_header() -> None:
    body = "=?base64?ZWNobw==?="  # the header would say "echo": not the body's name
    problem = mirrored_headers._compare_header({"mcp-name": body}, "mcp-name", "Mcp-Name", body)
    assert problem is not None and "does not match" in problem


# -- header_map: names looked up, not decoded each time


def _reference_map(raw: list[tuple[bytes, bytes]]) -> dict[str, str]:
    joined: dict[str, list[str]] = {}
    for name, value in raw:
        joined.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return {name: ", ".join(values) for name, values in joined.items()}


_HEADER_NAMES = st.sampled_from([b"host", b"Host", b"HOST", b"accept", b"X-\xe9", b"mcp-name", b"Mcp-Name"])
_VALUES = st.binary(max_size=8)


@given(st.lists(st.tuples(_HEADER_NAMES | st.binary(min_size=1, max_size=6), _VALUES), max_size=10))
def test_header_map_is_lowercase_names_and_joined_repeats(raw: list[tuple[bytes, bytes]]) -> None:
    assert asgi.header_map({"headers": raw}) == _reference_map(raw)


def test_header_names_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(asgi, "_NAMES", {})
    raw = [(f"X-Name-{i}".encode(), b"v") for i in range(asgi._NAMES_KEPT + 100)]
    assert asgi.header_map({"headers": raw}) == _reference_map(raw)
    assert len(asgi._NAMES) == asgi._NAMES_KEPT


# -- decode_json: nesting past the limit is refused at every length


def _nested(depth: int, pad: int = 0) -> bytes:
    return b"[" * depth + b" " * pad + b"]" * depth


@pytest.mark.parametrize("pad", [0, 1, 50])
def test_nesting_at_the_limit_passes_and_past_it_is_refused(pad: int) -> None:
    value: Any = decode_json(_nested(MAX_NESTING_DEPTH, pad))
    for _ in range(MAX_NESTING_DEPTH - 1):
        value = value[0]
    assert value == []
    with pytest.raises(ParseError, match="nested deeper"):
        decode_json(_nested(MAX_NESTING_DEPTH + 1, pad))
    with pytest.raises(ParseError, match="nested deeper"):
        decode_json(_nested(MAX_NESTING_DEPTH + 1, pad).decode())


def test_short_messages_with_brackets_in_strings_pass() -> None:
    text = "[" * 200
    assert decode_json(('{"a": "' + text + '"}').encode()) == {"a": text}
