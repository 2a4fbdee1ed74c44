"""The terminal around a ``TerminalSession``: prompt_toolkit for input, rich for output, Ctrl-C for cancelling.

``backchannel connect <command ...>`` and ``backchannel connect <url>`` run
:func:`run_connect`; ``backchannel demo`` runs it against the bundled example
server. All the logic lives in :class:`~backchannel.ui.session.TerminalSession`; this
module only reads lines, answers questions and watches the keyboard:

* the command line completes command names, tool, prompt and resource names,
  ``key=`` argument names and (through the server's ``completion/complete``) the
  variables of resource templates on Tab, and keeps a history;
* a question (a form field, a tool argument) prefills its default, completes
  its choices on Tab (and a prompt argument or template variable through the server's
  ``completion/complete``, also as the person types), and Esc or Ctrl-C cancels it;
* while a request runs the terminal does not turn Ctrl-C into SIGINT (which
  would also kill a stdio server in our process group): we read the key
  ourselves and cancel the request, which cancels it on the wire;
* log lines that arrive while a prompt is shown are printed above it, coloured by level;
* a URL request shows who asks, the message, the full URL, its host and the
  confirmation code, and opens the browser only on "yes" (``--no-browser`` asks too, then
  prints the link); a spinner then waits for the browser step, and Ctrl-C cancels.

When stdin is not a terminal, lines are read plainly, so a session can be scripted.
"""

from __future__ import annotations

__all__ = ["PlainInput", "TerminalInput", "demo_command", "demo_server_path", "is_url", "make_client", "run_connect"]

import asyncio
import contextlib
import os
import re
import signal
import sys
import webbrowser
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.application.current import set_app
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.markup import escape

from ..types.errors import ConnectionClosed, MCPError
from .completion import QuestionCompleter as _QuestionCompleter
from .questions import Cancelled, Question
from .session import TerminalSession

if TYPE_CHECKING:
    from ..client.client import Client
    from .sampling_models import SamplingModel

try:
    import termios
except ImportError:  # pragma: no cover - not POSIX
    termios = None  # type: ignore[assignment]


# -- Ctrl-C while a request runs -------------------------------------------------------------------


class InterruptWatcher:
    """Cancels the running request on Ctrl-C (read as a key) or on SIGINT."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = fd if fd is not None else _stdin_fd()
        self._task: asyncio.Future[Any] | None = None
        self._saved: Any = None
        self._reading = False
        #: Told of every other key typed while the request runs (a URL flow's d, c, f).
        self.on_key: Callable[[str], object] | None = None

    @contextlib.contextmanager
    def watch(self, task: asyncio.Future[Any]) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        self._task = task
        signals = False
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, self.interrupt)
            signals = True
        self._start()
        try:
            yield
        finally:
            self._stop()
            self._task = None
            if signals:
                loop.remove_signal_handler(signal.SIGINT)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Give the keyboard back (a question is being asked while the request runs)."""
        active = self._task is not None and self._reading
        if active:
            self._stop()
        try:
            yield
        finally:
            if active and self._task is not None:
                self._start()

    def interrupt(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def _start(self) -> None:
        if termios is None or self.fd < 0 or not os.isatty(self.fd) or self._reading:
            return
        self._saved = termios.tcgetattr(self.fd)
        quiet = termios.tcgetattr(self.fd)
        quiet[3] &= ~(termios.ICANON | termios.ECHO | termios.ISIG)
        quiet[6][termios.VMIN] = 1
        quiet[6][termios.VTIME] = 0
        termios.tcsetattr(self.fd, termios.TCSANOW, quiet)
        asyncio.get_running_loop().add_reader(self.fd, self._on_key)
        self._reading = True

    def _stop(self) -> None:
        if not self._reading:
            return
        self._reading = False
        asyncio.get_running_loop().remove_reader(self.fd)
        if termios is not None and self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)

    def _on_key(self) -> None:
        try:
            data = os.read(self.fd, 1024)
        except OSError:
            data = b""
        if b"\x03" in data:
            self.interrupt()
        elif self.on_key is not None:
            for char in data.decode("utf-8", "ignore"):
                self.on_key(char)


def _stdin_fd() -> int:
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return -1


# -- prompt_toolkit --------------------------------------------------------------------------------


