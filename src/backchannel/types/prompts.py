"""Prompts: ``prompts/list``, ``prompts/get``."""

from __future__ import annotations

__all__ = [
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsRequestParams",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptListChangedNotificationParams",
    "PromptMessage",
]

from typing import Any, TypeAlias

import msgspec

from .base import (
    BaseMetadata,
    Icon,
    InputResponseRequestParams,
    Model,
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    Result,
    Role,
)
from .content import ContentBlock


class PromptArgument(BaseMetadata, kw_only=True):
    """One argument a prompt takes: its ``name``, ``description`` and whether it is ``required``."""

    description: str | None = None
    required: bool | None = None


class Prompt(BaseMetadata, kw_only=True):
    """A prompt the server offers, as ``prompts/list`` lists it."""

    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class PromptMessage(Model, kw_only=True):
    """One message of a filled-in prompt: a ``role`` and one content block."""

    role: Role
    content: ContentBlock


ListPromptsRequestParams: TypeAlias = PaginatedRequestParams


class ListPromptsResult(PaginatedResult, kw_only=True):
    """One page of ``prompts/list``; ``next_cursor`` asks for the next."""

    prompts: list[Prompt]


class GetPromptRequestParams(InputResponseRequestParams, kw_only=True):
    """``prompts/get``; ``inputResponses``/``requestState`` are 2026-07-28 only."""

    name: str
    arguments: dict[str, str] | None = None


class GetPromptResult(Result, kw_only=True):
    """The answer to ``prompts/get``: the prompt's messages, filled in."""

    description: str | None = None
    messages: list[PromptMessage]


PromptListChangedNotificationParams: TypeAlias = NotificationParams
