#!/usr/bin/env python3
"""An MCP server that speaks only revision 2026-07-28 and refuses ``initialize``, written from the spec.

It exists to prove ``backchannel proxy`` (issue #29, proof 1) against a server no SDK wrote: it uses
only the standard library (no ``backchannel``, no ``mcp``). ``docs/`` below is
``/work/shared/spec/2026-07-28/docs/`` and ``SEP-2663`` is ``/work/shared/spec/seps/2663-tasks-extension.md``;
the numbers are lines of those copies.

    python tests/peers/stateless_upstream.py --stdio    newline-delimited JSON-RPC on stdin/stdout
    python tests/peers/stateless_upstream.py --http 0   POST /mcp on 127.0.0.1 (0: any free port); prints
                                                        "listening on http://127.0.0.1:PORT/mcp" on stderr

* Each request carries ``_meta`` io.modelcontextprotocol/protocolVersion and clientCapabilities, else
  -32602 (HTTP 400; docs/basic/index.mdx:373-382); another version gets -32022 (HTTP 400) with data.supported/requested
  (docs/basic/versioning.mdx:48-67), and so does ``initialize``: its code is ours to choose, and the
  error should name the versions served (versioning.mdx:154-157, 170). Results carry ``resultType``
  and ``_meta`` serverInfo (index.mdx:73-85, 396-402). ``server/discover``: docs/server/discover.mdx:38-59.
* A tool that needs input answers an InputRequiredResult: ``inputRequests`` plus a ``requestState``
  sealed with HMAC for this tool and these arguments, 10 minutes; a state that fails the check is
  -32602, a missing answer is asked again (docs/basic/patterns/mrtr.mdx:124-180, 226-247, 266-267).
  An input request the request's capabilities don't cover is -32021 (index.mdx:387-392, mrtr.mdx:246;
  docs/client/elicitation.mdx:51-81: ``{}`` is form). URL mode has no elicitationId and no -32042, which a 2026-07-28
  server MUST NOT emit (index.mdx:137-144); its outcome comes from retries (elicitation.mdx:376-381).
* Progress (docs/basic/patterns/progress.mdx:11-55) and logs at or above the request's logLevel, none
  without one (docs/server/utilities/logging.mdx:60-72, 98-105), go only with their request: lines
  before the answer on stdio, SSE events of the POST over HTTP (docs/basic/transports/streamable-http.mdx:107-142).
* Cancellation: ``notifications/cancelled`` (docs/basic/transports/stdio.mdx:76-83) or, over HTTP, the
  POST's connection closing (streamable-http.mdx:233-240); nothing more is sent for the request.
* HTTP: MCP-Protocol-Version, Mcp-Method and Mcp-Name (tools/call: the tool; tasks/*: the taskId,
  SEP-2663:513-515) must match the body, base64 sentinel decoded, else 400 + -32020 (streamable-http.mdx:
  250-293, 490-504, 580-630); unknown method 404 (:271-275); notification 202 (:82-87); GET and DELETE
  405 (:680-687); a foreign Origin 403 (:58-64). One request per connection.
* ``subscriptions/listen`` is acknowledged first, honouring no filter (nothing here changes), and stays
  open until cancelled (docs/basic/patterns/subscriptions.mdx:52-62, 85-89, 116-126).
* Tasks extension: ``su_task`` answers resultType "task" when the request declares
  io.modelcontextprotocol/tasks, else -32021 (SEP-2663:85-109, 256-302); ``tasks/get`` (:306-342),
  ``tasks/update`` (:344-383), ``tasks/cancel`` (:385-412), unknown taskId -32602 (:791-800);
  ``tasks/result`` is gone: -32601 (:949).

Tools: ``su_form`` (a form: string ``name``, boolean ``subscribe``), ``su_url`` (URL mode; after the
accept, ``pending`` retries are told "not yet" by a state-only InputRequiredResult, then "url done"),
``su_sample`` (sampling/createMessage, docs/client/sampling.mdx:56-69, 113-162; the model's text),
``su_roots`` (roots/list, docs/client/roots.mdx:40-66; the URIs joined by ", "), ``su_multi`` (two
forms in two rounds; the first answer rides in the requestState), ``su_progress`` (``steps`` progress
notifications 1..steps), ``su_slow`` (waits ``seconds`` <= 30 unless cancelled), ``su_cancelled`` (the
cancelled requests: requestId, method, tool, via), ``su_log`` (debug, info, warning, error, filtered),
``su_task`` (a task; with ``ask`` it waits for a form answered by tasks/update).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hmac
import json
import secrets
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

VERSION = "2026-07-28"
PV, CAPS, LOG_LEVEL = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/logLevel",
)
TASKS, SUBSCRIPTION_ID = "io.modelcontextprotocol/tasks", "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "stateless-upstream", "version": "1.0.0"}}
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]

Message = dict[str, Any]
Emit = Callable[[Message | None], Awaitable[None]]  # sends a notification of the request; None: opens its stream


class RpcError(Exception):
    """A JSON-RPC error answer; ``status`` is its HTTP status."""

    def __init__(self, code: int, message: str, data: Any = None, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.data, self.status = code, message, data, status

    def response(self, rid: Any) -> Message:
        error = {"code": self.code, "message": self.message} | ({} if self.data is None else {"data": self.data})
        return {"jsonrpc": "2.0", "id": rid, "error": error}


class ToolError(Exception):
    """Bad arguments: a tool execution error, ``isError: true`` (docs/server/tools.mdx:760-785)."""


def invalid(message: str) -> RpcError:
    return RpcError(-32602, message)


def missing(needed: Message) -> RpcError:
    return RpcError(
        -32021, f"Server requires the client capability {json.dumps(needed)}", {"requiredCapabilities": needed}, 400
    )


def text(line: str, structured: Any = None) -> Message:
    return {"content": [{"type": "text", "text": line}]} | (
        {} if structured is None else {"structuredContent": structured}
    )


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def need_elicitation(caps: Message, mode: str) -> None:
    declared = caps.get("elicitation")
    if not (isinstance(declared, dict) and (mode in declared or (mode == "form" and declared == {}))):
        raise missing({"elicitation": {mode: {}}})


def elicited(answer: Any) -> Message:
    """An ElicitResult from ``inputResponses``, checked (mrtr.mdx:261-262)."""
    if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
        raise invalid("inputResponses: an elicitation answer needs action accept, decline or cancel")
    if not isinstance(answer.get("content", {}), dict):
        raise invalid("inputResponses: elicitation content must be an object")
    return answer


def shown(answer: Message) -> str:
    return f"{answer['action']}:{json.dumps(answer.get('content'), sort_keys=True)}"


def form(message: str, required: list[str], **properties: Message) -> Message:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


ASK_FORM = form("Who are you?", ["name"], name={"type": "string"}, subscribe={"type": "boolean", "default": False})
ASK_FIRST = form("First question: your name?", ["name"], name={"type": "string"})
ASK_SECOND = form("Second question: your colour?", ["colour"], colour={"type": "string"})
ASK_CONFIRM = form("Go on with the task?", ["go"], go={"type": "boolean"})
TOOLS = [
    {"name": name, "description": description, "inputSchema": {"type": "object", "properties": properties}}
    for name, description, properties in [
        ("su_form", "Ask a form (name, subscribe).", {}),
        ("su_url", "Send the person to a URL.", {"pending": {"type": "integer"}}),
        ("su_sample", "Ask the client's model.", {"prompt": {"type": "string"}}),
        ("su_roots", "List the client's roots.", {}),
        ("su_multi", "Ask two forms, one per round.", {}),
        ("su_progress", "Report progress.", {"steps": {"type": "integer"}}),
        ("su_slow", "Wait until cancelled.", {"seconds": {"type": "number"}}),
        ("su_cancelled", "The requests cancelled so far.", {}),
        ("su_log", "Log at four levels.", {}),
        ("su_task", "Run as a task.", {"ask": {"type": "boolean"}, "ms": {"type": "integer"}}),
    ]
]


class Call:
    """One ``tools/call`` as its tool sees it: arguments, answers, the verified state, the request's _meta."""

    def __init__(self, params: Message, meta: Message, emit: Emit, state: Message | None) -> None:
        self.name, self.meta, self.caps, self.emit, self.state = params["name"], meta, meta[CAPS], emit, state
        self.args: Message = params.get("arguments") or {}
        self.answers: Message = params.get("inputResponses") or {}

    def lacks(self, key: str, step: int = 1) -> bool:
        """Whether round ``step`` still needs the answer ``key`` (asked first, or missing on a retry)."""
        return self.state is None or (self.state["step"] == step and key not in self.answers)

    def number(self, key: str, default: int, top: int) -> int:
        value = self.args.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
            raise ToolError(f"{key} must be a number from 0 to {top}")
        return int(value)

    async def notify(self, method: str, **params: Any) -> None:
        await self.emit({"jsonrpc": "2.0", "method": method, "params": params})


