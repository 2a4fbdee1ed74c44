"""A testing kit, for the project's own tests and for yours.

Test your server the way a client sees it, with no sockets and no sleeps::

    from backchannel import Server
    from backchannel.testing import connected, run

    server = Server("demo")

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    def test_add() -> None:
        async def main() -> None:
            async with connected(server, era="stateless") as client:
                result = await client.call_tool("add", {"a": 2, "b": 3})
                assert result.content[0].text == "5"

        run(main)

What is here:

- ``connected(server, era, transport)``: a ``Client`` wired to your ``Server`` in this
  process, over ``"memory"``, ``"stdio"`` (OS pipes), ``"http"`` (uvicorn on a free
  loopback port) or ``"asgi"`` (``httpx2.ASGITransport``), in the ``"handshake"``,
  ``"stateless"`` or ``"auto"`` era. ``open_link`` gives the raw client-side transport.
- ``Tap``: wraps either end and keeps what crossed the wire, to assert on it.
- ``FakeClock``: a clock you ``advance``; give it to whatever takes ``clock=`` and let
  TTLs and idle timeouts pass without sleeping.
- ``run(main, timeout)``: run an async test body from a plain test, with a hard bound;
  ``within(condition)`` waits for plain state with a bound.
- ``check_transport(maker)``: the battery every ``Transport`` must pass, after trio's
  ``check_one_way_stream``; run it on your own transport.
- ``serve_on_loopback(app)``: any ASGI app under uvicorn on 127.0.0.1, in this loop.
- ``running_process(argv, port=...)``: a server script in its own process, waited for
  until its port accepts connections and stopped cleanly; ``free_port()``,
  ``wait_for_port``, ``port_accepts`` and ``stop_process`` are its parts.
"""

from __future__ import annotations

__all__ = [
    "KINDS",
    "LOOPBACK",
    "TRANSPORT_CHECKS",
    "FakeClock",
    "Link",
    "Tap",
    "TransportKind",
    "battery_server",
    "check_transport",
    "connected",
    "free_port",
    "open_link",
    "port_accepts",
    "run",
    "running_process",
    "serve_on_loopback",
    "start_transport",
    "stop_process",
    "wait_for_port",
    "within",
]

from .battery import TRANSPORT_CHECKS, battery_server, check_transport
from .clock import FakeClock
from .connect import connected
from .links import KINDS, Link, TransportKind, open_link, serve_on_loopback, start_transport
from .processes import LOOPBACK, free_port, port_accepts, running_process, stop_process, wait_for_port
from .running import run, within
from .tap import Tap
