"""The terminal client's tasks: a tool call the server runs as a task, waited on or left running.

``call`` waits for a task in the foreground, its status message on the progress line, and
answers its questions with the usual forms. Ctrl-C leaves it running in the background
(a call without a task is cancelled, as before): ``tasks`` lists them, ``wait <n>`` brings
one back, ``cancel <n>`` asks the server to stop it (``tasks/cancel``). A background task
that ends says so above the prompt, with its result. A background task's question waits
until the person brings it back with ``wait <n>``, so no form ever interrupts the prompt.
"""

from __future__ import annotations

__all__ = ["TaskBoard", "runs_as_task"]

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..client.tasks import TaskCancelled, TaskFailed, ToolTask
from ..client.tool_calls import task_support
from ..types.tasks import RELATED_TASK, TASKS_EXTENSION
from ..types.tools import CallToolResult
from .commands import CommandError
from .progress import ProgressDisplay
from .render import Renderer

if TYPE_CHECKING:
    from ..client.client import Client

Handler = Callable[[dict[str, Any]], Awaitable[Any] | Any]


async def runs_as_task(client: Client, tool: str) -> bool:
    """Whether a call of ``tool`` may become a task: the stateless-era server declares the
    tasks extension, or the handshake-era tool says it takes one (``execution.taskSupport``)."""
    if client.era == "stateless":
        extensions = client.server_capabilities.get("extensions")
        return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
    if "tasks" not in client.server_capabilities:
        return False
    return await task_support(client, tool) in ("optional", "required")