class Job:
    """A task of the tasks extension; ``info`` is what ``tasks/get`` shows (SEP-2663:136-254)."""

    def __init__(self, ask: bool, ms: int) -> None:
        self.info: Message = {"taskId": secrets.token_urlsafe(16), "status": "working", "createdAt": now()}
        self.info.update(lastUpdatedAt=self.info["createdAt"], ttlMs=600_000, pollIntervalMs=50)
        self.answer: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self.runner = asyncio.create_task(self.run(ask, ms))

    def set(self, **fields: Any) -> None:
        self.info.update(fields, lastUpdatedAt=now())

    async def run(self, ask: bool, ms: int) -> None:
        await asyncio.sleep(ms / 1000)
        line = "task done"
        if ask:
            self.set(status="input_required", inputRequests={"confirm": ASK_CONFIRM})
            answer = await self.answer
            del self.info["inputRequests"]
            self.set(status="working")
            line = f"task done: {shown(answer)}"
        self.set(status="completed", result={**text(line), "isError": False})


class Upstream:
    """The protocol, without I/O. A transport gives each request to ``respond`` with a way to emit the
    request's notifications, writes the answer it returns, and reports cancellations to ``cancel``."""

    def __init__(self) -> None:
        self.key = secrets.token_bytes(32)
        self.cancelled: list[Message] = []
        self.running: dict[str | int, tuple[asyncio.Task[Any], Message]] = {}
        self.jobs: dict[str, Job] = {}
        self.methods: dict[str, Callable[[Message, Message, Any, Emit], Awaitable[Message]]] = {
            "server/discover": self.discover,
            "tools/list": self.list_tools,
            "tools/call": self.call_tool,
            "subscriptions/listen": self.listen,
            "tasks/get": self.task_get,
            "tasks/update": self.task_update,
            "tasks/cancel": self.task_cancel,
        }

    def check(self, msg: Message, gate: Callable[[Message], None] | None = None) -> Message:
        """The request's ``_meta`` if this server serves the request, else RpcError."""
        rid, method, params = msg.get("id"), msg.get("method"), msg.get("params", {})
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str) or type(rid) not in (str, int):
            raise RpcError(-32600, "Invalid Request", status=400)
        if method == "initialize":
            requested = params.get("protocolVersion") if isinstance(params, dict) else None
            requested = requested if isinstance(requested, str) else ""
            message = f"Unsupported protocol version: this server speaks only {VERSION}, which has no initialize"
            raise RpcError(-32022, message, {"supported": [VERSION], "requested": requested}, 400)
        if method not in self.methods:
            raise RpcError(-32601, f"Method not found: {method}", status=404)
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get(PV), str) or not isinstance(meta.get(CAPS), dict):
            raise RpcError(-32602, f"params._meta needs {PV} (a string) and {CAPS} (an object)", status=400)
        if gate is not None:
            gate(msg)
        if meta[PV] != VERSION:
            raise RpcError(-32022, "Unsupported protocol version", {"supported": [VERSION], "requested": meta[PV]}, 400)
        if LOG_LEVEL in meta and meta[LOG_LEVEL] not in LEVELS:
            raise RpcError(-32602, f"{LOG_LEVEL} is not a log level: {meta[LOG_LEVEL]!r}", status=400)
        return meta

    async def respond(
        self, msg: Message, emit: Emit, gate: Callable[[Message], None] | None = None
    ) -> tuple[int, Message]:
        """(HTTP status, JSON-RPC answer) of one request; cancelling the calling task cancels the request."""
        rid, me = msg.get("id"), asyncio.current_task()
        try:
            meta = self.check(msg, gate)
            assert me is not None
            self.running[rid] = (me, msg)
            result = await self.methods[msg["method"]](msg["params"], meta, rid, emit)
        except RpcError as error:
            return error.status, error.response(rid)
        except Exception as error:  # a bug of ours: said on stderr, -32603 on the wire
            traceback.print_exc()
            return 500, RpcError(-32603, f"Internal error: {error}").response(rid)
        finally:
            if type(rid) in (str, int) and self.running.get(rid, (None,))[0] is me:
                del self.running[rid]
        result = {"resultType": "complete", **result, "_meta": {**result.get("_meta", {}), **SERVER_INFO}}
        return 200, {"jsonrpc": "2.0", "id": rid, "result": result}

    def cancel(self, rid: Any, via: str, task: asyncio.Task[Any] | None = None, msg: Message | None = None) -> None:
        """Stop request ``rid`` (or ``task``, when the transport knows it) and note it; unknown or
        finished requests are ignored (docs/basic/patterns/cancellation.mdx:77-80, 111-117)."""
        if task is None and type(rid) in (str, int):
            task, msg = self.running.get(rid, (None, None))
        if task is None or task.done() or msg is None:
            return
        task.cancel()
        tool = msg["params"].get("name") if msg["method"] == "tools/call" else None
        self.cancelled.append({"requestId": rid, "method": msg["method"], "tool": tool, "via": via})
        print(f"stateless-upstream: request {rid!r} cancelled by {via}", file=sys.stderr, flush=True)

    def seal(self, call: Call, **state: Any) -> str:
        """A requestState only this process can make, for this tool and these arguments."""
        payload = {**state, "tool": call.name, "args": json.dumps(call.args, sort_keys=True), "exp": time.time() + 600}
        body = base64.urlsafe_b64encode(dumps(payload)).decode().rstrip("=")
        return body + "." + hmac.new(self.key, body.encode(), "sha256").hexdigest()

    def unseal(self, state: str, name: str, args: Message) -> Message:
        """What ``seal`` sealed, if made for this tool and arguments and not expired (mrtr.mdx:232-237)."""
        body, _, mac = state.rpartition(".")
        if not hmac.compare_digest(mac, hmac.new(self.key, body.encode(), "sha256").hexdigest()):
            raise invalid("requestState failed verification")
        payload: Message = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        if (payload["tool"], payload["args"]) != (name, json.dumps(args, sort_keys=True)) or payload[
            "exp"
        ] < time.time():
            raise invalid("requestState is for another request, or expired")
        return payload

    def ask(self, call: Call, requests: Message | None, **state: Any) -> Message:
        """An InputRequiredResult: ``requests`` (None: just retry) and the sealed ``state``."""
        result: Message = {"resultType": "input_required", "requestState": self.seal(call, **state)}
        return result | ({"inputRequests": requests} if requests else {})

    # -- methods

    async def discover(self, params: Message, meta: Message, rid: Any, emit: Emit) -> Message:
        capabilities = {"tools": {}, "logging": {}, "extensions": {TASKS: {}}}
        about = "A test server of revision 2026-07-28: each su_ tool exercises one feature."
        return {"supportedVersions": [VERSION], "capabilities": capabilities, "instructions": about} | CACHE

    async def list_tools(self, params: Message, meta: Message, rid: Any, emit: Emit) -> Message:
        return {"tools": TOOLS} | CACHE

    async def call_tool(self, params: Message, meta: Message, rid: Any, emit: Emit) -> Message:
        name, args, state = params.get("name"), params.get("arguments", {}), params.get("requestState")
        if (
            not isinstance(name, str)
            or not isinstance(args, dict)
            or not isinstance(params.get("inputResponses", {}), dict)
        ):
            raise invalid("tools/call needs a name (a string), arguments and inputResponses (objects)")
        if name not in {tool["name"] for tool in TOOLS}:
            raise invalid(f"Unknown tool: {name}")
        try:
            sealed = None if state is None else self.unseal(state, name, args or {})
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise invalid("requestState failed verification") from error
        try:
            result: Message = await getattr(self, name)(Call(params, meta, emit, sealed))
        except ToolError as error:
            return {**text(str(error)), "isError": True}
        return result

    async def listen(self, params: Message, meta: Message, rid: Any, emit: Emit) -> Message:
        if not isinstance(params.get("notifications", {}), dict):
            raise invalid("notifications must be an object")
        ack = {"_meta": {SUBSCRIPTION_ID: rid}, "notifications": {}}  # nothing here changes: no filter honoured
        await emit({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack})
        await asyncio.Future()  # until cancelled: notifications/cancelled (stdio), the stream closing (HTTP)
        raise AssertionError("unreachable")

    def job(self, params: Message, meta: Message) -> Job:
        if TASKS not in (meta[CAPS].get("extensions") or {}):
            raise missing({"extensions": {TASKS: {}}})
        job = self.jobs.get(params["taskId"]) if isinstance(params.get("taskId"), str) else None
        if job is None:
            raise invalid("Failed to retrieve task: Task not found")
        return job

    async def task_get(self, params: Message, meta: Message, rid: Any, emit: Emit) -> Message:
        return dict(self.job(params, meta).info)

    async def task_update(self, params: Message, meta: Message, rid: Any, emit: Emit) -> Message:
        job, answers = self.job(params, meta), params.get("inputResponses")
        if not isinstance(answers, dict):
            raise invalid("tasks/update needs inputResponses (an object)")
        if "confirm" in answers and job.info["status"] == "input_required" and not job.answer.done():
            job.answer.set_result(elicited(answers["confirm"]))  # other keys are ignored (SEP-2663:381)
        return {}

    async def task_cancel(self, params: Message, meta: Message, rid: Any, emit: Emit) -> Message:
        job = self.job(params, meta)
        if job.info["status"] in ("working", "input_required"):
            job.runner.cancel()
            job.info.pop("inputRequests", None)
            job.set(status="cancelled", statusMessage="cancelled by tasks/cancel")
        return {}

    # -- tools

    async def su_form(self, call: Call) -> Message:
        if call.lacks("form"):
            need_elicitation(call.caps, "form")
            return self.ask(call, {"form": ASK_FORM}, step=1)
        answer = elicited(call.answers["form"])
        line = f"action={answer['action']} content={json.dumps(answer.get('content'), sort_keys=True)}"
        return text(line, {"action": answer["action"], "content": answer.get("content")})

    async def su_url(self, call: Call) -> Message:
        pending = call.number("pending", 0, 10)
        if call.lacks("url"):
            need_elicitation(call.caps, "url")
            nonce = call.state["nonce"] if call.state else secrets.token_hex(8)
            page = {"mode": "url", "message": "Open this page to go on.", "url": f"http://127.0.0.1/su_url/{nonce}"}
            return self.ask(
                call, {"url": {"method": "elicitation/create", "params": page}}, step=1, nonce=nonce, left=pending
            )
        assert call.state is not None
        if call.state["step"] == 1 and (answer := elicited(call.answers["url"]))["action"] != "accept":
            return text(f"url {answer['action']}")
        if call.state["left"] > 0:  # the page is not done yet: retry with this state (elicitation.mdx:376-381)
            return self.ask(call, None, step=2, nonce=call.state["nonce"], left=call.state["left"] - 1)
        return text("url done")

    async def su_sample(self, call: Call) -> Message:
        if call.lacks("sample"):
            if "sampling" not in call.caps:
                raise missing({"sampling": {}})
            prompt = {"role": "user", "content": {"type": "text", "text": str(call.args.get("prompt", "Say hello."))}}
            request = {"method": "sampling/createMessage", "params": {"messages": [prompt], "maxTokens": 64}}
            return self.ask(call, {"sample": request}, step=1)
        answer = call.answers["sample"]
        blocks = answer.get("content") if isinstance(answer, dict) else None
        blocks = [blocks] if isinstance(blocks, dict) else blocks
        if not isinstance(blocks, list) or answer.get("role") not in ("user", "assistant"):
            raise invalid("inputResponses: a sampling answer needs role and content")
        said = "".join(
            str(block.get("text", "")) for block in blocks if isinstance(block, dict) and block.get("type") == "text"
        )
        return text(said, {"model": answer.get("model"), "text": said})

    async def su_roots(self, call: Call) -> Message:
        if call.lacks("roots"):
            if "roots" not in call.caps:
                raise missing({"roots": {}})
            return self.ask(call, {"roots": {"method": "roots/list"}}, step=1)
        roots = call.answers["roots"].get("roots") if isinstance(call.answers["roots"], dict) else None
        if not isinstance(roots, list) or not all(
            isinstance(root, dict) and isinstance(root.get("uri"), str) for root in roots
        ):
            raise invalid("inputResponses: a roots answer needs roots, each with a uri")
        return text(", ".join(root["uri"] for root in roots), {"uris": [root["uri"] for root in roots]})

    async def su_multi(self, call: Call) -> Message:
        if call.lacks("first"):
            need_elicitation(call.caps, "form")
            return self.ask(call, {"first": ASK_FIRST}, step=1)
        assert call.state is not None
        if call.state["step"] == 1 or "second" not in call.answers:  # the first answer goes into the state
            need_elicitation(call.caps, "form")
            first = elicited(call.answers["first"]) if call.state["step"] == 1 else call.state["first"]
            return self.ask(call, {"second": ASK_SECOND}, step=2, first=first)
        first, second = call.state["first"], elicited(call.answers["second"])
        return text(f"first={shown(first)} second={shown(second)}", {"first": first, "second": second})

    async def su_progress(self, call: Call) -> Message:
        steps, token = call.number("steps", 3, 1000), call.meta.get("progressToken")
        for step in range(1, steps + 1):
            if token is not None:
                await call.notify("notifications/progress", progressToken=token, progress=step, total=steps)
            await asyncio.sleep(0)
        return text(f"progress done: {steps} steps")

    async def su_slow(self, call: Call) -> Message:
        seconds = call.number("seconds", 30, 30)
        await call.emit(None)
        if (token := call.meta.get("progressToken")) is not None:
            await call.notify("notifications/progress", progressToken=token, progress=0, message="waiting")
        await asyncio.sleep(seconds)
        return text(f"slow done after {seconds} s")

    async def su_cancelled(self, call: Call) -> Message:
        return text(json.dumps([entry["requestId"] for entry in self.cancelled]), {"cancelled": self.cancelled})

    async def su_log(self, call: Call) -> Message:
        floor, sent = call.meta.get(LOG_LEVEL), []
        for level in ("debug", "info", "warning", "error") if floor is not None else ():
            if LEVELS.index(level) >= LEVELS.index(floor):
                await call.notify("notifications/message", level=level, logger="su_log", data=f"a {level} line")
                sent.append(level)
        return text("sent: " + (",".join(sent) or "none"), {"sent": sent})

    async def su_task(self, call: Call) -> Message:
        if TASKS not in (call.caps.get("extensions") or {}):
            raise missing({"extensions": {TASKS: {}}})
        ask, ms = bool(call.args.get("ask", False)), call.number("ms", 100, 60_000)
        if ask:
            need_elicitation(call.caps, "form")
        job = Job(ask, ms)
        self.jobs[job.info["taskId"]] = job
        return {"resultType": "task", **job.info}


