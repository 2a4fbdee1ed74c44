"""What Tab offers at the command line: commands, the server's names, argument keys, and the
server's own completions (``completion/complete``) for prompt arguments and template variables."""

from __future__ import annotations

__all__ = ["argument_completer", "complete_line", "completions", "partial_template", "template_completer"]

import asyncio
import re
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote

from ..types.errors import MCPError
from ..types.logging import LOGGING_LEVELS
from .commands import ALIASES, COMMANDS
from .questions import Completer

if TYPE_CHECKING:
    from ..client.client import Client
    from .session import TerminalSession

_SIMPLE_VARIABLE = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")


def completions(session: TerminalSession, text: str) -> list[str]:
    """What Tab offers for the word being typed at the end of ``text`` (the command line so far)."""
    words = text.split(" ")
    if len(words) == 1:
        return [name for name in COMMANDS if name.startswith(words[0].lower())]
    command = ALIASES.get(words[0].lower(), words[0].lower())
    current = words[-1]
    names = session.names
    options: list[str]
    if len(words) == 2:
        by_command: dict[str, list[str]] = {
            "call": names["tools"],
            "prompt": names["prompts"],
            "read": names["resources"] + [t.split("{", 1)[0] for t in names["templates"]],
            "log": list(LOGGING_LEVELS),
            "logs": list(LOGGING_LEVELS),
            "roots": ["add", "remove"],
        }
        options = by_command.get(command, [])
    elif command == "call" and words[1] in session.tools:
        given = {word.partition("=")[0] for word in words[2:-1]}
        properties = session.tools[words[1]].input_schema.get("properties") or {}
        options = [f"{name}=" for name in properties if name not in given]
    elif command == "prompt" and words[1] in session.prompts:
        given = {word.partition("=")[0] for word in words[2:-1]}
        options = [f"{arg.name}=" for arg in session.prompts[words[1]].arguments or [] if arg.name not in given]
    elif command == "roots" and words[1].lower() in ("remove", "rm") and len(words) == 3:
        options = [str(root) for root in session.roots]
    else:
        options = []
    return [option for option in dict.fromkeys(options) if option.startswith(current)]


async def complete_line(session: TerminalSession, text: str) -> list[str]:
    """``completions`` plus what the server offers (``completion/complete``) for the
    variable of a resource template being typed after ``read``: ``read demo://cities/Po``."""
    options = completions(session, text)
    words = text.split(" ")
    if len(words) == 2 and ALIASES.get(words[0].lower(), words[0].lower()) == "read" and session.client is not None:
        for option in await _template_values(session.client, session.names["templates"], words[1]):
            if option not in options:
                options.append(option)
    return options


async def _template_values(client: Client, templates: list[str], typed: str) -> list[str]:
    """Whole URIs for ``typed``: each template it is partway through, its variable completed by the server."""
    found: list[str] = []
    for template in templates:
        partial = partial_template(template, typed)
        if partial is None:
            continue
        name, value, context, before, after = partial
        complete = template_completer(client, template, name, context)
        if complete is None:
            return []
        for item in await complete(value):
            found.append(before + quote(item, safe="") + after)
    return found


def _server_completer(client: Client, ref: dict[str, str], argument: str, context: dict[str, str]) -> Completer | None:
    """Server-side completion of one argument (``completion/complete``), if the server offers it.

    ``context`` holds the arguments given so far: the server may narrow its answer with them."""
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


def argument_completer(client: Client, prompt: str, argument: str, context: dict[str, str]) -> Completer | None:
    """Server-side completion of a prompt argument; None when the server offers none."""
    return _server_completer(client, {"type": "ref/prompt", "name": prompt}, argument, context)


def template_completer(client: Client, template: str, variable: str, context: dict[str, str]) -> Completer | None:
    """Server-side completion of a resource template's variable; None when the server offers none."""
    return _server_completer(client, {"type": "ref/resource", "uri": template}, variable, context)


def partial_template(template: str, typed: str) -> tuple[str, str, dict[str, str], str, str] | None:
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
