"""An ended session is let go at once, even while a tool waits on the person (issue #26, item 12).

A tool waits on ``ctx.elicit`` (10 minutes by default). The session ends under it: the client
sends DELETE, or it leaves and the idle timeout ends it. The tool's wait ends then (the handler
is cancelled), and nothing keeps the session's connection reachable: a weak reference to it
dies at the next collection. Before, the request clock's loop timer kept the handler's context
(which holds its ``Context``, and through it the connection) until the elicitation's deadline.
On the wire, against ``run_http``'s server.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

import httpx2 as httpx
from _http_harness import SSEReader, call, legacy_headers, on_our_server, open_session, run, wait_until

from backchannel import Context, Server
from backchannel.http_host.app import HttpApp

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


class Asker:
    """A server whose ``ask`` tool elicits (with the default 10-minute wait), and what became of it."""

    def __init__(self) -> None:
        self.server = Server("release", "1.0")
        self.asking = asyncio.Event()
        self.ended = asyncio.Event()

        @self.server.tool()
        async def ask(ctx: Context) -> str:
            self.asking.set()
            try:
                answer = await ctx.elicit("Your name?", NAME_SCHEMA)
            finally:
                self.ended.set()
            return f"hello {answer.data}"


async def ask_and_wait(client: httpx.AsyncClient, session_id: str) -> httpx.Response:
    """POST ``tools/call ask`` and read its stream up to the ``elicitation/create``."""
    response = await client.send(
        client.build_request("POST", "/mcp", json=call("ask"), headers=legacy_headers(session_id)), stream=True
    )
    message = await SSEReader(response).next_message()
    assert message is not None and message["method"] == "elicitation/create", message
    return response


def connection_of(app: HttpApp, session_id: str) -> weakref.ref[object]:
    return weakref.ref(app.sessions.sessions[session_id].connection)


async def collected(ref: weakref.ref[object], bound: float = 5.0) -> bool:
    """Whether ``ref``'s object is gone after a collection, within ``bound`` seconds (the ended
    session's tasks, the cancelled handler's included, finish in a few loop turns)."""
    try:
        async with asyncio.timeout(bound):
            while gc.collect() >= 0 and ref() is not None:  # noqa: ASYNC110 - nothing signals a collection
                await asyncio.sleep(0.05)
    except TimeoutError:
        return False
    return True


def test_a_session_deleted_while_its_tool_waits_on_elicit_is_released_at_once() -> None:
    async def body() -> None:
        asker = Asker()
        app = asker.server.http_app()
        async with on_our_server(app) as (port, _), httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            session_id = await open_session(client, capabilities={"elicitation": {}})
            connection = connection_of(app, session_id)
            response = await ask_and_wait(client, session_id)
            deleted = await client.delete("/mcp", headers=legacy_headers(session_id))
            assert deleted.status_code == 200
            async with asyncio.timeout(5):
                await asker.ended.wait()  # the tool's wait on the person ended with the session
            await response.aclose()
            await wait_until(lambda: not app.sessions.sessions)
            assert await collected(connection), "the ended session's connection is still reachable"

    run(body)


def test_a_session_ended_by_the_idle_timeout_while_its_tool_waits_on_elicit_is_released() -> None:
    async def body() -> None:
        asker = Asker()
        app = asker.server.http_app(session_idle_timeout=0.3)
        async with on_our_server(app) as (port, _):
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                session_id = await open_session(client, capabilities={"elicitation": {}})
                connection = connection_of(app, session_id)
                response = await ask_and_wait(client, session_id)
                await response.aclose()  # the client leaves and never resumes
            async with asyncio.timeout(5):
                await asker.ended.wait()
            await wait_until(lambda: not app.sessions.sessions)
            assert await collected(connection), "the expired session's connection is still reachable"

    run(body)