CACHE = {"ttlMs": 60_000, "cacheScope": "public"}  # CacheableResult (docs/server/utilities/caching.mdx:43-60)


# ---------------------------------------------------------------- stdio


async def serve_stdio(upstream: Upstream) -> None:
    """One JSON-RPC message per line (docs/basic/transports/stdio.mdx:10-21); ends at EOF (:102-104)."""
    reader = asyncio.StreamReader(limit=1 << 24)
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def write(message: Message) -> None:
        sys.stdout.buffer.write(dumps(message) + b"\n")
        sys.stdout.buffer.flush()

    async def emit(message: Message | None) -> None:
        if message is not None:
            write(message)

    async def answer(msg: Message) -> None:
        write((await upstream.respond(msg, emit))[1])

    pending: set[asyncio.Task[None]] = set()
    while line := await reader.readline():
        try:
            msg = json.loads(line) if line.strip() else None
        except ValueError:
            write(RpcError(-32700, "Parse error").response(None))
            continue
        if msg is None or (isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg)):
            continue  # a blank line, or a response: clients send none (stdio.mdx:35-37)
        if not isinstance(msg, dict) or "method" not in msg:
            write(RpcError(-32600, "Invalid Request").response(None))
        elif "id" not in msg:
            if msg["method"] == "notifications/cancelled" and isinstance(msg.get("params"), dict):
                upstream.cancel(msg["params"].get("requestId"), "notifications/cancelled")
        else:
            pending.add(task := asyncio.create_task(answer(msg)))
            task.add_done_callback(pending.discard)
    for task in pending:
        task.cancel()


