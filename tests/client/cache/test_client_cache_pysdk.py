"""Our client's cache against the official Python SDK's server (``pysdk_peer.py``, stateless era over stdio).

The SDK fills ``ttlMs`` 60000 and ``cacheScope`` public on its results (its ``cache_hints``), and
its reads say how many reads it has answered (``read #N``): the same text twice means the second
came from our cache. ``res://asks`` answers only after a multi round-trip (an
``InputRequiredResult``, then our retry with ``inputResponses`` and ``requestState``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from backchannel import Client
from backchannel.client.events import ResourceUpdated
from peers.paths import have_pysdk

pytestmark = pytest.mark.interop

if not have_pysdk():
    pytest.skip("the official Python SDK (mcp==2.3.0) is not installed", allow_module_level=True)

PEER = str(Path(__file__).with_name("pysdk_peer.py"))
TIMEOUT = 60


def _text(result: Any) -> str:
    text: str = result.contents[0].text
    return text


def test_an_mrtr_retry_result_is_never_cached_but_a_plain_read_is() -> None:
    """caching.mdx "Cache Key": results of a retry carrying inputResponses/requestState MUST NOT be cached."""
    asked: list[str] = []

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "ada"}}

    async def body() -> tuple[list[str], list[str]]:
        client = Client.stdio(
            sys.executable, [PEER], era="stateless", elicitation=elicitation, request_timeout=20, probe_timeout=20
        )
        async with asyncio.timeout(TIMEOUT), client:
            plain = [_text(await client.read_resource("res://plain")) for _ in range(2)]
            asks = [_text(await client.read_resource("res://asks")) for _ in range(2)]
        return plain, asks

    plain, asks = asyncio.run(body())
    assert plain == ["read #1", "read #1"]  # fresh for 60 s: the second never left the client
    # Each read of res://asks went round again: the person was asked twice, the server read twice.
    assert asks == ["read #2 for {'name': 'ada'}", "read #3 for {'name': 'ada'}"]
    assert asked == ["Who is reading?", "Who is reading?"]


def test_resources_updated_drops_the_cached_read_of_that_uri() -> None:
    """caching.mdx "Interaction with Notifications", heard on a subscriptions/listen stream."""

    async def body() -> list[str]:
        client = Client.stdio(sys.executable, [PEER], era="stateless", request_timeout=20, probe_timeout=20)
        async with asyncio.timeout(TIMEOUT), client:
            texts = [_text(await client.read_resource("res://plain"))]
            async with client.listen("res://plain") as events:
                texts.append(_text(await client.read_resource("res://plain")))
                await client.call_tool("touch", {"uri": "res://plain"})
                assert await anext(aiter(events)) == ResourceUpdated("res://plain")
                texts.append(_text(await client.read_resource("res://plain")))
                texts.append(_text(await client.read_resource("res://plain")))
        return texts

    assert asyncio.run(body()) == ["read #1", "read #1", "read #2", "read #2"]
