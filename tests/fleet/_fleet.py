"""A fleet for tests: several workers (each its own ``Server`` and app) behind a round-robin
dispatcher, as a load balancer that sends every request to the next worker; and a raw
handshake-era client's few words (``post``, ``open_session``, ``sse_events``), for the tests
that watch which worker answers what."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx2

from backchannel import Context, Server

#: The handshake-era revision the raw clients below speak.
HANDSHAKE = "2025-11-25"
#: ``initialize``, declaring elicitation (the fleet's ``ask`` and ``deploy`` tools elicit).
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": HANDSHAKE, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t"}},
}


class RoundRobin:
    """An ASGI app that hands each HTTP request to the next of ``apps``; ``served`` logs which."""

    def __init__(self, apps: list[Any], serve: list[Any] | None = None) -> None:
        self.apps = apps
        #: What each request is handed to: the apps themselves, or what mounts them.
        self.serve = serve if serve is not None else apps
        self.turn = 0
        self.served: list[tuple[int, str, bytes]] = []  # (worker, HTTP method, the body's first chunk)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        index = self.turn % len(self.apps)
        self.turn += 1
        entry = len(self.served)
        self.served.append((index, scope["method"], b""))

        async def recording() -> Any:
            message = await receive()
            if message.get("body") and not self.served[entry][2]:
                self.served[entry] = (index, scope["method"], message["body"])
            return message

        await self.serve[index](scope, recording, send)

    def answers_forwarded(self) -> tuple[int, int]:
        """(answers to our requests POSTed, how many of them reached a worker other than the asker)."""
        total = crossed = 0
        for index, _, body in self.served:
            if b'"result"' in body and b'"method"' not in body and body.count(b":") > 1:
                message = json.loads(body)
                if isinstance(message.get("id"), str) and ":" in message["id"]:
                    total += 1
                    crossed += message["id"].split(":")[0] != self.apps[index].state.worker_id
        return total, crossed

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                for app in self.apps:
                    await app.join_fleet()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for app in self.apps:
                    await app.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return


class Worker:
    """What one worker's tools saw: which worker ran what."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ran: list[str] = []
        self.cancelled = asyncio.Event()


def fleet_server(worker: Worker, **options: Any) -> Server:
    """The same server on every worker (as the same code is deployed on each)."""
    server = Server("fleet", **options)

    @server.tool()
    async def ask(ctx: Context) -> str:
        worker.ran.append("ask")
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"{answer.action}:{(answer.data or {}).get('name', '')}@{worker.name}"

    @server.tool()
    async def count(to: int, ctx: Context) -> str:
        worker.ran.append("count")
        for step in range(1, to + 1):
            await ctx.report_progress(step, to, f"step {step}")
            await asyncio.sleep(0)
        return f"counted {to}@{worker.name}"

    @server.tool()
    async def wait(ctx: Context) -> str:
        worker.ran.append("wait")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            worker.cancelled.set()
            raise
        return "waited"

    @server.tool()
    async def deploy(target: str, ctx: Context) -> str:
        """Asks (a form, across rounds in the stateless era), then does its work exactly once."""
        answer = await ctx.elicit(f"Deploy {target}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})

        async def work() -> str:
            worker.ran.append(f"deploy {target}")
            return f"deployed {target}@{worker.name}"

        if answer.action != "accept":
            return answer.action
        return await ctx.once("deploy", work)

    @server.tool()
    def add_tool(name: str) -> str:
        server.add_tool(lambda: name, name=name)
        return f"added {name}@{worker.name}"

    @server.tool()
    async def where(ctx: Context) -> str:
        """The client's roots as this worker sees them (the session's cache, or asked)."""
        roots = await ctx.list_roots()
        return ",".join(item.name or item.uri for item in roots)

    @server.tool()
    async def say(text: str, ctx: Context) -> str:
        await ctx.debug(f"debug: {text}")
        await ctx.info(f"info: {text}")
        return worker.name

    return server


Factory = Callable[[Worker], Server]


def session_headers(session: str | None = None) -> dict[str, str]:
    """A handshake-era request's headers; with ``session``: on that session."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    return headers


async def post(http: httpx2.AsyncClient, url: str, session: str | None, message: dict[str, Any]) -> httpx2.Response:
    """``message`` POSTed (on ``session``, if not None) as a handshake-era client does."""
    return await http.post(url, content=json.dumps(message), headers=session_headers(session))


async def open_session(http: httpx2.AsyncClient, url: str) -> str:
    """``INITIALIZE``, then ``notifications/initialized`` (two requests: two workers of a round
    robin); the session's id."""
    session = (await post(http, url, None, INITIALIZE)).headers["mcp-session-id"]
    await post(http, url, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return session


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The ``(id, message)`` of each event with data in an SSE body (or a chunk of whole events)."""
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields.get("data"):
            out.append((fields.get("id", ""), json.loads(fields["data"])))
    return out
