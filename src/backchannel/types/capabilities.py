"""Client and server capabilities.

A present sub-object (even ``{}``) declares the capability; ``None`` means absent.
Era-specific parts: ``roots.listChanged`` and ``tasks`` are handshake-era only,
``extensions`` is in the 2026-07-28 schema. Settings objects without a fixed shape are
``dict[str, Any]``.

Extensions (SEP-2133, 2026-07-28 ``basic/versioning.mdx`` §Extension Negotiation):
``capabilities.extensions`` maps an extension's identifier (a ``_meta`` key with its
mandatory prefix, ``"io.modelcontextprotocol/tasks"``) to its settings object (``{}``:
supported, no settings). The field is 2026-07-28's: the client declares them in every
request's ``_meta["io.modelcontextprotocol/clientCapabilities"]``, the server in its
``server/discover`` result. The handshake era's schemas have no such field, so neither side
sends it in ``initialize`` (the official Python SDK leaves it out there too); what a peer
sends anyway is still read. ``Server(extensions=...)`` and ``Client(extensions=...)`` declare
them (``ExtensionOptions``); ``extension_settings`` reads the other side's, and
``require_extension`` refuses a request that needs one.
"""

from __future__ import annotations

__all__ = [
    "ClientCapabilities",
    "ClientTasksCapability",
    "ClientTasksRequests",
    "CompletionsCapability",
    "ElicitationCapability",
    "ElicitationTasksCapability",
    "ExtensionOptions",
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
    "check_extension_id",
    "declared_extensions",
    "extension_settings",
    "require_extension",
    "with_extensions",
]

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .base import Model
from .errors import MissingCapability

#: ``completions: {}`` (server). No fixed fields.
CompletionsCapability: TypeAlias = dict[str, Any]

#: ``logging: {}`` (server; deprecated in 2026-07-28). No fixed fields.
LoggingCapability: TypeAlias = dict[str, Any]


class RootsCapability(Model, kw_only=True):
    """The client offers roots; ``list_changed`` when it sends ``notifications/roots/list_changed``."""

    #: Handshake era only (removed in 2026-07-28, where the capability is ``{}``).
    list_changed: bool | None = None


class SamplingCapability(Model, kw_only=True):
    """The client can sample from a model (``sampling/createMessage``), with ``tools`` and ``context`` when declared."""

    #: The client supports ``includeContext`` other than ``"none"``.
    context: dict[str, Any] | None = None
    #: The client supports ``tools`` / ``toolChoice`` in sampling (2025-11-25+).
    tools: dict[str, Any] | None = None


class ElicitationCapability(Model, kw_only=True):
    """``{}`` (neither mode listed) means form mode only."""

    form: dict[str, Any] | None = None
    url: dict[str, Any] | None = None


class SamplingTasksCapability(Model, kw_only=True):
    """``create_message``: the client accepts ``sampling/createMessage`` as a task."""

    create_message: dict[str, Any] | None = None


class ElicitationTasksCapability(Model, kw_only=True):
    """``create``: the client accepts ``elicitation/create`` as a task."""

    create: dict[str, Any] | None = None


class ClientTasksRequests(Model, kw_only=True):
    """Which of the server's requests the client accepts as tasks (2025-11-25): sampling, elicitation."""

    sampling: SamplingTasksCapability | None = None
    elicitation: ElicitationTasksCapability | None = None


class ClientTasksCapability(Model, kw_only=True):
    """Task-augmented requests the client accepts (2025-11-25 only, experimental)."""

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: ClientTasksRequests | None = None


class ClientCapabilities(Model, kw_only=True):
    """What the client declares it supports (roots, sampling, elicitation, tasks, extensions); check it with
    ``protocol.has``."""

    experimental: dict[str, dict[str, Any]] | None = None
    roots: RootsCapability | None = None
    sampling: SamplingCapability | None = None
    elicitation: ElicitationCapability | None = None
    tasks: ClientTasksCapability | None = None
    extensions: dict[str, dict[str, Any]] | None = None


class PromptsCapability(Model, kw_only=True):
    """The server offers prompts; ``list_changed`` when it sends ``notifications/prompts/list_changed``."""

    list_changed: bool | None = None


class ResourcesCapability(Model, kw_only=True):
    """The server offers resources; ``subscribe`` for ``resources/subscribe``, ``list_changed`` for its list
    notifications."""

    subscribe: bool | None = None
    list_changed: bool | None = None


