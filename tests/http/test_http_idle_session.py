"""What an idle handshake-era HTTP session keeps (issue #19: memory per idle session).

A server holds thousands of sessions that opened (``initialize`` + ``initialized``) and
wait. These tests walk the objects such a session holds, over the wire through the ASGI
app, and check that none of them is a structure made for work the session is not doing:
no deque (an ``asyncio.Event``'s waiters, the finished-streams queue), no set, no dict
still holding the table it grew for a request that is over. And that clients which sent
equal ``clientInfo`` and ``capabilities`` share one copy of them.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import sys
import types
from typing import Any

import pytest
from _http_harness import asgi_client, call, legacy_headers, make_server, messages_of, open_session, run

from backchannel.http_host.app import HttpApp
from backchannel.http_host.sessions import HttpSession
from backchannel.protocol import handshake
from backchannel.transports.base import LazyEvent

CAPABILITIES = {"elicitation": {"form": {}}, "roots": {"listChanged": True}}
EMPTY_DICT = sys.getsizeof({})


def _reachable(root: object, known: set[int] | None = None) -> list[object]:
    """The objects ``root`` holds (itself included), transitively, skipping those in ``known``
    (by id) and never entering modules, classes or functions (shared by every session)."""
    seen: set[int] = set()
    found: list[object] = []
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or (known is not None and id(item) in known):
            continue
        seen.add(id(item))
        if item is not root and isinstance(item, types.ModuleType | type | types.FunctionType):
            continue
        found.append(item)
        stack.extend(gc.get_referents(item))
    return found


def _session(app: HttpApp, session_id: str) -> HttpSession:
    return app.sessions.sessions[session_id]


def _own_objects(app: HttpApp, open_one: Any) -> tuple[list[object], HttpSession, dict[str, Any]]:
    """What one more session holds that the app did not hold before it opened, the session,
    and what it said of itself while it was live (the app ends its sessions afterwards)."""

    async def body() -> tuple[list[object], HttpSession, dict[str, Any]]:
        async with asgi_client(app) as client:
            await open_session(client, capabilities=CAPABILITIES)  # the first one warms what all share
            before = _reachable(app)  # kept alive: their ids cannot be reused meanwhile
            known = {id(item) for item in before}
            session = _session(app, await open_one(client))
            gc.collect()
            live = {
                "closed": session.connection.closed.is_set(),
                "ended": session.transport.ended,
                "streams": len(session.streams),
            }
            return _reachable(session, known), session, live

    return run(body)


def _grown_empty_dicts(objects: list[object]) -> list[object]:
    return [item for item in objects if type(item) is dict and not item and sys.getsizeof(item) > EMPTY_DICT]


def test_an_idle_session_keeps_no_deque_no_set_and_no_grown_empty_dict() -> None:
    async def open_one(client: Any) -> str:
        return await open_session(client, capabilities=CAPABILITIES)

    own, session, live = _own_objects(make_server().http_app(), open_one)
    kinds = collections.Counter(type(item).__name__ for item in own)
    assert any(item is session.connection for item in own)  # the walk did reach the session's parts
    assert kinds["deque"] == 0, kinds
    assert kinds["set"] == 0, kinds
    assert _grown_empty_dicts(own) == []
    assert live == {"closed": False, "ended": False, "streams": 0}


def test_a_session_idle_again_after_a_streamed_call_gives_back_its_emptied_records() -> None:
    async def open_one(client: Any) -> str:
        session_id = await open_session(client, capabilities=CAPABILITIES)
        # Progress and log lines before the answer: an SSE stream, a feed, a handler task.
        response = await client.post("/mcp", json=call("chatty", request_id=7), headers=legacy_headers(session_id))
        assert response.headers["content-type"].startswith("text/event-stream")
        assert messages_of(response.content)[-1]["result"]["content"][0]["text"] == "chatty done"
        return session_id

    own, _, live = _own_objects(make_server().http_app(), open_one)
    assert _grown_empty_dicts(own) == []
    assert live["streams"] == 1  # the finished stream stays resumable for a while


def test_sessions_whose_clients_sent_equal_info_and_capabilities_share_one_copy() -> None:
    async def body() -> tuple[HttpSession, HttpSession, HttpSession]:
        app = make_server().http_app()
        async with asgi_client(app) as client:
            first = await open_session(client, capabilities={"roots": {"listChanged": True}, "x": {"n": 1}})
            second = await open_session(client, capabilities={"roots": {"listChanged": True}, "x": {"n": 1}})
            # Equal in Python (1 == True == 1.0), not in JSON: not shared.
            other = await open_session(client, capabilities={"roots": {"listChanged": True}, "x": {"n": True}})
            return _session(app, first), _session(app, second), _session(app, other)

    first, second, other = run(body)
    assert second.protocol.peer_capabilities is first.protocol.peer_capabilities
    assert second.protocol.peer_info is first.protocol.peer_info
    assert other.protocol.peer_capabilities is not first.protocol.peer_capabilities
    assert other.protocol.peer_capabilities == {"roots": {"listChanged": True}, "x": {"n": True}}
    assert type(other.protocol.peer_capabilities["x"]["n"]) is bool


def test_shared_copies_are_few_and_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handshake, "_SHARED", {})
    monkeypatch.setattr(handshake, "_SHARED_MAX", 2)
    large = {"name": "x" * 3000}
    assert handshake.shared_copy(large) is large
    assert handshake.shared_copy(dict(large)) is not large  # too large to be kept
    kept = [handshake.shared_copy({"n": n}) for n in range(3)]
    assert handshake.shared_copy({"n": 0}) is kept[0]
    assert handshake.shared_copy({"n": 2}) is not kept[2]  # past the bound: not kept
    assert len(handshake._SHARED) == 2


def test_a_lazy_event_is_an_asyncio_event() -> None:
    async def body() -> None:
        event = LazyEvent()
        assert isinstance(event, asyncio.Event) and not event.is_set()
        waiters = [asyncio.ensure_future(event.wait()) for _ in range(3)]
        await asyncio.sleep(0)
        assert "waiters:3" in repr(event)
        event.set()
        assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [True, True, True]
        assert await event.wait() is True
        event.clear()
        late = asyncio.ensure_future(event.wait())
        await asyncio.sleep(0)
        assert not late.done()
        event.set()
        assert await asyncio.wait_for(late, 1) is True

    run(body)
