"""Tasks (2025-11-25 ``capabilities.tasks``): a tool call run as a task, polled, fetched, cancelled.

For a server that declares ``tasks.requests.tools.call`` and lists a tool whose
``execution.taskSupport`` is ``optional`` or ``required``: the call with a ``task`` gets a
``CreateTaskResult`` (``tasks.create``), ``tasks/get`` is polled until the task ends and every
status seen must follow the legal paths (``tasks.status``) with its timestamps and ttl
(``tasks.fields``), ``tasks/result`` returns the tool's result tied to the task
(``tasks.result``), a second task is cancelled and must be, and stay, ``cancelled``
(``tasks.cancel``), and cancelling a finished task is -32602 (``tasks.cancel-terminal``).
A tool named like a slow one (``slow``, ``sleep``, ``long``, ``compute``) is preferred; a
person names one with ``--tool slow=NAME``. The stateless era's tasks extension
(2026-07-28, SEP-2663) is not checked here: the conformance harness's ``tasks-*`` scenarios
cover it (``--with-conformance``).
"""

from __future__ import annotations

__all__ = ["CHECKS"]

import asyncio
import itertools
import re
from typing import Any

from ..types.versions import Era
from .plan import arguments_for
from .run import Run, checks, result_of, said
from .shapes import obj
from .wire import Wire, error_code

