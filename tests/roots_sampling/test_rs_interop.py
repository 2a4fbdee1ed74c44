"""Our client's roots and sampling against server-everything (TypeScript SDK v1) over stdio.

server-everything registers ``get-roots-list`` and ``trigger-sampling-request`` only for a
client that declares ``roots`` / ``sampling``. It asks for roots right after the handshake,
caches them per session and asks again on ``notifications/roots/list_changed`` (RT-02,
RT-18 seen from a real peer).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from backchannel.client import Client
from backchannel.types.content import TextContent
from peers.paths import EVERYTHING_STDIO_CMD, TESTS_DIR, have_npm_peers

pytestmark = pytest.mark.interop

if not have_npm_peers():
    pytest.skip("npm peers not installed (run tests/peers/install.sh)", allow_module_level=True)

TIMEOUT = 60


def text(result: Any) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def everything(**options: Any) -> Client:
    command, *args = EVERYTHING_STDIO_CMD
    return Client.stdio(command, args, cwd=TESTS_DIR, era="auto", request_timeout=20, **options)


def test_rt01_rt02_roots_list_and_list_changed_with_server_everything(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    asked: list[int] = []

    def provider() -> list[Any]:
        asked.append(1)
        return [{"uri": current[0].as_uri(), "name": "Workspace"}]

    current = [first]

    async def body() -> None:
        async with asyncio.timeout(TIMEOUT), everything(roots=provider) as client:
            assert client.era == "handshake"
            names = {tool.name for tool in await client.list_tools()}
            assert "get-roots-list" in names
            listed = text(await client.call_tool("get-roots-list"))
            assert first.as_uri() in listed and "Workspace" in listed
            before = len(asked)
            current[0] = second
            assert await client.set_roots(provider) is True
            for _ in range(200):  # the server re-fetches in the background
                if second.as_uri() in text(await client.call_tool("get-roots-list")):
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("server-everything never showed the new roots")
            assert len(asked) > before  # the server asked again after list_changed

    asyncio.run(body())


def test_sampling_with_server_everything() -> None:
    seen: list[dict[str, Any]] = []

    async def model(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "sampled by backchannel"},
            "model": "interop-model",
            "stopReason": "endTurn",
        }

    async def body() -> None:
        async with asyncio.timeout(TIMEOUT), everything(sampling=model) as client:
            names = {tool.name for tool in await client.list_tools()}
            assert "trigger-sampling-request" in names
            result = await client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 7})
            assert "sampled by backchannel" in text(result) and "interop-model" in text(result)
            [params] = seen
            assert params["maxTokens"] == 7
            assert params["systemPrompt"] == "You are a helpful test server."
            assert params["messages"][0]["role"] == "user"
            assert "Say hi" in params["messages"][0]["content"]["text"]

    asyncio.run(body())


def test_without_capabilities_the_tools_are_absent() -> None:
    async def body() -> None:
        async with asyncio.timeout(TIMEOUT), everything() as client:
            names = {tool.name for tool in await client.list_tools()}
            assert not names & {"get-roots-list", "trigger-sampling-request"}

    asyncio.run(body())
