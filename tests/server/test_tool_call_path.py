"""One ``tools/call`` path (issue #28, item 3): a plain synchronous tool answered in the read
loop's turn and any other tool answered in a task give the same answers on the wire, each
failure made a result (or an error) in one place; and the routes take the request's
``Context`` as an argument, not from a context variable.

tools.mdx "Error Handling": an unknown tool is a protocol error (-32602); a tool's own failure
and arguments that do not fit are tool execution errors (``isError: true``, SEP-1303).
"""

from __future__ import annotations

from typing import Any

import pytest
from _server_harness import ERAS, connected, run

from backchannel import Context, RequestError, Server, ToolError
from backchannel.protocol.events import RequestReceived
from backchannel.server.routes import ROUTES
from backchannel.transports.memory import memory_pair


def failing_server() -> Server:
    """The same four tools, each served plainly (inline) and in a task (async, or taking the context)."""
    server = Server("paths")

    def refuse(count: int) -> str:
        raise ToolError(f"no {count} for you")

    def crash(count: int) -> str:
        raise RuntimeError("password=hunter2")

    def current(count: int) -> str:
        context = Context.current()
        return "none" if context is None else f"{context.request_id} {count}"

    for name, body in (("refuse", refuse), ("crash", crash), ("current", current)):

        def plain(count: int, body: Any = body) -> str:
            return str(body(count))

        async def waits(count: int, body: Any = body) -> str:
            return str(body(count))

        def with_context(count: int, ctx: Context, body: Any = body) -> str:
            return str(body(count))

        server.add_tool(plain, name=f"{name}_plain")
        server.add_tool(waits, name=f"{name}_async")
        server.add_tool(with_context, name=f"{name}_context")

    @server.prompt()
    def broken_prompt() -> str:
        raise ToolError("a prompt's reason")

    return server


PATHS = ("plain", "async", "context")


async def outcome(client: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """What the wire carried back: the result, or the error's code and message."""
    params = {"name": name, "arguments": arguments}
    try:
        return {"result": await client.connection.request("tools/call", params)}
    except RequestError as error:
        return {"code": error.code, "message": error.message}


@pytest.mark.parametrize("era", ERAS)
def test_every_path_answers_a_call_alike(era: str) -> None:
    server = failing_server()

    async def body() -> dict[tuple[str, str], dict[str, Any]]:
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        async with connected(server, era) as (client, _):
            for path in PATHS:
                seen["refuse", path] = await outcome(client, f"refuse_{path}", {"count": 3})
                seen["bad arguments", path] = await outcome(client, f"refuse_{path}", {"count": "three"})
                seen["crash", path] = await outcome(client, f"crash_{path}", {"count": 3})
                seen["current", path] = await outcome(client, f"current_{path}", {"count": 3})
            seen["unknown", "-"] = await outcome(client, "nope", {})
            seen["not a name", "-"] = await outcome(client, 7, {})
            try:
                await client.connection.request("prompts/get", {"name": "broken_prompt"})
            except RequestError as error:
                seen["prompt", "-"] = {"code": error.code, "message": error.message}
        return seen

    seen = run(body)
    for path in PATHS:
        refused = seen["refuse", path]["result"]
        assert refused["content"] == [{"type": "text", "text": "no 3 for you"}] and refused["isError"] is True, path
        refused = seen["bad arguments", path]["result"]
        assert refused["isError"] is True and "count" in refused["content"][0]["text"], path
        assert seen["crash", path]["code"] == -32603 and "hunter2" not in seen["crash", path]["message"], path
        text = seen["current", path]["result"]["content"][0]["text"]
        assert text.endswith(" 3") and text != "none", path  # the request's context is current in the tool
    refusals = {str(seen["bad arguments", path]).replace(f"refuse_{path}", "refuse") for path in PATHS}
    assert len(refusals) == 1, refusals
    assert seen["unknown", "-"] == {"code": -32602, "message": "Unknown tool: nope"}
    assert seen["not a name", "-"] == {"code": -32602, "message": "tools/call: params.name must be a string"}
    # A ToolError outside a tool call is no result: -32603 with its message, written for the peer.
    assert seen["prompt", "-"] == {"code": -32603, "message": "a prompt's reason"}


def test_a_route_takes_the_context_as_an_argument() -> None:
    """A route is called with the request's ``Context``; nothing needs to be current for it."""
    server = Server("direct")

    @server.tool()
    async def who(ctx: Context) -> str:
        return f"request {ctx.request_id} of {ctx.client_info.get('name')}"

    @server.prompt()
    async def greet(ctx: Context) -> str:
        return f"hello from request {ctx.request_id}"

    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        near, _far = memory_pair()
        connection = server.connect(near)
        answers = []
        for rid, method, params in ((1, "tools/call", {"name": "who"}), (2, "prompts/get", {"name": "greet"})):
            request = RequestReceived(
                id=rid,
                method=method,
                params=params,
                era="handshake",
                version="2025-11-25",
                client_info={"name": "direct-client"},
            )
            assert Context.current() is None
            answers.append(await ROUTES[method](server, request, Context(server, connection, request)))
        return answers[0], answers[1]

    called, prompted = run(body)
    assert called["content"] == [{"type": "text", "text": "request 1 of direct-client"}]
    assert prompted["messages"][0]["content"]["text"] == "hello from request 2"
