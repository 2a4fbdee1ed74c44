"""One task running in this process: its body, the questions it waits on, the writes of its record.

A ``TaskRunner`` is made for each ``tools/call`` that becomes a task. The tool's body runs in
an asyncio task of its own, so it outlives the request that started it; the request is
answered with ``CreateTaskResult`` once the record is in the store (``begin``). The body's
``Context`` points here (``ctx.task``), which is how ``ctx.elicit``, ``ctx.report_progress``,
``ctx.log`` and ``ctx.cancelled`` reach the task rather than the finished request:

- a question (``ask``) is written into the record as an input request and the task moves to
  ``input_required``; the body waits until an answer arrives (``answer``: from ``tasks/update``
  in the stateless era, from the client's reply to the question that ``tasks/result`` relays in
  the handshake era, on this worker or forwarded from another);
- progress is written into the record (its status message), and in the handshake era also sent
  as ``notifications/progress`` on the request's token;
- ``cancel`` marks the task ``cancelled`` (for good) and cancels the body.

This runner is the record's only writer while the task runs: writes are serialized and each
writes the newest state. A finished body writes the result or error, once.
"""

from __future__ import annotations

__all__ = ["TaskKeeper", "TaskRunner"]

import asyncio
import dataclasses
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ...types.errors import INTERNAL_ERROR, LocalProtocolError, MCPError, RequestTimeout
from ...types.meta import PROGRESS_TOKEN
from ...types.tasks import RELATED_TASK
from ..tools import RegisteredTool, failure_result
from .records import TaskRecord

if TYPE_CHECKING:
    from ...protocol.events import RequestId, RequestReceived
    from ...runtime.connection import Connection
    from ..context import Context
    from .store import Budget, TaskStore

logger = logging.getLogger("backchannel")


class TaskKeeper(Protocol):
    """What a runner needs of the service that keeps this process's tasks (``TaskService`` meets
    it; this module imports no ``service.py``, which makes the runners)."""

    @property
    def clock(self) -> Callable[[], float]: ...
    @property
    def store(self) -> TaskStore: ...

    async def keep(self, runner: TaskRunner) -> None: ...
    def release(self, runner: TaskRunner) -> None: ...
    def changed(self, record: TaskRecord) -> None: ...


