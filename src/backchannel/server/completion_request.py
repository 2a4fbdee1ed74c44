"""``completion/complete``: find the prompt or template argument asked about and run its completer.

The completers themselves are made at registration (``completion.py``); this is the request's side.
"""

from __future__ import annotations

__all__ = ["handle_complete"]

from collections.abc import Mapping, Sequence
from typing import Any

from ..types.errors import InvalidParams
from .completion import ArgumentCompleter
from .prompts import RegisteredPrompt
from .resources import RegisteredResource, RegisteredTemplate


async def handle_complete(
    params: dict[str, Any],
    prompts: Mapping[str, RegisteredPrompt],
    templates: Sequence[RegisteredTemplate],
    resources: Mapping[str, RegisteredResource],
) -> dict[str, Any]:
    """Validate a ``completion/complete`` request and run the argument's completer.

    Unknown prompt, template or argument: ``InvalidParams`` naming it. A known
    argument with no completer gets an empty answer."""
    ref, name, value, arguments = _validated(params)
    completers: dict[str, ArgumentCompleter]
    if ref["type"] == "ref/prompt":
        prompt_name = ref["name"]
        prompt = prompts.get(prompt_name)
        if prompt is None:
            raise InvalidParams(f"completion/complete: unknown prompt {prompt_name!r}", data={"name": prompt_name})
        completers, known, what = prompt.completers, prompt.parameters.input_schema["properties"], "prompt"
        label = f"prompt {prompt_name!r}"
    else:
        uri = ref["uri"]
        template = next((t for t in templates if str(t.template) == uri), None)
        if template is not None:
            completers, known, label = template.completers, template.template.variables, f"resource template {uri!r}"
        elif uri in resources:
            completers, known, label = {}, (), f"resource {uri!r}"
        else:
            raise InvalidParams(f"completion/complete: unknown resource template {uri!r}", data={"uri": uri})
        what = "template"
    completer = completers.get(name)
    if completer is None:
        if name not in known:
            raise InvalidParams(
                f"completion/complete: {label} has no argument {name!r}", data={what: ref, "argument": name}
            )
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    return {"completion": await completer.complete(value, arguments)}


def _validated(params: dict[str, Any]) -> tuple[dict[str, Any], str, str, dict[str, str]]:
    ref = params.get("ref")
    if not isinstance(ref, dict):
        raise InvalidParams("completion/complete: params.ref must be an object")
    kind = ref.get("type")
    if kind == "ref/prompt":
        if not isinstance(ref.get("name"), str):
            raise InvalidParams("completion/complete: a ref/prompt needs a string name")
    elif kind == "ref/resource":
        if not isinstance(ref.get("uri"), str):
            raise InvalidParams("completion/complete: a ref/resource needs a string uri")
    else:
        raise InvalidParams(f"completion/complete: ref.type must be 'ref/prompt' or 'ref/resource', not {kind!r}")
    argument = params.get("argument")
    if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise InvalidParams("completion/complete: params.argument must be an object with a string name")
    value = argument.get("value")
    if not isinstance(value, str):
        raise InvalidParams("completion/complete: params.argument.value must be a string")
    context = params.get("context")
    arguments: Any = {}
    if context is not None:
        if not isinstance(context, dict):
            raise InvalidParams("completion/complete: params.context must be an object")
        arguments = context.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise InvalidParams("completion/complete: params.context.arguments must map names to strings")
    return ref, argument["name"], value, dict(arguments)