class TerminalInput:
    """Reads command lines and answers questions with prompt_toolkit."""

    def __init__(self, completions: Callable[[str], list[str]] | None = None) -> None:
        self.prompt = "backchannel> "
        self.watcher = InterruptWatcher()
        self.completions = completions or (lambda text: [])
        #: Completions that may ask the server (resource-template variables); ``completions`` when None.
        self.complete_line: Callable[[str], Awaitable[list[str]]] | None = None
        self._lines: PromptSession[str] = PromptSession(
            history=InMemoryHistory(), completer=_LineCompleter(self), complete_while_typing=False
        )
        self._active: Application[Any] | None = None

    async def read_command(self) -> str | None:
        """The next command line; None at Ctrl-D. Ctrl-C clears the line."""
        try:
            with self._showing(self._lines.app):
                return await self._lines.prompt_async(self.prompt, handle_sigint=False)
        except KeyboardInterrupt:
            return ""
        except EOFError:
            return None

    async def ask(self, question: Question) -> str:
        bindings = KeyBindings()

        @bindings.add("escape", eager=True)
        def _cancel(event: Any) -> None:
            event.app.exit(exception=Cancelled())

        completer = _QuestionCompleter(question)
        session: PromptSession[str] = PromptSession(
            completer=completer, complete_while_typing=False, key_bindings=bindings
        )
        completer.follow(session.default_buffer)  # a field the server completes: as the person types
        with self.watcher.paused(), self._showing(session.app):
            return await session.prompt_async(question.prompt, default=question.default, handle_sigint=False)

    @contextlib.contextmanager
    def _showing(self, app: Application[Any]) -> Iterator[None]:
        previous, self._active = self._active, app
        try:
            yield
        finally:
            self._active = previous

    def out_of_band(self, action: Callable[[], None]) -> None:
        """Run ``action`` (which prints) above the prompt being shown, if any."""
        app = self._active
        if app is None or not app.is_running:
            action()
            return
        with set_app(app):
            run_in_terminal(action)


class _LineCompleter(Completer):
    def __init__(self, terminal: TerminalInput) -> None:
        self.terminal = terminal

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        return self._shown(text, self.terminal.completions(text))

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        text = document.text_before_cursor
        if self.terminal.complete_line is None:
            options = self.terminal.completions(text)
        else:
            options = await self.terminal.complete_line(text)
        for completion in self._shown(text, options):
            yield completion

    @staticmethod
    def _shown(text: str, options: list[str]) -> list[Completion]:
        word = text.split(" ")[-1]
        # A whole word is followed by a space, ready for the next; "key=" is followed by its value.
        return [
            Completion(option + ("" if option.endswith(("=", "/")) else " "), start_position=-len(word), display=option)
            for option in options
        ]


class PlainInput:
    """Lines from a pipe: for scripted sessions (``printf 'tools\\nquit\\n' | backchannel connect ...``)."""

    def __init__(self) -> None:
        self.prompt = "backchannel> "
        self.watcher = InterruptWatcher(-1)
        self.completions: Callable[[str], list[str]] = lambda text: []
        self.complete_line: Callable[[str], Awaitable[list[str]]] | None = None

    async def _line(self, prompt: str) -> str | None:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        return line.rstrip("\r\n") if line else None

    async def read_command(self) -> str | None:
        return await self._line(self.prompt)

    async def ask(self, question: Question) -> str:
        shown = f"{question.prompt}[{question.default}] " if question.default else question.prompt
        line = await self._line(shown)
        if line is None:
            raise Cancelled
        return line or question.default

    def out_of_band(self, action: Callable[[], None]) -> None:
        action()


# -- connect and demo ------------------------------------------------------------------------------


def make_client(target: Sequence[str], options: dict[str, Any], console: Console | None = None) -> Client:
    """A client for ``target``: one ``http(s)://`` URL (logging in where it asks, when ``console``
    is given: ``ui/login.py``; or with the ``auth`` of ``options``), or a command and its arguments.

    ``options["headers"]`` (``--header``: ``(name, value)`` pairs) go on every HTTP request; with an
    ``Authorization`` among them no login is used, the header being the credential. A command
    takes no headers: ``ValueError`` says so."""
    from ..client.client import Client

    if not target:
        raise ValueError("connect needs a server: a command (and its arguments) or an http(s):// URL")
    options = dict(options)
    browser = options.pop("browser", True)
    headers = _header_map(options.pop("headers", None) or ())
    if is_url(target):
        if headers:
            options["headers"] = headers
        if any(name.lower() == "authorization" for name in headers):
            options.pop("auth", None)
        elif console is not None and options.get("auth") is None:
            from .login import terminal_oauth

            options["auth"] = terminal_oauth(console, browser=browser)
        return Client.http(target[0], **options)
    if headers:
        raise ValueError("--header is for an http(s):// server; this server is a command, spoken to over stdio")
    options.pop("auth", None)
    return Client.stdio(target[0], list(target[1:]), **options)


