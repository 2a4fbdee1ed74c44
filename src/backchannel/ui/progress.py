"""The progress of the running request: a live bar on a terminal, plain lines anywhere else.

``ProgressDisplay`` also spins while a person is away in the browser for a URL
request, and steps aside while a question is on screen (a bar would draw over it).
"""

from __future__ import annotations

__all__ = ["ProgressDisplay"]

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TaskProgressColumn, TextColumn, TimeElapsedColumn

from ..protocol.events import ProgressReceived


class ProgressDisplay:
    """Draws progress reports on ``console``; ``stop`` when the request ends."""

    def __init__(self, console: Console) -> None:
        self.console = console
        #: The live bar while one is drawn, else None.
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        #: How many questions are on screen: reports that arrive meanwhile are not drawn.
        self.asking = 0

    def show(self, label: str, event: ProgressReceived) -> None:
        """Draw one progress report of the request called ``label``."""
        message = f": {event.message}" if event.message else ""
        if self.asking:
            return  # a question is on screen; the bar comes back with the next report after it
        if not self.console.is_terminal:
            total = f"/{event.total:g}" if event.total is not None else ""
            self.console.print(f"[dim]{escape(label)} {event.progress:g}{total}{escape(message)}[/]")
            return
        if self.bar is None:
            self.start(label, event.total)
        assert self.bar is not None and self.task is not None
        self.bar.update(self.task, completed=event.progress, total=event.total, description=escape(label + message))

    def spin(self, label: str) -> None:
        """Say that we wait for something with no measure (the person's browser step)."""
        if not self.console.is_terminal:
            self.console.print(f"[dim]{label} ...[/]")
            return
        self.stop()
        self.start(label, None)

    def describe(self, text: str) -> None:
        """Change what the bar (if one is drawn) says it waits for."""
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=text)

    def start(self, label: str, total: float | None) -> None:
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task(escape(label), total=total)

    def stop(self) -> None:
        """Put the bar away (it is transient: nothing stays on screen)."""
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
            self.task = None

    @contextlib.contextmanager
    def put_away(self) -> Iterator[None]:
        """While a question is on screen: no bar, and reports that arrive are not drawn."""
        self.stop()
        self.asking += 1
        try:
            yield
        finally:
            self.asking -= 1
