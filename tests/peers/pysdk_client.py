"""Drive a stdio MCP server with the official Python SDK client (``mcp==2.3.0``).

Usage::

    python tests/peers/pysdk_client.py --mode legacy|2026-07-28 [--plan JSON] [--timeout S] -- CMD [ARG...]
    python tests/peers/pysdk_client.py --mode legacy|2026-07-28 [--plan JSON] [--timeout S] --url URL

``--url URL`` connects over Streamable HTTP instead of spawning a stdio server: the URL string
goes straight to ``Client(URL, ...)``, which mcp 2.3.0 wraps in ``streamable_http_client``.

``--mode`` is passed to ``mcp.client.client.Client(mode=...)``: ``legacy`` runs the
``initialize`` handshake, ``2026-07-28`` adopts that version directly (no handshake, every
request carries the per-request ``_meta`` envelope), ``auto`` probes ``server/discover``.

``--plan`` is a JSON list of ``{"op": OP, "args": {...}}`` with OP one of:

* ``list_tools`` / ``list_prompts`` / ``list_resources`` / ``list_resource_templates``:
  args ``{}`` walks every page and returns the merged listing plus ``"pages": <count>``;
  args ``{"cursor": C}`` (C may be null for the first page) returns that one page as is.
* ``call_tool``: ``{"name": N, "arguments": {...}}``, optionally ``"meta": {...}`` (request ``_meta``,
  e.g. ``{"io.modelcontextprotocol/logLevel": "error"}`` for a per-request log level)
* ``call_tool_progress``: as ``call_tool``, with a ``progress_callback``; returns
  ``{"result": ..., "progress": [[progress, total, message], ...]}``
* ``call_tool_cancel``: as ``call_tool``, cancelled (an anyio cancel scope around the call) once
  ``"after_progress"`` (default 1) progress notifications arrived; returns ``{"cancelled": bool,
  "progress": [...], "release_seconds": <cancel to the call's return>}`` (or ``"result"`` if it
  finished first)
* ``set_logging_level``: ``{"level": L}`` (``logging/setLevel``)
* ``get_prompt``: ``{"name": N, "arguments": {...}}``
* ``read_resource``: ``{"uri": U}``
* ``ping``: ``{}`` (only meaningful in legacy mode; 2026-07-28 removed ping)
* ``answer_elicitation``: ``{"answers": [ElicitResult, ...]}`` queues answers (e.g.
  ``{"action": "accept", "content": {...}}``) for the server's coming elicitation requests,
  taken in order (``cancel`` once the queue is empty); returns ``{"queued": n}``. A plan with
  this op gets ``Client(elicitation_callback=...)``, so the client declares ``elicitation``
  (form and url, as the SDK does); without it, none is declared. The params of every
  elicitation request received are listed in the output's ``"elicitations"``. URL-mode
  requests (``mode: "url"``) go through the same callback: an ``accept`` is consent only.
* ``wait_for_file``: ``{"path": P, "timeout": S}`` waits (default 30 s) until file P exists, so
  a test can finish an out-of-band step (a URL elicitation's page) before the next step;
  returns ``{"waited": true}`` (``false`` on timeout).
* ``set_roots``: ``{"roots": [{"uri": U, "name"?: N}, ...]}`` sets what the client answers to
  ``roots/list`` from then on; returns ``{"roots": n}``. A plan with this op gets
  ``Client(list_roots_callback=...)``, so the client declares ``roots`` (``listChanged: true``,
  as the SDK does). The URIs of each answer given are listed in the output's ``"rootsAnswered"``.
* ``roots_list_changed``: ``{}`` sends ``notifications/roots/list_changed``; returns ``{"sent": true}``.
* ``answer_sampling``: ``{"answers": [CreateMessageResult, ...]}`` queues answers for the server's
  coming ``sampling/createMessage`` requests (an error -32603 once the queue is empty); a plan
  with this op gets ``Client(sampling_callback=...)`` (declares ``sampling``). The params of each
  sampling request are listed in the output's ``"samplings"``.
* ``complete``: ``{"ref": {"type": "ref/prompt", "name": N} | {"type": "ref/resource", "uri": U},
  "argument": {"name": A, "value": V}, "context"?: {name: value}}`` (``completion/complete``).

Without ``--plan`` a default plan matching ``pysdk_server.py`` runs (see DEFAULT_PLAN).

``--log-level L`` sets ``Client(log_level=L)``: the per-request level on 2026-07-28 connections.

``--record PATH`` appends one JSON line to PATH as each thing happens, for a test that must act
while the client runs: ``{"kind": "elicitation", "params": ...}`` (before the answer is given),
``{"kind": "notification", "method": ..., "params": ...}`` (``notifications/elicitation/complete``)
and ``{"kind": "result", "step": i, "result": ...}`` after each plan step.

Prints ONE JSON object on stdout::

    {"mode": ..., "protocolVersion": ..., "serverInfo": {...} | null,
     "serverCapabilities": {...}, "instructions": ... | null,
     "results": [<one entry per plan step>],
     "logs": [<params of each notifications/message, in arrival order>],
     "elicitations": [<params of each elicitation request, in arrival order>],
     "notifications": [<{"method", "params"} of each notifications/elicitation/complete>]}

Each result is ``model_dump(mode="json", by_alias=True, exclude_none=True)`` of the SDK result
(NB: the SDK's result models fill defaults the server may not have sent, e.g. ``resultType:
"complete"``, ``ttlMs: 0``, ``cacheScope: "private"``; ``--exclude-unset`` drops those),
or ``{"error": {"code": int | null, "message": str, ...}}`` when the step failed. A failure
to connect at all prints ``{"mode": ..., "connectError": {...}}`` and exits 2. The client's
response cache is disabled so every step reaches the server. The server inherits this
process's environment; its stderr passes through to ours.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from typing import Any

import anyio
from mcp import types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

DEFAULT_PLAN: list[dict[str, Any]] = [
    {"op": "list_tools", "args": {}},
    {"op": "call_tool", "args": {"name": "echo", "arguments": {"text": "hi"}}},
    {"op": "call_tool", "args": {"name": "add", "arguments": {"a": 2, "b": 3}}},
    {"op": "list_prompts", "args": {}},
    {"op": "get_prompt", "args": {"name": "greet", "arguments": {"name": "Ada"}}},
    {"op": "list_resources", "args": {}},
    {"op": "list_resource_templates", "args": {}},
    {"op": "read_resource", "args": {"uri": "res://hello"}},
    {"op": "read_resource", "args": {"uri": "res://items/42"}},
]

# op -> (Client method, key of the list in the result)
LIST_OPS: dict[str, tuple[str, str]] = {
    "list_tools": ("list_tools", "tools"),
    "list_prompts": ("list_prompts", "prompts"),
    "list_resources": ("list_resources", "resources"),
    "list_resource_templates": ("list_resource_templates", "resourceTemplates"),
}
MAX_PAGES = 1000


EXCLUDE_UNSET = False  # --exclude-unset: drop fields the server did not send (model defaults)
RECORD: str | None = None  # --record PATH: JSON lines written as things happen


def record(entry: dict[str, Any]) -> None:
    if RECORD is not None:
        with open(RECORD, "a", encoding="utf-8") as sink:
            sink.write(json.dumps(entry) + "\n")


def dump(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=EXCLUDE_UNSET)
    return result


def error_entry(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, MCPError):
        err: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            err["data"] = exc.data
        return {"error": err}
    return {"error": {"code": None, "message": str(exc) or type(exc).__name__, "type": type(exc).__name__}}


async def run_list(client: Client, op: str, args: dict[str, Any]) -> Any:
    method_name, key = LIST_OPS[op]
    method = getattr(client, method_name)
    if "cursor" in args:
        return dump(await method(cursor=args["cursor"]))
    merged: dict[str, Any] | None = None
    cursor: str | None = None
    for pages in range(1, MAX_PAGES + 1):
        page = dump(await method(cursor=cursor))
        if merged is None:
            merged = page
        else:
            merged[key].extend(page.get(key, []))
        cursor = page.get("nextCursor")
        if not cursor:
            merged.pop("nextCursor", None)
            merged["pages"] = pages
            return merged
    raise RuntimeError(f"{op}: more than {MAX_PAGES} pages")


class Elicitations:
    """Answers elicitation requests from the plan's queue and records what was asked."""

    def __init__(self) -> None:
        self.queue: list[dict[str, Any]] = []
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(dump(params))
        record({"kind": "elicitation", "params": self.asked[-1]})
        answer = self.queue.pop(0) if self.queue else {"action": "cancel"}
        return types.ElicitResult(**answer)