class TaskRunner:
    """The running side of one task (see the module)."""

    def __init__(
        self, service: TaskKeeper, record: TaskRecord, context: Context, tool: RegisteredTool, budget: Budget
    ) -> None:
        self.service = service
        self.record = record
        #: Whose tasks it counts among (``TaskService.budget``), from the request that made it.
        self.budget = budget
        self.context = context
        self.tool = tool
        #: True once the record is stored and the caller may be told the task's id.
        self.begun = False
        #: Resolved when ``begin`` is done (the request waiting to answer watches it).
        self.created: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.body: asyncio.Task[Any] | None = None
        #: Set once ``tasks/cancel`` reached this task (``ctx.cancelled``).
        self.cancel_requested = False
        #: Open ``tasks/result`` requests for this task on this worker (handshake era), newest last.
        self.result_streams: list[tuple[Connection, RequestId]] = []
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._keys: set[str] = set()
        self._asked = 0
        self._last_progress: float | None = None
        self._lock = asyncio.Lock()
        self._changes = 0
        self._saved = 0
        self._watchers: list[asyncio.Future[None]] = []
        self._told: tuple[str, tuple[str, ...]] | None = None  # what followers last heard (status, questions)
        self._expiry: asyncio.TimerHandle | None = None
        meta = context.request.params.get("_meta")
        self._token = meta.get(PROGRESS_TOKEN) if isinstance(meta, dict) else None

    # ------------------------------------------------------------ lifecycle

    async def begin(self) -> None:
        """Store the record (after this, ``tasks/get`` on any worker finds the task) and start
        its clock. The body's questions go to the task from now on."""
        if self.begun:
            return
        await self.service.keep(self)
        self.begun = True
        self.context.round = None  # the multi round-trip phase, if any, is over
        remaining = self.record.expires - self.service.clock()
        self._expiry = asyncio.get_running_loop().call_later(max(remaining, 0.0), self._expire)
        if not self.created.done():
            self.created.set_result(None)

    def launch(self, kwargs: dict[str, Any]) -> asyncio.Task[Any]:
        """Start the body; before ``begin`` its outcome is the request's, after it the task's."""
        self.body = asyncio.get_running_loop().create_task(self._drive(kwargs))
        return self.body

    async def _drive(self, kwargs: dict[str, Any]) -> Any:
        try:
            value = self.tool.fn(**kwargs)
            if inspect.isawaitable(value):
                value = await value
        except BaseException as exc:
            if not self.begun:
                raise  # the request's outcome: an InputRequired round, a ToolError, a refusal
            if not isinstance(exc, asyncio.CancelledError):  # cancelled: recorded already, or expired
                await self._ended_by(exc)
        else:
            if not self.begun:
                return value
            try:
                result = self.tool.to_result(value)
            except Exception as exc:
                await self._ended_by(exc)
            else:
                await self._complete(result)
        finally:
            if self.begun:  # released after the last write: until then tasks/get reads it here
                self._stop_clock()
                self.service.release(self)
        return None

    async def _ended_by(self, exc: BaseException) -> None:
        result = failure_result(exc)  # a ToolError: the task completes with the model's result
        if result is not None:
            await self._complete(result)
        elif isinstance(exc, MCPError):
            await self._fail(exc.to_error())
        else:
            logger.error("task %s (tool %r) failed", self.record.task_id, self.tool.name, exc_info=exc)
            await self._fail({"code": INTERNAL_ERROR, "message": "Internal error while handling tools/call"})

    async def _complete(self, result: dict[str, Any]) -> None:
        if self.record.terminal:
            return  # cancelled meanwhile: it stays cancelled
        # A tool's own error is "completed" for the extension (SEP-2663 §Error Handling) and
        # "failed" in 2025-11-25, whose tasks/result still returns the result itself.
        failed = bool(result.get("isError")) and self.record.era == "handshake"
        self.record.questions.clear()
        self.record.result = result
        self._move("failed" if failed else "completed", _summary(result) if failed else None)
        await self.save()

    async def _fail(self, error: dict[str, Any]) -> None:
        if self.record.terminal:
            return
        self.record.questions.clear()
        self.record.error = error
        self._move("failed", f"Tool execution failed: {error.get('message', '')}")
        await self.save()

    async def cancel(self) -> None:
        """``tasks/cancel``: the task is ``cancelled`` from now on, whatever the body does next."""
        if self.record.terminal:
            return
        self.cancel_requested = True
        self.record.questions.clear()
        self._move("cancelled", "The task was cancelled by request.")
        await self.save()
        if self.body is not None and not self.body.done() and self.body is not asyncio.current_task():
            self.body.cancel()

    def _expire(self) -> None:
        """The task's TTL passed: its key is gone with it; stop the work too."""
        self._expiry = None
        if self.body is not None and not self.body.done():
            self.body.cancel()
        self.service.release(self)

    def _stop_clock(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None

    # ------------------------------------------------------------ questions

    async def ask(
        self, method: str, params: dict[str, Any], *, timeout: float | None, key: str | None
    ) -> dict[str, Any]:
        """Put one question to the client through the task and wait for its answer."""
        key = self._new_key(method, key)
        question: dict[str, Any] = {"method": method, "params": params} if params else {"method": method}
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[key] = answer
        self.record.questions[key] = question
        self._move("input_required", self.record.message)
        await self.save()
        try:
            if timeout is None:
                return await answer
            try:
                return await asyncio.wait_for(answer, timeout)
            except TimeoutError:
                raise RequestTimeout(f"no answer to {method} within {timeout:g} s") from None
        finally:
            self._waiting.pop(key, None)
            if self.record.questions.pop(key, None) is not None and not self.record.terminal:
                self._settle()
                await self.save()

    def answer(self, responses: dict[str, Any]) -> bool:
        """Take the client's answers to outstanding questions (others are ignored, as SEP-2663
        asks); True when one was taken. ``await save()`` after it, before acknowledging."""
        taken = False
        for key, response in responses.items():
            waiting = self._waiting.get(key)
            if waiting is None or waiting.done() or not isinstance(response, dict):
                continue
            waiting.set_result(response)
            self.record.questions.pop(key, None)
            taken = True
        if taken:
            self._settle()
        return taken

    def _settle(self) -> None:
        if not self.record.questions and self.record.status == "input_required":
            self._move("working", self.record.message)

    def _new_key(self, method: str, key: str | None) -> str:
        """Unique over the task's life (SEP-2663): a key asked again gets a suffix."""
        if key is None:
            self._asked += 1
            key = f"q{self._asked}:{method}"
        base, n = key, 1
        while key in self._keys:
            n += 1
            key = f"{base}#{n}"
        self._keys.add(key)
        return key

    # ------------------------------------------------------------ progress

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Report progress: into the record (``statusMessage``), and in the handshake era on the
        request's progress token too (2025-11-25: it stays valid for the task's life)."""
        if self._last_progress is not None and progress <= self._last_progress:
            raise LocalProtocolError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        shown: dict[str, Any] = {"progress": progress}
        if total is not None:
            shown["total"] = total
        if message:
            shown["message"] = message
        self.record.progress = shown
        text = message or (f"{progress:g} of {total:g}" if total is not None else f"{progress:g}")
        self._move(self.record.status, text)
        if self.record.era == "handshake" and self._token is not None:
            params = {PROGRESS_TOKEN: self._token, **shown, "_meta": {RELATED_TASK: {"taskId": self.record.task_id}}}
            self._notify("notifications/progress", params)
        await self.save()

    # ------------------------------------------------------------ the record

    def _move(self, status: str, message: str | None) -> None:
        moved = status != self.record.status
        self.record.move(status, self.service.clock(), message)
        if moved and self.record.era == "handshake":
            # 2025-11-25 lets a receiver tell the requestor (MAY); it must not rely on it.
            self._notify("notifications/tasks/status", self.record.task())

    def _notify(self, method: str, params: dict[str, Any]) -> None:
        connection = self.context.connection
        if not connection.closed.is_set():
            connection.notify(method, params, related=self._stream())

    def _stream(self) -> RequestId | None:
        """The newest open ``tasks/result`` of the task's own session: its notifications go there
        (the request that made the task is answered; without one, the session's GET stream)."""
        streams = [request_id for owner, request_id in self.result_streams if owner is self.context.connection]
        return streams[-1] if streams else None

    def stream_request(self) -> RequestReceived:
        """The task's request as ``ctx.log`` sends for it: tied to the stream ``_stream`` picks."""
        stream = self._stream()
        return self.context.request if stream is None else dataclasses.replace(self.context.request, id=stream)

    async def save(self) -> None:
        """Write the record as it is now; concurrent saves write once, the newest state."""
        self._changes += 1
        wanted = self._changes
        async with self._lock:
            if self._saved >= wanted:
                return  # a save that began after this change wrote it
            self._saved = self._changes
            await self.service.store.save(self.record)
        self._wake()

    def watch(self) -> asyncio.Future[None]:
        """Resolved at the next write of the record (``tasks/result`` waits on it here)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watchers.append(waiter)
        return waiter

    def _wake(self) -> None:
        watchers, self._watchers = self._watchers, []
        for waiter in watchers:
            if not waiter.done():
                waiter.set_result(None)
        now = (self.record.status, tuple(self.record.questions))
        if now != self._told:  # followers hear of status and questions, not of every progress step
            self._told = now
            self.service.changed(self.record)


def _summary(result: dict[str, Any]) -> str:
    texts = [block.get("text", "") for block in result.get("content", ()) if isinstance(block, dict)]
    return "Tool execution failed: " + " ".join(text for text in texts if text)[:500]
