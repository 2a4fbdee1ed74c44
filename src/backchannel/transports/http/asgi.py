"""The little of ASGI the MCP endpoint needs, with no web framework underneath.

Keeping the app framework-free makes it mountable anywhere an ASGI app is
(Starlette, FastAPI, plain uvicorn) and keeps a stdio server free of it all.
"""

from __future__ import annotations

__all__ = ["Receive", "Scope", "Send", "header_map", "read_body", "send_bytes"]

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def header_map(scope: Scope) -> dict[str, str]:
    """Request headers with lowercase names; repeated headers joined with ", " (RFC 9110)."""
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None as soon as it grows past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _encode_headers(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


async def send_start(send: Send, status: int, headers: Mapping[str, str]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": _encode_headers(headers)})


async def send_bytes(send: Send, status: int, body: bytes, headers: Mapping[str, str]) -> None:
    """A complete response in one go."""
    await send_start(send, status, {**headers, "content-length": str(len(body))})
    await send({"type": "http.response.body", "body": body})