class RscInputs:
    """Roots and sampling answered from the plan (``set_roots``, ``answer_sampling``), with what
    the server asked recorded: the roots given at each ``roots/list`` and each sampling request."""

    def __init__(self, roots: bool, sampling: bool) -> None:
        self.roots: list[dict[str, Any]] = []
        self.roots_answered: list[list[str]] = []
        self.samples: list[dict[str, Any]] = []
        self.sampled: list[Any] = []
        self.list_roots = self._list_roots if roots else None
        self.sampling = self._sample if sampling else None

    async def _list_roots(self, context: Any) -> types.ListRootsResult:
        result = types.ListRootsResult(roots=[types.Root.model_validate(root) for root in self.roots])
        self.roots_answered.append([str(root.uri) for root in result.roots])
        return result

    async def _sample(self, context: Any, params: Any) -> types.CreateMessageResult | types.ErrorData:
        self.sampled.append(dump(params))
        if not self.samples:
            return types.ErrorData(code=-32603, message="no sampling answer queued")
        return types.CreateMessageResult.model_validate(self.samples.pop(0))


RSC_OPS = ("set_roots", "roots_list_changed", "answer_sampling", "complete")
RSC: RscInputs | None = None  # set by amain when the plan has one of RSC_OPS


async def run_rsc_step(client: Client, op: str, args: dict[str, Any]) -> Any:
    if op == "set_roots":
        assert RSC is not None
        RSC.roots = list(args.get("roots") or [])
        return {"roots": len(RSC.roots)}
    if op == "roots_list_changed":
        await client.send_roots_list_changed()
        return {"sent": True}
    if op == "answer_sampling":
        assert RSC is not None
        RSC.samples.extend(args.get("answers") or [])
        return {"queued": len(RSC.samples)}
    ref_args = args["ref"]
    ref: types.PromptReference | types.ResourceTemplateReference
    if ref_args.get("type") == "ref/prompt":
        ref = types.PromptReference.model_validate(ref_args)
    else:
        ref = types.ResourceTemplateReference.model_validate(ref_args)
    return dump(await client.complete(ref, args["argument"], args.get("context")))


