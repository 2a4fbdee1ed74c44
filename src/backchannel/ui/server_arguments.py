"""Asking for the values a server request needs, with the server's own completions on Tab:
a prompt's arguments (``prompt NAME``) and a resource template's variables (``read TEMPLATE``)."""

from __future__ import annotations

__all__ = ["ask_prompt_arguments", "ask_template_uri"]

import json
from typing import TYPE_CHECKING

from rich.console import Console

from ..types.prompts import Prompt
from ..types.uri_template import UriTemplate
from . import completion
from .commands import CommandError, parse_arguments
from .fields import OMIT, Field
from .prompting import ask_field
from .questions import Ask

if TYPE_CHECKING:
    from ..client.client import Client


async def ask_prompt_arguments(console: Console, ask: Ask, client: Client, prompt: Prompt, rest: str) -> dict[str, str]:
    """The prompt's arguments: those typed in ``rest`` (JSON or key=value), then the missing ones asked.

    With arguments typed, only the required ones still missing are asked; values are strings
    (the spec's prompt arguments), a typed non-string value is sent as its JSON text.
    """
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
    given = parse_arguments(rest, schema) if rest else None
    arguments = {key: v if isinstance(v, str) else json.dumps(v) for key, v in (given or {}).items()}
    for field in fields:
        if field.name in arguments or (given and not field.required):
            continue
        completer = completion.argument_completer(client, prompt.name, field.name, arguments)
        value = await ask_field(console, ask, field, prefill="", complete=completer)
        if value is not OMIT:
            arguments[field.name] = value
    return arguments


async def ask_template_uri(console: Console, ask: Ask, client: Client, template: str) -> str:
    """Ask for each variable of a resource template; the URI it expands to.

    Raises ``CommandError`` when ``template`` is not a valid URI template.
    """
    try:
        parsed = UriTemplate(template)
    except ValueError as exc:
        raise CommandError(f"not a valid URI template: {exc}") from None
    values: dict[str, str] = {}
    for name in parsed.variables:
        field = Field(name, {"type": "string", "minLength": 1}, True, "text")
        completer = completion.template_completer(client, template, name, dict(values))
        values[name] = await ask_field(console, ask, field, prefill="", complete=completer)
    return parsed.expand(values)
