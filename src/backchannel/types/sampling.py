"""Sampling: ``sampling/createMessage``.

A server request in the handshake era; an MRTR input request in 2026-07-28, where
the feature is deprecated (see :mod:`backchannel.types.mrtr`).
"""

from __future__ import annotations

__all__ = [
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "IncludeContext",
    "ModelHint",
    "ModelPreferences",
    "SamplingMessage",
    "StopReason",
    "ToolChoice",
]

from typing import Any, Literal, TypeAlias

import msgspec

from .base import Model, RequestParams, Result, Role
from .content import SamplingContent
from .tasks import TaskMetadata
from .tools import Tool

IncludeContext: TypeAlias = Literal["none", "thisServer", "allServers"]

#: ``"endTurn"``, ``"stopSequence"``, ``"maxTokens"``, ``"toolUse"`` or a provider's value.
StopReason: TypeAlias = str


class ModelHint(Model, kw_only=True):
    """A model name (or part of one) the server would like the client to pick."""

    name: str | None = None


class ModelPreferences(Model, kw_only=True):
    """What the server would like of the model: ``hints`` and the weight of cost, speed and intelligence (0 to 1)."""

    hints: list[ModelHint] | None = None
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None


class ToolChoice(Model, kw_only=True):
    """How the model may use tools (2025-11-25+)."""

    mode: Literal["auto", "required", "none"] | None = None


class SamplingMessage(Model, kw_only=True):
    """One message of a sampling conversation: a ``role`` and its content."""

    role: Role
    #: One block or a list of blocks (lists and tool content are 2025-11-25+).
    content: SamplingContent | list[SamplingContent]
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class CreateMessageRequestParams(RequestParams, kw_only=True):
    """``_meta`` and ``task`` exist only in the handshake era."""

    messages: list[SamplingMessage]
    model_preferences: ModelPreferences | None = None
    system_prompt: str | None = None
    include_context: IncludeContext | None = None
    temperature: float | None = None
    max_tokens: int
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    task: TaskMetadata | None = None


class CreateMessageResult(Result, kw_only=True):
    """The sampled message. In 2026-07-28 an MRTR input response (no ``_meta``/``resultType``)."""

    role: Role
    content: SamplingContent | list[SamplingContent]
    model: str
    stop_reason: StopReason | None = None
