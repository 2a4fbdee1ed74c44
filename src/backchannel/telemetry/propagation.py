"""Trace context in ``params._meta`` (and in HTTP headers), through the configured propagators.

The sender injects its span's context into the outgoing request's ``_meta`` (unprefixed
``traceparent``, ``tracestate``, ``baggage``: SEP-414, 2026-07-28 ``basic/index.mdx``); the
receiver extracts it and parents its span on it. Whatever propagators the user configured
(``OTEL_PROPAGATORS``, ``opentelemetry.propagate.set_global_textmap``) are used, W3C by default.

Call these only when tracing is on (``activation.tracer()`` is not None): they import
``opentelemetry``, which is then already imported. ``headers_from_meta`` is the exception: it
reads plain strings and imports nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .conventions import TRACE_META_KEYS

if TYPE_CHECKING:
    from opentelemetry.context import Context

__all__ = ["api", "context_from_headers", "context_from_meta", "headers_from_meta", "inject_meta"]

_modules = sys.modules


def api(name: str) -> Any:
    """The ``opentelemetry`` module ``name``, imported if it is not yet (a dict look-up when it is).

    Call it only when a signal is on: then the API is imported already, and this is cheaper than
    an ``import`` statement in a function that runs per request.
    """
    module = _modules.get(name)
    if module is None:
        import importlib

        module = importlib.import_module(name)
    return module


def inject_meta(meta: dict[str, Any], context: Context | None = None) -> None:
    """Add the trace context of ``context`` (default: the current one) to ``meta``, in place.

    Pass a fresh dict: the caller's ``params`` must never be changed (copy ``_meta`` first).
    """
    api("opentelemetry.propagate").inject(meta, context=context)


def context_from_meta(meta: object) -> Context | None:
    """The remote context a request's ``_meta`` carries, or None when it carries none (or a broken one).

    A peer's malformed ``traceparent`` is ignored, never an error: the request is served all the same.
    """
    if type(meta) is not dict or not meta:
        return None
    # Only strings: a peer may put anything in _meta, and a propagator expects header-like values.
    carrier = {key: value for key, value in meta.items() if type(value) is str}
    return _extract(carrier) if carrier else None


def context_from_headers(headers: Mapping[str, str] | Iterable[tuple[bytes, bytes]]) -> Context | None:
    """The context of an HTTP request's W3C headers (``traceparent``...), or None when there is none.

    ``headers`` is a mapping of header names to values, or an ASGI scope's ``headers`` (pairs of
    bytes). Returns None when tracing is off, without importing anything.
    """
    if "opentelemetry.trace" not in _modules:
        return None
    if isinstance(headers, Mapping):
        carrier = {str(key).lower(): str(value) for key, value in headers.items()}
    else:
        carrier = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in headers}
    return _extract(carrier)


def headers_from_meta(meta: object) -> list[tuple[bytes, bytes]]:
    """The W3C headers to send along a POST whose message's ``_meta`` carries trace context."""
    if type(meta) is not dict:
        return []
    found: list[tuple[bytes, bytes]] = []
    for key in TRACE_META_KEYS:
        value = meta.get(key)
        if type(value) is str and value.isascii():
            found.append((key.encode("ascii"), value.encode("ascii")))
    return found


def _extract(carrier: dict[str, str]) -> Context | None:
    try:
        context: Context = api("opentelemetry.propagate").extract(carrier)
    except Exception:  # a third-party propagator choking on a peer's value
        return None
    if api("opentelemetry.trace").get_current_span(context).get_span_context().is_valid:
        return context
    if api("opentelemetry.baggage").get_all(context):
        return context
    return None
