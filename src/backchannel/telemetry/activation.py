"""Whether each OpenTelemetry signal is on, checked per use and never by importing it.

A signal is on when ``opentelemetry`` is already imported (someone configured an SDK, or
``opentelemetry-instrument`` did) **and** that signal's global provider is a real one, not
the API's proxy or no-op provider. Nobody can configure an SDK without importing
``opentelemetry``, so the ``sys.modules`` look-up is exact, and it keeps backchannel's
import time and memory unchanged when nobody uses telemetry.

Call :func:`signals` (a request: tracer and meter in one answer), :func:`tracer`, :func:`meter`
or :func:`otel_logger` where a span, a measurement or a log record would start; ``None`` means do
nothing. The answer is kept only for as long as the API's provider globals are the ones it was
found for: a user may configure the SDK after building the server, and the next request sees it.
Checking costs a read of each global and an identity test (about 40 ns with the API imported and
no SDK; ``docs/observability.md``, "Cost"). :func:`flush` makes the configured providers export
what they still hold, for a server that is stopping (a signal may end it before ``atexit``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry._logs import Logger
    from opentelemetry.metrics import Meter
    from opentelemetry.trace import Tracer

__all__ = ["SCOPE_NAME", "flush", "meter", "otel_logger", "scope_version", "signals", "tracer"]

#: The instrumentation scope every tracer, meter and logger of ours is named after.
SCOPE_NAME = "backchannel"

_version: str | None = None

#: (provider, logger) of the last look-up: a provider hands out the same logger for the same
#: scope anyway; keeping it skips the provider's lock and dict.
_logger_cache: tuple[object, Any] | None = None
_modules = sys.modules
_UNKNOWN = object()


def scope_version() -> str:
    """The installed backchannel's version, the instrumentation scope's version."""
    global _version
    if _version is None:
        # Read lazily: importlib.metadata costs milliseconds, and only telemetry needs it. Not
        # backchannel.__version__: this package sits below the top-level one (tests/test_layers.py).
        from importlib.metadata import PackageNotFoundError, version

        try:
            _version = version("backchannel")
        except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
            _version = "0"
    return _version


class _Seen:
    """What :func:`signals` last found: the API modules (None until imported), the provider globals
    read from them, and the answer for those. Replaced whole, never changed, so a thread reading it
    while another refreshes it sees one consistent answer."""

    __slots__ = ("answer", "meter_provider", "metrics_api", "trace_api", "tracer_provider")

    def __init__(self, trace_api: Any, metrics_api: Any, tracer_provider: object, meter_provider: object) -> None:
        self.trace_api = trace_api
        self.metrics_api = metrics_api
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.answer: tuple[Tracer | None, Meter | None] | None = None


class _Absent:
    """Stands for an API module not imported: its provider global reads as unset."""

    _TRACER_PROVIDER = None
    _METER_PROVIDER = None


_ABSENT = _Absent()
_TRACE_API = "opentelemetry.trace"
_METRICS_API = "opentelemetry.metrics._internal"
_seen = _Seen(None, None, _UNKNOWN, _UNKNOWN)


def signals() -> tuple[Tracer | None, Meter | None] | None:
    """``(tracer, meter)``, either None when its signal is off; None when both are: the check a
    request makes, once, before it makes a span or a measurement.

    Two attribute reads and two identity checks while the API's provider globals are those of the
    last call (tens of nanoseconds); a look at them again when one changed, so a provider set after
    the server was built is seen by the next request."""
    if "opentelemetry" not in _modules:  # nobody configured anything: nothing more to read
        return None
    seen = _seen
    try:
        if (seen.trace_api or _modules.get(_TRACE_API, _ABSENT))._TRACER_PROVIDER is seen.tracer_provider and (
            seen.metrics_api or _modules.get(_METRICS_API, _ABSENT)
        )._METER_PROVIDER is seen.meter_provider:
            return seen.answer
    except AttributeError:  # pragma: no cover - an API that keeps its globals elsewhere: ask it every time
        pass
    return _look_again()


def _look_again() -> tuple[Tracer | None, Meter | None] | None:
    global _seen
    trace_provider = _provider(_TRACE_API, "_TRACER_PROVIDER", "OTEL_PYTHON_TRACER_PROVIDER", "get_tracer_provider")
    meter_provider = _provider(_METRICS_API, "_METER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER", "get_meter_provider")
    found_tracer = found_meter = None
    if trace_provider is not None:
        api = _modules[_TRACE_API]
        if not isinstance(trace_provider, (api.ProxyTracerProvider, api.NoOpTracerProvider)):
            found_tracer = trace_provider.get_tracer(SCOPE_NAME, scope_version())
    if meter_provider is not None:
        api = _modules[_METRICS_API]
        if not isinstance(meter_provider, (api.NoOpMeterProvider, api._ProxyMeterProvider)):
            found_meter = meter_provider.get_meter(SCOPE_NAME, scope_version())
    # Keyed on the globals as they are now (``_provider`` may just have loaded one the environment
    # names), and on the modules only once imported: until then each call looks them up again.
    trace_api = _modules.get(_TRACE_API)
    metrics_api = _modules.get(_METRICS_API)
    seen = _Seen(
        trace_api,
        metrics_api,
        getattr(trace_api or _ABSENT, "_TRACER_PROVIDER", _UNKNOWN),
        getattr(metrics_api or _ABSENT, "_METER_PROVIDER", _UNKNOWN),
    )
    if found_tracer is not None or found_meter is not None:
        seen.answer = (found_tracer, found_meter)
    _seen = seen
    return seen.answer


def tracer() -> Tracer | None:
    """The tracer to start spans with, or ``None`` when tracing is off (no SDK configured)."""
    found = signals()
    return None if found is None else found[0]


def meter() -> Meter | None:
    """The meter to record measurements with, or ``None`` when metrics are off."""
    found = signals()
    return None if found is None else found[1]


def otel_logger() -> Logger | None:
    """The OpenTelemetry logger to emit log records with, or ``None`` when logs are off."""
    global _logger_cache
    provider = _provider(
        "opentelemetry._logs._internal", "_LOGGER_PROVIDER", "OTEL_PYTHON_LOGGER_PROVIDER", "get_logger_provider"
    )
    if provider is None:
        return None
    cache = _logger_cache
    if cache is not None and cache[0] is provider:
        return cache[1]  # type: ignore[no-any-return]
    api = sys.modules["opentelemetry._logs._internal"]
    off = isinstance(provider, (api.NoOpLoggerProvider, api.ProxyLoggerProvider))
    found = None if off else provider.get_logger(SCOPE_NAME, scope_version())
    _logger_cache = (provider, found)
    return found


#: What :func:`flush` flushes, metrics last: a metric reader's flush exports a collection then,
#: which is a moment later than the spans and log records it might count.
_PROVIDERS = (
    (_TRACE_API, "_TRACER_PROVIDER", "OTEL_PYTHON_TRACER_PROVIDER", "get_tracer_provider"),
    ("opentelemetry._logs._internal", "_LOGGER_PROVIDER", "OTEL_PYTHON_LOGGER_PROVIDER", "get_logger_provider"),
    (_METRICS_API, "_METER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER", "get_meter_provider"),
)


def flush(timeout: float = 2.0) -> None:
    """Make the configured tracer, meter and logger providers export what they hold now (spans in
    a batch processor's queue...), within ``timeout`` seconds in all; nothing when no SDK is set.

    A stopping server calls it: a process that ends by a signal (uvicorn, hosting an app mounted by
    its user, re-raises the SIGTERM it handled) never reaches the SDK's ``atexit`` flush. Blocks while the
    exporters work: from a running event loop, call it in a thread. A failing exporter is logged
    by the SDK, never raised here."""
    if "opentelemetry" not in _modules:
        return
    import time

    deadline = time.monotonic() + timeout
    for found in _PROVIDERS:
        provider = _provider(*found)
        force_flush = getattr(provider, "force_flush", None)  # the API's proxies and no-ops have none
        left = deadline - time.monotonic()
        if force_flush is None or left <= 0:
            continue
        try:
            force_flush(timeout_millis=int(left * 1000))
        except Exception:  # a third-party provider's failure must not stop the server's shutdown
            import logging

            logging.getLogger("backchannel").debug("flushing %r failed", provider, exc_info=True)


#: Which ``OTEL_PYTHON_*_PROVIDER`` variables name a provider to load; read once, when first needed.
_env_providers: frozenset[str] | None = None


def _provider(module_name: str, variable: str, env: str, getter: str) -> Any:
    """The global provider a user set for one signal, or None when none is set (or the API is not
    even imported). The API's own ``get_*_provider()`` costs a microsecond (it looks up the environment
    on every call, then hands out a proxy); the module's global is the same answer in tens of
    nanoseconds, so read it, and ask the API only when the environment names a provider to load
    or when a future API keeps its global elsewhere."""
    global _env_providers
    module = sys.modules.get(module_name)
    if module is None:
        return None
    provider = getattr(module, variable, _UNKNOWN)
    if provider is None:
        if _env_providers is None:
            import os

            names = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER", "OTEL_PYTHON_LOGGER_PROVIDER")
            _env_providers = frozenset(name for name in names if name in os.environ)
        if env not in _env_providers:
            return None
    elif provider is not _UNKNOWN:
        return provider
    return getattr(module, getter)()
