"""A deliberately broken MCP server (stdio, 2025-11-25), for ``backchannel check`` to catch.

Plain Python and asyncio, no MCP library: every fault below is written on purpose, and
``test_check_broken.py`` expects ``backchannel check`` to name each one.

- writes a line that is no message to stdout as it starts (``robustness.stdout``);
- echoes any requested protocol version, even one that does not exist (``eras.counter-offer``);
- answers ``ping`` with a non-empty result (``eras.ping``);
- answers ``prompts/list`` without declaring prompts (``robustness.capabilities``);
- ``elicit-name`` asks a form of a client that declared no elicitation (``elicitation.gate``),
  with a password field (``elicitation.no-secrets``), asks it again after a decline
  (``elicitation.decline``), and takes an answer of the wrong types (``elicitation.validation``);
- ``elicit-url`` asks a URL of a client that declared only forms (``url.gate``), without an
  elicitationId (``url.shape``);
- ``list-roots`` and ``ask-model`` ask for roots and sampling whatever the client declared
  (``roots.gate``, ``sampling.gate``), and the sampling request has no maxTokens (``sampling.shape``);
- completion answers 150 values with a total of 120 (``completion.cap``, ``completion.total``)
  and an empty result for a prompt it does not have (``completion.errors``);
- ``report-progress`` reports 1, 3, 2, answers, then reports 4 (``progress.monotonic``,
  ``progress.after-answer``);
- ``slow-operation`` ignores cancellation: its progress goes on and it answers at the end
  (``cancel.no-answer``, ``cancel.stops``);
- ``write-log`` ignores the level asked for (``logging.levels``) and logs a bearer token
  (``logging.secrets``);
- a line that is not JSON, a request whose method is a number, an unknown method and params of
  the wrong type all get -32603 (``robustness.parse-error``, ``.invalid-request``,
  ``.unknown-method``, ``.invalid-params``, ``.fuzz-errors``);
- a message nested 100,000 levels deep is -32603 too (``robustness.deep``), and a line over
  1 MiB ends the process (``robustness.oversized``);
- ``tools/list`` with a string id is answered twice (``robustness.fuzz``);
- when its stdin closes while a question is pending it keeps waiting (``robustness.dead-client``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from typing import Any

TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaGVjayJ9.c2lnbmF0dXJlLXRoYXQtbGVha3M"
TOOLS = [
    {"name": "elicit-name", "description": "Asks the user for a name (elicitation)", "inputSchema": {"type": "object"}},
    {
        "name": "elicit-url",
        "description": "Asks the user to open a URL (URL elicitation)",
        "inputSchema": {"type": "object"},
    },
    {"name": "list-roots", "description": "Lists the client's roots", "inputSchema": {"type": "object"}},
    {"name": "ask-model", "description": "Asks the client's model (sampling)", "inputSchema": {"type": "object"}},
    {"name": "report-progress", "description": "Reports progress", "inputSchema": {"type": "object"}},
    {
        "name": "slow-operation",
        "description": "Sleeps three seconds, reporting progress",
        "inputSchema": {"type": "object"},
    },
    {"name": "write-log", "description": "Writes log messages at every level", "inputSchema": {"type": "object"}},
]
CAPABILITIES = {"tools": {}, "logging": {}, "completions": {}, "resources": {}}


class Broken:
    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def write(self, message: Any) -> None:
        sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
        sys.stdout.buffer.flush()

    def answer(self, request_id: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def fail(self, request_id: Any, code: int, message: str) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        self.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await future

    def progress(self, token: Any, value: float) -> None:
        if token is not None:
            self.write(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": value},
                }
            )

    def log(self, level: str, data: str) -> None:
        self.write({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": data}})

    # ------------------------------------------------------------------ reading

    def received(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except RecursionError:
            self.fail(None, -32603, "internal error: too deep")
            return
        except ValueError:
            self.fail(None, -32603, "internal error")  # should be -32700
            return
        if not isinstance(message, dict):
            self.fail(None, -32603, "internal error")
            return
        if "method" not in message:
            answered = message.get("id")
            future = self.waiting.pop(answered, None) if isinstance(answered, int) else None
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "id" not in message:
            return  # notifications, cancellations included: ignored
        task = asyncio.get_running_loop().create_task(self.handle(message))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def handle(self, message: dict[str, Any]) -> None:
        request_id, method = message["id"], message["method"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if not isinstance(method, str):
            self.fail(request_id, -32603, "internal error: method")  # should be -32600
        elif method == "initialize":
            self.answer(
                request_id,
                {
                    "protocolVersion": params.get("protocolVersion"),
                    "capabilities": CAPABILITIES,
                    "serverInfo": {"name": "broken-server", "version": "0.0.1"},
                },
            )
        elif method == "ping":
            self.answer(request_id, {"pong": True})
        elif method == "tools/list":
            self.answer(request_id, {"tools": TOOLS})
            if isinstance(request_id, str):
                self.answer(request_id, {"tools": TOOLS})
        elif method == "prompts/list":
            self.answer(request_id, {"prompts": [{"name": "greet", "arguments": [{"name": "who"}]}]})
        elif method == "resources/templates/list":
            self.answer(request_id, {"resourceTemplates": [{"uriTemplate": "demo://item/{id}", "name": "item"}]})
        elif method == "resources/list":
            self.answer(request_id, {"resources": []})
        elif method == "logging/setLevel":
            self.answer(request_id, {})
        elif method == "completion/complete":
            ref = params.get("ref") or {}
            if ref.get("type") == "ref/prompt":
                self.answer(request_id, {"completion": {"values": []}})  # should be -32602
            else:
                values = [f"item-{n}" for n in range(150)]
                self.answer(request_id, {"completion": {"values": values, "total": 120, "hasMore": False}})
        elif method == "tools/call":
            if not isinstance(params.get("name"), str):
                self.fail(request_id, -32603, "internal error: name")  # should be -32602
                return
            await self.call(request_id, params["name"], (params.get("_meta") or {}).get("progressToken"))
        else:
            self.fail(request_id, -32603, f"internal error: {method}")  # should be -32601

    async def call(self, request_id: Any, name: str, token: Any) -> None:
        if name == "elicit-name":
            form = {
                "message": "Your name and password?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "password": {"type": "string", "format": "password"}},
                    "required": ["name"],
                },
            }
            reply = await self.ask("elicitation/create", form)
            action = (reply.get("result") or {}).get("action")
            if action == "decline":
                reply = await self.ask("elicitation/create", form)  # asks again after a decline
            content = (reply.get("result") or {}).get("content")
            self.answer(request_id, {"content": [{"type": "text", "text": f"hello {content}"}]})
        elif name == "elicit-url":
            await self.ask(
                "elicitation/create", {"mode": "url", "message": "Open this", "url": "https://example.com/a"}
            )
            self.answer(request_id, {"content": [{"type": "text", "text": "opened"}]})
        elif name == "list-roots":
            reply = await self.ask("roots/list", {})
            self.answer(request_id, {"content": [{"type": "text", "text": json.dumps(reply.get("result"))}]})
        elif name == "ask-model":
            await self.ask(
                "sampling/createMessage", {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
            )
            self.answer(request_id, {"content": [{"type": "text", "text": "sampled"}]})
        elif name == "report-progress":
            for value in (1, 3, 2):
                self.progress(token, value)
            self.answer(request_id, {"content": [{"type": "text", "text": "done"}]})
            await asyncio.sleep(0.05)
            self.progress(token, 4)
        elif name == "slow-operation":
            for step in range(1, 13):
                await asyncio.sleep(0.25)
                self.progress(token, step)
            self.answer(request_id, {"content": [{"type": "text", "text": "finished"}]})
        elif name == "write-log":
            self.log("debug", "starting the upstream call")
            self.log("info", f"calling upstream with Authorization: Bearer {TOKEN}")
            self.log("error", "upstream said no")
            self.answer(request_id, {"content": [{"type": "text", "text": "logged"}]})
        else:
            self.answer(request_id, {"content": [{"type": "text", "text": f"no tool {name}"}], "isError": True})


async def main() -> None:
    server = Broken()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    sys.stdout.buffer.write(b"broken server ready\n")  # not a message
    sys.stdout.buffer.flush()
    while True:
        try:
            line = await reader.readline()
        except ValueError:
            sys.exit(3)  # a line over 1 MiB: the process ends
        if not line:
            break
        if line.strip():
            server.received(line)
    if server.waiting:
        await asyncio.sleep(60)  # stdin closed with a question pending: waits on, for nothing


if __name__ == "__main__":
    asyncio.run(main())
