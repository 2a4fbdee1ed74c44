"""One worker of the fleet that ``test_fleet_interop.py`` puts behind nginx: the same server in
every worker process, each on its own port, all sharing one Redis (``Server.run_http(redis=URL)``).

    python tests/fleet/fleet_fixture_server.py --port P --redis URL --name w0 --requests LOG --marks DIR

Every HTTP request the worker receives is appended to ``LOG`` as one JSON line when it arrives
(``time.monotonic_ns()``, which every process of the machine reads from the same clock), so a
test can merge the four workers' logs and see which worker served each request of a session:
``{"t", "worker", "state", "http", "session", "last_event_id", "rpc": [...]}``, where ``state`` is
the worker's ``RedisState.worker_id`` (the prefix of the ids of its requests to the client and
of its stream ids) and ``rpc`` lists the body's messages as ``{"method", "id", "tool"}`` (``tool``:
the name a ``tools/call`` calls) or ``{"answer": id, "error": bool}``.

Tools (each names the worker that ran it, after an ``@``, where it returns text):

- ``whoami()``: ``{"worker", "pid", "state"}``.
- ``ask()``: a form (one string, ``name``); ``"<action>:<name>@<worker>"``.
- ``sample(prompt)``: ``ctx.sample``; ``"<text>@<worker>"``.
- ``roots()``: ``ctx.list_roots()`` (cached per session in the handshake era); ``{"uris", "worker"}``.
- ``count(to)``: progress ``1..to`` of ``to``; ``"counted <to>@<worker>"``.
- ``cut(to, at)``: progress ``1..at``, a pause (they go out on the POST's response), then ends that
  response (``ctx.close_sse_stream``), then progress ``at+1..to`` in two halves with a pause between
  (the first half is replayed when the client resumes, on another worker; the second is written
  after it has resumed, and followed live); ``"cut <to>@<worker>"``.
- ``wait(tag)``: progress 1 and 2, then sleeps; once cancelled, writes ``DIR/<tag>`` holding the
  worker's name.
- ``say(text)``: logs ``{"text", "worker"}`` at debug, info, warning and error.
- ``add_tool(name)``: registers a tool (the tools list changes on every worker); ``"added <name>@<worker>"``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from backchannel import Context, Server

#: What the worker's HTTP app sends with ``retry:`` on a stream: the clients wait this long
#: before they resume a stream the server ended (the default, 1 s, would only slow the tests).
RETRY_MS = 50
#: ``cut``'s pauses: before it ends the response (what it reported so far goes out on it first),
#: and before the last progress notifications, long enough for the client to have resumed (after
#: ``RETRY_MS``), so that they reach it live through another worker.
CUT_PAUSE = 0.25
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
LEVELS = ("debug", "info", "warning", "error")


class RequestLog:
    """An ASGI wrapper that writes one line per HTTP request to ``path`` before passing it on."""

    def __init__(self, app: Any, path: Path, worker: str, state: str) -> None:
        self.app = app
        self.sink = path.open("a", encoding="utf-8")
        self.worker = worker
        self.state = state

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        arrived = time.monotonic_ns()
        headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
        # The body is read here in full (nginx passes it on as it comes), then handed to the app.
        held: list[dict[str, Any]] = []
        body = b""
        if scope["method"] == "POST":
            while True:
                message = await receive()
                held.append(message)
                body += message.get("body", b"")
                if message["type"] != "http.request" or not message.get("more_body"):
                    break
        entry = {
            "t": arrived,
            "worker": self.worker,
            "state": self.state,
            "http": scope["method"],
            "session": headers.get("mcp-session-id"),
            "last_event_id": headers.get("last-event-id"),
            "rpc": _summary(body),
        }
        self.sink.write(json.dumps(entry) + "\n")
        self.sink.flush()

        async def replay() -> Any:
            return held.pop(0) if held else await receive()

        await self.app(scope, replay, send)


def _summary(body: bytes) -> list[dict[str, Any]]:
    try:
        value = json.loads(body) if body else []
    except ValueError:
        return [{"unreadable": len(body)}]
    messages = value if isinstance(value, list) else [value]
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        if "method" in message:
            params = message.get("params")
            tool = params.get("name") if message["method"] == "tools/call" and isinstance(params, dict) else None
            out.append({"method": message["method"], "id": message.get("id"), "tool": tool})
        else:
            out.append({"answer": message.get("id"), "error": "error" in message})
    return out


class LoggedServer(Server):
    """The server, its HTTP app wrapped in a ``RequestLog``."""

    def __init__(self, name: str, worker: str, requests: Path) -> None:
        super().__init__(name)
        self.worker = worker
        self.requests = requests

    def http_app(self, path: str = "/mcp", **options: Any) -> Any:
        app = super().http_app(path, **options)
        return RequestLog(app, self.requests, self.worker, getattr(app.state, "worker_id", "?"))


def build_server(worker: str, requests: Path, marks: Path) -> LoggedServer:
    server = LoggedServer("fleet-interop", worker, requests)

    @server.tool()
    def whoami() -> dict[str, Any]:
        return {"worker": worker, "pid": os.getpid(), "state": getattr(server.state, "worker_id", None)}

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Your name?", NAME_FORM)
        return f"{answer.action}:{(answer.data or {}).get('name', '')}@{worker}"

    @server.tool()
    async def sample(prompt: str, ctx: Context) -> str:
        result = await ctx.sample(prompt, max_tokens=16)
        blocks = result.content if isinstance(result.content, list) else [result.content]
        return "".join(getattr(block, "text", "") for block in blocks) + f"@{worker}"

    @server.tool()
    async def roots(ctx: Context) -> dict[str, Any]:
        found = await ctx.list_roots()
        return {"uris": [item.uri for item in found], "worker": worker}

    @server.tool()
    async def count(to: int, ctx: Context) -> str:
        for step in range(1, to + 1):
            await ctx.report_progress(step, to)
        return f"counted {to}@{worker}"

    @server.tool()
    async def cut(to: int, at: int, ctx: Context) -> str:
        for step in range(1, at + 1):
            await ctx.report_progress(step, to)
        await asyncio.sleep(CUT_PAUSE)  # the first part goes out on the POST's own response
        ctx.close_sse_stream()
        middle = (at + to) // 2
        for step in range(at + 1, middle + 1):
            await ctx.report_progress(step, to)  # into the shared log, replayed on resumption
        await asyncio.sleep(CUT_PAUSE)
        for step in range(middle + 1, to + 1):
            await ctx.report_progress(step, to)  # followed live by the worker the client resumed on
        return f"cut {to}@{worker}"

    @server.tool()
    async def wait(tag: str, ctx: Context) -> str:
        await ctx.report_progress(1, 2)
        await ctx.report_progress(2, 2)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            (marks / tag).write_text(worker, encoding="utf-8")
            raise
        return f"waited@{worker}"

    @server.tool()
    async def say(text: str, ctx: Context) -> str:
        for level in LEVELS:
            await ctx.log(level, {"text": text, "worker": worker})
        return f"said@{worker}"

    @server.tool()
    def add_tool(name: str) -> str:
        server.add_tool(lambda: name, name=name)
        return f"added {name}@{worker}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(prog="fleet_fixture_server.py")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True, help="redis://... shared by every worker")
    parser.add_argument("--name", required=True, help="this worker's name, as the tools report it")
    parser.add_argument("--requests", type=Path, required=True, help="JSON lines: one per HTTP request received")
    parser.add_argument("--marks", type=Path, required=True, help="directory for the marks of cancelled calls")
    args = parser.parse_args()
    server = build_server(args.name, args.requests, args.marks)
    server.run_http("127.0.0.1", args.port, "/mcp", redis=args.redis, retry_ms=RETRY_MS)


if __name__ == "__main__":
    main()