# ---------------------------------------------------------------- Streamable HTTP

REASONS = {200: "OK", 202: "Accepted", 400: "Bad Request", 403: "Forbidden", 404: "Not Found"}
REASONS |= {405: "Method Not Allowed", 411: "Length Required", 413: "Content Too Large", 500: "Internal Server Error"}


def head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS[status]}", *(f"{k}: {v}" for k, v in headers.items()), "Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def plain(status: int, body: Message | None = None, **headers: str) -> bytes:
    data, kind = (b"", {}) if body is None else (dumps(body), {"Content-Type": "application/json"})
    return head(status, {**kind, **headers, "Content-Length": str(len(data))}) + data


def header_gate(headers: dict[str, str]) -> Callable[[Message], None]:
    """Mirrored headers must be there and match the body (streamable-http.mdx:250-293, 490-504, 580-630)."""

    def gate(msg: Message) -> None:
        params, method = msg["params"], msg["method"]
        want = {"MCP-Protocol-Version": params["_meta"][PV], "Mcp-Method": method}
        named = params.get("taskId" if method.startswith("tasks/") else "name")
        if isinstance(named, str) and (method == "tools/call" or method.startswith("tasks/")):
            want["Mcp-Name"] = named
        for name, value in want.items():
            got = headers.get(name.lower())
            if got and name == "Mcp-Name" and got.startswith("=?base64?") and got.endswith("?="):
                with contextlib.suppress(ValueError):
                    got = base64.b64decode(got[9:-2], validate=True).decode()
            if got != value:
                message = f"Header mismatch: {name} header value {got!r} does not match body value {value!r}"
                raise RpcError(-32020, message, status=400)

    return gate


