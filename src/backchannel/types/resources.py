"""Resources: list, templates, read, subscriptions (handshake era) and updates."""

from __future__ import annotations

__all__ = [
    "BlobResourceContents",
    "ListResourceTemplatesRequestParams",
    "ListResourceTemplatesResult",
    "ListResourcesRequestParams",
    "ListResourcesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceListChangedNotificationParams",
    "ResourceTemplate",
    "ResourceUpdatedNotificationParams",
    "SubscribeRequestParams",
    "TextResourceContents",
    "UnsubscribeRequestParams",
]

from typing import Any, TypeAlias

import msgspec

from .base import (
    BaseMetadata,
    CacheableResult,
    Icon,
    InputResponseRequestParams,
    NotificationParams,
    PaginatedRequestParams,
    PaginatedResult,
    RequestParams,
)
from .content import Annotations, BlobResourceContents, Resource, ResourceContents, TextResourceContents


class ResourceTemplate(BaseMetadata, kw_only=True):
    """A URI template (RFC 6570) for resources the server can read."""

    uri_template: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


ListResourcesRequestParams: TypeAlias = PaginatedRequestParams
ListResourceTemplatesRequestParams: TypeAlias = PaginatedRequestParams


class ListResourcesResult(PaginatedResult, kw_only=True):
    """One page of ``resources/list``; ``next_cursor`` asks for the next."""

    resources: list[Resource]


class ListResourceTemplatesResult(PaginatedResult, kw_only=True):
    """One page of ``resources/templates/list``; ``next_cursor`` asks for the next."""

    resource_templates: list[ResourceTemplate]


class ReadResourceRequestParams(InputResponseRequestParams, kw_only=True):
    """``resources/read``; ``inputResponses``/``requestState`` are 2026-07-28 only."""

    uri: str


class ReadResourceResult(CacheableResult, kw_only=True):
    """Each item is ``TextResourceContents | BlobResourceContents`` (decoded as ``ResourceContents``)."""

    contents: list[ResourceContents]


class SubscribeRequestParams(RequestParams, kw_only=True):
    """``resources/subscribe`` (handshake era)."""

    uri: str


class UnsubscribeRequestParams(RequestParams, kw_only=True):
    """``resources/unsubscribe`` (handshake era)."""

    uri: str


class ResourceUpdatedNotificationParams(NotificationParams, kw_only=True):
    """``notifications/resources/updated``: the subscribed resource at ``uri`` changed; read it again."""

    uri: str


ResourceListChangedNotificationParams: TypeAlias = NotificationParams
