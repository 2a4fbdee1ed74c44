"""``Client``'s settings, grouped: how long it waits, how far it follows a server that asks, logs, inputs.

The common case needs none of them (``Client.stdio("python", ["server.py"])``,
``Client.http(url, elicitation=handler)``). To change a setting, pass its group::

    Client.http(url, timeouts=TimeoutOptions(request=None), retries=RetryOptions(url_wait=30.0))

or the flat keyword it has always had (``Client.http(url, request_timeout=None)``): every
flat keyword (``FlatOptions``) still works and wins over the same field of a group passed
beside it. Each group is a frozen dataclass, as h2's ``H2Configuration`` is; read them back
from ``client.options``. The handlers (``elicitation``, ``url_elicitation``, ``roots``,
``sampling``, ``on_log``) stay plain keywords of ``Client``: they are what most callers pass.
"""

from __future__ import annotations

__all__ = [
    "CacheOptions",
    "ClientOptions",
    "ExtensionOptions",
    "FlatOptions",
    "InputOptions",
    "LogOptions",
    "RetryOptions",
    "TimeoutOptions",
    "resolve_options",
]

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from ..types.capabilities import ExtensionOptions
from ..types.logging import LOGGING_LEVELS, LoggingLevel
from ..types.option_groups import apply_flat_keywords
from .cache import ResultCache
from .inputs import RootsConsent


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeoutOptions:
    """How long the client waits.

    ``probe`` bounds the ``server/discover`` probe of era detection (no answer in time: the
    handshake era); over stdio it counts from when the server process has read the probe, so a
    server slow to start is not taken for a handshake-era one. ``request`` is the default timeout
    of every request (None: wait as long as it takes, say while a person fills a form; cancel the
    awaiting task instead), and bounds the wait for a spawned server to read the probe."""

    probe: float = 3.0
    request: float | None = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryOptions:
    """How far the client follows a server that needs something before it answers.

    Stateless era: at most ``input_rounds`` rounds of ``InputRequiredResult`` per request.
    Handshake era, ``-32042``: wait at most ``url_wait`` seconds for the URL flows it lists,
    then retry, at most ``url_retries`` times. ``client.listen`` opens a broken stream again
    after ``listen_backoff`` seconds (doubling, with jitter, up to 30), and gives up after
    ``listen_retries`` tries in a row that the server did not acknowledge."""

    input_rounds: int = 10
    url_wait: float = 300.0
    url_retries: int = 3
    listen_retries: int = 10
    listen_backoff: float = 0.5


@dataclass(frozen=True, slots=True, kw_only=True)
class LogOptions:
    """Which log messages the client asks the server for, and how many reach ``on_log``.

    ``level`` asks for ``notifications/message`` at that level and above, the same way in both
    eras, from the first request on: in the stateless era it rides in every request's ``_meta``
    (``io.modelcontextprotocol/logLevel``, 2026-07-28 logging.mdx); in the handshake era the
    client sends ``logging/setLevel`` right after ``initialize``. Either only when the server
    declares ``logging`` (one that does not sends none). None (the default) asks for nothing: a
    stateless-era server then sends no log messages at all ("MUST NOT"), while a handshake-era one
    sends what its own default level lets through (2025-11-25 has no way to ask for none); pass
    a level with ``on_log`` to get the same messages from either. ``client.set_logging_level``
    changes it later.

    At most ``rate`` messages a second reach ``on_log`` (with bursts of ``burst``); the rest are
    dropped and counted in ``client.dropped_log_messages``."""

    level: LoggingLevel | None = None
    rate: float = 100.0
    burst: int = 500

    def __post_init__(self) -> None:
        if self.level is not None and self.level not in LOGGING_LEVELS:
            raise ValueError(f"unknown log level {self.level!r}; use one of {', '.join(LOGGING_LEVELS)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class InputOptions:
    """How the client answers the server's questions (the handlers themselves are ``Client`` keywords).

    ``roots_consent`` is asked once before roots are first shown to the server (True lets them go);
    ``resolve_symlinks`` resolves each root path before it is sent; ``sampling_tools`` declares that
    the ``sampling`` handler accepts ``tools`` (the ``sampling.tools`` capability)."""

    roots_consent: RootsConsent | None = None
    resolve_symlinks: bool = True
    sampling_tools: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheOptions:
    """Where the client keeps the results the server says stay fresh a while (``client.cache``).

    ``store`` is any ``ResultCache``; ``"memory"`` (the default) is a ``MemoryCache`` of this
    client's own, and None caches nothing. Pass one store to several clients to share it: a ``"public"`` result
    then serves every client of that server, a ``"private"`` one only clients of the same
    ``principal`` (say, the user's id). Without one, a static ``Authorization`` header stands
    for the principal, and without that each client is a principal of its own."""

    store: ResultCache | Literal["memory"] | None = "memory"
    principal: str | None = None


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """Every group, as the client resolved them (``client.options``)."""

    timeouts: TimeoutOptions
    retries: RetryOptions
    logs: LogOptions
    inputs: InputOptions
    #: ``Client(extensions={...})``: the extensions (SEP-2133) the client declares in its capabilities.
    extensions: ExtensionOptions = field(default_factory=ExtensionOptions)
    #: ``Client(cache=..., cache_principal=...)``: the result cache.
    cache: CacheOptions = field(default_factory=CacheOptions)


class FlatOptions(TypedDict, total=False):
    """The flat keywords ``Client`` has always taken; each sets one field of a group."""

    probe_timeout: float
    request_timeout: float | None
    max_input_rounds: int
    url_wait: float
    url_retries: int
    log_level: LoggingLevel | None
    log_rate: float
    log_burst: int
    roots_consent: RootsConsent | None
    resolve_symlinks: bool
    sampling_tools: bool
    extensions: Mapping[str, Mapping[str, Any]]
    cache: ResultCache | Literal["memory"] | None
    cache_principal: str | None


#: Flat keyword -> (group, field).
_FLAT: dict[str, tuple[str, str]] = {
    "probe_timeout": ("timeouts", "probe"),
    "request_timeout": ("timeouts", "request"),
    "max_input_rounds": ("retries", "input_rounds"),
    "url_wait": ("retries", "url_wait"),
    "url_retries": ("retries", "url_retries"),
    "log_level": ("logs", "level"),
    "log_rate": ("logs", "rate"),
    "log_burst": ("logs", "burst"),
    "roots_consent": ("inputs", "roots_consent"),
    "resolve_symlinks": ("inputs", "resolve_symlinks"),
    "sampling_tools": ("inputs", "sampling_tools"),
    "extensions": ("extensions", "declared"),
    "cache": ("cache", "store"),
    "cache_principal": ("cache", "principal"),
}


def resolve_options(
    *,
    timeouts: TimeoutOptions | None,
    retries: RetryOptions | None,
    logs: LogOptions | None,
    inputs: InputOptions | None,
    flat: FlatOptions,
    extensions: ExtensionOptions | None = None,
    cache: CacheOptions | None = None,
) -> ClientOptions:
    """The groups with the flat keywords applied; ``TypeError`` for a keyword ``Client`` does not take."""
    groups: dict[str, Any] = {
        "timeouts": timeouts or TimeoutOptions(),
        "retries": retries or RetryOptions(),
        "logs": logs or LogOptions(),
        "inputs": inputs or InputOptions(),
        "extensions": extensions or ExtensionOptions(),
        "cache": cache or CacheOptions(),
    }
    return ClientOptions(**apply_flat_keywords("Client", groups, flat, _FLAT))
