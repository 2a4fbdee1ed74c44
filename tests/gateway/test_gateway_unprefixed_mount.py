"""``Server.mount("", server)``: a mount whose names and URIs are served unchanged (issue #30; the
gateway's conformance leg mounts the fixture server so, as the harness calls fixed names).

Over the wire, in both eras: a call, a read, a prompt and a completion reach the unprefixed mount
by the mount's own names; the mounting server's own names win, and so do a prefixed mount's, and
the unprefixed mount's items they hide are left out of the lists (a listed name always reaches
what it lists). At most one mount has the prefix "".
"""

from __future__ import annotations

import pytest

from backchannel import Server
from backchannel.testing import connected, run

ERAS = ("handshake", "stateless")


def _servers() -> Server:
    inner = Server("inner")

    @inner.tool()
    def echo(text: str) -> str:
        return f"inner:{text}"

    @inner.tool(name="ev_x")
    def shadowed_by_mount() -> str:
        return "inner ev_x"

    @inner.tool(name="mine")
    def shadowed_by_own() -> str:
        return "inner mine"

    @inner.resource("test://r")
    def note() -> str:
        return "inner r"

    @inner.resource("test://own")
    def shadowed_note() -> str:
        return "inner own"

    @inner.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    other = Server("other")

    @other.tool()
    def x() -> str:
        return "other x"

    gateway = Server("gateway")

    @gateway.tool()
    def mine() -> str:
        return "gateway mine"

    @gateway.resource("test://own")
    def own_note() -> str:
        return "gateway own"

    gateway.mount("", inner)
    gateway.mount("ev", other)
    return gateway


@pytest.mark.parametrize("era", ERAS)
def test_unprefixed_mount_serves_its_names_unchanged(era: str) -> None:
    async def body() -> None:
        async with connected(_servers(), era=era) as client:
            tools = sorted(tool.name for tool in await client.list_tools())
            assert tools == ["echo", "ev_x", "mine"]  # each once: the hidden ones are not listed
            texts = {}
            for name, arguments in (("echo", {"text": "hi"}), ("ev_x", {}), ("mine", {})):
                result = await client.call_tool(name, arguments)
                texts[name] = result.content[0].text  # type: ignore[union-attr]
            assert texts == {"echo": "inner:hi", "ev_x": "other x", "mine": "gateway mine"}
            uris = sorted(resource.uri for resource in await client.list_resources())
            assert uris == ["test://own", "test://r"]
            assert (await client.read_resource("test://r")).contents[0].text == "inner r"
            assert (await client.read_resource("test://own")).contents[0].text == "gateway own"
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            assert "Hello Ada" in str(prompt.messages[0].content)

    run(body)


def test_one_unprefixed_mount_at_most() -> None:
    gateway = Server("gateway")
    gateway.mount("", Server("first"))
    with pytest.raises(ValueError, match="already mounted at ''"):
        gateway.mount("", Server("second"))
    with pytest.raises(ValueError, match="not valid"):
        gateway.mount("a_b", Server("third"))