class TaskBoard:
    """The tasks started from this terminal, by number, and the one waited on in the foreground."""

    def __init__(
        self,
        console: Console,
        renderer: Renderer,
        progress: ProgressDisplay,
        out_of_band: Callable[[Callable[[], None]], None],
    ) -> None:
        self.console = console
        self.renderer = renderer
        self.progress = progress
        self.out_of_band = out_of_band
        self.tasks: dict[int, ToolTask] = {}
        #: The task ``call`` or ``wait`` is waiting for, if any.
        self.foreground: ToolTask | None = None
        self._brought_back: dict[int, asyncio.Event] = {}
        self._reported: set[int] = set()
        self._answering = 0

    def add(self, task: ToolTask) -> None:
        if task.number not in self.tasks:
            self.tasks[task.number] = task
            task.watch(self._changed)

    async def follow(self, task: ToolTask, run: Callable[[Awaitable[CallToolResult]], Awaitable[Any]]) -> None:
        """Wait for ``task`` in the foreground through ``run`` (which turns Ctrl-C into the
        session's ``Interrupted``, raised from here), then show how it ended."""
        self.add(task)
        self.bring_back(task)
        try:
            if not task.done:
                self.progress.spin(self.headline(task))
            await run(task.result())
        except (TaskFailed, TaskCancelled):
            pass  # shown below, as a background task's end would be
        finally:
            self.foreground = None
        result = self.outcome(task)
        if result is not None:
            self.renderer.tool_result(task.name, result)

    def find(self, word: str) -> ToolTask:
        """The task numbered ``word`` (``2`` or ``#2``), or whose id starts with it."""
        text = word.strip().removeprefix("#")
        if text.isdigit() and int(text) in self.tasks:
            return self.tasks[int(text)]
        found = [task for task in self.tasks.values() if text and task.task_id and task.task_id.startswith(text)]
        if len(found) == 1:
            return found[0]
        known = ", ".join(str(number) for number in self.tasks) or "none yet"
        raise CommandError(f"no task {word!r} (tasks: {known}; see: tasks)")

    def show(self) -> None:
        """The ``tasks`` table."""
        if not self.tasks:
            self.console.print("[dim]No tasks yet: a tool the server runs as a task shows up here.[/]")
            return
        table = Table(show_edge=False, pad_edge=False)
        for column in ("#", "task id", "tool", "status", "message"):
            table.add_column(column, overflow="fold")
        for number, task in self.tasks.items():
            state = task.state
            table.add_row(
                str(number),
                escape(task.task_id or "(no task)"),
                escape(task.name),
                _status_style(state.status),
                escape(state.status_message or ""),
            )
        self.console.print(table)

    def headline(self, task: ToolTask) -> str:
        """What the progress line says while ``task`` runs in the foreground."""
        said = f": {task.state.status_message}" if task.state.status_message else ""
        return f"task {task.number} ({task.name}) {task.state.status}{said} (Ctrl-C: leave it running)"

    def outcome(self, task: ToolTask) -> CallToolResult | None:
        """Print how ``task`` ended, unless with a result (which is returned, to be rendered)."""
        ended = task.outcome()
        label = f"Task {task.number} ({escape(task.name)})"
        if isinstance(ended, CallToolResult):
            return ended
        if isinstance(ended, TaskFailed):
            self.console.print(f"[red]{label} failed with error {ended.code}: {escape(ended.message)}[/]")
        elif isinstance(ended, TaskCancelled):
            said = f": {escape(task.state.status_message)}" if task.state.status_message else ""
            end = "" if said.endswith((".", "!", "?")) else "."  # the server's message may end a sentence itself
            self.console.print(f"[yellow]{label} was cancelled{said}{end}[/]")
        elif ended is not None:
            self.console.print(f"[red]{label} ended with {escape(type(ended).__name__)}: {escape(str(ended))}[/]")
        return None

    async def cancel(self, task: ToolTask, run: Callable[[Awaitable[None]], Awaitable[Any]]) -> None:
        """``cancel <n>``: ask the server to stop the task; how it ends is said when it ends."""
        await run(task.cancel())
        if not task.done:  # else how it ended is on screen already
            self.console.print(f"Asked the server to cancel task {task.number} ({escape(task.name)}).")

    def left_running(self, task: ToolTask) -> None:
        number = task.number
        self.console.print(
            f"[yellow]Task {number} ({escape(task.name)}) runs on: [bold]tasks[/] lists it, "
            f"[bold]wait {number}[/] waits for it, [bold]cancel {number}[/] stops it.[/]"
        )

    # -- questions of background tasks ---------------------------------------------------------

    def gated(self, handler: Handler) -> Callable[[dict[str, Any]], Awaitable[Any]]:
        """``handler`` for the questions of tasks: a background task's waits for ``wait <n>``."""

        async def answer(params: dict[str, Any]) -> Any:
            task = self._asking(params)
            if task is not None and task is not self.foreground:
                await self._until_brought_back(task)
            self._answering += 1  # a form is on screen from its first line: no bar drawn over it
            try:
                answered = handler(params)
                return await answered if inspect.isawaitable(answered) else answered
            finally:
                self._answering -= 1

        return answer

    def bring_back(self, task: ToolTask) -> None:
        """``task`` is in the foreground now: its held question, if any, may be asked."""
        self.foreground = task
        event = self._brought_back.pop(task.number, None)
        if event is not None:
            event.set()

    def _asking(self, params: dict[str, Any]) -> ToolTask | None:
        meta = params.get("_meta")
        related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
        task_id = related.get("taskId") if isinstance(related, dict) else None
        return next((task for task in self.tasks.values() if task_id and task.task_id == task_id), None)

    async def _until_brought_back(self, task: ToolTask) -> None:
        event = self._brought_back.setdefault(task.number, asyncio.Event())
        number = task.number
        self.out_of_band(
            lambda: self.console.print(
                f"[yellow]Task {number} ({escape(task.name)}) has a question: "
                f"type [bold]wait {number}[/] to answer it.[/]"
            )
        )
        await event.wait()

    def _changed(self, task: ToolTask) -> None:
        if task is self.foreground:
            if not task.done:
                self.out_of_band(lambda: self._describe(task))
            return
        if task.done and task.number not in self._reported:
            self._reported.add(task.number)
            self.out_of_band(lambda: self._report(task))

    def _describe(self, task: ToolTask) -> None:
        if self.progress.bar is not None:
            self.progress.describe(escape(self.headline(task)))
        elif not (self.progress.asking or self._answering):
            self.progress.spin(self.headline(task))

    def _report(self, task: ToolTask) -> None:
        result = self.outcome(task)
        if result is not None:
            self.console.print(f"[green]Task {task.number} ({escape(task.name)}) is done:[/]")
            self.renderer.tool_result(task.name, result)


def _status_style(status: str) -> str:
    style = {"completed": "green", "failed": "red", "cancelled": "yellow", "input_required": "bold"}.get(status)
    return f"[{style}]{status}[/]" if style else status
