"""Prompts: a function that returns messages, with string arguments the client fills in."""

from __future__ import annotations

__all__ = ["RegisteredPrompt", "assistant", "user"]

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..completion.completers import ArgumentCompleter
from ..signatures.signature import ParameterSet, derive_parameters
from ..types.prompts import GetPromptResult, PromptMessage
from .content import to_block
from .definitions import wire_definition


def user(content: Any) -> dict[str, Any]:
    """A prompt message from the user: text, an ``Image``, a content block."""
    return {"role": "user", "content": to_block(content)}


def assistant(content: Any) -> dict[str, Any]:
    """A prompt message from the assistant."""
    return {"role": "assistant", "content": to_block(content)}


@dataclass(slots=True)
class RegisteredPrompt:
    name: str
    fn: Callable[..., Any]
    parameters: ParameterSet
    description: str | None = None
    title: str | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    definition: dict[str, Any] = field(default_factory=dict)
    #: Argument name -> its completer (``completion/complete``).
    completers: dict[str, ArgumentCompleter] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        icons: list[dict[str, Any]] | None,
        meta: dict[str, Any] | None,
        context_type: type,
    ) -> RegisteredPrompt:
        name = name or fn.__name__
        prompt = cls(
            name=name,
            fn=fn,
            parameters=derive_parameters(fn, context_type=context_type, what="prompt", name=name),
            description=description or inspect.getdoc(fn),
            title=title,
            icons=icons,
            meta=meta,
        )
        prompt.definition = wire_definition(
            ("name", name),
            ("title", title),
            ("description", prompt.description),
            ("arguments", prompt.parameters.prompt_arguments()),
            ("icons", icons),
            ("_meta", prompt.parameters.with_argument_schema(meta)),
        )
        return prompt

    def to_result(self, value: Any) -> dict[str, Any]:
        """A prompt function's return value as a ``GetPromptResult``.

        A string is one user message; a list holds messages, strings (user
        messages) or content blocks (user messages holding them).
        """
        if isinstance(value, GetPromptResult):
            return msgspec.to_builtins(value)  # type: ignore[no-any-return]
        if isinstance(value, dict) and "messages" in value:
            return value
        items = value if isinstance(value, list | tuple) else [value]
        result: dict[str, Any] = {"messages": [_message(item) for item in items]}
        if self.description:
            result["description"] = self.description
        return result


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, PromptMessage):
        return msgspec.to_builtins(item)  # type: ignore[no-any-return]
    if isinstance(item, dict) and "role" in item:
        return item
    return user(item)
