"""Tasks on the client: a tool call that outlives its request (2025-11-25 tasks.mdx; SEP-2663).

``task = await client.start_task("deploy", {...})`` returns a ``ToolTask``: ``await task`` is
the tool's ``CallToolResult``, ``await task.status()`` asks the server now, ``await
task.cancel()`` asks it to stop. A follower polls in the background at the server's poll
interval and answers the task's questions with the client's input handlers, the ones that
answer elicitation:

- handshake era (2025-11-25): ``tasks/get`` polls; on ``input_required`` (and at the end)
  ``tasks/result``, on whose stream the server asks its questions (requests with the
  related-task ``_meta``, answered as any request of the server's) and which answers with the
  result once the task ends; ``tasks/cancel`` answers with the task.
- stateless era (the tasks extension): ``tasks/get`` carries ``inputRequests`` (each key
  answered once, with ``tasks/update``) and, at the end, the ``result`` or the ``error``;
  ``tasks/cancel`` is only an acknowledgement, so the follower polls on until the task ends.

A ``notifications/tasks/status`` (or ``notifications/tasks``) updates the task at once and
wakes its follower; polling never relies on them, as both revisions ask.
"""

from __future__ import annotations

__all__ = ["TaskCancelled", "TaskFailed", "TaskRegistry", "TaskState", "TaskStatus", "ToolTask"]

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

from ..types.errors import INVALID_PARAMS, MCPError, RemoteProtocolError, RequestError, RequestTimeout
from ..types.tasks import RELATED_TASK, TaskStatus
from ..types.tools import CallToolResult, Tool
from .era_detection import converted
from .task_state import TaskCancelled, TaskFailed, TaskState

if TYPE_CHECKING:
    from .client import Client

#: Seconds between polls when the server suggests no interval; bounds on what it may suggest.
DEFAULT_POLL = 1.0
_FASTEST_POLL, _SLOWEST_POLL = 0.01, 300.0


Watcher: TypeAlias = Callable[["ToolTask"], object]


