"""Asking for the values a server request needs, with the server's own completions on Tab:
a prompt's arguments (``prompt NAME``) and a resource template's variables (``read TEMPLATE``).

The protocol gives these no types: every value travels as a string. A backchannel server says
more in ``_meta`` (``types.meta.ARGUMENT_SCHEMA``: the arguments' JSON Schema), and then an
``int`` is asked for as a whole number and checked as one before anything is sent; from any
other server each value is asked for as text.
"""

from __future__ import annotations

__all__ = ["ask_prompt_arguments", "ask_template_uri"]

import json
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ..types.errors import MCPError
from ..types.meta import ARGUMENT_SCHEMA
from ..types.prompts import Prompt
from ..types.uri_template import UriTemplate
from . import completion
from .commands import CommandError, parse_arguments
from .fields import OMIT, Field, field_from_schema
from .prompting import ask_field
from .questions import Ask

if TYPE_CHECKING:
    from ..client.client import Client


async def ask_prompt_arguments(console: Console, ask: Ask, client: Client, prompt: Prompt, rest: str) -> dict[str, str]:
    """The prompt's arguments: those typed in ``rest`` (JSON or key=value), then the missing ones asked.

    With arguments typed, only the required ones still missing are asked; values are strings
    (the spec's prompt arguments), a typed non-string value is sent as its JSON text.
    """
    declared = _declared_properties(prompt.meta)
    fields = []
    for arg in prompt.arguments or []:
        said = {**({"title": arg.title} if arg.title else {}), "description": arg.description}
        typed = declared.get(arg.name)
        if typed is None:
            fields.append(Field(arg.name, {"type": "string", **said}, bool(arg.required), "text"))
        else:  # the prompt's own words win over the schema's
            fields.append(field_from_schema(arg.name, {**typed, **_given(said)}, bool(arg.required)))
    schema = {"type": "object", "properties": {field.name: field.prop for field in fields}}
    given = parse_arguments(rest, schema) if rest else None
    arguments = {key: _as_text(value) for key, value in (given or {}).items()}
    for field in fields:
        if field.name in arguments or (given and not field.required):
            continue
        completer = completion.argument_completer(client, prompt.name, field.name, arguments)
        value = await ask_field(console, ask, field, prefill="", complete=completer)
        if value is not OMIT:
            arguments[field.name] = _as_text(value)
    return arguments


async def ask_template_uri(console: Console, ask: Ask, client: Client, template: str) -> str:
    """Ask for each variable of a resource template; the URI it expands to.

    Raises ``CommandError`` when ``template`` is not a valid URI template.
    """
    try:
        parsed = UriTemplate(template)
    except ValueError as exc:
        raise CommandError(f"not a valid URI template: {exc}") from None
    declared = await _template_properties(client, template)
    values: dict[str, str] = {}
    for name in parsed.variables:
        typed = declared.get(name)
        field = Field(name, {"type": "string", "minLength": 1}, True, "text")
        field = field if typed is None else field_from_schema(name, typed, True)
        completer = completion.template_completer(client, template, name, dict(values))
        values[name] = _as_text(await ask_field(console, ask, field, prefill="", complete=completer))
    return parsed.expand(values)


async def _template_properties(client: Client, template: str) -> dict[str, dict[str, Any]]:
    """The declared types of ``template``'s variables, if the server lists it with them."""
    try:
        listed = await client.list_resource_templates()
    except MCPError:  # no templates/list, or it failed: ask for text, as for any server
        return {}
    meta = next((item.meta for item in listed if item.uri_template == template), None)
    return _declared_properties(meta)


def _declared_properties(meta: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    schema = (meta or {}).get(ARGUMENT_SCHEMA)
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return {}
    return {name: prop for name, prop in properties.items() if isinstance(prop, dict) and "$ref" not in prop}


def _given(said: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in said.items() if value}


def _as_text(value: Any) -> str:
    """What goes on the wire: the protocol's prompt arguments and URI variables are strings."""
    return value if isinstance(value, str) else json.dumps(value)
