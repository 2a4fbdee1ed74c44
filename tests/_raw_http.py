"""A client on a raw TCP connection, for the tests that speak to an HTTP/1.1 server byte by byte
(header bombs, trickles, bad framing: ``tests/http``, ``tests/fuzz``).

Test modules anywhere under ``tests/`` import it as ``_raw_http`` (pytest's ``pythonpath``).
"""

from __future__ import annotations

__all__ = ["talk"]

import asyncio
import contextlib
from collections.abc import Awaitable, Callable


async def talk(
    port: int,
    write: Callable[[asyncio.StreamWriter], Awaitable[None]],
    *,
    read_timeout: float | None = 10.0,
    until_answer: bool = False,
) -> bytes:
    """Connect to 127.0.0.1:``port`` and run ``write(writer)`` while reading what the server
    sends, until it closes the connection; all it sent.

    An ``OSError`` while writing or reading (a reset, a broken pipe: the server went while the
    client still sent) ends that side quietly, and so does a read that waits ``read_timeout``
    seconds (None: no bound). ``until_answer``: stop writing once the server has answered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def writing() -> None:
        with contextlib.suppress(OSError):
            await write(writer)

    writes = asyncio.ensure_future(writing())
    received = bytearray()
    try:
        with contextlib.suppress(OSError):  # (TimeoutError is one)
            while part := await asyncio.wait_for(reader.read(65536), read_timeout):
                received += part
                if until_answer:
                    writes.cancel()
    finally:
        writes.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await writes
        writer.close()
    return bytes(received)