class ToolTask:
    """A tool call the server runs as a task. Await it for the ``CallToolResult``.

    Awaiting raises ``TaskFailed`` for a task that failed with a JSON-RPC error (a tool's own
    error is a result with ``is_error``), ``TaskCancelled`` for one that was cancelled, and
    whatever a request to the server raised (``ConnectionClosed``...). Cancelling the awaiting
    coroutine does not stop the task: call ``cancel()``. ``watch(callback)`` is told of every
    change of ``state``, and once more when the task is done.
    """

    def __init__(
        self, client: Client, name: str, arguments: dict[str, Any] | None, state: TaskState, number: int
    ) -> None:
        self._client = client
        #: The tool and the arguments it was called with.
        self.name = name
        self.arguments = arguments
        #: What the server last said of the task.
        self.state = state
        #: This task's place in the order the client started its tasks: 1, 2, ... (for people).
        self.number = number
        self._outcome: asyncio.Future[CallToolResult] = asyncio.get_running_loop().create_future()
        # Read once here, so that an outcome nobody awaits is not reported as never retrieved.
        self._outcome.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._watchers: list[Watcher] = []
        self._wake = asyncio.Event()
        self._answered: set[str] = set()
        self._follower: asyncio.Task[None] | None = None

    @property
    def task_id(self) -> str | None:
        """The server's id of the task; None for a call that ran without a task."""
        return self.state.task_id

    @property
    def done(self) -> bool:
        """True once the outcome is known (a result, or the error awaiting it raises)."""
        return self._outcome.done()

    def outcome(self) -> CallToolResult | BaseException | None:
        """The result, or the exception awaiting raises; None while the task runs."""
        if not self._outcome.done():
            return None
        if self._outcome.cancelled():
            return asyncio.CancelledError()
        return self._outcome.exception() or self._outcome.result()

    def __repr__(self) -> str:
        """``<ToolTask 2 'deploy' id='t-9f' working, pending>``: the number, the tool, the
        server's id, the last status, and what awaiting it gives once done (``result``, ``result
        (isError)``, or ``error TaskCancelled``)."""
        ended = self.outcome()
        if ended is None:
            held = "pending"
        elif isinstance(ended, CallToolResult):
            held = "result (isError)" if ended.is_error else "result"
        else:
            held = f"error {type(ended).__name__}"
        return f"<ToolTask {self.number} {self.name!r} id={self.task_id!r} {self.state.status}, {held}>"

    def watch(self, callback: Watcher) -> None:
        """Call ``callback(task)`` after each change of ``state`` and once the task is done."""
        self._watchers.append(callback)

    def __await__(self) -> Generator[Any, None, CallToolResult]:
        return self.result().__await__()

    async def result(self) -> CallToolResult:
        """The tool's result once the task ends (see the class docstring for what it raises)."""
        return await asyncio.shield(self._outcome)

    async def status(self) -> TaskState:
        """Ask the server for the task's state now (``tasks/get``); the new ``state``."""
        if self.task_id is None or self.done or self.state.terminal:
            return self.state  # a terminal status never changes
        answer = await self._client.request("tasks/get", {"taskId": self.task_id})
        self._update(TaskState.from_wire(answer, "tasks/get"))
        return self.state

    async def cancel(self) -> None:
        """Ask the server to stop the task (``tasks/cancel``, never ``notifications/cancelled``).

        Awaiting the task then raises ``TaskCancelled``, unless it ended first. A call that
        ran without a task is cancelled on the wire instead. Nothing happens once it is done."""
        if self.done:
            return
        if self.task_id is None:
            if self._follower is not None:
                self._follower.cancel()
            return
        try:
            answer = await self._client.request("tasks/cancel", {"taskId": self.task_id})
        except RequestError as exc:
            # -32602 for a task that reached its end meanwhile: then there is nothing to cancel.
            if exc.code != INVALID_PARAMS or not (await self.status()).terminal:
                raise
            return
        finally:
            self._wake.set()
        if self._client.era == "handshake" and isinstance(answer.get("taskId"), str):
            self._update(TaskState.from_wire(answer, "tasks/cancel"))

    # -- the follower --------------------------------------------------------------------------

    def follow(self) -> ToolTask:
        """Start following the task in the background; this handle."""
        follow = self._follow_handshake if self._client.era == "handshake" else self._follow_stateless
        self._start(follow())
        return self

    def run_plain(self, call: Awaitable[CallToolResult]) -> ToolTask:
        """Stand for ``call``, a plain ``tools/call`` in flight (the server runs this tool without
        a task): ``cancel()`` cancels it on the wire."""

        async def plain() -> CallToolResult:
            try:
                result = await call
            except asyncio.CancelledError:
                self._update(replace(self.state, status="cancelled"))
                raise TaskCancelled(f"the call of {self.name} was cancelled", state=self.state) from None
            self._update(replace(self.state, status="failed" if result.is_error else "completed"))
            return result

        self._start(plain())
        return self

    def finish(self, result: CallToolResult) -> ToolTask:
        """The server answered at once, without a task: this handle is done with ``result``."""
        self._outcome.set_result(result)
        return self

    def notified(self, params: Mapping[str, Any]) -> None:
        """A status notification for this task: take it, and wake the follower."""
        self._update(TaskState.from_wire(params, "notifications/tasks"))
        self._wake.set()

    def stop(self) -> None:
        """Stop following (the client is closing); awaiting the task raises ``CancelledError``."""
        if self._follower is not None:
            self._follower.cancel()

    def _start(self, work: Awaitable[CallToolResult]) -> None:
        async def run() -> None:
            try:
                result = await work
            except asyncio.CancelledError:
                self._outcome.cancel()
                raise
            except BaseException as exc:  # the outcome carries it to whoever awaits
                self._outcome.set_exception(exc)
            else:
                self._outcome.set_result(result)
            finally:
                self._client.tasks.forget(self)
                if self.task_id is not None:
                    # Stopped following (cancelled, closed, an error): the progress token goes too.
                    self._client.connection.release_task_progress(self.task_id)
                self._tell()

        self._client.tasks.remember(self)
        self._follower = asyncio.get_running_loop().create_task(run(), name=f"task {self.task_id or self.name}")

    async def _follow_handshake(self) -> CallToolResult:
        while True:
            state = self.state
            if state.status == "cancelled":
                raise self._cancelled()
            if state.status == "input_required" or state.terminal:
                result = await self._payload()
                if result is not None:
                    return result
            await self._sleep()
            await self.status()

    async def _payload(self) -> CallToolResult | None:
        """``tasks/result``: the questions come on its stream and the result at the end. The
        status is polled beside it, for whoever watches; None when it timed out (poll on)."""
        assert self.task_id is not None
        fetch = asyncio.ensure_future(self._client.request("tasks/result", {"taskId": self.task_id}))
        try:
            while not fetch.done():
                await asyncio.wait({fetch}, timeout=self._interval())
                if not fetch.done():
                    with contextlib.suppress(MCPError):
                        await self.status()
            payload = fetch.result()
        except RequestTimeout:
            return None
        except RequestError as exc:
            self._update(replace(self.state, status="failed", status_message=self.state.status_message or exc.message))
            raise TaskFailed(exc.message, state=self.state, code=exc.code, data=exc.data) from None
        finally:
            fetch.cancel()
        result = converted(payload, CallToolResult, "tasks/result")
        if not self.state.terminal:
            # The result came before a poll showed the end (2025-11-25: a tool's error fails the task).
            self._update(replace(self.state, status="failed" if result.is_error else "completed"))
        return result

    async def _follow_stateless(self) -> CallToolResult:
        while True:
            state = self.state
            if state.status == "completed":
                return converted(state.result, CallToolResult, "tasks/get")
            if state.status == "failed":
                error = RequestError.from_error(state.error) if state.error is not None else None
                message = error.message if error is not None else state.status_message or "the task failed"
                raise TaskFailed(
                    message,
                    state=state,
                    code=error.code if error is not None else None,
                    data=error.data if error is not None else None,
                )
            if state.status == "cancelled":
                raise self._cancelled()
            if not (state.status == "input_required" and await self._answer(state)):
                await self._sleep()
            await self.status()

    async def _answer(self, state: TaskState) -> bool:
        """Answer the questions not answered yet with ``tasks/update``; False when there were none."""
        assert self.task_id is not None
        asked = {key: question for key, question in (state.input_requests or {}).items() if key not in self._answered}
        if not asked:
            return False
        answers: dict[str, Any] = {}
        for key, question in asked.items():
            method, params = _question(key, question)
            # Handlers see which task asks, as they do in the handshake era (related-task _meta).
            params = {**params, "_meta": {**(params.get("_meta") or {}), RELATED_TASK: {"taskId": self.task_id}}}
            with self._client.connection.timeouts_paused():
                answers[key] = await self._client.inputs.answer(method, params)
            self._answered.add(key)
        await self._client.request("tasks/update", {"taskId": self.task_id, "inputResponses": answers})
        return True

    # -- helpers -------------------------------------------------------------------------------

    def _interval(self) -> float:
        suggested = self.state.poll_interval_ms
        seconds = DEFAULT_POLL if suggested is None else suggested / 1000
        return min(max(seconds, _FASTEST_POLL), _SLOWEST_POLL)

    async def _sleep(self) -> None:
        """Wait one poll interval, or less when a notification or ``cancel()`` wakes us."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._interval()):
                await self._wake.wait()
        self._wake.clear()

    def _update(self, state: TaskState) -> None:
        if state == self.state:
            return
        self.state = state
        if state.terminal and state.task_id is not None:
            # 2025-11-25: the call's progress token is the task's until a terminal status, no longer.
            self._client.connection.release_task_progress(state.task_id)
        self._tell()

    def _tell(self) -> None:
        for watcher in list(self._watchers):
            watcher(self)

    def _cancelled(self) -> TaskCancelled:
        said = f": {self.state.status_message}" if self.state.status_message else ""
        return TaskCancelled(f"task {self.task_id} ({self.name}) was cancelled{said}", state=self.state)


class TaskRegistry:
    """The tasks a client follows, by id (notifications find them here), and which of the
    server's tools take a task (2025-11-25 ``execution.taskSupport``, read from ``tools/list``)."""

    def __init__(self) -> None:
        self.running: dict[int, ToolTask] = {}
        #: Tool name -> ``taskSupport`` (None: not said, which means forbidden); None until listed.
        self.support: dict[str, str | None] | None = None
        self._count = 0

    def learn(self, tools: Iterable[Tool]) -> None:
        """Keep each listed tool's ``taskSupport`` (the whole list: a tool not in it is forgotten)."""
        self.support = {tool.name: tool.execution.task_support if tool.execution else None for tool in tools}

    def number(self) -> int:
        self._count += 1
        return self._count

    def remember(self, task: ToolTask) -> None:
        self.running[task.number] = task

    def forget(self, task: ToolTask) -> None:
        self.running.pop(task.number, None)

    def notified(self, method: str, params: Mapping[str, Any]) -> bool:
        """Route a task status notification to its task; False for any other notification."""
        if method not in ("notifications/tasks/status", "notifications/tasks"):
            return False
        for task in list(self.running.values()):
            if task.task_id is not None and task.task_id == params.get("taskId"):
                with contextlib.suppress(RemoteProtocolError):  # a malformed one is not worth a poll less
                    task.notified(params)
        return True

    def close(self) -> None:
        for task in list(self.running.values()):
            task.stop()


def _question(key: str, request: Any) -> tuple[str, dict[str, Any]]:
    method = request.get("method") if isinstance(request, Mapping) else None
    params = request.get("params", {}) if isinstance(request, Mapping) else None
    if not isinstance(method, str) or not isinstance(params, Mapping):
        raise RemoteProtocolError(
            f"tasks/get: the server's inputRequests[{key!r}] must be an object with a string method and object params"
        )
    return method, dict(params)
