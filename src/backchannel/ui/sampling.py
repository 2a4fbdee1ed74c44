"""A server's ``sampling/createMessage`` at the terminal, with the person in the loop (``client/sampling.mdx``).

The request is shown whole: system prompt, each message (text, images and audio by
kind and size, tool uses and results), max tokens, temperature, stop sequences, model
preferences, and the tools offered with the tool choice. Then, by how ``connect`` was
started:

* **the person is the model** (the default): they type the reply, or
  ``use <tool> {json}`` to call one of the tools offered; Esc refuses;
* **a model** (an endpoint or a command, :mod:`.sampling_models`): the person first
  approves the request, edits its text, or refuses it, and nothing leaves before "yes";
  then they see the reply and return it, edit it, or refuse it.

A refusal answers the server with error -1, "User rejected sampling request" (the
handshake era). In the stateless era nothing is sent: the server does not wait for an
answer, so the call ends here, and the person is told so.
"""

from __future__ import annotations

__all__ = ["SamplingFailed", "SamplingRefused", "TerminalSampler", "describe_block"]

import copy
import json
import secrets
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..protocol.sampling import SamplingProblem, check_result
from ..types.errors import InternalError, MCPError
from .questions import Ask, Cancelled, Question, ask_line
from .sampling_models import ModelFailed, SamplingModel

#: The spec's code and words for a sampling request the user rejected (``client/sampling.mdx``).
REJECTED = -1
_CHOICES = {"y": "yes", "yes": "yes", "e": "edit", "edit": "edit", "n": "no", "no": "no"}
_PRIORITIES = (("intelligencePriority", "intelligence"), ("speedPriority", "speed"), ("costPriority", "cost"))
#: The ``model`` of a reply the person typed.
PERSON = "human"


class SamplingRefused(MCPError):
    """The person (or the answers file) refused a sampling request: error -1 on the wire."""

    code = REJECTED

    def __init__(self) -> None:
        super().__init__("User rejected sampling request")

    def __str__(self) -> str:
        # Seen only where the refusal ends our own call: the stateless era, which sends no error.
        return "the sampling request was refused, so the call ends here (the server is not asked again)"


class SamplingFailed(InternalError):
    """The model configured for sampling gave no usable answer: error -32603 on the wire."""

    def __init__(self) -> None:
        super().__init__("the client's model could not answer the sampling request")

    def __str__(self) -> str:
        return "the model could not answer the sampling request, so the call ends here"


def describe_block(block: Any) -> str:
    """One content block as a line of text: its text, or what it is."""
    if not isinstance(block, dict):
        return repr(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {block.get('mimeType')}, {size:,} bytes]"
    if kind == "tool_use":
        arguments = json.dumps(block.get("input"), ensure_ascii=False)
        return f"[uses tool {block.get('name')} {arguments} (id {block.get('id')})]"
    if kind == "tool_result":
        inner = "; ".join(describe_block(item) for item in block.get("content") or [])
        failed = " (an error)" if block.get("isError") else ""
        return f"[result of {block.get('toolUseId')}{failed}: {inner}]"
    return f"[{kind} content]"


def _blocks(content: Any) -> list[Any]:
    return list(content) if isinstance(content, list) else [content]