class Stream:
    """The POST's SSE response, opened by its first event (streamable-http.mdx:107-142)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer, self.open = writer, False

    async def send(self, message: Message | None) -> None:
        if not self.open:
            self.open = True
            sse = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
            self.writer.write(head(200, sse))
        self.writer.write(b":\n\n" if message is None else b"data: " + dumps(message) + b"\n\n")
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()


async def closed(reader: asyncio.StreamReader) -> None:
    while await reader.read(4096):
        pass


def refusal(verb: str, target: str, headers: dict[str, str]) -> bytes | None:
    """The response to a request refused before its body is read, if it is."""
    origin, length = headers.get("origin"), headers.get("content-length", "")
    if origin is not None and urlsplit(origin).hostname not in ("127.0.0.1", "localhost", "::1"):
        return plain(403, RpcError(-32600, f"Origin not allowed: {origin}").response(None))
    if urlsplit(target).path != "/mcp":
        return plain(404)
    if verb != "POST":  # no GET stream, no session to DELETE (streamable-http.mdx:680-687)
        return plain(405, Allow="POST")
    if not length.isdigit() or int(length) > 4 << 20:
        return plain(411 if not length.isdigit() else 413)
    return None


async def exchange(upstream: Upstream, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One HTTP request and its response."""
    request_line, *lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    verb, target, _ = request_line.split(" ", 2)
    headers = {key.strip().lower(): value.strip() for key, _, value in (line.partition(":") for line in lines if line)}
    if (refused := refusal(verb, target, headers)) is not None:
        writer.write(refused)
        return
    try:
        msg = json.loads(await reader.readexactly(int(headers["content-length"])))
    except ValueError:
        writer.write(plain(400, RpcError(-32700, "Parse error").response(None)))
        return
    if not isinstance(msg, dict) or "method" not in msg:
        writer.write(plain(400, RpcError(-32600, "Invalid Request: clients send no responses").response(None)))
    elif "id" not in msg:  # a notification: accepted (streamable-http.mdx:82-87)
        if msg["method"] == "notifications/cancelled" and isinstance(msg.get("params"), dict):
            upstream.cancel(msg["params"].get("requestId"), "notifications/cancelled")
        writer.write(plain(202))
    else:
        stream = Stream(writer)
        work = asyncio.create_task(upstream.respond(msg, stream.send, header_gate(headers)))
        gone = asyncio.create_task(closed(reader))
        await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():  # the client closed the POST: that is the cancellation (streamable-http.mdx:233-240)
            upstream.cancel(msg.get("id"), "disconnect", work, msg)
            return
        gone.cancel()
        status, body = work.result()
        if stream.open:
            await stream.send(body)
        else:
            writer.write(plain(status, body))


async def serve_http(upstream: Upstream, port: int) -> None:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await exchange(upstream, reader, writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", port, limit=1 << 16)
    print(f"listening on http://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", action="store_true", help="newline-delimited JSON-RPC on stdin/stdout")
    where.add_argument("--http", type=int, metavar="PORT", help="Streamable HTTP on 127.0.0.1:PORT (0: any free port)")
    options = parser.parse_args()
    upstream = Upstream()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(upstream) if options.stdio else serve_http(upstream, options.http))


if __name__ == "__main__":
    main()
