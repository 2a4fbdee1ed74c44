"""``Client.set_logging_level`` against a server that did not declare ``logging`` (issue #17).

Such a server sends no log messages and can only refuse ``logging/setLevel`` (2025-11-25
``server/utilities/logging.mdx``: servers that emit log notifications "MUST declare the
``logging`` capability"). The client says so at once, in words, and sends nothing; the tap on
the server's end shows what crossed. The control case (a server that declares it) shows the
tap would see the request. The official SDK's server, which declares no ``logging``, is checked
the same way in ``tests/legacy_sse/test_ours_vs_old_servers.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from backchannel import Server
from backchannel.testing import Tap, connected
from backchannel.types.errors import LocalProtocolError


class Silent(Server):
    """A server that offers no logging (ours always does, so this one leaves it out)."""

    def capabilities(self) -> dict[str, Any]:
        declared = super().capabilities()
        declared.pop("logging", None)
        return declared


def _attempt(server: Server, era: str) -> tuple[BaseException | None, Tap]:
    async def body() -> tuple[BaseException | None, Tap]:
        tap = Tap()
        async with asyncio.timeout(30), connected(server, era, wrap_server=tap.around) as client:  # type: ignore[arg-type]
            try:
                await client.set_logging_level("debug")
            except LocalProtocolError as exc:
                return exc, tap
            return None, tap

    return asyncio.run(body())


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_server_without_logging_is_not_asked(era: str) -> None:
    refused, tap = _attempt(Silent("quiet"), era)
    assert isinstance(refused, LocalProtocolError)
    assert str(refused) == "quiet declares no logging capability: it sends no logs"
    assert tap.requests_received("logging/setLevel") == []


def test_a_server_with_logging_is_asked() -> None:
    refused, tap = _attempt(Server("chatty"), "handshake")
    assert refused is None
    assert [m["params"] for m in tap.requests_received("logging/setLevel")] == [{"level": "debug"}]
