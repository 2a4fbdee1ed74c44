"""Tools: ``tools/list``, ``tools/call``."""

from __future__ import annotations

__all__ = [
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsRequestParams",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
    "ToolExecution",
    "ToolListChangedNotificationParams",
]

from typing import Any, Literal, TypeAlias

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
)
from .content import ContentBlock
from .tasks import TaskMetadata


class ToolAnnotations(Model, kw_only=True):
    """Hints about a tool's behaviour; never to be trusted from an untrusted server."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


class ToolExecution(Model, kw_only=True):
    """Execution properties (2025-11-25 only)."""

    task_support: Literal["forbidden", "optional", "required"] | None = None


class Tool(BaseMetadata, kw_only=True):
    """A tool the client can call.

    ``inputSchema`` is a JSON Schema object with ``type: "object"`` at the root and,
    in 2026-07-28, any 2020-12 keywords; ``outputSchema`` (2025-06-18+) is any JSON
    Schema in 2026-07-28. Both stay plain JSON here.
    """

    description: str | None = None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    execution: ToolExecution | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


ListToolsRequestParams: TypeAlias = PaginatedRequestParams


class ListToolsResult(PaginatedResult, kw_only=True):
    """One page of ``tools/list``; ``next_cursor`` asks for the next."""

    tools: list[Tool]


class CallToolRequestParams(InputResponseRequestParams, kw_only=True):
    """``tools/call``. ``task`` is 2025-11-25 only; ``inputResponses``/``requestState`` 2026-07-28."""

    name: str
    arguments: dict[str, Any] | None = None
    task: TaskMetadata | None = None


class CallToolResult(Result, kw_only=True):
    """The answer to ``tools/call``.

    ``structuredContent`` (2025-06-18+) is an object up to 2025-11-25 and any JSON value
    (including ``null``) in 2026-07-28; it is ``msgspec.UNSET`` when absent. ``is_error`` is
    False unless the server said ``isError: true`` (the schema: "If not set, this is assumed to
    be false"); False is the default, so it is left out when encoding, as an absent ``isError`` is.
    """

    content: list[ContentBlock]
    structured_content: Any | msgspec.UnsetType = msgspec.UNSET
    is_error: bool = False


ToolListChangedNotificationParams: TypeAlias = NotificationParams
