"""The interactive client's controller: a command line in, requests to the server, rendered output out.

``Session`` knows nothing of the terminal. It prints to a rich ``Console`` and
asks through an ``Ask`` function; the terminal layer (:mod:`.terminal`) plugs
in prompt_toolkit, Ctrl-C handling and printing above an active prompt through
the ``interrupts`` and ``out_of_band`` hooks. A test drives it with
``await session.execute("call add a=1")`` and reads the captured console.
"""

from __future__ import annotations

__all__ = ["Interrupted", "Session"]

import asyncio
import contextlib
import json
import os
import re
import shlex
import webbrowser
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, unquote

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..client.url_flow import UrlElicitation
from ..protocol.events import ProgressReceived
from ..server.uri_template import UriTemplate
from ..types.errors import ConnectionClosed, MCPError, RequestError
from ..types.logging import LOGGING_LEVELS
from ..types.prompts import Prompt
from ..types.tools import Tool
from .commands import ALIASES, COMMANDS, Command, CommandError, parse_arguments, parse_command
from .fields import OMIT, Field
from .forms import FormRenderer, LinkConsent
from .prompting import ask_arguments, ask_field
from .questions import Ask, Cancelled, Completer, Question, ask_line
from .render import Renderer

if TYPE_CHECKING:
    from ..client.client import Client

T = TypeVar("T")

_LEVEL_STYLES = {
    "debug": "dim",
    "info": "blue",
    "notice": "cyan",
    "warning": "yellow",
    "error": "red",
    "critical": "bold red",
    "alert": "bold red",
    "emergency": "bold white on red",
}


class Interrupted(Exception):
    """The person pressed Ctrl-C while a request ran: it was cancelled on the wire."""


def _rank(level: Any) -> int:
    return LOGGING_LEVELS.index(level) if level in LOGGING_LEVELS else 0


