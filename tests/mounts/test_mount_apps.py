"""An MCP App behind a prefixed mount: the tool's ``_meta.ui.resourceUri`` names the app as the
mounting server lists it, so a host reads the app through the mount (issue #31 with #30)."""

from __future__ import annotations

import asyncio

import pytest

from backchannel import Server
from backchannel.testing import connected

HTML = "<!doctype html><html><head><title>clock</title></head><body>now</body></html>"


def _gateway() -> Server:
    inner = Server("clocks")
    clock = inner.app("ui://clock/view.html", HTML, title="Clock")

    @inner.tool(app=clock)
    def now() -> str:
        """The time."""
        return "12:00"

    gateway = Server("gateway")
    gateway.mount("ev", inner)
    return gateway


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_mounted_tools_app_is_named_and_read_through_the_mount(era: str) -> None:
    async def body() -> None:
        async with connected(_gateway(), era) as client:
            (tool,) = [t for t in await client.list_tools() if t.name == "ev_now"]
            meta = tool.meta or {}
            uri = meta["ui"]["resourceUri"]
            assert uri == "ev+ui://clock/view.html"
            assert meta.get("ui/resourceUri", uri) == uri
            read = await client.read_resource(uri)
            assert read.contents[0].text == HTML
            assert read.contents[0].mime_type == "text/html;profile=mcp-app"

    asyncio.run(asyncio.wait_for(body(), 30))
