"""Checks on ``sampling/createMessage`` requests and results, shared by both sides.

The server checks what it is about to send (``ctx.sample``) and what the client
answers; the client checks the request before its handler sees it and the
handler's result before it leaves. Each check returns the typed value or raises
``SamplingProblem`` naming every problem found.

Rules (``client/sampling.mdx``): roles are ``user`` or ``assistant``; content is
one block or a list of text, image, audio, ``tool_use`` or ``tool_result``
blocks; ``tool_use`` only from the assistant and ``tool_result`` only from the
user; a user message with tool results holds nothing else; every assistant
message with tool uses is followed by a user message answering exactly those
ids; ``maxTokens`` is a positive integer.
"""

from __future__ import annotations

__all__ = ["SamplingProblem", "check_messages", "check_request", "check_result", "parse_messages"]

from collections.abc import Sequence
from typing import Any

import msgspec

from ..types.content import SamplingContent, ToolResultContent, ToolUseContent
from ..types.sampling import CreateMessageRequestParams, CreateMessageResult, SamplingMessage


class SamplingProblem(ValueError):
    """A sampling request or result breaks the rules; ``problems`` lists how."""

    def __init__(self, what: str, problems: Sequence[str]) -> None:
        super().__init__(f"{what}: " + "; ".join(problems))
        self.problems = list(problems)


def _blocks(message: SamplingMessage) -> list[SamplingContent]:
    content = message.content
    return list(content) if isinstance(content, list) else [content]


def parse_messages(messages: Any, what: str = "sampling messages") -> list[SamplingMessage]:
    """Typed messages from JSON (a list of ``{"role", "content"}`` objects), checked."""
    if not isinstance(messages, list):
        raise SamplingProblem(what, ["messages must be a list"])
    parsed: list[SamplingMessage] = []
    problems: list[str] = []
    for index, message in enumerate(messages):
        try:
            parsed.append(msgspec.convert(message, SamplingMessage))
        except msgspec.ValidationError as exc:
            problems.append(f"messages[{index}]: {exc}")
    if problems:
        raise SamplingProblem(what, problems)
    check_messages(parsed, what)
    return parsed


def check_messages(messages: Sequence[SamplingMessage], what: str = "sampling messages") -> None:
    """The conversation rules over typed messages."""
    problems: list[str] = []
    if not messages:
        problems.append("there must be at least one message")
    awaiting: set[str] | None = None  # tool use ids the next message must answer
    for index, message in enumerate(messages):
        blocks = _blocks(message)
        where = f"messages[{index}]"
        if not blocks:
            problems.append(f"{where} has no content")
        uses = [b.id for b in blocks if isinstance(b, ToolUseContent)]
        results = [b.tool_use_id for b in blocks if isinstance(b, ToolResultContent)]
        if uses and message.role != "assistant":
            problems.append(f"{where}: tool_use content comes only from the assistant")
        if results and message.role != "user":
            problems.append(f"{where}: tool_result content comes only from the user")
        if results and len(results) != len(blocks):
            problems.append(f"{where}: a message with tool results holds nothing else")
        if awaiting is not None:
            if set(results) != awaiting:
                missing = sorted(awaiting - set(results))
                problems.append(f"{where} must answer the tool uses {missing or sorted(awaiting)} with tool results")
            awaiting = None
        elif results:
            problems.append(f"{where}: tool results answer no preceding tool use")
        if uses and message.role == "assistant":
            if len(set(uses)) != len(uses):
                problems.append(f"{where}: tool use ids repeat")
            awaiting = set(uses)
    if awaiting is not None:
        problems.append(f"the last message has tool uses {sorted(awaiting)} that no tool result answers")
    if problems:
        raise SamplingProblem(what, problems)


def check_request(params: Any) -> CreateMessageRequestParams:
    """The typed params of a ``sampling/createMessage`` request, checked."""
    if not isinstance(params, dict):
        raise SamplingProblem("sampling/createMessage", ["params must be an object"])
    parse_messages(params.get("messages"), "sampling/createMessage")
    try:
        typed = msgspec.convert(params, CreateMessageRequestParams)
    except msgspec.ValidationError as exc:
        raise SamplingProblem("sampling/createMessage", [str(exc)]) from None
    if typed.max_tokens < 1:
        raise SamplingProblem("sampling/createMessage", ["maxTokens must be a positive integer"])
    return typed


def check_result(result: Any, *, tools_offered: bool, what: str = "sampling result") -> CreateMessageResult:
    """A typed ``CreateMessageResult``: ``role``, ``content``, ``model`` and ``stopReason``
    well formed, and tool uses only when the request offered tools."""
    if not isinstance(result, dict):
        raise SamplingProblem(what, [f"the result must be an object, not {type(result).__name__}"])
    try:
        typed = msgspec.convert(result, CreateMessageResult)
    except msgspec.ValidationError as exc:
        raise SamplingProblem(what, [str(exc)]) from None
    problems: list[str] = []
    blocks = typed.content if isinstance(typed.content, list) else [typed.content]
    if not blocks:
        problems.append("content is empty")
    if not typed.model.strip():
        problems.append("model must name the model that answered")
    uses = [b for b in blocks if isinstance(b, ToolUseContent)]
    if any(isinstance(b, ToolResultContent) for b in blocks):
        problems.append("a sampled message cannot hold tool results")
    if uses and not tools_offered:
        problems.append("the result uses tools, but the request offered none")
    if uses and typed.role != "assistant":
        problems.append("tool uses come only from the assistant")
    if typed.stop_reason == "toolUse" and not uses:
        problems.append('stopReason is "toolUse" but the content has no tool_use block')
    if problems:
        raise SamplingProblem(what, problems)
    return typed
