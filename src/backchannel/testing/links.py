"""The client's end of a wire to a ``Server``, over each transport the kit knows.

``open_link(server, "memory" | "stdio" | "http" | "asgi")`` serves ``server`` in this
event loop and yields a ``Link``: the client-side ``Transport`` and a way to end
the server's side. ``connected`` puts a ``Client`` on it; ``check_transport`` drives it
raw. Write your own maker with the same shape to run the battery on your transport.
"""

from __future__ import annotations

__all__ = ["KINDS", "Link", "TransportKind", "open_link", "serve_on_loopback", "start_transport"]

import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..transports.base import Transport
from ..transports.memory import memory_pair
from ..transports.stdio import StdioServerTransport

if TYPE_CHECKING:
    from ..server import Server

TransportKind = Literal["memory", "stdio", "http", "asgi"]
KINDS: tuple[TransportKind, ...] = ("memory", "stdio", "http", "asgi")
Wrap = Callable[[Transport], Transport]


@dataclass(frozen=True, kw_only=True)
class Link:
    """The client-side ``transport`` to a server, not yet started (``Client`` starts it;
    a raw user calls ``start_transport``); ``await stop_server()`` ends the server's side
    (the client's end then sees the peer go), safe to call twice."""

    transport: Transport
    stop_server: Callable[[], Awaitable[None]]


@contextlib.asynccontextmanager
async def open_link(
    server: Server,
    transport: TransportKind = "memory",
    *,
    wrap_server: Wrap | None = None,
    wrap_client: Wrap | None = None,
    http_options: dict[str, Any] | None = None,
) -> AsyncIterator[Link]:
    """Serve ``server`` over ``transport`` in this event loop; yield the client's end.

    - ``"memory"``: ``memory_pair()`` (messages still go through JSON).
    - ``"stdio"``: two OS pipes carrying NDJSON, the server on a ``StdioServerTransport``
      exactly as ``server.run()`` serves stdin/stdout, but in this process, so the test
      holds the same ``Server`` object. To test a server *script*, use
      ``Client.stdio(sys.executable, ["server.py"])`` instead.
    - ``"http"``: ``server.http_app(**http_options)`` under uvicorn on a free port of
      127.0.0.1, read by ``HttpClientTransport``: live streams, real sockets.
    - ``"asgi"``: the same app reached in process through ``httpx2.ASGITransport``: no
      socket, but each response arrives only once the app has finished it.

    ``wrap_server`` / ``wrap_client`` wrap the server's / client's end (a ``Tap``, a fault
    injector); the server's end exists only for memory and stdio.
    """
    if wrap_server is not None and transport not in ("memory", "stdio"):
        raise ValueError(f"over {transport!r} the server's end lives inside the HTTP app: it cannot be wrapped")
    wrap_client = wrap_client or _same
    wrap_server = wrap_server or _same
    if transport == "memory":
        client_end, server_end = memory_pair()
        async with _served(server, wrap_server(server_end)) as stop:
            link = Link(transport=wrap_client(client_end), stop_server=stop)
            try:
                yield link
            finally:
                await link.transport.close()  # first: the server then ends on its own
    elif transport == "stdio":
        async with _stdio_pair() as (client_pipe, server_pipe), _served(server, wrap_server(server_pipe)) as stop:
            link = Link(transport=wrap_client(client_pipe), stop_server=stop)
            try:
                yield link
            finally:
                await link.transport.close()
    elif transport in ("http", "asgi"):
        async with _http_link(server, transport, wrap_client, http_options or {}) as link:
            yield link
    else:
        raise ValueError(f"unknown transport {transport!r}: one of {', '.join(KINDS)}")


def _same(transport: Transport) -> Transport:
    return transport


@contextlib.asynccontextmanager
async def _served(server: Server, server_end: Transport) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """``server.serve(server_end)`` in a task; yields the function that ends it."""

    async def serve() -> None:
        try:
            await server.serve(server_end)
        finally:
            await server_end.close()  # as ``run_stdio`` does: the client's end then sees the end too

    serving = asyncio.get_running_loop().create_task(serve())

    async def stop(grace: float = 0.0) -> None:
        await server_end.close()
        # A stdio server stops reading only at end of input: past the grace, it is cut off,
        # as a server process that dies would be.
        await asyncio.wait({serving}, timeout=grace)
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving

    try:
        yield stop
    finally:
        await stop(grace=5.0)  # the client has closed: let the server finish on its own


@contextlib.asynccontextmanager
async def _stdio_pair() -> AsyncIterator[tuple[StdioServerTransport, StdioServerTransport]]:
    """(client end, server end) of NDJSON over two OS pipes. The client's end is a
    ``StdioServerTransport`` too: it is simply NDJSON over a given read and write pipe."""
    to_server_r, to_server_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    files = [
        os.fdopen(to_server_r, "rb", buffering=0),
        os.fdopen(to_server_w, "wb", buffering=0),
        os.fdopen(to_client_r, "rb", buffering=0),
        os.fdopen(to_client_w, "wb", buffering=0),
    ]
    server_end = StdioServerTransport(files[0], files[3])
    client_end = StdioServerTransport(files[2], files[1])
    try:
        await server_end.start()  # the client's end is started by its user, as any transport
        yield client_end, server_end
    finally:
        await client_end.close()
        await server_end.close()
        for file in files:
            # The event loop's pipe transports close these same file objects when they end;
            # a second close of a file object is a no-op, and catches one never started.
            with contextlib.suppress(OSError):
                file.close()


@contextlib.asynccontextmanager
async def _http_link(
    server: Server, kind: TransportKind, wrap_client: Wrap, http_options: dict[str, Any]
) -> AsyncIterator[Link]:
    import httpx2

    from ..transports.http.client import HttpClientTransport

    app = server.http_app(**http_options)
    path = http_options.get("path", "/mcp")
    async with contextlib.AsyncExitStack() as stack:
        if kind == "http":
            base = await stack.enter_async_context(serve_on_loopback(app))
            http = httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None))
        else:
            base = "http://127.0.0.1"
            http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=base)
        stack.push_async_callback(http.aclose)
        stack.push_async_callback(app.aclose)
        client_end = wrap_client(HttpClientTransport(base + path, httpx_client=http))
        stack.push_async_callback(client_end.close)
        stopped = False

        async def stop() -> None:
            nonlocal stopped
            if not stopped:
                stopped = True
                await stack.aclose()

        yield Link(transport=client_end, stop_server=stop)


async def start_transport(transport: Transport) -> None:
    """Start ``transport`` (stdio and HTTP need it; ``Client`` does this itself)."""
    await transport.start()


@contextlib.asynccontextmanager
async def serve_on_loopback(app: Any, *, lifespan: Literal["on", "off", "auto"] = "on") -> AsyncIterator[str]:
    """Serve the ASGI ``app`` with uvicorn on a free port of 127.0.0.1, in this event loop;
    yields its base URL (``http://127.0.0.1:PORT``). Shuts it down on exit."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan=lifespan, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign, assignment]  # the test's loop, not ours
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(5):
            while not server.started:  # uvicorn sets a flag, not an event
                if task.done():
                    task.result()
                    raise RuntimeError("uvicorn stopped before it started")
                await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, 5)
        sock.close()