async def run_step(client: Client, step: dict[str, Any], elicitations: Elicitations | None = None) -> Any:
    op = step.get("op")
    args = step.get("args") or {}
    if op == "answer_elicitation":
        assert elicitations is not None
        elicitations.queue.extend(args.get("answers") or [])
        return {"queued": len(elicitations.queue)}
    if op in RSC_OPS:
        return await run_rsc_step(client, op, args)
    if op == "wait_for_file":
        target = anyio.Path(args["path"])
        for _ in range(int(float(args.get("timeout", 30)) / 0.02) + 1):
            if await target.exists():
                return {"waited": True}
            await anyio.sleep(0.02)
        return {"waited": False}
    if op in LIST_OPS:
        return await run_list(client, op, args)
    if op == "call_tool":
        if "meta" in args:
            return dump(await client.call_tool(args["name"], args.get("arguments"), meta=args["meta"]))
        return dump(await client.call_tool(args["name"], args.get("arguments")))
    if op == "call_tool_progress":
        progress: list[list[Any]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append([value, total, message])

        result = await client.call_tool(args["name"], args.get("arguments"), progress_callback=on_progress)
        return {"result": dump(result), "progress": progress}
    if op == "call_tool_cancel":
        return await run_cancel(client, args)
    if op == "set_logging_level":
        return dump(await client.set_logging_level(args["level"]))
    if op == "get_prompt":
        return dump(await client.get_prompt(args["name"], args.get("arguments")))
    if op == "read_resource":
        return dump(await client.read_resource(args["uri"]))
    if op == "ping":
        return dump(await client.session.send_ping())
    raise ValueError(f"unknown op {op!r}")


async def run_cancel(client: Client, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool and cancel the call (the caller's cancel scope) after some progress."""
    progress: list[list[Any]] = []
    enough = anyio.Event()
    needed = int(args.get("after_progress", 1))
    scope = anyio.CancelScope()
    outcome: dict[str, Any] = {}

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])
        if len(progress) >= needed:
            enough.set()

    async def call() -> None:
        with scope:
            result = await client.call_tool(args["name"], args.get("arguments"), progress_callback=on_progress)
            outcome["result"] = dump(result)
        enough.set()

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await enough.wait()
        cancelled_at = time.monotonic()
        scope.cancel()
    return {
        **outcome,
        "cancelled": scope.cancelled_caught,
        "progress": progress,
        "release_seconds": time.monotonic() - cancelled_at,
    }


async def amain(
    mode: str,
    plan: list[dict[str, Any]],
    command: list[str],
    request_timeout: float,
    url: str | None = None,
    log_level: str | None = None,
) -> int:
    server: str | StdioServerParameters
    if url is not None:
        server = url
    else:
        server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(dump(params))

    notifications: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ElicitCompleteNotification):
            entry = {"method": message.method, "params": dump(message.params)}
            notifications.append(entry)
            record({"kind": "notification", **entry})

    elicitations = Elicitations() if any(step.get("op") == "answer_elicitation" for step in plan) else None
    global RSC
    ops = {step.get("op") for step in plan}
    RSC = RscInputs("set_roots" in ops, "answer_sampling" in ops) if ops & set(RSC_OPS) else None
    client = Client(
        server,
        mode=mode,
        read_timeout_seconds=request_timeout,
        cache=None,
        logging_callback=on_log,
        message_handler=on_message,
        log_level=log_level,  # type: ignore[arg-type]
        elicitation_callback=elicitations,
        list_roots_callback=RSC.list_roots if RSC is not None else None,
        sampling_callback=RSC.sampling if RSC is not None else None,
    )
    out: dict[str, Any] = {
        "mode": mode,
        "logs": logs,
        "elicitations": elicitations.asked if elicitations else [],
        "notifications": notifications,
    }
    if RSC is not None:
        out["rootsAnswered"] = RSC.roots_answered
        out["samplings"] = RSC.sampled
    try:
        with anyio.fail_after(request_timeout * (len(plan) + 2)):
            async with client:
                info = client.server_info
                out["protocolVersion"] = client.protocol_version
                out["serverInfo"] = dump(info) if info is not None else None
                out["serverCapabilities"] = dump(client.server_capabilities)
                out["instructions"] = client.instructions
                results: list[Any] = []
                for index, step in enumerate(plan):
                    try:
                        results.append(await run_step(client, step, elicitations))
                    except Exception as exc:
                        results.append(error_entry(exc))
                    record({"kind": "result", "step": index, "result": results[-1]})
                out["results"] = results
    except Exception as exc:
        if "results" not in out:
            out["connectError"] = error_entry(exc)["error"]
            print(json.dumps(out))
            return 2
        out["closeError"] = error_entry(exc)["error"]
    print(json.dumps(out))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv and "--url" not in argv:
        print("usage: pysdk_client.py --mode MODE [--plan JSON] (--url URL | -- CMD [ARG...])", file=sys.stderr)
        return 64
    split = argv.index("--") if "--" in argv else len(argv)
    own, command = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(prog="pysdk_client.py")
    parser.add_argument("--mode", default="legacy", help="legacy | auto | 2026-07-28")
    parser.add_argument("--plan", default=None, help="JSON list of {op, args}")
    parser.add_argument("--timeout", type=float, default=20.0, help="per-request read timeout (s)")
    parser.add_argument("--url", default=None, help="Streamable HTTP endpoint (instead of a stdio command)")
    parser.add_argument("--log-level", default=None, help="Client(log_level=...): per-request level (2026-07-28)")
    parser.add_argument("--record", default=None, help="append JSON lines of events to this file as they happen")
    parser.add_argument(
        "--exclude-unset",
        action="store_true",
        help="dump with exclude_unset=True (drop model defaults the server did not send)",
    )
    ns = parser.parse_args(own)
    global EXCLUDE_UNSET, RECORD
    EXCLUDE_UNSET = ns.exclude_unset
    RECORD = ns.record
    if not command and ns.url is None:
        parser.error("missing server command after -- (or --url)")
    if command and ns.url is not None:
        parser.error("give either --url or a server command, not both")
    plan = DEFAULT_PLAN if ns.plan is None else json.loads(ns.plan)
    if not isinstance(plan, list):
        parser.error("--plan must be a JSON list")
    warnings.simplefilter("ignore")  # deprecation warnings (ping, etc.) must not clutter stderr
    return anyio.run(amain, ns.mode, plan, command, ns.timeout, ns.url, ns.log_level)


if __name__ == "__main__":
    sys.exit(main())
