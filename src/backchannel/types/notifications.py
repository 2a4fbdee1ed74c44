"""Notifications shared by every feature, and change subscriptions.

Feature notifications live with their feature (``ResourceUpdatedNotificationParams`` in
:mod:`.resources`, ``LoggingMessageNotificationParams`` in :mod:`.logging`, ...).
"""

from __future__ import annotations

__all__ = [
    "CancelledNotificationParams",
    "InitializedNotificationParams",
    "ListChangedNotificationParams",
    "ProgressNotificationParams",
    "PromptListChangedNotificationParams",
    "ResourceListChangedNotificationParams",
    "RootsListChangedNotificationParams",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "ToolListChangedNotificationParams",
]

from typing import TypeAlias

from .base import Model, NotificationParams, ProgressToken, RequestId, RequestParams, Result
from .lifecycle import InitializedNotificationParams
from .prompts import PromptListChangedNotificationParams
from .resources import ResourceListChangedNotificationParams
from .roots import RootsListChangedNotificationParams
from .tools import ToolListChangedNotificationParams

#: Every ``notifications/*/list_changed`` carries only ``_meta``.
ListChangedNotificationParams: TypeAlias = NotificationParams


class ProgressNotificationParams(NotificationParams, kw_only=True):
    """``notifications/progress``: how far the request with ``progress_token`` has come."""

    progress_token: ProgressToken
    #: Increases with every notification, even when ``total`` is unknown.
    progress: float
    total: float | None = None
    message: str | None = None


class CancelledNotificationParams(NotificationParams, kw_only=True):
    """``requestId`` is optional in 2025-11-25 (tasks) and required in 2026-07-28."""

    request_id: RequestId | None = None
    reason: str | None = None


class SubscriptionFilter(Model, kw_only=True):
    """The notification types a ``subscriptions/listen`` stream opts in to (2026-07-28)."""

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    resource_subscriptions: list[str] | None = None


class SubscriptionsListenRequestParams(RequestParams, kw_only=True):
    """``subscriptions/listen`` (2026-07-28): the notifications the client wants on this stream."""

    notifications: SubscriptionFilter


class SubscriptionsListenResult(Result, kw_only=True):
    """Sent when the server ends a subscription gracefully.

    Its ``_meta`` carries ``io.modelcontextprotocol/subscriptionId`` (required there).
    """


class SubscriptionsAcknowledgedNotificationParams(NotificationParams, kw_only=True):
    """The subset of the requested filter the server honours."""

    notifications: SubscriptionFilter
