"""Our server's deprecated HTTP+SSE endpoints (2024-11-05), read on the wire.

The backwards-compatibility guide (2025-11-25 ``basic/transports.mdx``) has a server that wants
old clients keep "both the SSE and POST endpoints of the old transport" beside the new
endpoint. ``http_app(legacy_sse=True)`` does; without it nothing answers at ``/sse``. Each test
serves the app with uvicorn on 127.0.0.1 and speaks the old transport with a raw client
(``_old_wire.py``): ``GET /sse``, the ``endpoint`` event, one POST per message answered 202,
everything the server says as ``message`` events.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx2
import pytest
from _old_wire import INITIALIZED, initialize, old_wire, run
from old_friends_server import build

from backchannel.http_host.app import HttpApp
from backchannel.http_host.authenticator import Principal
from backchannel.testing import serve_on_loopback


def test_off_by_default() -> None:
    async def body() -> None:
        async with serve_on_loopback(build().http_app()) as base, httpx2.AsyncClient() as http:
            assert (await http.get(f"{base}/sse", headers={"accept": "text/event-stream"})).status_code == 404
            assert (await http.post(f"{base}/messages/?session_id=x", json=INITIALIZED)).status_code == 404

    run(body)


def test_the_stream_names_its_endpoint_first_and_a_2024_11_05_session_runs_on_it() -> None:
    async def body() -> None:
        async with serve_on_loopback(build().http_app(legacy_sse=True)) as base, old_wire(base) as wire:
            assert wire.response.headers["content-type"].startswith("text/event-stream")
            assert re.fullmatch(r"/messages/\?session_id=[0-9a-f]{32}", wire.endpoint_data), wire.endpoint_data
            posted = await wire.post(initialize("2024-11-05"))
            assert (posted.status_code, posted.content) == (202, b"")  # the answer comes on the stream
            result = (await wire.answer(1))["result"]
            assert result["protocolVersion"] == "2024-11-05"  # the first revision is one we speak
            assert result["serverInfo"] == {"name": "old-friends", "version": "1.0.0"}
            assert (await wire.post(INITIALIZED)).status_code == 202
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hi"}},
            }
            assert (await wire.post(call)).status_code == 202
            assert (await wire.answer(2))["result"]["content"] == [{"type": "text", "text": "hi"}]

    run(body)


def test_progress_and_log_lines_ride_the_stream_before_the_answer() -> None:
    async def body() -> list[dict[str, Any]]:
        async with serve_on_loopback(build().http_app(legacy_sse=True)) as base, old_wire(base) as wire:
            await wire.start("2025-03-26")
            params = {"name": "count", "arguments": {"steps": 2}, "_meta": {"progressToken": "p"}}
            await wire.post({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
            return await wire.until(lambda m: m.get("id") == 7)

    seen = run(body)
    kinds = [(m.get("method"), (m.get("params") or {}).get("progress")) for m in seen[:-1]]
    assert kinds == [
        ("notifications/progress", 1),
        ("notifications/message", None),
        ("notifications/progress", 2),
        ("notifications/message", None),
    ]
    assert seen[-1]["result"]["content"] == [{"type": "text", "text": "counted 2"}]


@pytest.mark.parametrize(("version", "asked"), [("2024-11-05", False), ("2025-03-26", False), ("2025-06-18", True)])
def test_elicitation_is_sent_only_in_the_revisions_that_have_it(version: str, asked: bool) -> None:
    """The client declares ``elicitation`` whatever the revision; before 2025-06-18 there is no
    ``elicitation/create``, so the server must not send one, and the tool hears that it cannot ask."""

    async def body() -> list[dict[str, Any]]:
        async with serve_on_loopback(build().http_app(legacy_sse=True)) as base, old_wire(base) as wire:
            await wire.start(version, {"elicitation": {}})
            call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}
            await wire.post(call)
            first = await wire.message()
            if first.get("method") == "elicitation/create":
                answer = {"action": "accept", "content": {"name": "Ada"}}
                assert (await wire.post({"jsonrpc": "2.0", "id": first["id"], "result": answer})).status_code == 202
                return [first, await wire.answer(3)]
            return [first]

    seen = run(body)
    if asked:
        assert seen[0]["method"] == "elicitation/create"
        assert seen[1]["result"]["content"] == [{"type": "text", "text": "hello Ada"}]
    else:
        assert [m.get("method") for m in seen] == [None]  # the answer, with no question before it
        (text,) = seen[0]["result"]["content"]
        assert text["text"] == f"cannot ask: elicitation/create does not exist in protocol version {version}"


def test_what_a_post_must_carry() -> None:
    async def body() -> dict[str, Any]:
        outcomes: dict[str, Any] = {}
        async with serve_on_loopback(build().http_app(legacy_sse=True)) as base, old_wire(base) as wire:
            http = wire.http
            no_session = await http.post(f"{base}/messages/", json=INITIALIZED)
            unknown = await http.post(f"{base}/messages/?session_id={'0' * 32}", json=INITIALIZED)
            text = await wire.post(b"{}", **{"content-type": "text/plain"})
            broken = await wire.post(b"{not json")
            batch = await wire.post([INITIALIZED])
            outcomes["statuses"] = [r.status_code for r in (no_session, unknown, text, broken, batch)]
            outcomes["codes"] = [r.json()["error"]["code"] for r in (no_session, unknown, text, broken, batch)]
            post_stream = await http.post(f"{base}/sse", json=INITIALIZED)
            get_messages = await http.get(wire.endpoint)
            outcomes["allow"] = [
                (post_stream.status_code, post_stream.headers["allow"]),
                (get_messages.status_code, get_messages.headers["allow"]),
            ]
            rebound = await http.get(f"{base}/sse", headers={"host": "evil.example"})
            outcomes["rebound"] = rebound.status_code
            await wire.start("2024-11-05")  # none of the refusals touched the session
            outcomes["still"] = (await wire.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})).status_code
            outcomes["pong"] = await wire.answer(5)
        return outcomes

    outcomes = run(body)
    assert outcomes["statuses"] == [400, 404, 415, 400, 400]
    assert outcomes["codes"] == [-32600, -32600, -32600, -32700, -32600]
    assert outcomes["allow"] == [(405, "GET"), (405, "POST")]
    assert outcomes["rebound"] == 403
    assert outcomes["still"] == 202
    assert outcomes["pong"] == {"jsonrpc": "2.0", "id": 5, "result": {}}


async def _by_token(headers: dict[str, str]) -> Principal | None:
    token = headers.get("authorization", "").removeprefix("Bearer ")
    return token or None


def test_a_session_belongs_to_the_principal_that_opened_it() -> None:
    async def body() -> tuple[int, int, int]:
        app = build().http_app(legacy_sse=True, authenticator=_by_token)
        async with serve_on_loopback(app) as base:
            async with httpx2.AsyncClient() as anonymous:
                refused = (await anonymous.get(f"{base}/sse")).status_code
            async with old_wire(base, {"authorization": "Bearer alice"}) as wire:
                await wire.start("2024-11-05")
                by_bob = await wire.post(INITIALIZED, authorization="Bearer bob")
                by_alice = await wire.post(INITIALIZED)
        return refused, by_bob.status_code, by_alice.status_code

    assert run(body) == (401, 404, 202)


def test_closing_the_stream_ends_the_session_and_cancels_its_calls() -> None:
    server = build()
    started, cancelled = asyncio.Event(), asyncio.Event()

    @server.tool()
    async def wait_forever() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return "never"

    async def body() -> tuple[int, int]:
        app: HttpApp = server.http_app(legacy_sse=True)
        assert app.legacy_sse is not None
        async with serve_on_loopback(app) as base, httpx2.AsyncClient() as http:
            async with old_wire(base) as wire:
                await wire.start("2024-11-05")
                call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait_forever"}}
                await wire.post(call)
                await started.wait()
                endpoint = wire.endpoint
                live = len(app.legacy_sse.sessions)
            await cancelled.wait()  # the stream is closed: its call is cancelled (bounded by TIMEOUT)
            after = await http.post(endpoint, json=INITIALIZED)
        return live, after.status_code

    assert run(body) == (1, 404)


def test_old_sessions_count_against_max_sessions() -> None:
    async def body() -> tuple[int, str]:
        app = build().http_app(legacy_sse=True, max_sessions=1)
        async with serve_on_loopback(app) as base, old_wire(base), httpx2.AsyncClient() as http:
            second = await http.get(f"{base}/sse")
        return second.status_code, second.headers.get("retry-after", "")

    assert run(body) == (503, "5")


def test_the_endpoint_is_under_the_path_the_app_is_mounted_at() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    async def body() -> dict[str, Any]:
        outer = Starlette(routes=[Mount("/old", app=build().http_app(legacy_sse=True))])
        async with serve_on_loopback(outer) as base, old_wire(f"{base}/old") as wire:
            wire.endpoint = base + wire.endpoint_data  # the data is a path from the server's root
            return {"data": wire.endpoint_data, "init": await wire.start("2024-11-05")}

    outcome = run(body)
    assert outcome["data"].startswith("/old/messages/?session_id=")
    assert outcome["init"]["protocolVersion"] == "2024-11-05"