class TerminalSampler:
    """The ``sampling`` handler of the terminal client: the person answers, or approves a model's answer."""

    def __init__(self, console: Console, ask: Ask, model: SamplingModel | None = None) -> None:
        self.console = console
        self.ask = ask
        #: None: the person is the model. ``connect --sampling-endpoint/--sampling-command`` sets one.
        self.model = model

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        try:
            if self.model is None:
                self.show_request(params, "The server asks you for a model's reply (sampling/createMessage):")
                return await self._typed_reply(params)
            return await self._modelled_reply(params, self.model)
        except Cancelled:
            self.console.print("[yellow]Sampling request refused.[/]")
            raise SamplingRefused from None

    # -- showing ---------------------------------------------------------------------------------

    def show_request(self, params: dict[str, Any], heading: str) -> None:
        out = self.console
        out.print(f"[bold cyan]{escape(heading)}[/]")
        if params.get("systemPrompt"):
            self._line("system", str(params["systemPrompt"]), "magenta")
        for message in params.get("messages") or []:
            for block in _blocks(message.get("content")):
                self._line(str(message.get("role")), describe_block(block), "green")
        settings = [f"max tokens {params.get('maxTokens')}"]
        if params.get("temperature") is not None:
            settings.append(f"temperature {params['temperature']}")
        if params.get("stopSequences"):
            settings.append("stop at " + ", ".join(json.dumps(item) for item in params["stopSequences"]))
        if params.get("includeContext") not in (None, "none"):
            settings.append(f"include context: {params['includeContext']}")
        out.print(Text("  " + ", ".join(settings), style="dim"))
        preferences = params.get("modelPreferences") or {}
        wishes = [str(hint.get("name")) for hint in preferences.get("hints") or [] if isinstance(hint, dict)]
        shown = ["hints " + ", ".join(wishes)] if wishes else []
        for key, word in _PRIORITIES:
            if preferences.get(key) is not None:
                shown.append(f"{word} {preferences[key]}")
        if shown:
            out.print(Text("  model preferences: " + "; ".join(shown), style="dim"))
        tools = params.get("tools") or []
        if tools:
            mode = (params.get("toolChoice") or {}).get("mode") or "auto"
            out.print(Text(f"  tools offered (tool choice {mode}):", style="dim"))
            for tool in tools:
                described = f": {tool['description']}" if tool.get("description") else ""
                schema = json.dumps((tool.get("inputSchema") or {}).get("properties") or {}, ensure_ascii=False)
                out.print(Text(f"    {tool.get('name')}{described}  {schema}"), soft_wrap=True)

    def _line(self, role: str, text: str, colour: str) -> None:
        line = Text("  ")
        line.append(f"{role}: ", style=f"bold {colour}")
        line.append(text.replace("\n", "\n" + " " * (len(role) + 4)))
        self.console.print(line, soft_wrap=True)

    def show_result(self, result: dict[str, Any], heading: str) -> None:
        stop = f" (stop reason {result['stopReason']})" if result.get("stopReason") else ""
        self.console.print(f"[bold cyan]{escape(heading)}{escape(stop)}:[/]")
        for block in _blocks(result.get("content")):
            self._line(str(result.get("role")), describe_block(block), "green")

    # -- the person as the model -----------------------------------------------------------------

    async def _typed_reply(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = {str(tool.get("name")): tool for tool in params.get("tools") or []}
        hint = " [bold]use <tool> {json}[/] calls one of the tools offered;" if tools else ""
        self.console.print(f"[dim]You are the model: type the reply;{hint} Esc refuses.[/]")
        question = Question("reply> ", completions=tuple(f"use {name}" for name in tools))
        while True:
            text = (await ask_line(self.ask, question)).strip()
            if not text:
                self.console.print("[dim]An empty reply is not sent: type one, or press Esc to refuse.[/]")
                continue
            try:
                block = _tool_use(text, tools)
            except ValueError as exc:
                self.console.print(f"[red]{escape(str(exc))}[/]")
                continue
            if block is not None:
                result = {"role": "assistant", "content": block, "model": PERSON, "stopReason": "toolUse"}
            else:
                result = {"role": "assistant", "content": {"type": "text", "text": text}, "model": PERSON}
                result["stopReason"] = "endTurn"
            self.console.print("[green]Reply sent.[/]")
            return result

    # -- a model, with the person approving -------------------------------------------------------

    async def _modelled_reply(self, params: dict[str, Any], model: SamplingModel) -> dict[str, Any]:
        request = copy.deepcopy(params)
        while True:
            self.show_request(request, "The server asks for a model's reply (sampling/createMessage):")
            choice = await self._choose(f"Send it to {model.label}? [Y]es / [E]dit / [N]o, refuse: ")
            if choice == "no":
                raise Cancelled
            if choice == "yes":
                break
            await self._edit_request(request)
        self.console.print(f"[dim]Asking {escape(model.label)} ...[/]", soft_wrap=True)
        try:
            result = await model.complete(request)
            check_result(result, tools_offered=bool(params.get("tools")), what="its answer")
        except (ModelFailed, SamplingProblem) as exc:
            self.console.print(f"[red]No reply from {escape(model.label)}: {escape(str(exc))}[/]", soft_wrap=True)
            self.console.print("[yellow]The server is told the sampling request failed.[/]")
            raise SamplingFailed from None
        while True:
            self.show_result(result, f"{model.label} answered")
            choice = await self._choose("Return it to the server? [Y]es / [E]dit / [N]o, refuse: ")
            if choice == "no":
                raise Cancelled
            if choice == "yes":
                self.console.print("[green]Reply sent.[/]")
                return result
            result = await self._edit_reply(result)

    async def _choose(self, prompt: str) -> str:
        question = Question(prompt, completions=("yes", "edit", "no"))
        while True:
            choice = _CHOICES.get((await ask_line(self.ask, question)).strip().lower())
            if choice is not None:
                return choice
            self.console.print("[red]Type y (yes), e (edit) or n (no); Esc refuses.[/]")

    async def _edit_request(self, request: dict[str, Any]) -> None:
        """Each text in the request, prefilled for the person to change: the system prompt, then the messages."""
        self.console.print("[dim]Edit each text (Enter keeps it):[/]")
        if request.get("systemPrompt"):
            request["systemPrompt"] = await ask_line(self.ask, Question("system: ", default=request["systemPrompt"]))
        for message in request.get("messages") or []:
            for block in _blocks(message.get("content")):
                if isinstance(block, dict) and block.get("type") == "text":
                    prompt = f"{message.get('role')}: "
                    block["text"] = await ask_line(self.ask, Question(prompt, default=str(block.get("text", ""))))

    async def _edit_reply(self, result: dict[str, Any]) -> dict[str, Any]:
        edited = copy.deepcopy(result)
        self.console.print("[dim]Edit the reply (Enter keeps it):[/]")
        for block in _blocks(edited.get("content")):
            if isinstance(block, dict) and block.get("type") == "text":
                block["text"] = await ask_line(self.ask, Question("reply> ", default=str(block.get("text", ""))))
        return edited


def _tool_use(text: str, tools: dict[str, Any]) -> dict[str, Any] | None:
    """``use <tool> {json}`` as a ``tool_use`` block; None when the text is a plain reply
    (it does not start with ``use`` and the name of a tool offered)."""
    word, _, rest = text.partition(" ")
    name, _, arguments = rest.strip().partition(" ")
    if word.lower() != "use" or name not in tools:
        return None
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        raise ValueError(f'the arguments of {name} must be a JSON object, like use {name} {{"key": "value"}}') from None
    if not isinstance(value, dict):
        raise ValueError(f"the arguments of {name} must be a JSON object")
    return {"type": "tool_use", "id": f"call_{secrets.token_hex(6)}", "name": name, "input": value}
