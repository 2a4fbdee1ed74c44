"""``Server``'s settings, grouped: what list results look like, how logs leave, how long state lives,
how often completion may be asked.

The common case needs none of them (``Server("name")``). To change a setting, pass its group::

    Server("notes", logs=LogOptions(level="warning", rate=10.0), state=StateOptions(ttl=120.0))

or the flat keyword it has always had (``Server("notes", log_level="warning")``): every flat keyword
(``FlatOptions``) still works and wins over the same field of a group passed beside it. Each group is
a frozen dataclass, as h2's ``H2Configuration`` is: read it back from ``server.options``.
"""

from __future__ import annotations

__all__ = [
    "CompletionOptions",
    "ExtensionOptions",
    "FlatOptions",
    "ListOptions",
    "LogOptions",
    "ServerOptions",
    "StateOptions",
    "TaskOptions",
    "TimeoutOptions",
]

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ..redaction.redaction import Redactor
from ..types.capabilities import ExtensionOptions
from ..types.logging import LOG_LEVEL_RANK
from ..types.option_groups import apply_flat_keywords
from .state import StateStore

_DEFAULT_REDACTOR = Redactor()


@dataclass(frozen=True, slots=True, kw_only=True)
class ListOptions:
    """How the list methods answer.

    ``page_size`` bounds each page of ``tools/list``, ``prompts/list``, ``resources/list`` and
    ``resources/templates/list`` (None: one page). ``cache_ttl_ms`` and ``cache_scope`` are the
    caching hints stateless-era list results and ``server/discover`` carry."""

    page_size: int | None = 100
    cache_ttl_ms: int = 60_000
    cache_scope: str = "private"

    def __post_init__(self) -> None:
        if self.page_size is not None and self.page_size < 1:
            raise ValueError(f"page_size must be a positive number of items or None, not {self.page_size!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class LogOptions:
    """How ``ctx.log`` messages leave.

    ``level`` is the level of a handshake-era session until the client sets one (None: send no
    log messages until asked). Messages pass ``redactor`` (None sends them as they are) and a
    per-connection rate limit of ``rate`` a second with bursts of ``burst``; what the limit
    drops is counted and reported to the client."""

    level: str | None = "info"
    redactor: Redactor | None = _DEFAULT_REDACTOR
    rate: float = 50.0
    burst: int = 200

    def __post_init__(self) -> None:
        if self.level is not None and self.level not in LOG_LEVEL_RANK:
            raise ValueError(f"unknown log level {self.level!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class StateOptions:
    """What the server keeps between requests, and for how long.

    ``key`` seals the ``requestState`` of stateless-era multi-round requests (random per process
    by default: give every worker the same key), valid for ``ttl`` seconds. ``store`` keeps
    ``ctx.once`` results and declined forms (default: a ``MemoryStore`` in this process; several
    workers need a shared one). ``once_limit`` bounds the ``ctx.once`` results one caller may have
    kept at a time, ``once_limit_total`` those of all callers together (with the tasks' own
    ``task_limit_total``, below the default store's 100,000 keys, so neither fills it for the
    other); ``decline_ttl`` is how long a declined form is not shown again."""

    key: bytes | None = None
    ttl: float = 600.0
    store: StateStore | None = None
    once_limit: int = 10_000
    once_limit_total: int = 50_000
    decline_ttl: float = 3600.0

    def __post_init__(self) -> None:
        _at_least_one(once_limit=self.once_limit, once_limit_total=self.once_limit_total)


def _at_least_one(**counts: int) -> None:
    """``ValueError`` naming the first of ``counts`` (by its ``Server`` keyword) below 1."""
    for keyword, value in counts.items():
        if value < 1:
            raise ValueError(f"{keyword} must be at least 1, not {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskOptions:
    """How long tasks live and how many the server keeps (``server.tasks``, ``docs/tasks.md``).

    ``ttl`` is a task's lifetime when the client names none; ``ttl_max`` the most it may ask
    (2025-11-25 ``params.task.ttl``): a longer one is cut to it, and the task reports the TTL it
    got. ``poll_interval`` is what clients are told. A task counts against its caller until its
    TTL has passed, finished or not: ``limit`` per caller (an authenticated principal, a stdio
    connection), ``anonymous_limit`` per address for HTTP callers without a principal (in both
    eras; an IPv6 address counts by its /64), and ``limit_total`` for all callers together, so
    that tasks never fill the state store that ``ctx.once`` results share."""

    ttl: float = 3600.0
    ttl_max: float = 3600.0
    poll_interval: float = 0.5
    limit: int = 1_000
    anonymous_limit: int = 100
    limit_total: int = 20_000

    def __post_init__(self) -> None:
        if not self.ttl_max > 0:
            raise ValueError(f"task_ttl_max must be a positive number of seconds, not {self.ttl_max!r}")
        if not self.ttl > 0:
            raise ValueError(f"task_ttl must be a positive number of seconds, not {self.ttl!r}")
        _at_least_one(
            task_limit=self.limit, anonymous_task_limit=self.anonymous_limit, task_limit_total=self.limit_total
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeoutOptions:
    """How long the server waits.

    ``elicitation`` is the default wait for an answer to ``ctx.elicit`` and ``ctx.sample`` (handshake
    era); ``finish_grace`` how long handlers still running may take to answer once the client's input
    ends."""

    elicitation: float = 600.0
    finish_grace: float = 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CompletionOptions:
    """How often a caller may ask ``completion/complete``: ``rate`` a second on average, in
    bursts of up to ``burst`` (None: no limit).

    A caller is a handshake-era connection (a stdio process, an HTTP session); in the stateless
    era, the authenticated principal, else the connection where one carries one client (stdio,
    memory), and all anonymous HTTP callers together. Past the limit the request is answered
    -31429 (``RateLimited``) with ``retryAfterMs``. The default is far above what a person
    typing asks for, even from a client that sends one request per keystroke."""

    rate: float | None = 20.0
    burst: int = 40

    def __post_init__(self) -> None:
        if self.rate is not None and not self.rate > 0:
            raise ValueError(f"completion rate must be a positive number a second or None, not {self.rate!r}")
        if self.burst < 1:
            raise ValueError(f"completion burst must be at least 1, not {self.burst!r}")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """Every group, as the server resolved them (``server.options``)."""

    lists: ListOptions
    logs: LogOptions
    state: StateOptions
    timeouts: TimeoutOptions
    completions: CompletionOptions = CompletionOptions()
    tasks: TaskOptions = TaskOptions()
    #: ``Server(extensions={...})``: the extensions (SEP-2133) it declares; more with ``registry.declare_extension``.
    extensions: ExtensionOptions = field(default_factory=ExtensionOptions)


class FlatOptions(TypedDict, total=False):
    """The flat keywords ``Server`` has always taken; each sets one field of a group."""

    page_size: int | None
    cache_ttl_ms: int
    cache_scope: str
    log_level: str | None
    log_redactor: Redactor | None
    log_rate: float
    log_burst: int
    state_key: bytes | None
    state_ttl: float
    once_limit: int
    once_limit_total: int
    decline_ttl: float
    task_ttl: float
    task_ttl_max: float
    task_poll_interval: float
    task_limit: int
    anonymous_task_limit: int
    task_limit_total: int
    elicitation_timeout: float
    finish_grace: float
    completion_rate: float | None
    completion_burst: int
    extensions: Mapping[str, Mapping[str, Any]]


#: Flat keyword -> (group, field).
_FLAT: dict[str, tuple[str, str]] = {
    "page_size": ("lists", "page_size"),
    "cache_ttl_ms": ("lists", "cache_ttl_ms"),
    "cache_scope": ("lists", "cache_scope"),
    "log_level": ("logs", "level"),
    "log_redactor": ("logs", "redactor"),
    "log_rate": ("logs", "rate"),
    "log_burst": ("logs", "burst"),
    "state_key": ("state", "key"),
    "state_ttl": ("state", "ttl"),
    "once_limit": ("state", "once_limit"),
    "once_limit_total": ("state", "once_limit_total"),
    "decline_ttl": ("state", "decline_ttl"),
    "task_ttl": ("tasks", "ttl"),
    "task_ttl_max": ("tasks", "ttl_max"),
    "task_poll_interval": ("tasks", "poll_interval"),
    "task_limit": ("tasks", "limit"),
    "anonymous_task_limit": ("tasks", "anonymous_limit"),
    "task_limit_total": ("tasks", "limit_total"),
    "elicitation_timeout": ("timeouts", "elicitation"),
    "finish_grace": ("timeouts", "finish_grace"),
    "completion_rate": ("completions", "rate"),
    "completion_burst": ("completions", "burst"),
    "extensions": ("extensions", "declared"),
}


def resolve_options(
    *,
    lists: ListOptions | None,
    logs: LogOptions | None,
    state: StateOptions | StateStore | None,
    timeouts: TimeoutOptions | None,
    flat: FlatOptions,
    completions: CompletionOptions | None = None,
    extensions: ExtensionOptions | None = None,
    tasks: TaskOptions | None = None,
) -> ServerOptions:
    """The groups with the flat keywords applied; ``TypeError`` for a keyword ``Server`` does not take.

    ``state`` may be a bare ``StateStore``: ``Server(state=store)`` predates the groups."""
    if isinstance(state, StateStore):
        state = StateOptions(store=state)
    groups: dict[str, Any] = {
        "lists": ListOptions() if lists is None else lists,
        "logs": LogOptions() if logs is None else logs,
        "state": StateOptions() if state is None else state,
        "timeouts": TimeoutOptions() if timeouts is None else timeouts,
        "completions": CompletionOptions() if completions is None else completions,
        "extensions": ExtensionOptions() if extensions is None else extensions,
        "tasks": TaskOptions() if tasks is None else tasks,
    }
    return ServerOptions(**apply_flat_keywords("Server", groups, flat, _FLAT))