class Session:
    """One person's session with one server."""

    def __init__(
        self,
        console: Console,
        ask: Ask,
        *,
        save_dir: str | Path | None = None,
        roots: Sequence[str | os.PathLike[str]] = (),
        opener: Callable[[str], Any] | None = webbrowser.open,
    ) -> None:
        """``opener`` opens a URL the person agreed to open; None prints it instead (``--no-browser``)."""
        self.console = console
        self.ask = ask
        self.client: Client | None = None
        self.renderer = Renderer(console, save_dir)
        self.forms = FormRenderer(console, self._ask_paused)
        self.link_consent = LinkConsent(console, self._ask_paused, opener, on_accept=self._browser_step)
        self.roots = [Path(root).expanduser().resolve() for root in roots]
        #: Log messages received (``notifications/message`` params), newest last.
        self.logs: deque[dict[str, Any]] = deque(maxlen=1000)
        #: Messages below this level are kept in ``logs`` but not printed; None prints all.
        self.log_level: str | None = None
        #: Names offered by Tab: refreshed on connect and by each list command.
        self.names: dict[str, list[str]] = {"tools": [], "prompts": [], "resources": [], "templates": []}
        self._tools: dict[str, Tool] = {}
        self._prompts: dict[str, Prompt] = {}
        #: Hook: watch for Ctrl-C while ``task`` runs and cancel it (the terminal layer sets it).
        self.interrupts: Callable[[asyncio.Future[Any]], AbstractContextManager[Any]] = _no_watch
        #: Hook: print from a callback that may arrive while a prompt is shown.
        self.out_of_band: Callable[[Callable[[], None]], None] = _call_now
        self._progress: Progress | None = None
        self._progress_task: TaskID | None = None
        self._asking = 0

    # -- wiring ----------------------------------------------------------------------------------

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``Client``: our form, URL-consent, log and roots handlers.

        No request timeout: a call may wait on the person filling a form; Ctrl-C cancels instead.
        """
        return {
            "elicitation": self.forms,
            "url_elicitation": self.link_consent,
            "on_log": self.on_log,
            # Always declared (possibly empty), so that ``roots add`` can offer one later.
            "roots": [str(root) for root in self.roots],
            "request_timeout": None,
        }

    async def start(self, client: Client, *, log_level: str | None = None) -> None:
        """Greet with who the server is, ask for logs at ``log_level``, learn its names for Tab completion."""
        self.client = client
        client.inputs.url_flows.on_complete = self._on_flow_complete
        info = client.server_info or {}
        name = escape(str(info.get("name") or "server"))
        version = f" {escape(str(info['version']))}" if info.get("version") else ""
        self.console.print(
            f"Connected to [bold]{name}[/]{version} ({client.era} era, protocol {client.protocol_version})."
        )
        if client.instructions:
            self.console.print(Text(client.instructions, style="italic"))
        self.console.print("Type [bold]help[/] for commands, Tab to complete, [bold]quit[/] to leave.")
        if log_level is not None and "logging" in (client.server_capabilities or {}):
            with contextlib.suppress(MCPError, ValueError):
                await client.set_logging_level(log_level)  # type: ignore[arg-type]
                self.log_level = log_level
        await self.refresh_names()

    async def refresh_names(self) -> None:
        client = self._client()
        capabilities = client.server_capabilities or {}
        with contextlib.suppress(MCPError):
            if "tools" in capabilities:
                self._remember_tools(await client.list_tools())
            if "prompts" in capabilities:
                self._remember_prompts(await client.list_prompts())
            if "resources" in capabilities:
                self.names["resources"] = [item.uri for item in await client.list_resources()]
                self.names["templates"] = [item.uri_template for item in await client.list_resource_templates()]

    def _client(self) -> Client:
        if self.client is None:
            raise CommandError("not connected")
        return self.client

    def _remember_tools(self, tools: list[Tool]) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self.names["tools"] = list(self._tools)

    def _remember_prompts(self, prompts: list[Prompt]) -> None:
        self._prompts = {prompt.name: prompt for prompt in prompts}
        self.names["prompts"] = list(self._prompts)

    # -- the loop --------------------------------------------------------------------------------

    async def execute(self, line: str) -> bool:
        """Run one command line; False when the session should end (``quit``, or the server went away)."""
        try:
            command = parse_command(line)
        except CommandError as exc:
            self.console.print(f"[red]{escape(str(exc))}[/]")
            return True
        if command is None:
            return True
        if command.name == "quit":
            return False
        handler: Callable[[Command], Awaitable[None]] = getattr(self, f"_cmd_{command.name}")
        try:
            await handler(command)
        except Cancelled:
            self.console.print("[yellow]Cancelled.[/]")
        except Interrupted:
            self.console.print("[yellow]Interrupted: the request was cancelled.[/]")
        except CommandError as exc:
            self.console.print(f"[red]{escape(str(exc))}[/]")
        except RequestError as exc:
            self.console.print(f"[red]The server answered with error {exc.code}: {escape(exc.message)}[/]")
        except ConnectionClosed as exc:
            self.console.print(f"[red]The connection is closed: {escape(str(exc))}[/]")
            return False
        except MCPError as exc:
            self.console.print(f"[red]{escape(str(exc))}[/]")
        except Exception as exc:
            self.console.print(f"[red]Unexpected error: {escape(type(exc).__name__)}: {escape(str(exc))}[/]")
        return True

    async def _run(self, work: Awaitable[T]) -> T:
        """Await a request; Ctrl-C (through the ``interrupts`` hook) cancels it on the wire."""
        task = asyncio.ensure_future(work)
        try:
            with self.interrupts(task):
                try:
                    return await task
                except asyncio.CancelledError:
                    current = asyncio.current_task()
                    if task.cancelled() and (current is None or not current.cancelling()):
                        raise Interrupted from None
                    raise
        finally:
            self._stop_progress()

    # -- commands --------------------------------------------------------------------------------

    async def _cmd_help(self, command: Command) -> None:
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        for usage, text in COMMANDS.values():
            table.add_row(f"[bold]{escape(usage)}[/]", escape(text))
        self.console.print(table)
        self.console.print(
            "[dim]Arguments: a JSON object, or key=value words (quote values with spaces). "
            "Ctrl-C cancels a running request; in a form, Esc or Ctrl-C cancels the form.[/]"
        )

    async def _cmd_tools(self, command: Command) -> None:
        tools = await self._run(self._client().list_tools())
        self._remember_tools(tools)
        self.renderer.tools(tools)

    async def _cmd_prompts(self, command: Command) -> None:
        prompts = await self._run(self._client().list_prompts())
        self._remember_prompts(prompts)
        self.renderer.prompts(prompts)

    async def _cmd_resources(self, command: Command) -> None:
        resources = await self._run(self._client().list_resources())
        self.names["resources"] = [item.uri for item in resources]
        self.renderer.resources(resources)

    async def _cmd_templates(self, command: Command) -> None:
        templates = await self._run(self._client().list_resource_templates())
        self.names["templates"] = [item.uri_template for item in templates]
        self.renderer.templates(templates)

    async def _cmd_read(self, command: Command) -> None:
        uri = command.target
        if "{" in uri:
            uri = await self._expand_template(uri)
            self.console.print(f"[dim]Reading {escape(uri)}[/]", soft_wrap=True)
        result = await self._run(self._client().read_resource(uri))
        self.renderer.resource_result(uri, result)

    async def _cmd_call(self, command: Command) -> None:
        client = self._client()
        tool = await self._tool(command.target)
        given = parse_arguments(command.rest, tool.input_schema) if command.rest else None
        arguments = await ask_arguments(self.console, self._ask_paused, tool.input_schema, given)
        result = await self._run(client.call_tool(tool.name, arguments, on_progress=self._on_progress(tool.name)))
        self.renderer.tool_result(tool.name, result)

    async def _cmd_prompt(self, command: Command) -> None:
        client = self._client()
        prompt = await self._prompt(command.target)
        fields = [
            Field(
                arg.name,
                {"type": "string", **({"title": arg.title} if arg.title else {}), "description": arg.description},
                bool(arg.required),
                "text",
            )
            for arg in prompt.arguments or []
        ]
        schema = {"type": "object", "properties": {field.name: {"type": "string"} for field in fields}}
        given = parse_arguments(command.rest, schema) if command.rest else None
        arguments = {key: v if isinstance(v, str) else json.dumps(v) for key, v in (given or {}).items()}
        for field in fields:
            if field.name in arguments or (given and not field.required):
                continue
            completer = self._argument_completer(prompt.name, field.name, arguments)
            value = await ask_field(self.console, self._ask_paused, field, prefill="", complete=completer)
            if value is not OMIT:
                arguments[field.name] = value
        result = await self._run(client.get_prompt(prompt.name, arguments or None))
        self.renderer.prompt_result(prompt.name, result)

    async def _cmd_log(self, command: Command) -> None:
        if not command.target:
            shown = self.log_level or "everything the server sends"
            self.console.print(f"Log level: {shown}. Set with: log <{'|'.join(LOGGING_LEVELS)}>")
            return
        level = command.target.lower()
        if level not in LOGGING_LEVELS:
            raise CommandError(f"unknown level {command.target!r}; use one of {', '.join(LOGGING_LEVELS)}")
        await self._run(self._client().set_logging_level(level))
        self.log_level = level
        self.console.print(f"Log level set to {level}.")

    async def _cmd_logs(self, command: Command) -> None:
        floor = _rank(command.target.lower()) if command.target else 0
        shown = [entry for entry in self.logs if _rank(entry.get("level")) >= floor]
        if not shown:
            self.console.print("[dim]No log messages.[/]")
            return
        for entry in shown:
            self.console.print(_log_line(entry))

    async def _cmd_roots(self, command: Command) -> None:
        action = command.target.lower()
        if action in ("add", "remove", "rm"):
            await self._change_roots(action, command.rest)
            return
        if action:
            raise CommandError(f"usage: {COMMANDS['roots'][0]}")
        if not self.roots:
            self.console.print("[dim]No roots are offered to the server.[/]")
        for root in self.roots:
            self.console.print(f"{escape(root.as_uri())}  [dim]{escape(str(root))}[/]", soft_wrap=True)

    async def _change_roots(self, action: str, text: str) -> None:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise CommandError(f"cannot read the path: {exc}") from None
        if not words:
            raise CommandError(f"usage: roots {'add' if action == 'add' else 'remove'} PATH")
        roots = list(self.roots)
        for word in words:
            path = Path(word).expanduser().resolve()  # noqa: ASYNC240 - a local path, typed by the person
            if action == "add":
                if not path.exists():
                    raise CommandError(f"no such file or directory: {word}")
                if path not in roots:
                    roots.append(path)
            else:
                match = [root for root in roots if root == path or root.as_uri() == word]
                if not match:
                    raise CommandError(f"{word} is not one of the roots (see: roots)")
                roots = [root for root in roots if root not in match]
        client = self._client()
        changed = await self._run(client.set_roots([str(root) for root in roots]))
        self.roots = roots
        if not changed:
            self.console.print("[dim]The roots did not change.[/]")
            return
        told = (
            "the server was told they changed"
            if client.era == "legacy"
            else "the server sees them with its next request"
        )
        count = f"{len(roots)} root{'s' if len(roots) != 1 else ''}"
        self.console.print(f"Roots changed: now {count}; {told}.")
        await self._cmd_roots(Command("roots"))

    async def _cmd_info(self, command: Command) -> None:
        client = self._client()
        table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
        info = client.server_info or {}
        table.add_row("server", escape(f"{info.get('name', '?')} {info.get('version', '')}".strip()))
        table.add_row("era", escape(f"{client.era} (protocol {client.protocol_version})"))
        table.add_row("capabilities", escape(", ".join(sorted(client.server_capabilities or {})) or "none"))
        if client.instructions:
            table.add_row("instructions", escape(client.instructions))
        self.console.print(table)

    async def _expand_template(self, template: str) -> str:
        """Ask for each variable of a resource template (Tab completes through the server); the URI."""
        try:
            parsed = UriTemplate(template)
        except ValueError as exc:
            raise CommandError(f"not a valid URI template: {exc}") from None
        values: dict[str, str] = {}
        for name in parsed.variables:
            field = Field(name, {"type": "string", "minLength": 1}, True, "text")
            completer = self._template_completer(template, name, dict(values))
            values[name] = await ask_field(self.console, self._ask_paused, field, prefill="", complete=completer)
        return parsed.expand(values)

    async def _tool(self, name: str) -> Tool:
        if name not in self._tools:
            self._remember_tools(await self._run(self._client().list_tools()))
        if name not in self._tools:
            known = ", ".join(self._tools) or "none"
            raise CommandError(f"no tool named {name!r} (tools: {known})")
        return self._tools[name]

    async def _prompt(self, name: str) -> Prompt:
        if name not in self._prompts:
            self._remember_prompts(await self._run(self._client().list_prompts()))
        if name not in self._prompts:
            known = ", ".join(self._prompts) or "none"
            raise CommandError(f"no prompt named {name!r} (prompts: {known})")
        return self._prompts[name]

    # -- completion ------------------------------------------------------------------------------

    def completions(self, text: str) -> list[str]:
        """What Tab offers for the word being typed at the end of ``text`` (the command line so far)."""
        words = text.split(" ")
        if len(words) == 1:
            return [name for name in COMMANDS if name.startswith(words[0].lower())]
        command = ALIASES.get(words[0].lower(), words[0].lower())
        current = words[-1]
        options: list[str]
        if len(words) == 2:
            by_command: dict[str, list[str]] = {
                "call": self.names["tools"],
                "prompt": self.names["prompts"],
                "read": self.names["resources"] + [t.split("{", 1)[0] for t in self.names["templates"]],
                "log": list(LOGGING_LEVELS),
                "logs": list(LOGGING_LEVELS),
                "roots": ["add", "remove"],
            }
            options = by_command.get(command, [])
        elif command == "call" and words[1] in self._tools:
            given = {word.partition("=")[0] for word in words[2:-1]}
            properties = self._tools[words[1]].input_schema.get("properties") or {}
            options = [f"{name}=" for name in properties if name not in given]
        elif command == "prompt" and words[1] in self._prompts:
            given = {word.partition("=")[0] for word in words[2:-1]}
            options = [f"{arg.name}=" for arg in self._prompts[words[1]].arguments or [] if arg.name not in given]
        elif command == "roots" and words[1].lower() in ("remove", "rm") and len(words) == 3:
            options = [str(root) for root in self.roots]
        else:
            options = []
        return [option for option in dict.fromkeys(options) if option.startswith(current)]

    async def complete_line(self, text: str) -> list[str]:
        """``completions`` plus what the server offers (``completion/complete``) for the
        variable of a resource template being typed after ``read``: ``read demo://cities/Po``."""
        options = self.completions(text)
        words = text.split(" ")
        if len(words) == 2 and ALIASES.get(words[0].lower(), words[0].lower()) == "read":
            for option in await self._template_values(words[1]):
                if option not in options:
                    options.append(option)
        return options

    async def _template_values(self, typed: str) -> list[str]:
        """Whole URIs for ``typed``: each template it is partway through, its variable completed by the server."""
        found: list[str] = []
        for template in self.names["templates"]:
            partial = _partial_template(template, typed)
            if partial is None:
                continue
            name, value, context, before, after = partial
            complete = self._template_completer(template, name, context)
            if complete is None:
                return []
            for item in await complete(value):
                found.append(before + quote(item, safe="") + after)
        return found

    def _server_completer(self, ref: dict[str, str], argument: str, context: dict[str, str]) -> Completer | None:
        """Server-side completion of one argument (``completion/complete``), if the server offers it.

        ``context`` holds the arguments given so far: the server may narrow its answer with them."""
        client = self._client()
        if "completions" not in (client.server_capabilities or {}):
            return None

        async def complete(value: str) -> list[str]:
            try:
                async with asyncio.timeout(5.0):
                    found = await client.complete(ref, (argument, value), context or None)
            except (MCPError, TimeoutError):
                return []
            return [item for item in found.values if isinstance(item, str)]

        return complete

    def _argument_completer(self, prompt: str, argument: str, context: dict[str, str]) -> Completer | None:
        """Server-side completion of a prompt argument."""
        return self._server_completer({"type": "ref/prompt", "name": prompt}, argument, context)

    def _template_completer(self, template: str, variable: str, context: dict[str, str]) -> Completer | None:
        """Server-side completion of a resource template's variable."""
        return self._server_completer({"type": "ref/resource", "uri": template}, variable, context)

    # -- from the server -------------------------------------------------------------------------

    def on_log(self, params: dict[str, Any]) -> None:
        self.logs.append(params)
        if self.log_level is not None and _rank(params.get("level")) < _rank(self.log_level):
            return
        line = _log_line(params)
        self.out_of_band(lambda: self.console.print(line))

    def _browser_step(self, request: UrlElicitation) -> None:
        """The person agreed to a URL request: wait for the browser step with a spinner."""
        label = "Waiting for the browser step (Ctrl-C cancels)"
        if not self.console.is_terminal:
            self.console.print(f"[dim]{label} ...[/]")
            return
        self._stop_progress()
        self._start_progress(label, None)

    def _on_flow_complete(self, elicitation_id: str) -> None:
        def show() -> None:
            if self._progress is not None and self._progress_task is not None:
                self._progress.update(self._progress_task, description="The browser step is done; continuing")
            self.console.print("[green]The browser step is done.[/]")

        self.out_of_band(show)

    def _on_progress(self, label: str) -> Callable[[ProgressReceived], None]:
        def on_progress(event: ProgressReceived) -> None:
            self.out_of_band(lambda: self._show_progress(label, event))

        return on_progress

    def _show_progress(self, label: str, event: ProgressReceived) -> None:
        message = f": {event.message}" if event.message else ""
        if self._asking:
            return  # a question is on screen; the bar comes back with the next report after it
        if not self.console.is_terminal:
            total = f"/{event.total:g}" if event.total is not None else ""
            self.console.print(f"[dim]{escape(label)} {event.progress:g}{total}{escape(message)}[/]")
            return
        if self._progress is None:
            self._start_progress(label, event.total)
        assert self._progress is not None and self._progress_task is not None
        self._progress.update(
            self._progress_task, completed=event.progress, total=event.total, description=escape(label + message)
        )

    def _start_progress(self, label: str, total: float | None) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self._progress.start()
        self._progress_task = self._progress.add_task(escape(label), total=total)

    def _stop_progress(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._progress_task = None

    async def _ask_paused(self, question: Question) -> str:
        """Ask with the progress display put away (it would draw over the question) until the answer."""
        self._stop_progress()
        self._asking += 1
        try:
            return await ask_line(self.ask, question)
        finally:
            self._asking -= 1


_SIMPLE_VARIABLE = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")


def _partial_template(template: str, typed: str) -> tuple[str, str, dict[str, str], str, str] | None:
    """Where ``typed`` stands in ``template`` when it is partway through one of its variables:
    ``(variable, its value so far, the variables before it, the text before the value,
    the literal text after the variable)``; None when it is not (or the template is not simple)."""
    parts = re.split(r"(\{[^}]*\})", template)
    position = 0
    context: dict[str, str] = {}
    for index, part in enumerate(parts):
        if not part:
            continue
        if not part.startswith("{"):
            if not typed.startswith(part, position):
                return None  # still typing the literal text (plain Tab completion covers it), or another URI
            position += len(part)
            continue
        simple = _SIMPLE_VARIABLE.fullmatch(part)
        if simple is None:
            return None
        reserved, name = simple.group(1) == "+", simple.group(2)
        after = parts[index + 1] if index + 1 < len(parts) else ""
        rest = typed[position:]
        stop = rest.find(after) if after else -1
        if stop > 0 and (reserved or "/" not in rest[:stop]):
            context[name] = unquote(rest[:stop])
            position += stop
            continue
        if not reserved and "/" in rest:
            return None
        return name, unquote(rest), context, typed[:position], after
    return None


def _log_line(params: dict[str, Any]) -> Text:
    level = str(params.get("level", "info"))
    data = params.get("data")
    text = Text(f"[{level}]", style=_LEVEL_STYLES.get(level, ""))
    if params.get("logger"):
        text.append(f" {params['logger']}:", style="dim")
    text.append(" " + (data if isinstance(data, str) else json.dumps(data)))
    return text


@contextlib.contextmanager
def _no_watch(task: asyncio.Future[Any]) -> Iterator[None]:
    yield


def _call_now(action: Callable[[], None]) -> None:
    action()
