"""``ctx.sample``: ask the client's model for a message, in either era.

Gated on the client's capabilities: ``sampling``, plus ``sampling.tools`` when
tools are offered and ``sampling.context`` for ``includeContext`` other than
``"none"``; a missing one raises ``MissingCapability`` (-32021) before anything
is sent. The messages are checked before they leave (``ValueError`` for a
conversation the spec forbids), and the client's answer when it comes back
(``InvalidParams`` for a malformed one).
"""

from __future__ import annotations

__all__ = ["MessageLike", "sample"]

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from ..protocol.capabilities import require
from ..protocol.sampling import SamplingProblem, check_messages, check_result
from ..types.content import TextContent
from ..types.errors import InvalidParams
from ..types.sampling import CreateMessageResult, ModelPreferences, SamplingMessage, ToolChoice
from ..types.tools import Tool

if TYPE_CHECKING:
    from .context import Context

#: A message for ``ctx.sample``: a string (user text), a ``{"role", "content"}`` dict, or a struct.
MessageLike: TypeAlias = str | dict[str, Any] | SamplingMessage


def _message(item: MessageLike, index: int) -> SamplingMessage:
    if isinstance(item, SamplingMessage):
        return item
    if isinstance(item, str):
        return SamplingMessage(role="user", content=TextContent(text=item))
    if isinstance(item, dict):
        try:
            return msgspec.convert(item, SamplingMessage)
        except msgspec.ValidationError as exc:
            raise SamplingProblem("ctx.sample", [f"messages[{index}]: {exc}"]) from None
    raise TypeError(f"messages[{index}]: expected a str, dict or SamplingMessage, not {type(item).__name__}")


def _typed(value: Any, kind: type[Any], what: str) -> Any:
    if value is None or isinstance(value, kind):
        return value
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise ValueError(f"ctx.sample: {what} is malformed: {exc}") from None


async def sample(
    ctx: Context,
    messages: str | MessageLike | Sequence[MessageLike],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    model_preferences: ModelPreferences | dict[str, Any] | None = None,
    tools: Sequence[Tool | dict[str, Any]] | None = None,
    tool_choice: ToolChoice | dict[str, Any] | str | None = None,
    temperature: float | None = None,
    stop_sequences: Sequence[str] | None = None,
    include_context: str | None = None,
    metadata: dict[str, Any] | None = None,
    timeout: float | None = None,
    key: str | None = None,
) -> CreateMessageResult:
    """Ask the client's model for a message (``sampling/createMessage``), in either era.

    ``messages`` are strings (user text), ``{"role", "content"}`` dicts or
    ``SamplingMessage`` structs. Raises ``MissingCapability`` (-32021) unless the
    client declared ``sampling`` (and ``sampling.tools`` when ``tools`` are given,
    ``sampling.context`` for ``include_context`` other than ``"none"``);
    ``ValueError`` for messages the spec forbids; ``InvalidParams`` when the
    client's answer is malformed. ``timeout`` (handshake era; default the server's
    ``elicitation_timeout``) raises ``RequestTimeout``. ``key`` names the question in
    ``inputRequests`` (see ``request_input``).
    """
    require(ctx.client_capabilities, "sampling")
    if tools:
        require(ctx.client_capabilities, "sampling.tools")
    if include_context not in (None, "none", "thisServer", "allServers"):
        raise ValueError(f"ctx.sample: include_context must be none, thisServer or allServers, not {include_context!r}")
    if include_context in ("thisServer", "allServers"):
        require(ctx.client_capabilities, "sampling.context")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"ctx.sample: max_tokens must be a positive integer, not {max_tokens!r}")
    items: Sequence[MessageLike] = [messages] if isinstance(messages, str | dict | SamplingMessage) else messages
    typed = [_message(item, index) for index, item in enumerate(items)]
    check_messages(typed, "ctx.sample")
    params: dict[str, Any] = {"messages": msgspec.to_builtins(typed), "maxTokens": max_tokens}
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    if model_preferences is not None:
        preferences = _typed(model_preferences, ModelPreferences, "model_preferences")
        params["modelPreferences"] = msgspec.to_builtins(preferences)
    if tools:
        params["tools"] = msgspec.to_builtins([_typed(tool, Tool, f"tools[{i}]") for i, tool in enumerate(tools)])
    if tool_choice is not None:
        choice = {"mode": tool_choice} if isinstance(tool_choice, str) else tool_choice
        params["toolChoice"] = msgspec.to_builtins(_typed(choice, ToolChoice, "tool_choice"))
    if temperature is not None:
        params["temperature"] = temperature
    if stop_sequences is not None:
        params["stopSequences"] = list(stop_sequences)
    if include_context is not None:
        params["includeContext"] = include_context
    if metadata is not None:
        params["metadata"] = metadata
    wait = timeout if timeout is not None else ctx.server.elicitation_timeout
    answer = await ctx.request_input("sampling/createMessage", params, "sampling", timeout=wait, key=key)
    try:
        return check_result(answer, tools_offered=bool(tools), what="the client's sampling answer")
    except SamplingProblem as exc:
        raise InvalidParams(str(exc), data={"problems": exc.problems}) from None
