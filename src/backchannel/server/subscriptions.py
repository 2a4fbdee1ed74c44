"""``subscriptions/listen`` (2026-07-28 subscriptions.mdx): the stateless era's one long-lived stream.

The server acknowledges the filters it honours first, then sends only what was
asked, each notification tagged with the subscription id (the listen request's
id); the stream ends when the client cancels it or goes away.
"""

from __future__ import annotations

__all__ = ["Subscriptions"]

import asyncio
from dataclasses import dataclass
from typing import Any

from ..protocol.events import RequestReceived
from ..runtime.connection import Connection
from ..types import meta as M
from ..types.errors import InvalidParams

_LIST_CHANGED_FILTERS = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}
_FEATURE_OF_FILTER = (
    ("toolsListChanged", "tools"),
    ("promptsListChanged", "prompts"),
    ("resourcesListChanged", "resources"),
)


@dataclass(slots=True, eq=False)
class _Listener:
    """One open ``subscriptions/listen`` stream and the filters it was granted."""

    connection: Connection
    request_id: int | str
    filters: dict[str, Any]

    def send(self, method: str, params: dict[str, Any]) -> None:
        if not self.connection.closed.is_set():
            stamped = {**params, "_meta": {M.SUBSCRIPTION_ID: self.request_id}}
            self.connection.notify(method, stamped, related=self.request_id)


class Subscriptions:
    """The open listen streams of a server."""

    def __init__(self) -> None:
        self._listeners: set[_Listener] = set()

    def __len__(self) -> int:
        return len(self._listeners)

    async def listen(
        self,
        request: RequestReceived,
        connection: Connection,
        offered: dict[str, Any],
        task_ids: list[str] | None = None,
    ) -> dict[str, Any]:
        """Acknowledge the filters that ``offered`` capabilities allow, then stream until cancelled.
        ``task_ids``: the tasks granted for ``notifications/tasks`` (``TaskService.follow``)."""
        requested = request.params.get("notifications", {})
        if not isinstance(requested, dict):
            raise InvalidParams("subscriptions/listen: params.notifications must be an object")
        honoured: dict[str, Any] = {
            key: True for key, feature in _FEATURE_OF_FILTER if requested.get(key) is True and feature in offered
        }
        uris = requested.get("resourceSubscriptions")
        if uris is not None:
            if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
                raise InvalidParams("subscriptions/listen: resourceSubscriptions must be a list of URIs")
            if "resources" in offered:
                honoured["resourceSubscriptions"] = uris
        if task_ids is not None:
            honoured["taskIds"] = task_ids
        listener = _Listener(connection, request.id, honoured)
        connection.notify(
            "notifications/subscriptions/acknowledged",
            {"_meta": {M.SUBSCRIPTION_ID: request.id}, "notifications": honoured},
            related=request.id,
        )
        self._listeners.add(listener)
        try:
            await asyncio.Event().wait()  # until the client cancels or goes away
        finally:
            self._listeners.discard(listener)
        raise AssertionError("unreachable")  # pragma: no cover

    def list_changed(self, method: str, *, only: Connection | None = None) -> None:
        """``method`` (a ``notifications/*/list_changed``) to the streams that asked for it; with
        ``only``, to that connection's streams alone (a session's own visibility rule)."""
        key = _LIST_CHANGED_FILTERS[method]
        for listener in list(self._listeners):
            if listener.filters.get(key) is True and (only is None or listener.connection is only):
                listener.send(method, {})

    def task_changed(self, task_id: str, task: dict[str, Any]) -> None:
        """``notifications/tasks`` (the tasks extension) to the streams that follow ``task_id``."""
        for listener in list(self._listeners):
            if task_id in listener.filters.get("taskIds", ()):
                listener.send("notifications/tasks", task)

    def resource_updated(self, uri: str) -> None:
        for listener in list(self._listeners):
            if uri in listener.filters.get("resourceSubscriptions", ()):
                listener.send("notifications/resources/updated", {"uri": uri})
