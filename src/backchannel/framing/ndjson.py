"""Newline-delimited JSON: bytes in, JSON values out, with a bound on line size.

Used by stdio in both directions. A bad line never poisons the stream: it
becomes an error item in place of a value, and the next line is read as usual.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_LINE_BYTES", "LineDecoder", "encode_line", "encode_lines"]

from collections.abc import Iterable
from typing import Any

from ..types.errors import InvalidRequest, MCPError
from .codec import decode_json, encode_message, encode_messages

#: Four MiB: far above any sane message, far below what would hurt memory. (The other
#: limit on what a line may hold is ``codec.MAX_NESTING_DEPTH``: 128 levels of nesting.)
DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024


class LineDecoder:
    """Feed bytes as they arrive; get back whole messages.

    Each item returned is a decoded JSON value or an ``MCPError`` (-32700 for
    bad JSON or nesting deeper than ``codec.MAX_NESTING_DEPTH``, -32600 for a
    line over ``max_line_bytes``) to report to the peer.
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._skipping = False  # inside an oversized line: drop bytes up to its newline

    def feed(self, data: bytes) -> list[Any]:
        items: list[Any] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            elif self._buffer:
                self._buffer += data[start:end]
                line = bytes(self._buffer)
                self._buffer.clear()
                self._emit(line, items)
            else:
                self._emit(data[start:end], items)
            start = end + 1
        if start < len(data) and not self._skipping:
            self._buffer += data[start:]
            if len(self._buffer) > self.max_line_bytes:
                self._buffer.clear()
                self._skipping = True
                items.append(self._too_long())
        return items

    def end(self) -> list[Any]:
        """The stream ended: a last line without its newline still counts."""
        items: list[Any] = []
        if self._buffer and not self._skipping:
            self._emit(bytes(self._buffer), items)
        self._buffer.clear()
        self._skipping = False
        return items

    def _emit(self, line: bytes, items: list[Any]) -> None:
        if len(line) > self.max_line_bytes:
            items.append(self._too_long())
            return
        if not line.strip():
            return
        try:
            items.append(decode_json(line))
        except MCPError as exc:
            items.append(exc)

    def _too_long(self) -> MCPError:
        return InvalidRequest(f"message larger than the limit of {self.max_line_bytes} bytes; it was skipped")


def encode_line(message: Any) -> bytes:
    """One message as a line; see ``codec.encode_message`` for one that can't be encoded."""
    data = encode_message(message)
    return data + b"\n" if data else data


def encode_lines(messages: Iterable[Any]) -> bytes:
    """Several messages as one write: one syscall for a burst of answers. A message that
    can't be encoded costs only itself (``codec.encode_messages``)."""
    return encode_messages(messages)
