"""The floor: the bench contract (shared/bench/CONTRACT.md v1) over stdio with no framework.

    python benchmarks/peers/floor.py

One asyncio loop, orjson, a dict of request handlers: what answering the contract costs in
Python before any framework adds validation, routing layers or abstractions. It does no
input validation beyond what the contract needs, so it is a lower bound, not a server to use.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import sys
from collections.abc import Callable
from typing import Any

import orjson

WORDS = ["".join("abcdefghij"[int(c)] for c in f"{i:04d}") for i in range(10000)]
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CAPABILITIES = {"tools": {}, "prompts": {}, "completions": {}, "logging": {}}


def matches(prefix: str) -> list[str]:
    start = bisect.bisect_left(WORDS, prefix)
    end = bisect.bisect_left(WORDS, prefix + "\uffff", lo=start)
    return WORDS[start:end]


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


class Floor:
    def __init__(self, out: asyncio.WriteTransport) -> None:
        self.out = out
        self.tasks: dict[Any, asyncio.Task[None]] = {}
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.ids = itertools.count(1)
        self.tools: dict[str, Callable[..., Any]] = {
            "progress": self.progress,
            "sleep": self.sleep,
            "ask": self.ask,
        }

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(orjson.dumps(message) + b"\n")

    def on_line(self, line: bytes) -> None:
        message = orjson.loads(line)
        method = message.get("method")
        if method is None:  # an answer to a request of ours
            future = self.waiting.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message.get("result"))
            return
        params = message.get("params") or {}
        if "id" not in message:
            if method == "notifications/cancelled":
                task = self.tasks.pop(params.get("requestId"), None)
                if task is not None:
                    task.cancel()
            return
        request_id = message["id"]
        if method == "tools/call":
            name = params.get("name")
            tool = self.tools.get(name)
            if name == "echo":  # synchronous: no task needed
                self.send({"jsonrpc": "2.0", "id": request_id, "result": text(params["arguments"]["text"])})
            elif tool is None:
                self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": "Unknown tool"}})
            else:
                task = asyncio.create_task(self.run(request_id, tool, params))
                self.tasks[request_id] = task
        elif method == "completion/complete":
            found = matches(params["argument"]["value"])
            completion = {"values": found[:100], "total": len(found), "hasMore": len(found) > 100}
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {"completion": completion}})
        elif method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": CAPABILITIES,
                "serverInfo": {"name": "floor", "version": "1.0.0"},
            }
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method in ("ping", "logging/setLevel"):
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "prompts/get":
            word = (params.get("arguments") or {}).get("word", "")
            messages = [{"role": "user", "content": {"type": "text", "text": f"Say {word}."}}]
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {"messages": messages}})
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def run(self, request_id: Any, tool: Callable[..., Any], params: dict[str, Any]) -> None:
        try:
            result = await tool(request_id, params.get("arguments") or {}, params.get("_meta") or {})
        except asyncio.CancelledError:
            return  # cancelled by the client: no answer
        finally:
            self.tasks.pop(request_id, None)
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def progress(self, request_id: Any, arguments: dict[str, Any], meta: dict[str, Any]) -> Any:
        steps = arguments["steps"]
        token = meta.get("progressToken")
        if token is not None:
            write, dumps = self.out.write, orjson.dumps
            for i in range(1, steps + 1):
                params = {"progressToken": token, "progress": i, "total": steps}
                write(dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}) + b"\n")
                if i % 256 == 0:
                    await asyncio.sleep(0)  # let other requests in
        return text("done")

    async def sleep(self, request_id: Any, arguments: dict[str, Any], meta: dict[str, Any]) -> Any:
        await asyncio.sleep(arguments["ms"] / 1000)
        return text("slept")

    async def ask(self, request_id: Any, arguments: dict[str, Any], meta: dict[str, Any]) -> Any:
        own_id = next(self.ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[own_id] = future
        params = {"mode": "form", "message": "What is your name?", "requestedSchema": SCHEMA}
        self.send({"jsonrpc": "2.0", "id": own_id, "method": "elicitation/create", "params": params})
        answer = await future
        if answer.get("action") != "accept":
            return text(answer.get("action", "cancel"))
        return text(f"hello {answer['content']['name']}")


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout)
    floor = Floor(out)  # type: ignore[arg-type]
    while line := await reader.readline():
        if line.strip():
            floor.on_line(line)
    for task in list(floor.tasks.values()):
        task.cancel()


if __name__ == "__main__":
    asyncio.run(main())
