"""The interactive client's controller: a command line in, requests to the server, rendered output out.

``TerminalSession`` knows nothing of the terminal. It prints to a rich ``Console`` and
asks through an ``Ask`` function; the terminal layer (:mod:`.terminal`) plugs
in prompt_toolkit, Ctrl-C handling and printing above an active prompt through
the ``interrupts`` and ``out_of_band`` hooks. A test drives it with
``await session.execute("call add a=1")`` and reads the captured console.
"""

from __future__ import annotations

__all__ = ["Interrupted", "TerminalSession"]

import asyncio
import contextlib
import os
import webbrowser
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from .._version import __version__
from ..apps.app import APP_MIME_TYPE, UI_EXTENSION, app_uri_of
from ..client.era_detection import HandshakeEraNeeded
from ..client.tasks import ToolTask
from ..client.url_flow import UrlElicitation
from ..protocol.events import ProgressReceived
from ..types.capabilities import extension_settings
from ..types.errors import ConnectionClosed, MCPError, RequestError
from ..types.logging import LOGGING_LEVELS
from ..types.meta import FORGET_DECLINES, REMEMBERED_DECLINE
from ..types.prompts import Prompt
from ..types.skills import SKILLS_EXTENSION, Skill
from ..types.tools import Tool
from . import completion, watching
from .commands import COMMANDS, Command, CommandError, changed_roots, parse_arguments, parse_command
from .form_prompt import FormRenderer, LinkConsent
from .log_lines import log_line, severity
from .progress import ProgressDisplay
from .prompting import ask_arguments
from .questions import Ask, Cancelled, Question, ask_line
from .render import Renderer
from .sampling import TerminalSampler
from .server_arguments import ask_prompt_arguments, ask_template_uri
from .skill_view import SkillView
from .task_board import TaskBoard, runs_as_task

if TYPE_CHECKING:
    from ..app_host.host import AppHost, ShownApp
    from ..client.client import Client

T = TypeVar("T")


class Interrupted(Exception):
    """The person pressed Ctrl-C while a request ran: it was cancelled on the wire."""


