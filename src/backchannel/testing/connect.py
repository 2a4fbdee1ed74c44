"""``connected``: a real ``Client`` talking to your ``Server``, in one line."""

from __future__ import annotations

__all__ = ["connected"]

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from ..client import Client
from .links import TransportKind, Wrap, open_link

if TYPE_CHECKING:
    from ..server import Server
    from ..types.versions import EraSpelling


@contextlib.asynccontextmanager
async def connected(
    server: Server,
    era: EraSpelling = "auto",
    transport: TransportKind = "memory",
    *,
    wrap_server: Wrap | None = None,
    wrap_client: Wrap | None = None,
    http_options: dict[str, Any] | None = None,
    **client_options: Any,
) -> AsyncIterator[Client]:
    """A ``Client`` connected to ``server`` (handshake done), closed again on exit.

    ``era`` is the client's choice: ``"handshake"`` (``initialize``), ``"stateless"`` (the
    stateless era: ``server/discover`` and a ``_meta`` envelope per request) or ``"auto"``
    (probe, fall back); ``"legacy"``/``"modern"`` are the old spellings of the first two, still
    accepted. ``client.era`` says which one was agreed. ``transport`` is
    ``"memory"``, ``"stdio"``, ``"http"`` or ``"asgi"`` (see ``open_link``). The server runs
    in this event loop, so the test can reach its objects and its tools' state directly.
    ``client_options`` go to ``Client`` (``elicitation=``, ``roots=``, ``sampling=``...);
    ``http_options`` to ``server.http_app``. To see the wire, wrap an end in a ``Tap``::

        tap = Tap()
        async with connected(server, "handshake", wrap_server=tap.around) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
        assert tap.tool_calls_received("add")
    """
    async with open_link(
        server, transport, wrap_server=wrap_server, wrap_client=wrap_client, http_options=http_options
    ) as link:
        client_options.setdefault("name", "tester")
        async with Client(link.transport, era=era, **client_options) as client:
            yield client
