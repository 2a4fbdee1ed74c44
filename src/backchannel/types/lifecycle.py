"""Session start (handshake era) and discovery (stateless era)."""

from __future__ import annotations

__all__ = [
    "DiscoverRequestParams",
    "DiscoverResult",
    "InitializeRequestParams",
    "InitializeResult",
    "InitializedNotificationParams",
    "PingRequestParams",
]

from typing import TypeAlias

from .base import CacheableResult, Implementation, NotificationParams, RequestParams, Result
from .capabilities import ClientCapabilities, ServerCapabilities


class InitializeRequestParams(RequestParams, kw_only=True):
    """``initialize`` (handshake era)."""

    protocol_version: str
    capabilities: ClientCapabilities
    client_info: Implementation


class InitializeResult(Result, kw_only=True):
    """The answer to ``initialize`` (handshake era)."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | None = None


#: ``notifications/initialized`` has only ``_meta``.
InitializedNotificationParams: TypeAlias = NotificationParams

#: ``ping`` has only ``_meta`` (handshake era).
PingRequestParams: TypeAlias = RequestParams

#: ``server/discover`` has only ``_meta`` (2026-07-28).
DiscoverRequestParams: TypeAlias = RequestParams


class DiscoverResult(CacheableResult, kw_only=True):
    """The answer to ``server/discover`` (2026-07-28).

    The server's identity rides in ``_meta["io.modelcontextprotocol/serverInfo"]``.
    """

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None