class TerminalSession:
    """One person's session with one server, at the command line."""

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
        #: Opens a page in the browser (None: ``--no-browser``, the address is printed).
        self.opener = opener
        #: The page where the MCP Apps of the tools called are shown (``app_host``), once one is.
        self.app_host: AppHost | None = None
        self.sampling = TerminalSampler(console, self._ask_paused)  # the person is the model; connect may set one
        self.roots = [Path(root).expanduser().resolve() for root in roots]
        #: Log messages received (``notifications/message`` params), newest last.
        self.logs: deque[dict[str, Any]] = deque(maxlen=1000)
        #: Messages below this level are kept in ``logs`` but not printed; None prints all.
        self.log_level: str | None = None
        #: Names offered by Tab: refreshed on connect and by each list command.
        self.names: dict[str, list[str]] = {"tools": [], "prompts": [], "resources": [], "templates": []}
        #: The tools and prompts last listed, by name.
        self.tools: dict[str, Tool] = {}
        self.prompts: dict[str, Prompt] = {}
        #: Hook: watch for Ctrl-C while ``task`` runs and cancel it (the terminal layer sets it).
        self.interrupts: Callable[[asyncio.Future[Any]], AbstractContextManager[Any]] = lambda _: (
            contextlib.nullcontext()
        )
        #: Hook: print from a callback that may arrive while a prompt is shown.
        self.out_of_band: Callable[[Callable[[], None]], None] = lambda action: action()
        #: The progress of the running request (and the spinner of a browser step).
        self.progress = ProgressDisplay(console)
        #: True once the connection ended under us (the server went away), not by ``quit``.
        self.gone = False
        #: Tasks started here (``tasks``, ``wait``, ``cancel``).
        self.tasks = TaskBoard(console, self.renderer, self.progress, lambda action: self.out_of_band(action))
        #: Resources watched (``watch``, ``unwatch``: see ``.watching``), their changes printed as they come.
        self.watches = watching.Watches(console, self.renderer, self._client, lambda action: self.out_of_band(action))
        self._cmd_watch = self._cmd_unwatch = self.watches.command
        #: ``skills`` and ``skill NAME [file]`` (``.skill_view``); the last listing, for Tab.
        self.skill_view = SkillView(self.renderer, self._client, self._run, self.names)
        self._cmd_skills = self._cmd_skill = self.skill_view.command
        #: Call a tool the server does not list, by name (an http(s):// server may hide one for
        #: want of a scope, and the call then steps the login up); else "no tool named".
        self.calls_unlisted = False
        #: The last call a remembered decline answered (``forget`` repeats it, asking again).
        self.declined_call: tuple[str, dict[str, Any] | None] | None = None
        #: ``forget`` with no such call: the next call asks the server to show declined forms again.
        self.forget_next = False

    # -- wiring ----------------------------------------------------------------------------------

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``Client``: our form, URL-consent, sampling, log and roots handlers.

        No request timeout: a call may wait on the person filling a form; Ctrl-C cancels instead."""
        return {
            "elicitation": self.tasks.gated(self.forms),  # a background task's question waits for ``wait``
            "url_elicitation": self.link_consent,
            "sampling": self.tasks.gated(self.sampling),
            "sampling_tools": True,  # the person, an endpoint or a command can each answer with a tool use
            "on_log": self.on_log,
            # Always declared (possibly empty), so that ``roots add`` can offer one later.
            "roots": [str(root) for root in self.roots],
            "request_timeout": None,
            # MCP Apps (SEP-1865): the apps of the tools called are shown in the browser.
            "extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}},
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
                if client.options.logs.level != log_level:  # not asked for as it connected (Client(log_level=))
                    await client.set_logging_level(log_level)  # type: ignore[arg-type]
                self.log_level = log_level
        await self.refresh_names()

    async def refresh_names(self) -> None:
        """Fetch the server's tools, prompts, resources and templates again, for completion and the ``list``
        commands; call after a ``list_changed``."""
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
            if extension_settings(capabilities, SKILLS_EXTENSION) is not None:  # declared: stateless era only
                self.skill_view.remember(await client.list_skills())

    @property
    def skills(self) -> dict[str, Skill]:
        """The skills last listed, by name and URI (Tab completes ``skill NAME`` from them)."""
        return self.skill_view.known

    def _client(self) -> Client:
        if self.client is None:
            raise CommandError("not connected")
        return self.client

    def _remember_tools(self, tools: list[Tool]) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.names["tools"] = list(self.tools)

    def _remember_prompts(self, prompts: list[Prompt]) -> None:
        self.prompts = {prompt.name: prompt for prompt in prompts}
        self.names["prompts"] = list(self.prompts)

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
        except HandshakeEraNeeded as exc:
            self.console.print(f"[red]The server answered with error {exc.code}: {escape(exc.message)}[/]")
            self.console.print(
                "[yellow]This server cannot ask its questions in the stateless era (2026-07-28): "
                "connect again with [bold]--era handshake[/].[/]"
            )
        except RequestError as exc:
            self.console.print(f"[red]The server answered with error {exc.code}: {escape(exc.message)}[/]")
        except ConnectionClosed as exc:
            reason = exc.message.removeprefix("Connection closed: ")
            self.console.print(f"[red]The connection is closed: {escape(reason)}.[/]", soft_wrap=True)
            self.gone = True
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
            self.progress.stop()

    # -- commands --------------------------------------------------------------------------------

    async def _cmd_help(self, command: Command) -> None:
        self.renderer.help(COMMANDS.values())

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
            uri = await ask_template_uri(self.console, self._ask_paused, self._client(), uri)
            self.console.print(f"[dim]Reading {escape(uri)}[/]", soft_wrap=True)
        result = await self._run(self._client().read_resource(uri))
        self.renderer.resource_result(uri, result)

    async def _cmd_call(self, command: Command) -> None:
        tool = await self._tool(command.target)
        if tool is None:  # not listed, and asked for by name: it may be hidden for want of a scope
            self.console.print(
                f"[dim]The server lists no tool {escape(command.target)!r}; asking for it by name "
                "(a tool hidden for want of a scope asks you to log in for that scope).[/]"
            )
            await self._call(command.target, parse_arguments(command.rest) if command.rest else None)
            return
        given = parse_arguments(command.rest, tool.input_schema) if command.rest else None
        await self._call(tool.name, await ask_arguments(self.console, self._ask_paused, tool.input_schema, given))

    async def _call(self, name: str, arguments: dict[str, Any] | None, *, forget: bool = False) -> None:
        """Call the tool and show its result; ``forget`` (or an earlier ``forget``) asks the server
        to show again the forms the person declined (``_meta["dev.backchannel/forgetDeclines"]``)."""
        client = self._client()
        meta = {FORGET_DECLINES: True} if forget or self.forget_next else None
        self.forget_next = False
        on_progress = self._on_progress(name)
        if await runs_as_task(client, name):
            task = client.start_task(name, arguments, on_progress=on_progress, meta=meta)
            return await self._follow(await self._run(task))
        shown = await self._show_app(name, arguments)
        try:
            result = await self._run(client.call_tool(name, arguments, on_progress=on_progress, meta=meta))
        except BaseException as exc:
            if shown is not None:
                shown.cancelled(str(exc) or type(exc).__name__)
            raise
        if shown is not None:
            shown.finished(msgspec.to_builtins(result))
        self.renderer.tool_result(name, result)
        if REMEMBERED_DECLINE in (result.meta or {}):  # the server did not ask: it remembered a decline
            self.console.print("[yellow](you declined this form earlier; [bold]forget[/] asks again)[/]")
            self.declined_call = (name, arguments)

    async def _show_app(self, name: str, arguments: dict[str, Any] | None) -> ShownApp | None:
        """Show the MCP App of tool ``name``, if it has one, on the apps page (``app_host``)."""
        tool = self.tools.get(name)
        definition = msgspec.to_builtins(tool) if tool is not None and tool.meta else None
        if definition is None or app_uri_of(definition) is None:
            return None
        if self.app_host is None:
            from ..app_host.host import AppHost

            def say(line: str) -> None:
                self.out_of_band(lambda: self.console.print(Text(line), soft_wrap=True))

            host_info = {"name": "backchannel", "version": __version__}
            self.app_host = AppHost(self._client(), opener=self.opener, say=say, host_info=host_info)
        return await self._run(self.app_host.show(definition, arguments))

    async def finish(self) -> None:
        """End what the session started beside the connection: the apps page (each app torn down)."""
        if self.app_host is not None:
            await self.app_host.aclose()

    async def _cmd_forget(self, command: Command) -> None:
        if self.declined_call is None:
            self.forget_next = True
            self.console.print("The next call shows again any form you declined before.")
            return
        name, arguments = self.declined_call
        self.declined_call = None
        self.console.print(f"[dim]Calling {escape(name)} again, with the forms you declined shown again.[/]")
        await self._call(name, arguments, forget=True)

    async def _follow(self, task: ToolTask) -> None:
        """Wait for a task (see ``task_board``): Ctrl-C leaves it running; a plain call is cancelled."""
        try:
            await self.tasks.follow(task, self._run)
        except Interrupted:
            if task.task_id is None:
                await task.cancel()
                raise
            self.tasks.left_running(task)

    async def _cmd_tasks(self, command: Command) -> None:
        if not command.target:
            return self.tasks.show()
        task = self.tasks.find(command.rest)
        await (self._follow(task) if command.target.lower() == "wait" else self.tasks.cancel(task, self._run))

    async def _cmd_prompt(self, command: Command) -> None:
        client = self._client()
        prompt = await self._prompt(command.target)
        arguments = await ask_prompt_arguments(self.console, self._ask_paused, client, prompt, command.rest)
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
        floor = severity(command.target.lower()) if command.target else 0
        shown = [entry for entry in self.logs if severity(entry.get("level")) >= floor]
        if not shown:
            self.console.print("[dim]No log messages.[/]")
            return
        for entry in shown:
            self.console.print(log_line(entry))

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
        roots = changed_roots(self.roots, action, text)
        client = self._client()
        changed = await self._run(client.set_roots([str(root) for root in roots]))
        self.roots = roots
        if not changed:
            self.console.print("[dim]The roots did not change.[/]")
            return
        told = (
            "the server was told they changed"
            if client.era == "handshake"
            else "the server sees them with its next request"
        )
        count = f"{len(roots)} root{'s' if len(roots) != 1 else ''}"
        self.console.print(f"Roots changed: now {count}; {told}.")
        await self._cmd_roots(Command("roots"))

    async def _cmd_info(self, command: Command) -> None:
        self.renderer.connection(self._client())

    async def _tool(self, name: str) -> Tool | None:
        """The tool listed as ``name``; None for one not listed when ``calls_unlisted`` (else an error)."""
        if name not in self.tools:
            self._remember_tools(await self._run(self._client().list_tools()))
        if name not in self.tools:
            if self.calls_unlisted:
                return None
            known = ", ".join(self.tools) or "none"
            raise CommandError(f"no tool named {name!r} (tools: {known})")
        return self.tools[name]

    async def _prompt(self, name: str) -> Prompt:
        if name not in self.prompts:
            self._remember_prompts(await self._run(self._client().list_prompts()))
        if name not in self.prompts:
            known = ", ".join(self.prompts) or "none"
            raise CommandError(f"no prompt named {name!r} (prompts: {known})")
        return self.prompts[name]

    # -- completion (see .completion) ----------------------------------------------------------

    def completions(self, text: str) -> list[str]:
        """What Tab offers for the word being typed at the end of ``text`` (the command line so far)."""
        return completion.completions(self, text)

    async def complete_line(self, text: str) -> list[str]:
        """``completions`` plus the server's own completions of a resource template being typed after ``read``."""
        return await completion.complete_line(self, text)

    # -- from the server -------------------------------------------------------------------------

    def on_log(self, params: dict[str, Any]) -> None:
        """Keep a ``notifications/message`` from the server and print it when it reaches ``log_level``."""
        self.logs.append(params)
        if self.log_level is not None and severity(params.get("level")) < severity(self.log_level):
            return
        line = log_line(params)
        self.out_of_band(lambda: self.console.print(line))

    def _browser_step(self, request: UrlElicitation) -> None:
        """The person agreed to a URL request: wait for the browser step with a spinner."""
        self.progress.spin("Waiting for the browser step (Ctrl-C cancels)")

    def _on_flow_complete(self, elicitation_id: str) -> None:
        def show() -> None:
            self.progress.describe("The browser step is done; continuing")
            self.console.print("[green]The browser step is done.[/]")

        self.out_of_band(show)

    def _on_progress(self, label: str) -> Callable[[ProgressReceived], None]:
        def on_progress(event: ProgressReceived) -> None:
            self.out_of_band(lambda: self.progress.show(label, event))

        return on_progress

    async def _ask_paused(self, question: Question) -> str:
        """Ask with the progress display put away (it would draw over the question) until the answer."""
        with self.progress.put_away():
            return await ask_line(self.ask, question)
