"""``client.listen`` and ``client.log_messages`` against other implementations' servers.

- The official Python SDK (``mcp==2.3.0``, ``tests/client/cache/pysdk_peer.py``) over stdio, in both
  eras: ``subscriptions/listen`` in the stateless era, ``resources/subscribe`` and the session's
  notifications in the handshake era. Its tools ``touch`` and ``grow`` make the changes.
- server-everything (the TypeScript SDK's reference server, handshake era only) over stdio and
  Streamable HTTP: ``toggle-subscriber-updates`` sends ``notifications/resources/updated`` for the
  session's subscriptions at once and every 5 s; ``toggle-simulated-logging`` sends a log message
  at once and every 5 s.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.client.events import ListChanged, LogMessage, ResourceUpdated
from backchannel.testing import free_port, running_process
from peers.paths import EVERYTHING_STDIO_CMD, TESTS_DIR, everything_http_cmd, have_npm_peers, have_pysdk

pytestmark = pytest.mark.interop

PYSDK_PEER = str(Path(__file__).resolve().parents[1] / "cache" / "pysdk_peer.py")
EVERYTHING_URI = "demo://resource/dynamic/text/1"
TIMEOUT = 60
WAIT = 15.0
OPTIONS: dict[str, Any] = {"request_timeout": 30, "probe_timeout": 20}


async def _next(events: Any) -> Any:
    return await asyncio.wait_for(anext(aiter(events)), WAIT)


@pytest.mark.skipif(not have_pysdk(), reason="the official Python SDK (mcp==2.3.0) is not installed")
@pytest.mark.parametrize("era", ["stateless", "handshake"])
def test_listen_against_the_official_python_sdk(era: str) -> None:
    async def body() -> tuple[Any, list[Any]]:
        client = Client.stdio(sys.executable, [PYSDK_PEER], era=era, **OPTIONS)
        async with asyncio.timeout(TIMEOUT), client, client.listen("res://plain", tools=True) as events:
            await client.call_tool("touch", {"uri": "res://elsewhere"})  # not watched: never heard
            await client.call_tool("touch", {"uri": "res://plain"})
            seen = [await _next(events)]
            await client.call_tool("grow")
            seen.append(await _next(events))
            return events.acknowledged, seen

    acknowledged, seen = asyncio.run(body())
    assert seen == [ResourceUpdated("res://plain"), ListChanged("tools")]
    assert acknowledged is not None
    assert acknowledged["resourceSubscriptions"] == ["res://plain"]
    # The SDK honours toolsListChanged on a listen stream; its handshake era declares listChanged false.
    assert acknowledged.get("toolsListChanged") is (True if era == "stateless" else None)


@pytest.fixture(scope="module", params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """server-everything's endpoint over HTTP (started here); None over stdio (the client spawns it)."""
    if not have_npm_peers():
        pytest.skip("npm peers not installed (run tests/peers/install.sh)")
    if request.param == "stdio":
        yield None
        return
    port = free_port()
    with running_process(everything_http_cmd(port), port=port, cwd=TESTS_DIR, start_timeout=30):
        yield f"http://127.0.0.1:{port}/mcp"


def _everything_client(url: str | None) -> Client:
    if url is None:
        command, *args = EVERYTHING_STDIO_CMD
        return Client.stdio(command, args, cwd=TESTS_DIR, era="auto", **OPTIONS)
    return Client.http(url, era="auto", **OPTIONS)


def test_listen_and_log_messages_against_server_everything(everything: str | None) -> None:
    async def body() -> tuple[Any, Any, Any]:
        client = _everything_client(everything)
        async with asyncio.timeout(TIMEOUT), client:
            async with client.listen(EVERYTHING_URI) as events:
                await client.call_tool("toggle-subscriber-updates")  # sends one update at once
                updated = await _next(events)
                await client.call_tool("toggle-subscriber-updates")  # and off again
            await client.set_logging_level("debug")
            async with client.log_messages() as logs:
                await client.call_tool("toggle-simulated-logging")  # one message at once
                logged = await _next(logs)
                await client.call_tool("toggle-simulated-logging")
            return client.era, updated, logged

    era, updated, logged = asyncio.run(body())
    assert era == "handshake"
    assert updated == ResourceUpdated(EVERYTHING_URI)
    assert isinstance(logged, LogMessage)
    assert "message" in str(logged.data).lower()
