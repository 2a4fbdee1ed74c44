"""The ``tasks/*`` routes, both eras (``server/routes.py`` lists them in ``ROUTES``).

Which method exists in which revision is ``types/methods.py``'s business (the server answers
-32601 for the others): ``tasks/get`` and ``tasks/cancel`` in both, ``tasks/update`` in
2026-07-28 only, ``tasks/result`` and ``tasks/list`` in 2025-11-25 only. Every route first
finds the task among the caller's own (``TaskService.find``: -32602 otherwise), and in the
stateless era first checks that the request declares the extension (-32021).

``tasks/result`` (2025-11-25) blocks until the task ends. While it waits it relays the task's
questions to the client on its own stream, each as a request carrying the related-task
``_meta``, and hands the answers to the task (tasks.mdx §Input Required Status): the task
asks the same way in both eras, and whichever worker holds the client's stream asks for it.
"""

from __future__ import annotations

__all__ = ["TASK_ROUTES"]

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...protocol.events import RequestReceived
from ...types.errors import InvalidParams, MCPError, MethodNotFound
from ...types.tasks import RELATED_TASK
from ..context import Context
from ..pagination import paginate

if TYPE_CHECKING:
    from ..route_face import RouteServer
    from .records import TaskRecord
    from .service import TaskService

logger = logging.getLogger("backchannel")

Route = Callable[["RouteServer", RequestReceived, Context], Awaitable[dict[str, Any]]]


async def get_task(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    server.tasks.require_extension(request)
    record = await server.tasks.find(context, request.params.get("taskId"))
    if request.era == "handshake":
        return record.task()
    return record.extension_task(detailed=True)


async def update_task(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    service = server.tasks
    service.require_extension(request)
    record = await service.find(context, request.params.get("taskId"))
    responses = request.params.get("inputResponses")
    if not isinstance(responses, dict) or not all(isinstance(answer, dict) for answer in responses.values()):
        raise InvalidParams("tasks/update: params.inputResponses must be an object of answers keyed like inputRequests")
    # The runner ignores keys not outstanding (never asked, answered already, superseded: SEP-2663);
    # this worker's copy of the record may be older than a question just asked, so it does not judge.
    if responses and not record.terminal:
        await service.deliver(record, responses)
    return {}


async def cancel_task(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    service = server.tasks
    service.require_extension(request)
    record = await service.find(context, request.params.get("taskId"))
    if record.terminal:
        if request.era == "handshake":  # 2025-11-25: -32602; the extension acknowledges (idempotent)
            raise InvalidParams(f"Cannot cancel task: already in terminal status {record.status!r}")
        return {}
    record = await service.cancel(record)
    return record.task() if request.era == "handshake" else {}


async def task_result(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    service = server.tasks
    task_id = request.params.get("taskId")
    record = await service.find(context, task_id)
    relaying: dict[str, asyncio.Task[None]] = {}
    stream = (context.connection, request.id)
    streams: list[Any] = []
    pause = 0.05
    try:
        while not record.terminal:
            for key, question in record.questions.items():
                if key not in relaying and (record.task_id, key) not in service.relayed:
                    relaying[key] = asyncio.ensure_future(_relay(service, context, record, key, question))
            runner = service.running.get(record.task_id)
            if runner is not None:  # here: woken by its next write, on its stream its notifications
                if stream not in runner.result_streams:
                    runner.result_streams.append(stream)
                    streams = runner.result_streams
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(runner.watch(), record.poll_interval)
            else:  # on another worker: read its record again, more slowly as it runs on
                await asyncio.sleep(pause)
                pause = min(pause * 2, record.poll_interval)
            record = await service.find(context, task_id)
    finally:
        for waiting in relaying.values():
            waiting.cancel()
        if stream in streams:
            streams.remove(stream)
    return _payload(record)


def _payload(record: TaskRecord) -> dict[str, Any]:
    """What the underlying request would have returned (tasks.mdx §Result Retrieval)."""
    if record.error is not None:
        error = record.error
        raise MCPError(str(error.get("message", "")), code=int(error.get("code", -32603)), data=error.get("data"))
    if record.result is None:
        raise InvalidParams(f"Task {record.task_id} was {record.status} before it had a result")
    meta = {**(record.result.get("_meta") or {}), RELATED_TASK: {"taskId": record.task_id}}
    return {**record.result, "_meta": meta}


async def _relay(
    service: TaskService, context: Context, record: TaskRecord, key: str, question: dict[str, Any]
) -> None:
    """Put one of the task's questions to the client on this request's stream; give the task the answer."""
    marker = (record.task_id, key)
    service.relayed.add(marker)
    params = dict(question.get("params") or {})
    params["_meta"] = {**(params.get("_meta") or {}), RELATED_TASK: {"taskId": record.task_id}}
    method = str(question.get("method"))
    try:

        def ask(asked: dict[str, Any]) -> Awaitable[dict[str, Any]]:
            return context.connection.request(method, asked, related=context.request.id)

        answer = await context.asked_through_middleware(method, params, ask)
    except MCPError as exc:
        if method != "elicitation/create":
            logger.info("task %s: the client did not answer %s: %s", record.task_id, method, exc)
            return
        answer = {"action": "cancel"}  # as a person dismissing the form
    finally:
        service.relayed.discard(marker)
    await service.deliver(record, {key: answer})


async def list_tasks(server: RouteServer, request: RequestReceived, context: Context) -> dict[str, Any]:
    if server.tasks.shared is not None:
        raise MethodNotFound("Method not found: tasks/list (a fleet of workers does not list tasks; use tasks/get)")
    records = await server.tasks.listed(context)
    page, next_cursor = paginate("tasks", records, request.params.get("cursor"), server.page_size)
    result: dict[str, Any] = {"tasks": [record.task() for record in page]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


#: Method -> route for the tasks methods (each revision allows its own subset).
TASK_ROUTES: dict[str, Route] = {
    "tasks/get": get_task,
    "tasks/update": update_task,
    "tasks/cancel": cancel_task,
    "tasks/result": task_result,
    "tasks/list": list_tasks,
}
