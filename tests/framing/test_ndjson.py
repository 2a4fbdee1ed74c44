"""Newline-delimited JSON framing for stdio: bytes in, values (or error items) out."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backchannel.framing.ndjson import DEFAULT_MAX_LINE_BYTES, LineDecoder, encode_line, encode_lines
from backchannel.types.errors import MCPError, ParseError

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
PONG = {"jsonrpc": "2.0", "id": 1, "result": {}}
SMALL = {"ok": 1}  # 9 bytes on the wire: fits under the small limits below


def feed_all(decoder: LineDecoder, *chunks: bytes) -> list[Any]:
    items: list[Any] = []
    for chunk in chunks:
        items.extend(decoder.feed(chunk))
    return items


def codes(items: list[Any]) -> list[Any]:
    """Values as they are, errors as their JSON-RPC code."""
    return [item.code if isinstance(item, MCPError) else item for item in items]


def test_one_line_one_value() -> None:
    assert LineDecoder().feed(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n') == [PING]


def test_line_split_across_chunks() -> None:
    decoder = LineDecoder()
    line = encode_line(PING)
    assert decoder.feed(line[:5]) == []
    assert decoder.feed(line[5:-1]) == []
    assert decoder.feed(line[-1:]) == [PING]
    assert decoder.end() == []


def test_every_split_point() -> None:
    data = encode_lines([PING, PONG])
    for cut in range(len(data) + 1):
        assert feed_all(LineDecoder(), data[:cut], data[cut:]) == [PING, PONG], cut


def test_several_lines_in_one_chunk() -> None:
    decoder = LineDecoder()
    assert decoder.feed(encode_line(PING) + encode_line(PONG) + b'{"a"') == [PING, PONG]
    assert decoder.feed(b":1}\n") == [{"a": 1}]


def test_blank_and_whitespace_lines_are_skipped() -> None:
    assert LineDecoder().feed(b"\n\n  \n\t\r\n" + encode_line(PING) + b"\n") == [PING]


def test_crlf_line_endings() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b'{"a":1}\r\n{"b":2}\r') == [{"a": 1}]
    assert decoder.feed(b"\n") == [{"b": 2}]


def test_bad_json_becomes_a_parse_error_and_the_next_line_is_read() -> None:
    items = LineDecoder().feed(b'{"a":\n' + encode_line(PING) + b"not json\n[1]\n")
    assert codes(items) == [-32700, PING, -32700, [1]]
    assert isinstance(items[0], ParseError)


def test_invalid_utf8_is_a_parse_error() -> None:
    assert codes(LineDecoder().feed(b'"\xff\xfe"\n' + encode_line(PONG))) == [-32700, PONG]


def test_line_over_the_limit_in_one_chunk() -> None:
    decoder = LineDecoder(max_line_bytes=32)
    big = encode_line({"x": "y" * 40})
    assert codes(decoder.feed(big + encode_line(SMALL))) == [-32600, SMALL]


def test_line_at_the_limit_is_accepted() -> None:
    line = encode_line({"x": "y" * 20})
    decoder = LineDecoder(max_line_bytes=len(line) - 1)
    assert decoder.feed(line[:-1]) == []  # exactly at the limit, still buffered
    assert decoder.feed(line[-1:]) == [{"x": "y" * 20}]


def test_line_over_the_limit_across_many_chunks() -> None:
    decoder = LineDecoder(max_line_bytes=16)
    items = feed_all(decoder, b'{"x":"', *[b"y" * 7] * 20, b'"}\n', encode_line(SMALL))
    assert codes(items) == [-32600, SMALL]  # one error for the line, however many chunks it took
    assert decoder.feed(encode_line([2])) == [[2]]


def test_oversized_line_finished_in_the_chunk_that_crosses_the_limit() -> None:
    decoder = LineDecoder(max_line_bytes=16)
    assert decoder.feed(b'{"x":"yyyy') == []
    assert codes(decoder.feed(b'yyyyyyyyyyyyyy"}\n' + encode_line(SMALL))) == [-32600, SMALL]


def test_oversized_line_error_message_names_the_limit() -> None:
    (error,) = LineDecoder(max_line_bytes=8).feed(b"[" + b"1," * 10 + b"1]\n")
    assert isinstance(error, MCPError)
    assert "8" in error.message
    assert error.to_error()["code"] == -32600


def test_default_limit() -> None:
    assert LineDecoder().max_line_bytes == DEFAULT_MAX_LINE_BYTES == 4 * 1024 * 1024


def test_end_with_trailing_newline() -> None:
    decoder = LineDecoder()
    assert decoder.feed(encode_line(PING)) == [PING]
    assert decoder.end() == []


def test_end_without_trailing_newline() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b'{"last":true}') == []
    assert decoder.end() == [{"last": True}]
    assert decoder.end() == []


def test_end_with_a_bad_last_line() -> None:
    decoder = LineDecoder()
    decoder.feed(b'{"last":')
    assert codes(decoder.end()) == [-32700]


def test_end_inside_an_oversized_line_reports_it_once() -> None:
    decoder = LineDecoder(max_line_bytes=4)
    assert codes(decoder.feed(b"[1,2,3,4,5")) == [-32600]
    assert decoder.end() == []
    assert decoder.feed(b"[1]\n") == [[1]]  # usable again after end()


def test_encode_line_is_one_line() -> None:
    line = encode_line({"text": "two\nlines\r", "n": 1})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert LineDecoder().feed(line) == [{"text": "two\nlines\r", "n": 1}]


def test_encode_lines_round_trip() -> None:
    messages = [
        PING,
        PONG,
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 0.5}},
    ]
    data = encode_lines(messages)
    assert data.count(b"\n") == 3 and data.endswith(b"\n")
    assert LineDecoder().feed(data) == messages
    assert encode_lines([]) == b""


def test_unicode_survives_and_is_utf8_on_the_wire() -> None:
    message = {"text": "héllo ✓ 😀 \u2028 \u2029 日本"}
    line = encode_line(message)
    assert "日本".encode() in line
    # Split in the middle of a multi-byte character.
    cut = line.index("😀".encode()) + 2
    decoder = LineDecoder()
    assert decoder.feed(line[:cut]) == []
    assert decoder.feed(line[cut:]) == [message]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@given(messages=st.lists(json_values, max_size=5), cuts=st.lists(st.integers(0, 10_000), max_size=6))
def test_round_trip_whatever_the_chunking(messages: list[Any], cuts: list[int]) -> None:
    data = encode_lines(messages)
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    chunks = [data[a:b] for a, b in itertools.pairwise(points)]
    decoder = LineDecoder()
    assert feed_all(decoder, *chunks) + decoder.end() == messages


@pytest.mark.parametrize("limit", [1, 10, 100])
@given(data=st.data())
def test_every_line_yields_exactly_one_item(limit: int, data: st.DataObject) -> None:
    lines = data.draw(st.lists(st.binary(max_size=150).filter(lambda b: b"\n" not in b and b.strip()), max_size=6))
    stream = b"".join(line + b"\n" for line in lines)
    cut = data.draw(st.integers(0, len(stream)))
    items = feed_all(LineDecoder(max_line_bytes=limit), stream[:cut], stream[cut:])
    assert len(items) == len(lines)
    for line, item in zip(lines, items, strict=True):
        if len(line) > limit:
            assert isinstance(item, MCPError) and item.code == -32600
