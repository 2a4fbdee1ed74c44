"""Content blocks, resource contents and sampling content.

``ContentBlock`` and ``SamplingContent`` are tagged unions on ``type``; decode them
with ``msgspec.convert(value, ContentBlock)``.

``TextResourceContents | BlobResourceContents`` has no tag on the wire, which msgspec
cannot decode as a union. Fields holding either use :class:`ResourceContents`, a
struct with both ``text`` and ``blob`` optional; the two subclasses are for building
(and for decoding when the kind is known). Check ``contents.blob is not None`` to tell
them apart after decoding.
"""

from __future__ import annotations

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "SamplingContent",
    "SamplingMessageContentBlock",
    "TextContent",
    "TextResourceContents",
    "ToolResultContent",
    "ToolUseContent",
]

from typing import Any, TypeAlias

import msgspec

from .base import BaseMetadata, Icon, Model, Role


class Annotations(Model, kw_only=True):
    """Hints for the client about how to use or show an object."""

    audience: list[Role] | None = None
    priority: float | None = None
    last_modified: str | None = None


class Resource(BaseMetadata, kw_only=True):
    """A resource the server can read (listed by ``resources/list``)."""

    uri: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    size: int | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceContents(Model, kw_only=True):
    """The contents of a resource: ``text`` or ``blob`` (base64) is set.

    The decoded form of ``TextResourceContents | BlobResourceContents``.
    """

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class TextResourceContents(ResourceContents, kw_only=True):
    """A resource's contents as ``text``."""

    text: str


class BlobResourceContents(ResourceContents, kw_only=True):
    """A resource's binary contents, base64 in ``blob``."""

    blob: str


class TextContent(Model, kw_only=True, tag_field="type", tag="text"):
    """Text in a message or result."""

    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ImageContent(Model, kw_only=True, tag_field="type", tag="image"):
    """An image in a message or result: base64 ``data`` and its ``mime_type``."""

    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class AudioContent(Model, kw_only=True, tag_field="type", tag="audio"):
    """Audio in a message or result: base64 ``data`` and its ``mime_type``."""

    data: str
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ResourceLink(Resource, kw_only=True, tag_field="type", tag="resource_link"):
    """A link to a resource, in a prompt or tool result (2025-06-18+)."""


class EmbeddedResource(Model, kw_only=True, tag_field="type", tag="resource"):
    """A resource's contents carried inside a message or result."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


#: Content of prompt messages and tool results.
ContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


class ToolUseContent(Model, kw_only=True, tag_field="type", tag="tool_use"):
    """A model's request to call a tool, in sampling (2025-11-25+)."""

    id: str
    name: str
    input: dict[str, Any]
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class ToolResultContent(Model, kw_only=True, tag_field="type", tag="tool_result"):
    """The result of a tool use, in sampling (2025-11-25+).

    ``structuredContent`` may be any JSON value including ``null`` (2026-07-28), so
    it is ``msgspec.UNSET`` when absent.
    """

    tool_use_id: str
    content: list[ContentBlock]
    structured_content: Any | msgspec.UnsetType = msgspec.UNSET
    is_error: bool | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


#: Content of sampling messages.
SamplingContent: TypeAlias = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent

#: The schema's name for :data:`SamplingContent`.
SamplingMessageContentBlock: TypeAlias = SamplingContent
