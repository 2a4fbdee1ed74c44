"""Server-sent events: encoding on the server, incremental decoding on the client.

The decoder follows the WHATWG "event stream interpretation" rules, so it reads
any conforming server, not only ours. Bytes in, ``SSEEvent`` values out; the
caller owns the connection and reconnects with ``last_event_id`` and
``retry_ms`` when it breaks (handshake-era streams only: the stateless era has
no resumption).

A note on "priming" events (SEP-1699). The server primes a client for
reconnection with an event that carries an id and no data. Under the WHATWG
rules only an event with *no* ``data`` line at all has an empty data buffer and
is not dispatched; ``id: X\\ndata: \\n\\n``, which some SDKs send, is dispatched
with ``data == ""``. ``encode_event(event_id=X)`` writes the first form; a
caller of ``SSEDecoder`` should skip events whose data is empty, to accept the
second.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "SSEDecoder",
    "SSEEvent",
    "SSEEventTooLarge",
    "encode_comment",
    "encode_event",
    "encode_json_event",
]

import re
from dataclasses import dataclass

#: Four MiB, the same bound as one stdio line.
DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024

_LINE_END = re.compile(rb"\r\n|\r|\n")
_TEXT_LINE_END = re.compile(r"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    ``event_id`` is the stream's last event id when the event was dispatched,
    as in the WHATWG ``MessageEvent.lastEventId``: it may have been set by an
    earlier event.
    """

    data: str
    event: str = "message"
    event_id: str | None = None


class SSEEventTooLarge(ValueError):
    """One event (its data lines, or a single line) grew past ``max_event_bytes``.

    The stream cannot be resynchronised: drop the connection. ``events`` holds
    the events completed in the same ``feed`` call before the oversized one.
    """

    def __init__(self, limit: int, events: list[SSEEvent] | None = None) -> None:
        super().__init__(f"server-sent event larger than the limit of {limit} bytes")
        self.limit = limit
        self.events: list[SSEEvent] = events if events is not None else []


def _single_line(name: str, value: str) -> None:
    if "\r" in value or "\n" in value:
        raise ValueError(f"an SSE {name} cannot contain a line break: {value!r}")


def encode_event(
    data: str | None = None,
    *,
    event_id: str | None = None,
    event: str | None = None,
    retry_ms: int | None = None,
) -> bytes:
    """A complete event, ending with its blank line.

    Each line of ``data`` becomes one ``data:`` line, so the client gets ``data``
    back joined with ``\\n`` (a CR or CRLF in ``data`` comes back as LF: SSE has
    no way to carry a bare CR). ``data=None`` writes no data line, which makes
    an event the client does not dispatch: with ``event_id`` that is the
    SEP-1699 priming event, with ``retry_ms`` the "wait before reconnecting"
    hint sent before closing. ``data=""`` is dispatched, with empty data.
    """
    if data is None and event_id is None and event is None and retry_ms is None:
        raise ValueError("an SSE event needs at least one field")
    parts: list[str] = []
    if event_id is not None:
        _single_line("id", event_id)
        if "\0" in event_id:
            raise ValueError("an SSE id cannot contain NUL: clients would ignore it")
        parts.append(f"id: {event_id}\n" if event_id else "id:\n")
    if event is not None:
        _single_line("event name", event)
        parts.append(f"event: {event}\n" if event else "event:\n")
    if retry_ms is not None:
        if isinstance(retry_ms, bool) or retry_ms < 0:
            raise ValueError(f"retry must be a non-negative number of milliseconds, not {retry_ms!r}")
        parts.append(f"retry: {int(retry_ms)}\n")
    if data is not None:
        for line in _TEXT_LINE_END.split(data):
            parts.append(f"data: {line}\n" if line else "data:\n")
    parts.append("\n")
    return "".join(parts).encode()


def encode_json_event(data: bytes, event_id: str | None = None) -> bytes:
    """``encode_event`` for one compact JSON text (a JSON-RPC message), straight from bytes.

    Compact JSON has no line breaks (those inside strings are escaped), so it is
    one ``data`` line as it is: no decoding, splitting or re-encoding per event.
    """
    if event_id is None:
        if b"\n" in data or b"\r" in data:  # not compact after all: the general path
            return encode_event(data.decode())
        return b"data: " + data + b"\n\n"
    if b"\n" in data or b"\r" in data or not event_id.isprintable():
        return encode_event(data.decode(), event_id=event_id)  # which also refuses a bad id
    return b"id: " + event_id.encode() + b"\ndata: " + data + b"\n\n"


def encode_comment(text: str = "") -> bytes:
    """Comment lines, which every client ignores: the keep-alive for quiet streams."""
    return "".join(f": {line}\n" if line else ":\n" for line in _TEXT_LINE_END.split(text)).encode()


class SSEDecoder:
    """Feed bytes as they arrive; get back the events they complete.

    ``last_event_id`` (None until an ``id`` field is dispatched) and ``retry_ms``
    (None until the server sends a valid ``retry``) are what a reconnection
    needs; they survive ``end()`` so the same decoder can read the next
    connection's stream.
    """

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None
        self._line = bytearray()  # the unterminated tail of the stream
        self._after_cr = False  # the last byte was CR: an LF starting the next chunk belongs to it
        self._at_start = True  # a BOM may still be (partly) ahead
        self._reset_event()

    def _reset_event(self) -> None:
        self._data: list[str] = []
        self._data_bytes = 0
        self._event_type = ""
        self._id_buffer = self.last_event_id

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if self._at_start:
            head = bytes(self._line) + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._line[:] = head  # wait: this may still become a BOM
                return events
            self._line.clear()
            self._at_start = False
            chunk = head[len(_BOM) :] if head.startswith(_BOM) else head
        if self._after_cr and chunk:
            self._after_cr = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        start = 0
        for match in _LINE_END.finditer(chunk):
            if self._line:
                self._line += chunk[start : match.start()]
                line = bytes(self._line)
                self._line.clear()
            else:
                line = chunk[start : match.start()]
            self._take(line, events)
            start = match.end()
            if match.group() == b"\r" and start == len(chunk):
                self._after_cr = True
        if start < len(chunk):
            self._line += chunk[start:]
            if self._data_bytes + len(self._line) > self.max_event_bytes:
                raise SSEEventTooLarge(self.max_event_bytes, events)
        return events

    def end(self) -> list[SSEEvent]:
        """The connection closed. An event without its blank line is dropped, per the standard."""
        self._line.clear()
        self._after_cr = False
        self._at_start = True
        self._reset_event()
        return []

    def _take(self, line: bytes, events: list[SSEEvent]) -> None:
        if self._data_bytes + len(line) > self.max_event_bytes:
            raise SSEEventTooLarge(self.max_event_bytes, events)
        if not line:
            self._dispatch(events)
            return
        if line[0] == 0x3A:  # ":" starts a comment
            return
        text = line.decode("utf-8", "replace")
        field, colon, value = text.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._data_bytes += len(line) + 1
        elif field == "event":
            self._event_type = value
        elif field == "id" and "\0" not in value:  # an id with NUL is ignored
            self._id_buffer = value
        elif field == "retry" and value.isascii() and value.isdigit():  # so is a retry that is not all digits
            self.retry_ms = int(value)
        # any other field name is ignored

    def _dispatch(self, events: list[SSEEvent]) -> None:
        self.last_event_id = self._id_buffer
        if self._data:
            events.append(SSEEvent("\n".join(self._data), self._event_type or "message", self.last_event_id))
        self._reset_event()
