"""The little of ASGI the MCP endpoint needs, with no web framework underneath.

Keeping the app framework-free makes it mountable anywhere an ASGI app is
(Starlette, FastAPI, plain uvicorn) and keeps a stdio server free of it all.
"""

from __future__ import annotations

__all__ = ["GONE", "Receive", "Scope", "Send", "header_map", "next_or_gone", "read_body", "send_bytes", "watching"]

import asyncio
import contextlib
import enum
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Final, Literal, TypeVar

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
T = TypeVar("T")


class _Gone(enum.Enum):
    GONE = "gone"


#: What ``next_or_gone`` returns when the client left (or the wait timed out) first.
GONE: Final = _Gone.GONE


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


@contextlib.asynccontextmanager
async def watching(receive: Receive, *queues: asyncio.Queue[Any]) -> AsyncIterator[asyncio.Event]:
    """An event set when the client disconnects, for as long as the block runs.

    Each of ``queues`` also receives ``GONE`` then, so a reader blocked on it wakes
    up without racing two futures for every item it reads.
    """
    gone = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()
        for queue in queues:
            queue.put_nowait(GONE)

    watcher = asyncio.get_running_loop().create_task(watch())
    try:
        yield gone
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def next_or_gone(
    queue: asyncio.Queue[T], gone: asyncio.Event, timeout: float | None = None
) -> T | Literal[_Gone.GONE]:
    """The next item of ``queue`` (watched with ``watching``), or ``GONE`` if the client
    left or ``timeout`` passed first."""
    if gone.is_set():
        return GONE
    try:
        if timeout is None:
            item = await queue.get()
        else:
            async with asyncio.timeout(timeout):
                item = await queue.get()
    except TimeoutError:
        return GONE
    return GONE if item is GONE else item
