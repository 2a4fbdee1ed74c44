"""A handshake-era session whose client died mid-elicitation is freed (issue #12, item 7).

The client's POST stream carries the ``elicitation/create``; the client then vanishes (its
connection drops, it never resumes). Once nothing has arrived for the idle timeout, the
session ends: the handler is cancelled, the pending elicitation fails, the session id is
404 and nothing of the session is left in the server's tables. A client still connected
keeps its session for as long as the person takes.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2 as httpx
from _http_harness import (
    SSEReader,
    assert_jsonrpc_error,
    call,
    legacy_headers,
    live,
    open_session,
    request,
    run,
    wait_until,
)

from backchannel import Context, Server
from backchannel.http_host.app import HttpApp
from backchannel.http_host.sessions import HttpSession
from backchannel.types.errors import INVALID_REQUEST

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


class Asker:
    """A server whose ``ask`` tool elicits, and what became of that handler."""

    def __init__(self) -> None:
        self.server = Server("dead-client", "1.0")
        self.cancelled = asyncio.Event()
        self.finished = asyncio.Event()

        @self.server.tool()
        async def ask(ctx: Context) -> str:
            try:
                answer = await ctx.elicit("Your name?", NAME_SCHEMA)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
            finally:
                self.finished.set()
            return f"hello {answer.data}"


async def elicited(client: httpx.AsyncClient, session_id: str) -> tuple[httpx.Response, SSEReader]:
    """POST ``tools/call ask`` and read its stream up to the ``elicitation/create``."""
    response = await client.send(
        client.build_request("POST", "/mcp", json=call("ask"), headers=legacy_headers(session_id)), stream=True
    )
    reader = SSEReader(response)
    message = await reader.next_message()
    assert message is not None and message["method"] == "elicitation/create", message
    return response, reader


def assert_freed(app: HttpApp, session: HttpSession) -> None:
    """Nothing of ``session`` is left: not in the registry, no handler, no pending request, no stream."""
    assert session.session_id not in app.sessions.sessions
    connection = session.connection
    assert connection.closed.is_set()
    assert connection.active_handlers == 0 and connection.pending_requests == 0
    assert not session.streams and session.responses == 0


def test_a_session_whose_client_died_mid_elicitation_ends_after_the_idle_timeout() -> None:
    async def body() -> None:
        asker = Asker()
        app = asker.server.http_app(session_idle_timeout=0.3)
        async with live(app) as server:
            client = server.client()
            session_id = await open_session(client, capabilities={"elicitation": {}})
            session = app.sessions.sessions[session_id]
            response, _ = await elicited(client, session_id)
            assert session.responses == 1
            await response.aclose()  # the client dies: its connection drops, it never resumes
            await client.aclose()
            async with asyncio.timeout(5):
                await asker.cancelled.wait()  # the handler waiting for the person was cancelled
            await wait_until(lambda: session_id not in app.sessions.sessions)
            assert_freed(app, session)
            async with server.client() as later:
                again = await later.post("/mcp", json=request("ping", {}, 9), headers=legacy_headers(session_id))
                assert_jsonrpc_error(again, 404, INVALID_REQUEST)

    run(body)


def test_a_session_whose_client_is_still_connected_is_kept_however_long_the_person_takes() -> None:
    # The reaper is run by hand at a time far beyond the idle timeout (no waiting for it).
    async def body() -> None:
        asker = Asker()
        app = asker.server.http_app(session_idle_timeout=60)
        async with live(app) as server, server.client() as client:
            session_id = await open_session(client, capabilities={"elicitation": {}})
            session = app.sessions.sessions[session_id]
            response, _ = await elicited(client, session_id)
            later = time.monotonic() + 3600
            assert await app.sessions.end_idle(later) == 0  # the person may take an hour: the client is there
            assert session_id in app.sessions.sessions and not asker.finished.is_set()
            # The GET stream alone keeps the client there too, once the POST's response is gone.
            get: Any = await client.send(
                client.build_request("GET", "/mcp", headers=legacy_headers(session_id)), stream=True
            )
            assert get.status_code == 200
            await response.aclose()
            await wait_until(lambda: session.responses == 1)  # the POST stream's departure is noticed
            assert await app.sessions.end_idle(later) == 0
            await get.aclose()
            await wait_until(lambda: session.responses == 0)
            assert await app.sessions.end_idle(later) == 1  # now nobody is left to answer
            async with asyncio.timeout(5):
                await asker.cancelled.wait()
            assert_freed(app, session)

    run(body)
