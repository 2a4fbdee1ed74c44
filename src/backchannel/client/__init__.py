"""The high-level client API: ``Client``, the option groups it takes, and the task handle ``start_task`` returns."""

from .cache import MemoryCache, ResultCache
from .client import Client
from .events import ListChanged, LogMessage, ResourceUpdated, Resubscribed
from .options import CacheOptions, ClientOptions, InputOptions, LogOptions, RetryOptions, TimeoutOptions
from .tasks import TaskCancelled, TaskFailed, TaskState, ToolTask

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