class ToolsCapability(Model, kw_only=True):
    """The server offers tools; ``list_changed`` when it sends ``notifications/tools/list_changed``."""

    list_changed: bool | None = None


class ToolsTasksCapability(Model, kw_only=True):
    """``call``: the server accepts ``tools/call`` as a task."""

    call: dict[str, Any] | None = None


class ServerTasksRequests(Model, kw_only=True):
    """Which of the client's requests the server accepts as tasks (2025-11-25): ``tools/call``."""

    tools: ToolsTasksCapability | None = None


class ServerTasksCapability(Model, kw_only=True):
    """Task-augmented requests the server accepts (2025-11-25 only, experimental)."""

    list: dict[str, Any] | None = None
    cancel: dict[str, Any] | None = None
    requests: ServerTasksRequests | None = None


class ServerCapabilities(Model, kw_only=True):
    """What the server declares it offers (tools, prompts, resources, logging, completions, tasks, extensions)."""

    experimental: dict[str, dict[str, Any]] | None = None
    logging: LoggingCapability | None = None
    completions: CompletionsCapability | None = None
    prompts: PromptsCapability | None = None
    resources: ResourcesCapability | None = None
    tools: ToolsCapability | None = None
    tasks: ServerTasksCapability | None = None
    extensions: dict[str, dict[str, Any]] | None = None


# ---------------------------------------------------------------- extensions (SEP-2133)

# A ``_meta`` key with its prefix (2026-07-28 basic/index.mdx): dot-separated labels that start
# with a letter and end with a letter or digit, a slash, then a name that starts and ends with
# an alphanumeric and may hold hyphens, underscores and dots in between.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_EXTENSION_ID = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def check_extension_id(identifier: object) -> str:
    """``identifier`` if it names an extension as the spec requires (a ``_meta`` key with its
    mandatory prefix: ``"io.modelcontextprotocol/tasks"``, ``"com.example/ui"``); else ``ValueError``."""
    if not isinstance(identifier, str) or _EXTENSION_ID.fullmatch(identifier) is None:
        raise ValueError(
            f"{identifier!r} is not an extension identifier: use a reverse-DNS prefix, a slash and a name, "
            'as in "com.example/my-extension"'
        )
    return identifier


def declared_extensions(extensions: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """A copy of ``extensions`` with every identifier and settings object checked (``ValueError``)."""
    checked: dict[str, dict[str, Any]] = {}
    for identifier, settings in (extensions or {}).items():
        if not isinstance(settings, Mapping):
            raise ValueError(
                f"the settings of extension {identifier!r} must be a JSON object ({{}}: none), not {settings!r}"
            )
        checked[check_extension_id(identifier)] = dict(settings)
    return checked


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionOptions:
    """The extensions one side supports (``Server(extensions=...)``, ``Client(extensions=...)``):
    each identifier with its settings object, ``{}`` for none. Identifiers are checked here
    (``check_extension_id``); a bad one, or settings that are not an object, is a ``ValueError``."""

    declared: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "declared", declared_extensions(self.declared))


def with_extensions(capabilities: dict[str, Any], extensions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``capabilities`` declaring ``extensions`` too (unchanged when there are none)."""
    if not extensions:
        return capabilities
    return {**capabilities, "extensions": {name: dict(settings) for name, settings in extensions.items()}}


def extension_settings(capabilities: Mapping[str, Any] | None, identifier: str) -> dict[str, Any] | None:
    """The settings the other side declared for extension ``identifier`` (``{}`` when it declared
    none), or None when it does not support it. Pass ``ctx.client_capabilities`` (server side:
    per request, whatever the era) or ``client.server_capabilities`` (client side)."""
    extensions = capabilities.get("extensions") if capabilities else None
    settings = extensions.get(identifier) if isinstance(extensions, Mapping) else None
    return dict(settings) if isinstance(settings, Mapping) else None


def require_extension(capabilities: Mapping[str, Any] | None, identifier: str) -> dict[str, Any]:
    """The client's settings for extension ``identifier``; ``MissingCapability`` (-32021) naming it
    in ``requiredCapabilities.extensions`` when the client did not declare it (SEP-2663's shape)."""
    settings = extension_settings(capabilities, identifier)
    if settings is None:
        missing = MissingCapability(
            "extensions", f"this request needs the client to support the {identifier} extension"
        )
        missing.data = {"requiredCapabilities": {"extensions": {identifier: {}}}}
        raise missing
    return settings