def is_url(target: Sequence[str]) -> bool:
    """Whether ``target`` is one http(s):// URL (else a command and its arguments)."""
    return len(target) == 1 and re.match(r"https?://", target[0], re.IGNORECASE) is not None


def _header_map(pairs: Iterable[tuple[str, str]] | Mapping[str, str]) -> dict[str, str]:
    """``--header`` pairs as one mapping; a name given twice has its values joined (RFC 9110 §5.3)."""
    headers: dict[str, str] = {}
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    for name, value in items:
        known = next((key for key in headers if key.lower() == name.lower()), None)
        if known is None:
            headers[name] = value
        else:
            headers[known] = f"{headers[known]}, {value}"
    return headers


def demo_server_path() -> Path:
    """``examples/demo_server.py``: inside the package if it was installed with it, else in the source checkout."""
    package = Path(__file__).resolve().parents[1]
    candidates = [package / "examples" / "demo_server.py", package.parents[1] / "examples" / "demo_server.py"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        "backchannel demo needs examples/demo_server.py, which is not installed with the package; "
        "run it from a source checkout (pip install -e .), or use: backchannel connect <command ...>"
    )


def demo_command() -> list[str]:
    return [sys.executable, "-m", "backchannel", "run", str(demo_server_path())]


def run_connect(
    target: Sequence[str],
    *,
    roots: Sequence[str] = (),
    era: str = "auto",
    save_dir: str | None = None,
    log_level: str | None = "info",
    console: Console | None = None,
    browser: bool = True,
    label: str | None = None,
    sampling: SamplingModel | None = None,
    headers: Sequence[tuple[str, str]] | None = None,
) -> int:
    """Run an interactive session with the server at ``target`` until ``quit``; the exit status.

    ``browser`` False prints the links of URL requests instead of opening them;
    ``label`` names the server in the "Connecting" line (default: the command);
    ``sampling`` answers sampling requests, the person approving (None: the person answers);
    ``headers`` go on every request to an http(s):// server (``--header``).
    """
    console = console or Console()
    try:
        work = _connect(
            target,
            roots=roots,
            era=era,
            save_dir=save_dir,
            log_level=log_level,
            console=console,
            browser=browser,
            label=label,
            sampling=sampling,
            headers=headers,
        )
        return asyncio.run(work)
    except KeyboardInterrupt:
        console.print("[yellow]Interrupted.[/]")
        return 130


async def _connect(
    target: Sequence[str],
    *,
    roots: Sequence[str],
    era: str,
    save_dir: str | None,
    log_level: str | None,
    console: Console,
    browser: bool = True,
    label: str | None = None,
    sampling: SamplingModel | None = None,
    headers: Sequence[tuple[str, str]] | None = None,
) -> int:
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    terminal: TerminalInput | PlainInput = TerminalInput() if interactive else PlainInput()
    opener = webbrowser.open if browser else None
    session = TerminalSession(console, terminal.ask, save_dir=save_dir, roots=roots, opener=opener)
    terminal.completions = session.completions
    terminal.complete_line = session.complete_line
    session.interrupts = terminal.watcher.watch
    terminal.watcher.on_key = session.link_consent.key  # d, c, f while a browser step runs
    session.link_consent.keys = interactive
    session.out_of_band = terminal.out_of_band
    session.sampling.model = sampling
    try:
        options = {**session.client_options(), "era": era, "browser": browser, "headers": headers}
        options["log_level"] = log_level  # asked for as it connects, the same way in either era
        client = make_client(target, options, console)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/]")
        return 2
    session.calls_unlisted = is_url(target)  # a protected server hides tools for want of a scope
    shown = label or " ".join(target)
    console.print(f"[dim]Connecting to {escape(shown)} ...[/]", soft_wrap=True, highlight=False)
    try:
        async with client:
            await session.start(client, log_level=log_level)
            name = (client.server_info or {}).get("name")
            terminal.prompt = f"{name}> " if isinstance(name, str) and name.isprintable() and name else "mcp> "
            try:
                while True:
                    line = await terminal.read_command()
                    if line is None or not await session.execute(line):
                        break
            finally:
                await session.finish()  # the apps page's apps torn down, its listeners stopped
    except (MCPError, OSError) as exc:
        # A server process that exited says its status, and the type name would only repeat it.
        said = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ConnectionClosed) else exc.message
        said = said.removeprefix("Connection closed: ")
        console.print(f"[red]Could not talk to the server: {escape(said)}[/]", soft_wrap=True)
        return 1
    return 1 if session.gone else 0
