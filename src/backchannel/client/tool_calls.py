"""``Client.call_tool`` and ``Client.start_task``: a tool call, run as a task where the server wants one.

Who decides differs by era. In the handshake era (2025-11-25) the client asks for a task
with ``params.task``, and only for a tool whose ``execution.taskSupport`` allows one on a
server that declares ``tasks.requests.tools.call``; a tool that *requires* one refuses a
plain call (-32601). In the stateless era the client declares the tasks extension on every
request and the server decides, answering with ``resultType: "task"`` when it makes one.

``call_tool`` hides all of it: a call that becomes a task is followed to its end, and in
the handshake era a tool that requires a task is called as one (the tools are listed once
to learn which). ``start_task`` hands the task over as a ``ToolTask``, also when the
server runs the tool without one.
"""

from __future__ import annotations

__all__ = ["call_tool", "start_task", "task_support"]

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from ..runtime.connection import ProgressCallback
from ..types.errors import MCPError, RequestTimeout
from ..types.tools import CallToolResult
from .era_detection import converted
from .task_state import TaskState
from .tasks import ToolTask

if TYPE_CHECKING:
    from .client import Client


async def call_tool(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    timeout: float | None = None,
    on_progress: ProgressCallback | None = None,
    progress_resets_timeout: bool = False,
    max_timeout: float | None = None,
    meta: dict[str, Any] | None = None,
) -> CallToolResult:
    """Call a tool. Cancelling the awaiting task, or ``timeout`` expiring, cancels the call on
    the wire; see ``request`` for the progress-driven timeout. ``meta`` goes in the request's
    ``params._meta`` (beside the keys the era puts there).

    A call the server runs as a task is followed until the task ends (see ``start_task``):
    then ``timeout``, when given, bounds the whole wait, and cancelling or running out of
    time cancels the task (``tasks/cancel``), and ``on_progress`` hears the task's progress
    until it ends (2025-11-25). A task that fails raises ``TaskFailed`` (a ``RequestError``
    with the task's error), one cancelled ``TaskCancelled``."""
    options: dict[str, Any] = {
        "timeout": timeout,
        "on_progress": on_progress,
        "progress_resets_timeout": progress_resets_timeout,
        "max_timeout": max_timeout,
    }
    # A server that offers tasks has its tools say whether they need one, and a plain call of one
    # that does is refused (-32601; the TypeScript SDK answers it as a tool error): so ask first.
    if client.era == "handshake" and _offers_tasks(client) and await task_support(client, name) == "required":
        return await _waited(await start_task(client, name, arguments, on_progress=on_progress, meta=meta), timeout)
    answer = await client.request("tools/call", _params(name, arguments, meta), **options)
    if answer.get("resultType") == "task":
        return await _waited(_following(client, name, arguments, answer), timeout)
    return converted(answer, CallToolResult, "tools/call")


async def start_task(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    ttl: float | None = None,
    on_progress: ProgressCallback | None = None,
    meta: dict[str, Any] | None = None,
) -> ToolTask:
    """Call a tool as a task; the ``ToolTask`` once the server accepted it (await it for the result).

    Handshake era: ``tools/call`` with ``params.task`` (``ttl`` seconds asked for, the server
    may choose another), when the server and the tool allow a task; otherwise a plain call,
    which the handle stands for (``task_id`` None). Stateless era: the server decides; a
    result it gives at once makes a handle that is already done. ``on_progress`` hears the
    call's progress and, in the handshake era, the task's on the same token until the task
    ends (2025-11-25 progress.mdx; the stateless era's tasks have no progress notifications,
    so there it shows in ``state.status_message`` only). ``meta``: as for ``call_tool``."""
    params = _params(name, arguments, meta)
    if client.era == "handshake":
        if not _offers_tasks(client) or await task_support(client, name) not in ("optional", "required"):
            call = client.request("tools/call", params, on_progress=on_progress)
            handle = ToolTask(client, name, arguments, TaskState(None, "working"), client.tasks.number())
            return handle.run_plain(_typed(call))
        params["task"] = {} if ttl is None else {"ttl": round(ttl * 1000)}
        answer = await client.request("tools/call", params, on_progress=on_progress)
        created = answer.get("task")
        if created is None:  # a server may still answer at once
            return _finished(client, name, arguments, answer)
        return _following(client, name, arguments, {**answer, **created})
    answer = await client.request("tools/call", params, on_progress=on_progress)
    if answer.get("resultType") == "task":
        return _following(client, name, arguments, answer)
    return _finished(client, name, arguments, answer)


async def task_support(client: Client, name: str) -> str | None:
    """The tool's 2025-11-25 ``execution.taskSupport`` (None: not said, which forbids a task).
    Learnt from ``tools/list``: listed once, and again after the server said the list changed."""
    if client.tasks.support is None:
        await client.list_tools()  # which learns every tool's taskSupport
    return (client.tasks.support or {}).get(name)


def _offers_tasks(client: Client) -> bool:
    tasks = client.server_capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def _params(name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if meta:
        params["_meta"] = dict(meta)
    return params


def _following(client: Client, name: str, arguments: dict[str, Any] | None, task: dict[str, Any]) -> ToolTask:
    state = TaskState.from_wire(task, "tools/call")
    return ToolTask(client, name, arguments, state, client.tasks.number()).follow()


def _finished(client: Client, name: str, arguments: dict[str, Any] | None, answer: dict[str, Any]) -> ToolTask:
    result = converted(answer, CallToolResult, "tools/call")
    state = TaskState(None, "failed" if result.is_error else "completed")
    return ToolTask(client, name, arguments, state, client.tasks.number()).finish(result)


async def _typed(call: Any) -> CallToolResult:
    return converted(await call, CallToolResult, "tools/call")


async def _waited(task: ToolTask, timeout: float | None) -> CallToolResult:
    """The task's result; cancelled, or out of ``timeout``, it is cancelled on the server too."""
    try:
        async with asyncio.timeout(timeout):
            return await task
    except (asyncio.CancelledError, TimeoutError) as exc:
        if not task.done:
            with contextlib.suppress(MCPError):
                await asyncio.shield(task.cancel())
        if isinstance(exc, TimeoutError) and not isinstance(exc, MCPError):
            raise RequestTimeout(f"tools/call {task.name}: no result within {timeout} s") from None
        raise
