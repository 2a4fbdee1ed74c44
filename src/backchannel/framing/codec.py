"""JSON in and out of every transport, with the two guarantees a peer can't break.

**In:** ``decode_json`` refuses nesting deeper than ``MAX_NESTING_DEPTH`` with a
-32700 ``ParseError``. Without a bound of our own, a 2 KB line of brackets ends
the process with a ``RecursionError`` from the decoder; with it, the limit is a
documented number, far below Python's recursion limit, so that every layer
above (validation, redaction, encoding an echo) can walk what it was given.

**Out:** ``encode_messages`` never lets one message that can't be encoded (a
pydantic model in a log line, a cycle, a nesting too deep) take the messages
queued beside it down with it. A result that can't be encoded becomes a -32603
error for the same id, so its caller still gets an answer; a notification or a
request that can't be encoded is dropped. Either way the failure is logged here.
"""

from __future__ import annotations

__all__ = [
    "MAX_NESTING_DEPTH",
    "decode_json",
    "encode_message",
    "encode_messages",
    "nesting_exceeds",
]

import logging
from collections.abc import Iterable
from typing import Any

import msgspec

from ..types.errors import InternalError, ParseError

logger = logging.getLogger("backchannel.framing")

#: Deepest JSON nesting accepted from a peer: arrays and objects, the message itself
#: counting as level 1. MCP's deepest real shapes (a tool's inputSchema inside a
#: tools/list result) stay well under 40; Python's recursion limit is 1,000.
MAX_NESTING_DEPTH = 128

_decode = msgspec.json.Decoder().decode
_encoder = msgspec.json.Encoder()
_encode = _encoder.encode


def decode_json(data: bytes | str, *, max_depth: int = MAX_NESTING_DEPTH) -> Any:
    """One JSON value from ``data``; raises ``ParseError`` (-32700) for bad JSON or
    nesting deeper than ``max_depth``."""
    try:
        value = _decode(data)
    except msgspec.DecodeError as exc:
        raise ParseError(f"Parse error: {exc}") from None
    except RecursionError:
        raise ParseError(_too_deep(max_depth)) from None
    # Counting brackets is a C loop; only a message with more openers than the limit
    # (a long list of objects, or a deep one) pays for the walk. A message that decoded closes
    # each opener it holds, so one of no more than twice the limit in length cannot nest past
    # it: most messages skip the count too.
    if (
        len(data) > 2 * max_depth
        and (data.count(b"[") + data.count(b"{") if isinstance(data, bytes) else data.count("[") + data.count("{"))
        > max_depth
        and nesting_exceeds(value, max_depth)
    ):
        raise ParseError(_too_deep(max_depth))
    return value


def _too_deep(max_depth: int) -> str:
    return f"Parse error: JSON nested deeper than the limit of {max_depth} levels"


def nesting_exceeds(value: Any, max_depth: int) -> bool:
    """Whether ``value`` (decoded JSON: dicts, lists, scalars) nests deeper than ``max_depth``."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return True
        for child in node.values() if type(node) is dict else node:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
    return False


def encode_message(message: Any) -> bytes:
    """One message as JSON; one that can't be encoded becomes its stand-in (see module doc)."""
    try:
        return _encode(message)
    except Exception as exc:  # TypeError, msgspec.EncodeError, RecursionError, OverflowError...
        return _encode_stand_in(message, exc)


def encode_messages(messages: Iterable[Any]) -> bytes:
    """Several messages as newline-terminated lines, in one buffer (one write for a burst)."""
    batch = messages if isinstance(messages, list) else list(messages)
    try:
        return _encoder.encode_lines(batch)
    except Exception:
        # Rare: find the culprit, so that only it is replaced or dropped.
        parts = []
        for message in batch:
            try:
                parts.append(_encode(message) + b"\n")
            except Exception as exc:
                stand_in = _encode_stand_in(message, exc)
                if stand_in:
                    parts.append(stand_in + b"\n")
        return b"".join(parts)


def _encode_stand_in(message: Any, exc: BaseException) -> bytes:
    """What goes out instead of ``message``: an error answer for the same id, or nothing."""
    is_dict = isinstance(message, dict)
    method = message.get("method") if is_dict else None
    request_id = message.get("id") if is_dict else None
    if is_dict and method is None and ("result" in message or "error" in message) and _plain_id(request_id):
        logger.error(
            "the answer to request %r could not be encoded as JSON (%s: %s); sending -32603 instead",
            request_id,
            type(exc).__name__,
            exc,
        )
        error = InternalError(f"Internal error: the answer could not be encoded as JSON ({type(exc).__name__})")
        return _encode({"jsonrpc": "2.0", "id": request_id, "error": error.to_error()})
    what = f"{method!r}" if isinstance(method, str) else "a message"
    logger.error("dropping %s that could not be encoded as JSON (%s: %s)", what, type(exc).__name__, exc)
    return b""


def _plain_id(value: object) -> bool:
    return value is None or type(value) is str or type(value) is int
