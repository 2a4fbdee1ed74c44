"""``Client.complete``: completions for one argument of a prompt or resource template."""

from __future__ import annotations

__all__ = ["complete"]

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from ..types.completion import Completion, CompletionArgument, PromptReference, ResourceTemplateReference
from .era_detection import converted

if TYPE_CHECKING:
    from .client import Client


async def complete(
    client: Client,
    ref: dict[str, Any] | PromptReference | ResourceTemplateReference,
    argument: tuple[str, str] | dict[str, str] | CompletionArgument,
    context: Mapping[str, str] | None = None,
) -> Completion:
    """Completions for one argument of a prompt or resource template (``completion/complete``).

    ``ref``: ``PromptReference(name=...)``, ``ResourceTemplateReference(uri=<the template>)``
    or the wire dict. ``argument``: ``(name, typed_value)`` or ``{"name": ..., "value": ...}``.
    ``context``: the values already chosen for the other arguments. ``total`` and
    ``has_more`` are None when the server left them out."""
    if isinstance(ref, PromptReference | ResourceTemplateReference):
        ref = msgspec.to_builtins(ref)
    if isinstance(argument, tuple):
        name, value = argument
        argument = {"name": name, "value": value}
    elif isinstance(argument, CompletionArgument):
        argument = msgspec.to_builtins(argument)
    params: dict[str, Any] = {"ref": ref, "argument": argument}
    if context is not None:
        params["context"] = {"arguments": dict(context)}
    result = await client.request("completion/complete", params)
    return converted(result.get("completion"), Completion, "completion/complete")
