"""The high-level client API: ``Client``, the option groups it takes, and the task handle ``start_task`` returns.

The names load lazily, as the package's own do: a module of the client's that needs none of them
(the OAuth token store that ``backchannel logout`` reads) is imported without the HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .cache import MemoryCache, ResultCache
    from .client import Client
    from .events import ListChanged, LogMessage, ResourceUpdated, Resubscribed
    from .options import CacheOptions, ClientOptions, InputOptions, LogOptions, RetryOptions, TimeoutOptions
    from .tasks import TaskCancelled, TaskFailed, TaskState, ToolTask

_EXPORTS: dict[str, str] = {
    "CacheOptions": "options",
    "Client": "client",
    "ClientOptions": "options",
    "InputOptions": "options",
    "ListChanged": "events",
    "LogMessage": "events",
    "LogOptions": "options",
    "MemoryCache": "cache",
    "ResourceUpdated": "events",
    "Resubscribed": "events",
    "ResultCache": "cache",
    "RetryOptions": "options",
    "TaskCancelled": "tasks",
    "TaskFailed": "tasks",
    "TaskState": "tasks",
    "TimeoutOptions": "options",
    "ToolTask": "tasks",
}

__all__ = [
    "CacheOptions",
    "Client",
    "ClientOptions",
    "InputOptions",
    "ListChanged",
    "LogMessage",
    "LogOptions",
    "MemoryCache",
    "ResourceUpdated",
    "Resubscribed",
    "ResultCache",
    "RetryOptions",
    "TaskCancelled",
    "TaskFailed",
    "TaskState",
    "TimeoutOptions",
    "ToolTask",
]


__getattr__ = lazy_names(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return list(__all__)
