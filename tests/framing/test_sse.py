"""Server-sent events: our encoder, and a decoder that follows the WHATWG parsing rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backchannel.framing.sse import SSEDecoder, SSEEvent, SSEEventTooLarge, encode_comment, encode_event


def decode(*chunks: bytes, decoder: SSEDecoder | None = None) -> list[SSEEvent]:
    decoder = decoder or SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.end())
    return events


# -- encoding --------------------------------------------------------------------------


def test_encode_a_message_event() -> None:
    assert encode_event('{"a":1}', event_id="s_1") == b'id: s_1\ndata: {"a":1}\n\n'


def test_encode_multi_line_data_and_event_name() -> None:
    assert encode_event("one\ntwo", event="note") == b"event: note\ndata: one\ndata: two\n\n"


def test_encode_empty_data_is_one_empty_data_line() -> None:
    assert encode_event("") == b"data:\n\n"


def test_encode_priming_event_has_an_id_and_no_data() -> None:
    assert encode_event(event_id="s_0") == b"id: s_0\n\n"
    decoder = SSEDecoder()
    assert decoder.feed(encode_event(event_id="s_0")) == []
    assert decoder.last_event_id == "s_0"


def test_encode_retry() -> None:
    assert encode_event(retry_ms=5000) == b"retry: 5000\n\n"
    decoder = SSEDecoder()
    assert decoder.feed(encode_event(event_id="p", retry_ms=250)) == []
    assert (decoder.retry_ms, decoder.last_event_id) == (250, "p")


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"data": "x", "event_id": "a\nb"},
        {"data": "x", "event_id": "a\rb"},
        {"data": "x", "event_id": "a\0b"},
        {"data": "x", "event": "a\nb"},
        {"data": "x", "retry_ms": -1},
    ],
)
def test_encode_refuses_what_cannot_be_written(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        encode_event(**kwargs)  # type: ignore[arg-type]


def test_encode_comment() -> None:
    assert encode_comment() == b":\n"
    assert encode_comment("ping") == b": ping\n"
    assert encode_comment("a\nb") == b": a\n: b\n"
    assert decode(encode_comment("keep-alive") + encode_event("x") + encode_comment()) == [SSEEvent("x")]


# -- WHATWG examples ---------------------------------------------------------------------


def test_whatwg_stock_example() -> None:
    stream = b"data: YHOO\ndata: +2\ndata: 10\n\n"
    assert decode(stream) == [SSEEvent("YHOO\n+2\n10")]


def test_whatwg_four_blocks_example() -> None:
    """The comment block dispatches nothing; the id persists; the last block is unterminated."""
    stream = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"
    decoder = SSEDecoder()
    events = decode(stream, decoder=decoder)
    assert events == [SSEEvent("first event", event_id="1"), SSEEvent("second event", event_id="")]
    assert decoder.last_event_id == ""  # "id" with no value resets it


def test_whatwg_two_events_example() -> None:
    """``data`` then blank makes an event with empty data; ``data\\ndata`` makes one newline."""
    stream = b"data\n\ndata\ndata\n\ndata:\n"
    assert decode(stream) == [SSEEvent(""), SSEEvent("\n")]


def test_whatwg_space_after_colon_is_optional() -> None:
    stream = b"data:test\n\ndata: test\n\n"
    assert decode(stream) == [SSEEvent("test"), SSEEvent("test")]


def test_only_one_leading_space_is_stripped() -> None:
    assert decode(b"data:   x \n\n") == [SSEEvent("  x ")]


def test_event_name_and_default() -> None:
    stream = b"event: progress\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n"
    assert decode(stream) == [SSEEvent("1", "progress"), SSEEvent("2"), SSEEvent("3")]


def test_a_field_without_colon_has_an_empty_value() -> None:
    assert decode(b"event\ndata\n\n") == [SSEEvent("")]


def test_unknown_fields_are_ignored() -> None:
    assert decode(b"foo: bar\ndata: x\nDATA: y\n\n") == [SSEEvent("x")]


# -- ids, priming, retry --------------------------------------------------------------------


def test_id_persists_across_events() -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"id: 7\ndata: a\n\ndata: b\n\n")
    assert [e.event_id for e in events] == ["7", "7"]
    assert decoder.last_event_id == "7"


def test_sdk_style_priming_event_is_dispatched_with_empty_data() -> None:
    """``id: X\\ndata: \\n\\n`` has a non-empty data buffer ("\\n") under WHATWG, so it dispatches."""
    decoder = SSEDecoder()
    assert decoder.feed(b"id: s_0\ndata: \n\n") == [SSEEvent("", event_id="s_0")]
    assert decoder.last_event_id == "s_0"


def test_event_without_data_updates_id_but_is_not_dispatched() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\nevent: ignored\n\n") == []
    assert decoder.last_event_id == "1"
    # ... and the event name did not leak into the next event
    assert decoder.feed(b"data: x\n\n") == [SSEEvent("x", "message", "1")]


def test_id_with_nul_is_ignored() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 1\n\nid: a\x00b\ndata: x\n\n") == [SSEEvent("x", event_id="1")]
    assert decoder.last_event_id == "1"


def test_id_of_an_unterminated_event_is_not_committed() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 1\n\nid: 2\ndata: lost\n")
    assert decoder.end() == []
    assert decoder.last_event_id == "1"


@pytest.mark.parametrize(
    ("line", "expected"),
    [(b"retry: 3000", 3000), (b"retry:0", 0), (b"retry: 3s", None), (b"retry: -1", None), (b"retry:", None)],
)
def test_retry_only_ascii_digits(line: bytes, expected: int | None) -> None:
    decoder = SSEDecoder()
    decoder.feed(line + b"\n")
    assert decoder.retry_ms == expected


def test_retry_with_unicode_digits_is_ignored() -> None:
    decoder = SSEDecoder()
    decoder.feed("retry: ١٢\n".encode())
    assert decoder.retry_ms is None


def test_retry_applies_without_dispatch_and_survives_end() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"retry: 100\n")
    assert decoder.end() == []
    assert decoder.retry_ms == 100


def test_state_survives_end_for_the_next_connection() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 5\ndata: a\n\ndata: half")
    decoder.end()
    assert decoder.feed(b"\xef\xbb\xbfdata: b\n\n") == [SSEEvent("b", event_id="5")]


# -- line endings, BOM, chunking --------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending(eol: bytes) -> None:
    stream = eol.join([b"id: 1", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert decode(stream) == [SSEEvent("a\nb", event_id="1"), SSEEvent("c", event_id="1")]


def test_mixed_line_endings() -> None:
    assert decode(b"data: a\r\ndata: b\rdata: c\n\r\n") == [SSEEvent("a\nb\nc")]


def test_cr_at_chunk_end_then_lf_is_one_line_ending() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n") == []  # the LF belongs to the CR: not a blank line
    assert decoder.feed(b"\r") == [SSEEvent("a")]
    assert decoder.feed(b"\ndata: b\n\n") == [SSEEvent("b")]


def test_cr_then_empty_chunk_then_lf() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"") == []
    assert decoder.feed(b"\n\n") == [SSEEvent("a")]


def test_leading_bom_is_skipped_even_when_split() -> None:
    stream = b"\xef\xbb\xbfdata: x\n\n"
    for cut in range(len(stream) + 1):
        assert decode(stream[:cut], stream[cut:]) == [SSEEvent("x")], cut
    assert decode(b"\xef", b"\xbb", b"\xbf", b"data: x\n\n") == [SSEEvent("x")]


def test_only_one_bom_is_skipped() -> None:
    """A second BOM is part of the first line, which then names no known field."""
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [SSEEvent("y")]


def test_a_bom_later_in_the_stream_is_data() -> None:
    assert decode(b"data: \xef\xbb\xbfx\n\n") == [SSEEvent("\ufeffx")]


def test_invalid_utf8_is_replaced() -> None:
    assert decode(b"data: \xff\n\n") == [SSEEvent("\ufffd")]


def test_utf8_split_inside_a_character() -> None:
    data = "世界".encode()
    stream = b"data: " + data + b"\n\n"
    for cut in range(len(stream) + 1):
        assert decode(stream[:cut], stream[cut:]) == [SSEEvent("世界")], cut


def test_unterminated_event_is_not_dispatched_at_end() -> None:
    assert decode(b"data: a\n\ndata: b\n") == [SSEEvent("a")]
    assert decode(b"data: a\n\ndata: b") == [SSEEvent("a")]


def test_every_split_point_of_a_fixed_stream() -> None:
    stream = (
        b"\xef\xbb\xbf: hello\r\nretry: 10\r\nid: 1\r\nevent: e\r\ndata: a\r\ndata: b\r\n\r\n"
        b"id: 2\rdata: c\r\r:c\nid: 3\n\ndata: d\n\n"
    )
    expected = [SSEEvent("a\nb", "e", "1"), SSEEvent("c", "message", "2"), SSEEvent("d", "message", "3")]
    for cut in range(len(stream) + 1):
        assert decode(stream[:cut], stream[cut:]) == expected, cut
    assert decode(*(stream[i : i + 1] for i in range(len(stream)))) == expected


# -- size bound -------------------------------------------------------------------------------


def test_event_over_the_limit_raises() -> None:
    decoder = SSEDecoder(max_event_bytes=64)
    with pytest.raises(SSEEventTooLarge) as info:
        decoder.feed(b"data: ok\n\n" + b"data: " + b"x" * 100 + b"\n\n")
    assert isinstance(info.value, ValueError)
    assert info.value.events == [SSEEvent("ok")]


def test_limit_counts_lines_across_chunks() -> None:
    decoder = SSEDecoder(max_event_bytes=64)
    decoder.feed(b"data: " + b"x" * 40 + b"\n")
    with pytest.raises(SSEEventTooLarge):
        decoder.feed(b"data: " + b"y" * 10)  # the partial second line pushes the event over
        decoder.feed(b"y" * 10)


def test_unterminated_line_over_the_limit_raises() -> None:
    decoder = SSEDecoder(max_event_bytes=16)
    with pytest.raises(SSEEventTooLarge):
        for _ in range(10):
            decoder.feed(b": a long comment with no end")


def test_many_small_events_do_not_trip_the_limit() -> None:
    decoder = SSEDecoder(max_event_bytes=32)
    assert len(decoder.feed(encode_event("0123456789") * 100)) == 100


# -- round trips over any split --------------------------------------------------------------

_field_text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\x00"), max_size=12)
_data_text = st.text(st.characters(codec="utf-8"), max_size=40)


@dataclass(frozen=True)
class Item:
    """One thing our encoder writes: an event (``comment`` None) or a comment."""

    data: str | None = None
    event_id: str | None = None
    event: str | None = None
    retry_ms: int | None = None
    comment: str | None = None

    def encode(self) -> bytes:
        if self.comment is not None:
            return encode_comment(self.comment)
        return encode_event(self.data, event_id=self.event_id, event=self.event, retry_ms=self.retry_ms)


_item = st.one_of(
    st.builds(
        Item,
        data=st.one_of(st.none(), _data_text),
        event_id=st.one_of(st.none(), _field_text),
        event=st.one_of(st.none(), _field_text),
        retry_ms=st.one_of(st.none(), st.integers(0, 10**6)),
    ).filter(lambda item: (item.data, item.event_id, item.event, item.retry_ms) != (None, None, None, None)),
    st.builds(Item, comment=_data_text),
)


def _expected(items: list[Item]) -> tuple[list[SSEEvent], str | None, int | None]:
    """What a WHATWG parser makes of the stream, worked out from the items."""
    events: list[SSEEvent] = []
    last_id: str | None = None
    retry: int | None = None
    for item in items:
        if item.comment is not None:
            continue
        if item.event_id is not None:
            last_id = item.event_id
        if item.retry_ms is not None:
            retry = item.retry_ms
        if item.data is not None:
            text = re.sub(r"\r\n|\r", "\n", item.data)
            events.append(SSEEvent(text, item.event or "message", last_id))
    return events, last_id, retry


@given(
    items=st.lists(_item, max_size=8),
    cuts=st.lists(st.integers(0, 10_000), max_size=6),
    eol=st.sampled_from([b"\n", b"\r", b"\r\n"]),
    bom=st.booleans(),
)
def test_any_split_of_an_encoded_stream_decodes_the_same(
    items: list[Item], cuts: list[int], eol: bytes, bom: bool
) -> None:
    stream = b"".join(item.encode() for item in items)
    # Our encoder writes LF only; the data never holds a raw CR or LF, so any line ending is valid.
    stream = stream.replace(b"\n", eol)
    if bom:
        stream = b"\xef\xbb\xbf" + stream
    points = sorted({cut % (len(stream) + 1) for cut in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    decoder = SSEDecoder()
    events = decode(*chunks, decoder=decoder)
    expected, last_id, retry = _expected(items)
    assert events == expected
    assert decoder.last_event_id == last_id
    assert decoder.retry_ms == retry


@given(data=_data_text)
def test_data_round_trips(data: str) -> None:
    expected = re.sub(r"\r\n|\r", "\n", data)
    assert decode(encode_event(data)) == [SSEEvent(expected)]