_IDS = ("tasks.create", "tasks.status", "tasks.fields", "tasks.result", "tasks.cancel", "tasks.cancel-terminal")
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_NEXT: dict[str, frozenset[str]] = {
    "working": frozenset({"working", "input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"input_required", "working", "completed", "failed", "cancelled"}),
}
_RELATED = "io.modelcontextprotocol/related-task"
_SLOW = re.compile(r"slow|sleep|long|compute|wait|delay")
#: A tool that asks the user something mid-task waits on a person: found last.
_ASKS = re.compile(r"elicit|user|input|confirm|ask")


def _task_tool(run: Run, era: Era) -> tuple[dict[str, Any] | None, str]:
    info = run.eras[era]
    plan = info.plan
    calls = obj(obj(obj(info.capabilities.get("tasks")).get("requests")).get("tools")).get("call")
    if not isinstance(calls, dict):
        return None, "the server declares no tasks.requests.tools.call"
    named = run.options.config.tools.get("slow")
    capable = [
        tool
        for name, tool in plan.tools.items()
        if name not in plan.exclude and obj(tool.get("execution")).get("taskSupport") in ("optional", "required")
    ]
    if named is not None:
        capable = [tool for tool in capable if tool["name"] == named.name] or capable
    if not capable:
        return None, "no tool the server lists may run as a task (execution.taskSupport)"
    capable.sort(
        key=lambda tool: (
            bool(_ASKS.search(tool["name"].lower())),
            not _SLOW.search(tool["name"].lower()),
            len(obj(tool.get("inputSchema")).get("required") or []),
        )
    )
    return capable[0], ""


def _task_of(answer: dict[str, Any] | None) -> dict[str, Any]:
    """The task in a CreateTaskResult, or a tasks/get or tasks/cancel result (a Task itself)."""
    result = result_of(answer) or {}
    task = result.get("task")
    return task if isinstance(task, dict) else result


def _missing_fields(task: dict[str, Any]) -> list[str]:
    missing = [key for key in ("taskId", "status", "createdAt", "lastUpdatedAt") if not isinstance(task.get(key), str)]
    return missing


@checks("tasks.create")
async def tasks(run: Run) -> None:
    for era in run.eras_spoken():
        if era == "stateless":
            why = "the 2026-07-28 tasks extension is the conformance harness's (--with-conformance), not checked here"
            for check in _IDS:
                run.not_applicable(check, why, era=era)
            continue
        tool, why = _task_tool(run, era)
        if tool is None:
            for check in _IDS:
                run.not_applicable(check, why, era=era)
            continue
        await _run_task(run, era, tool)
        await _cancel_task(run, era, tool)


async def _create(
    run: Run, wire: Wire, tool: dict[str, Any], role: str
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    arguments = arguments_for(tool, role)
    properties = obj(obj(tool.get("inputSchema")).get("properties"))
    for key, value in arguments.items():
        # a duration the schema says is in milliseconds, given in seconds by arguments_for
        described = str(obj(properties.get(key)).get("description") or "").lower()
        if "millisecond" in described and "ms" not in key.lower() and isinstance(value, int | float):
            arguments[key] = value * 1000
    answer = await wire.ask(
        "tools/call", {"name": tool["name"], "arguments": arguments, "task": {"ttl": 60_000}}, rounds=0
    )
    return answer, _task_of(answer)


async def _poll(run: Run, wire: Wire, task_id: str, seconds: float) -> list[dict[str, Any] | None]:
    """tasks/get until the task ends (or ``seconds`` pass): every answer."""
    answers: list[dict[str, Any] | None] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        answer = await wire.ask("tasks/get", {"taskId": task_id})
        answers.append(answer)
        task = _task_of(answer)
        if result_of(answer) is None or task.get("status") in _TERMINAL:
            break
        interval = task.get("pollInterval")
        wait = interval / 1000 if isinstance(interval, int | float) and not isinstance(interval, bool) else 0.2
        await asyncio.sleep(min(max(wait, 0.05), 2.0))
    return answers


async def _run_task(run: Run, era: Era, tool: dict[str, Any]) -> None:
    name = tool["name"]
    async with run.session(era) as wire:
        answer, task = await _create(run, wire, tool, "progress")
        task_id = task.get("taskId")
        if result_of(answer) is None or not isinstance(task_id, str) or task.get("status") != "working":
            summary = f"{name} called with a task got {said(answer)}" + (
                f", its task {task!r:.200}" if result_of(answer) is not None else ""
            )
            run.add("tasks.create", "fail", summary, era=era, wire=wire)
            for check in _IDS[1:]:
                run.not_applicable(check, "no task was created", era=era)
            return
        run.add("tasks.create", "pass", f"{name} became task {task_id!r}, working", era=era)
        answers = await _poll(run, wire, task_id, run.options.timeout + 20)
        statuses = [_task_of(a).get("status") for a in answers]
        bad_answer = next((a for a in answers if result_of(a) is None), None)
        seen = ["working", *statuses]
        wrong = next(
            (
                (a, b)
                for a, b in itertools.pairwise(seen)
                if (a in _TERMINAL and a != b) or (a in _NEXT and b not in _NEXT[a])
            ),
            None,
        )
        if bad_answer is not None:
            run.add("tasks.status", "fail", f"tasks/get got {said(bad_answer)}", era=era, wire=wire)
        elif wrong is not None:
            run.add(
                "tasks.status",
                "fail",
                f"the task went {wrong[0]} -> {wrong[1]} (statuses {statuses})",
                era=era,
                wire=wire,
            )
        elif not statuses or statuses[-1] not in _TERMINAL:
            run.add(
                "tasks.status",
                "fail",
                f"the task did not end within the time allowed (statuses {statuses})",
                era=era,
                wire=wire,
            )
        else:
            run.add("tasks.status", "pass", f"tasks/get saw {statuses}", era=era)
        lacking = sorted(
            {key for a in answers if result_of(a) is not None for key in _missing_fields(_task_of(a))}
            | {"ttl" for a in answers if result_of(a) is not None and "ttl" not in _task_of(a)}
            | set(_missing_fields(task))
        )
        if lacking:
            run.add("tasks.fields", "fail", f"task answers lack {', '.join(lacking)}", era=era, wire=wire)
        else:
            run.add(
                "tasks.fields",
                "pass",
                f"{len(answers) + 1} task answers, each with createdAt, lastUpdatedAt (and ttl on tasks/get)",
                era=era,
            )
        final = await wire.ask("tasks/result", {"taskId": task_id}, timeout=run.options.timeout + 20)
        result = result_of(final)
        related = obj(obj(obj(result).get("_meta")).get(_RELATED)).get("taskId") if result is not None else None
        if final is None:
            run.add("tasks.result", "fail", "no answer to tasks/result", era=era, wire=wire)
        elif result is not None and not isinstance(result.get("content"), list):
            run.add(
                "tasks.result", "fail", f"tasks/result gave no tool result (keys {sorted(result)})", era=era, wire=wire
            )
        elif result is not None and related != task_id:
            run.add(
                "tasks.result",
                "fail",
                f"tasks/result's _meta names no {_RELATED} {task_id!r} (MUST, tasks.mdx:755)",
                era=era,
                wire=wire,
            )
        elif result is None and statuses and statuses[-1] == "completed":
            run.add("tasks.result", "fail", f"a completed task's tasks/result got {said(final)}", era=era, wire=wire)
        else:
            run.add("tasks.result", "pass", f"tasks/result gave {said(final)}, tied to the task", era=era)
        terminal = await wire.ask("tasks/cancel", {"taskId": task_id})
        if statuses and statuses[-1] in _TERMINAL:
            if error_code(terminal) == -32602:
                run.add("tasks.cancel-terminal", "pass", f"cancelling the {statuses[-1]} task got -32602", era=era)
            else:
                run.add(
                    "tasks.cancel-terminal",
                    "fail",
                    f"cancelling the {statuses[-1]} task got {said(terminal)}, not -32602",
                    era=era,
                    wire=wire,
                )
        else:
            run.not_applicable("tasks.cancel-terminal", "the task did not end", era=era)


async def _cancel_task(run: Run, era: Era, tool: dict[str, Any]) -> None:
    name = tool["name"]
    async with run.session(era) as wire:
        answer, task = await _create(run, wire, tool, "slow")
        task_id = task.get("taskId")
        if not isinstance(task_id, str):
            run.not_applicable("tasks.cancel", f"a second {name} task was not created ({said(answer)})", era=era)
            return
        if task.get("status") in _TERMINAL:
            run.not_applicable("tasks.cancel", f"{name}'s task ended before it could be cancelled", era=era)
            return
        cancelled = await wire.ask("tasks/cancel", {"taskId": task_id})
        status = _task_of(cancelled).get("status")
        if result_of(cancelled) is None or status != "cancelled":
            shown = said(cancelled) if result_of(cancelled) is None else f"status {status!r}"
            run.add("tasks.cancel", "fail", f"tasks/cancel got {shown}, not a cancelled task", era=era, wire=wire)
            return
        # The tool was asked to take a few seconds: past them, the task must still be cancelled.
        await wire.settle(5.0)
        later = await wire.ask("tasks/get", {"taskId": task_id})
        after = _task_of(later).get("status")
        if later is None:
            run.add(
                "tasks.cancel",
                "fail",
                "cancelled, then tasks/get got no answer: the server stopped answering once the cancelled work ended",
                era=era,
                wire=wire,
            )
        elif after != "cancelled":
            shown = said(later) if result_of(later) is None else f"status {after!r}"
            run.add("tasks.cancel", "fail", f"cancelled, then tasks/get got {shown}", era=era, wire=wire)
        else:
            run.add("tasks.cancel", "pass", "tasks/cancel answered a cancelled task, still cancelled 5 s on", era=era)


CHECKS = (tasks,)
