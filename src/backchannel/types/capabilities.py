"""Client and server capabilities.

A present sub-object (even ``{}``) declares the capability; ``None`` means absent.
Era-specific parts: ``roots.listChanged`` and ``tasks`` are handshake-era only,
``extensions`` is 2026-07-28 only. Settings objects without a fixed shape are
``dict[str, Any]``.
"""

from __future__ import annotations

__all__ = [
    "ClientCapabilities",
    "ClientTasksCapability",
    "ClientTasksRequests",
    "CompletionsCapability",
    "ElicitationCapability",
    "ElicitationTasksCapability",
    "LoggingCapability",
    "PromptsCapability",
    "ResourcesCapability",
    "RootsCapability",
    "SamplingCapability",
    "SamplingTasksCapability",
    "ServerCapabilities",
    "ServerTasksCapability",
    "ServerTasksRequests",
    "ToolsCapability",
    "ToolsTasksCapability",
]

from typing import Any, TypeAlias

from .base import Model

#: ``completions: {}`` (server). No fixed fields.
CompletionsCapability: TypeAlias = dict[str, Any]

#: ``logging: {}`` (server; deprecated in 2026-07-28). No fixed fields.
LoggingCapability: TypeAlias = dict[str, Any]


class RootsCapability(Model, kw_only=True):
    #: Handshake era only (removed in 2026-07-28, where the capability is ``{}``).
    list_changed: bool | None = None


class SamplingCapability(Model, kw_only=True):
    #: The client supports ``includeContext`` other than ``"none"``.
    context: dict[str, Any] | None = None
    #: The client supports ``tools`` / ``toolChoice`` in sampling (2025-11-25+).
    tools: dict[str, Any] | None = None


class ElicitationCapability(Model, kw_only=True):
    """``{}`` (neither mode listed) means form mode only."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None


class SamplingTasksCapability(Model, kw_only=True):
    create_message: dict[str, Any] | None = None


class ElicitationTasksCapability(Model, kw_only=True):
    create: dict[str, Any] | None = None


class ClientTasksRequests(Model, kw_only=True):
    sampling: SamplingTasksCapability | None = None
    elicitation: ElicitationTasksCapability | None = None


class ClientTasksCapability(Model, kw_only=True):
    """Task-augmented requests the client accepts (2025-11-25 only, experimental)."""

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: ClientTasksRequests | None = None


class ClientCapabilities(Model, kw_only=True):
    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None
    extensions: dict[str, dict[str, Any]] | None = None


class PromptsCapability(Model, kw_only=True):
    list_changed: bool | None = None


class ResourcesCapability(Model, kw_only=True):
    subscribe: bool | None = None
    list_changed: bool | None = None


class ToolsCapability(Model, kw_only=True):
    list_changed: bool | None = None


class ToolsTasksCapability(Model, kw_only=True):
    call: dict[str, Any] | None = None


class ServerTasksRequests(Model, kw_only=True):
    tools: ToolsTasksCapability | None = None


class ServerTasksCapability(Model, kw_only=True):
    """Task-augmented requests the server accepts (2025-11-25 only, experimental)."""

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: ServerTasksRequests | None = None


class ServerCapabilities(Model, kw_only=True):
    experimental: dict[str, dict[str, Any]] | None = None
    logging: LoggingCapability | None = None
    completions: CompletionsCapability | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None
    extensions: dict[str, dict[str, Any]] | None = None
