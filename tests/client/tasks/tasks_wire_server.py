"""A tasks server written by hand on the wire, over stdio, for the client's tests (both eras).

    python tests/client/tasks/tasks_wire_server.py [--poll-ms 20]

It speaks JSON-RPC lines itself, with no backchannel code, so the client is tested against
the spec's messages and not against our own server. ``initialize`` makes the connection
handshake-era (2025-11-25: ``params.task``, ``tasks/get``, ``tasks/result``, ``tasks/list``,
``tasks/cancel``); a request whose ``_meta`` names 2026-07-28 is served in the stateless era
with the tasks extension (``resultType: "task"``, ``inputRequests`` in ``tasks/get``,
``tasks/update``, ack-only ``tasks/cancel``).

A task moves one step per ``tasks/get`` of its own (so tests wait on polls, never on
clocks). The tools, with their 2025-11-25 ``taskSupport``:

* ``work(steps)``, optional: ``step i of n`` in ``statusMessage``, then ``worked n steps``;
  called plainly it answers at once with ``worked n steps inline``.
* ``deploy(steps)``, required: the same work; a plain call is refused with -32601.
* ``ask(steps=0)``, required: thinks ``steps`` polls, asks ``Your name?`` (a form with
  ``name``), then answers ``hello <name>``.
  Handshake era: ``input_required``, and the question comes on the ``tasks/result`` stream
  with the related-task ``_meta``. Stateless era: ``inputRequests`` ``{"name": ...}``.
* ``wait``, required: works until cancelled.
* ``fail``, required: fails with the JSON-RPC error -32000 ``the disk is full``.
* ``tell``, required: ends by itself 50 ms after it starts, and says so with
  ``notifications/tasks/status`` (handshake era), whatever the poll interval.
* ``doomed``, required: the server cancels it at its first poll (``the operator cancelled it``).
* ``oops``, optional: ends with a tool error (``isError``): ``failed`` in 2025-11-25,
  ``completed`` with that result in the extension.

A stateless-era request without the extension in its capabilities gets -32021 for a tool
that needs a task, and for ``tasks/*``. Every tool answers at once when its task is done
on a poll, with the result the spec's shape for the era.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

HANDSHAKE, STATELESS = "2025-11-25", "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
SUPPORT = {"work": "optional", "deploy": "required", "ask": "required", "wait": "required", "fail": "required"}
SUPPORT["oops"] = "optional"
SUPPORT["doomed"] = "required"
SUPPORT["tell"] = "required"
SUPPORT["plain"] = None  # no execution.taskSupport: never a task
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
NOW = "2026-12-01T10:00:00Z"


@dataclass
class Task:
    task_id: str
    tool: str
    steps: int
    era: str
    status: str = "working"
    message: str | None = None
    done_steps: int = 0
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    answer: dict[str, Any] | None = None
    #: Polls left before an answer given with ``tasks/update`` is seen (``lazy``).
    unseen: int = 0
    finished: asyncio.Event = field(default_factory=asyncio.Event)


class WireServer:
    """``send`` writes one message to the client; ``lazy`` makes ``tasks/update`` take effect
    only at the task's next poll but one (the extension's eventual consistency)."""

    def __init__(self, poll_ms: int, send: Callable[[dict[str, Any]], None], *, lazy: bool = False) -> None:
        self.poll_ms = poll_ms
        self.send = send
        self.lazy = lazy
        self.tasks: dict[str, Task] = {}
        self.era: str | None = None
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        #: Answers taken by ``tasks/update`` (a second answer to the same question is ignored).
        self.updates = 0

    # -- output ------------------------------------------------------------------------------

    def answer(self, request_id: Any, result: dict[str, Any], stateless: bool) -> None:
        if stateless:
            result = {"resultType": "complete", **result}
            result.setdefault("_meta", {})["io.modelcontextprotocol/serverInfo"] = {"name": "wire", "version": "1"}
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def refuse(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def ask_client(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return await future

    # -- tasks -------------------------------------------------------------------------------

    def wire_task(self, task: Task) -> dict[str, Any]:
        shown: dict[str, Any] = {"taskId": task.task_id, "status": task.status, "createdAt": NOW, "lastUpdatedAt": NOW}
        if task.message is not None:
            shown["statusMessage"] = task.message
        if task.era == HANDSHAKE:
            shown |= {"ttl": 60000, "pollInterval": self.poll_ms}
            return shown
        shown |= {"ttlMs": 60000, "pollIntervalMs": self.poll_ms}
        if task.status == "input_required":
            shown["inputRequests"] = {
                "name": {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": "Your name?", "requestedSchema": NAME_FORM},
                }
            }
        elif task.status == "completed":
            shown["result"] = task.result
        elif task.status == "failed":
            shown["error"] = task.error
        return shown

    def advance(self, task: Task) -> None:
        """One step of the task's work, taken on each of its polls."""
        if task.status in ("completed", "failed", "cancelled"):
            return
        if task.tool in ("wait", "tell"):
            task.message = "waiting"
            return
        if task.tool == "doomed":
            task.status, task.message = "cancelled", "the operator cancelled it"
            task.finished.set()
            return
        if task.tool == "ask":
            if task.answer is None and task.done_steps < task.steps:
                task.done_steps += 1
                task.message = "thinking"
            elif task.answer is None:
                task.status, task.message = "input_required", "waiting for your name"
            elif task.unseen > 0:
                task.unseen -= 1  # the answer is not seen yet: the same question shows again
            else:
                self.end(task, text(f"hello {task.answer.get('name')}"))
            return
        if task.tool == "fail":
            task.status, task.message = "failed", "the disk is full"
            task.error = {"code": -32000, "message": "the disk is full"}
            task.finished.set()
            return
        if task.tool == "oops":
            self.end(task, {"content": [{"type": "text", "text": "no such thing"}], "isError": True})
            return
        task.done_steps += 1
        if task.done_steps >= task.steps:
            self.end(task, text(f"worked {task.steps} steps"))
        else:
            task.message = f"step {task.done_steps} of {task.steps}"

    def end(self, task: Task, result: dict[str, Any]) -> None:
        failed = task.era == HANDSHAKE and result.get("isError") is True  # 2025-11-25: a tool error fails the task
        task.status = "failed" if failed else "completed"
        task.message = None
        task.result = result
        task.finished.set()

    # -- requests ----------------------------------------------------------------------------

    async def handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self.waiting.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(message.get("result", message.get("error")))
            return
        method, params, request_id = message["method"], message.get("params") or {}, message.get("id")
        if request_id is None:
            return
        meta = params.get("_meta") or {}
        stateless = meta.get("io.modelcontextprotocol/protocolVersion") == STATELESS
        declared = EXTENSION in ((meta.get("io.modelcontextprotocol/clientCapabilities") or {}).get("extensions") or {})
        if method == "initialize":
            self.era = HANDSHAKE
            capabilities = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
            info = {"name": "wire", "version": "1"}
            self.answer(
                request_id, {"protocolVersion": HANDSHAKE, "capabilities": capabilities, "serverInfo": info}, False
            )
        elif method == "server/discover":
            capabilities = {"tools": {}, "extensions": {EXTENSION: {}}}
            self.answer(request_id, {"supportedVersions": [STATELESS], "capabilities": capabilities}, True)
        elif method == "tools/list":
            tools = [
                {
                    "name": name,
                    "inputSchema": {"type": "object"},
                    **({} if stateless or support is None else {"execution": {"taskSupport": support}}),
                }
                for name, support in SUPPORT.items()
            ]
            self.answer(request_id, {"tools": tools}, stateless)
        elif method == "tools/call":
            await self.call(request_id, params, stateless, declared)
        elif method.startswith("tasks/"):
            if stateless and not declared:
                self.refuse(
                    request_id,
                    -32021,
                    "Missing required client capability",
                    {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
                )
                return
            await self.task_request(request_id, method, params, stateless)
        else:
            self.refuse(request_id, -32601, f"Method not found: {method}")

    async def call(self, request_id: Any, params: dict[str, Any], stateless: bool, declared: bool) -> None:
        name = params.get("name")
        steps = int((params.get("arguments") or {}).get("steps", 0 if name == "ask" else 2))
        if name not in SUPPORT or (name == "plain" and wants_task_param(params, stateless)):
            self.refuse(request_id, -32602, f"Unknown tool: {name}")
            return
        wants_task = (declared if stateless else "task" in params) and SUPPORT[name] is not None
        if not wants_task:
            if SUPPORT[name] == "required":
                if stateless:
                    need = {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
                    self.refuse(request_id, -32021, "Missing required client capability", need)
                else:
                    self.refuse(request_id, -32601, f"Tool {name} requires task augmentation (taskSupport: 'required')")
                return
            if name == "oops":
                self.answer(
                    request_id, {"content": [{"type": "text", "text": "no such thing"}], "isError": True}, stateless
                )
            else:
                self.answer(request_id, text(f"worked {steps} steps inline"), stateless)
            return
        task = Task(secrets.token_urlsafe(16), name, steps, STATELESS if stateless else HANDSHAKE)
        self.tasks[task.task_id] = task
        if stateless:
            self.answer(request_id, {**self.wire_task(task), "resultType": "task"}, True)
        else:
            self.answer(request_id, {"task": self.wire_task(task)}, False)
        if name == "tell":
            asyncio.get_running_loop().create_task(self.tell(task))

    async def tell(self, task: Task) -> None:
        """End the task on its own, and notify the client (2025-11-25: a MAY, never relied on)."""
        await asyncio.sleep(0.05)
        self.end(task, text("told"))
        self.send({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": self.wire_task(task)})

    async def task_request(self, request_id: Any, method: str, params: dict[str, Any], stateless: bool) -> None:
        task = self.tasks.get(params.get("taskId"))  # type: ignore[arg-type]
        if method == "tasks/list" and not stateless:
            self.answer(request_id, {"tasks": [self.wire_task(t) for t in self.tasks.values()]}, False)
            return
        if task is None or method not in (
            "tasks/get",
            "tasks/cancel",
            "tasks/result" if not stateless else "tasks/update",
        ):
            self.refuse(request_id, -32602, "Failed to retrieve task: Task not found")
            return
        if method == "tasks/get":
            self.advance(task)
            self.answer(request_id, self.wire_task(task), stateless)
        elif method == "tasks/update":
            answer = (params.get("inputResponses") or {}).get("name")
            if task.status == "input_required" and isinstance(answer, dict) and task.answer is None:
                task.answer = answer.get("content") or {}
                task.unseen = 2 if self.lazy else 0
                task.message = "got your answer"
                self.updates += 1
            self.answer(request_id, {}, True)
        elif method == "tasks/cancel":
            if task.status in ("completed", "failed", "cancelled"):
                self.refuse(request_id, -32602, f"Cannot cancel task: already in terminal status '{task.status}'")
                return
            task.status, task.message = "cancelled", "cancelled by request"
            task.finished.set()
            self.answer(request_id, {} if stateless else self.wire_task(task), stateless)
        else:
            asyncio.get_running_loop().create_task(self.payload(request_id, task))

    async def payload(self, request_id: Any, task: Task) -> None:
        """``tasks/result``: ask the task's question on this stream if it waits on one, then block until it ends."""
        if task.status == "input_required":
            elicit = {
                "mode": "form",
                "message": "Your name?",
                "requestedSchema": NAME_FORM,
                "_meta": {RELATED: {"taskId": task.task_id}},
            }
            answer = await self.ask_client("elicitation/create", elicit)
            content = answer.get("content") if isinstance(answer, dict) and answer.get("action") == "accept" else None
            task.answer = content or {"name": "nobody"}
            task.status, task.message = "working", "got your answer"
        while not task.finished.is_set():
            self.advance(task)
            await asyncio.sleep(self.poll_ms / 1000)
        related = {RELATED: {"taskId": task.task_id}}
        if task.error is not None:
            self.refuse(request_id, task.error["code"], task.error["message"])
        elif task.result is not None:
            self.answer(request_id, {**task.result, "_meta": related}, False)
        else:
            self.refuse(request_id, -32602, f"task {task.task_id} was cancelled")


def wants_task_param(params: dict[str, Any], stateless: bool) -> bool:
    """A 2025-11-25 client that asks for a task on a tool without ``taskSupport`` broke a MUST NOT."""
    return not stateless and "task" in params


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


async def main(options: argparse.Namespace, record: TextIO | None) -> None:
    def send(message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    server = WireServer(options.poll_ms, send, lazy=options.lazy)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    running: set[asyncio.Task[None]] = set()
    while line := await reader.readline():
        if not line.strip():
            continue
        if record is not None:
            record.write(line.decode().strip() + "\n")
            record.flush()
        work = loop.create_task(server.handle(json.loads(line)))
        running.add(work)
        work.add_done_callback(running.discard)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--poll-ms", type=int, default=20)
    parser.add_argument("--lazy", action="store_true", help="tasks/update takes effect two polls later")
    parser.add_argument("--record", help="append each message received to this file, one JSON line each")
    options = parser.parse_args()
    with open(options.record or os.devnull, "a", encoding="utf-8") as record:
        asyncio.run(main(options, record if options.record else None))
