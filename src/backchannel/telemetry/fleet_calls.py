"""Trace context between the workers of a fleet: what one worker hands another keeps its trace.

A worker that asks another to do part of a request's work (``state/calls.py``: a URL flow's page
or step on the flow's owner; ``server/tasks/relay.py``: a task's update or cancel on the worker
running it) puts :func:`carried` in its message, the current context in the configured
propagators' format; the worker that does the work runs it inside :func:`serving`, a SERVER
span whose parent is that context. The span is ours (the MCP conventions have no name for
it): ``{operation}``, e.g. ``url.page``, with ``backchannel.fleet.operation`` and
``backchannel.fleet.caller`` (the asking worker's id).

With tracing off nothing is carried and no span is made; a message without a context (from a
worker whose tracing is off) gets no span either, rather than a trace of its own.
"""

from __future__ import annotations

__all__ = ["FLEET_CALLER", "FLEET_OPERATION", "carried", "serving"]

import contextlib
from collections.abc import Iterator
from typing import Any

from .activation import tracer
from .propagation import context_from_meta, inject_meta

#: Ours: the fleet call a worker's span serves, and the worker that asked for it.
FLEET_OPERATION = "backchannel.fleet.operation"
FLEET_CALLER = "backchannel.fleet.caller"


def carried() -> dict[str, str] | None:
    """The current trace context, for a message to another worker; None when tracing is off or
    no trace is current."""
    if tracer() is None:
        return None
    carrier: dict[str, Any] = {}
    inject_meta(carrier)
    return carrier or None


@contextlib.contextmanager
def serving(operation: str, carrier: object, caller: object) -> Iterator[None]:
    """Do a call another worker asked for (``carrier``: what its :func:`carried` gave) in a span
    that is a child of the caller's context; nothing at all when there is no such context."""
    found = tracer()
    parent = context_from_meta(carrier) if found is not None else None
    if found is None or parent is None:
        yield
        return
    from opentelemetry.trace import SpanKind  # imported already: a tracer was configured

    attributes = {FLEET_OPERATION: operation}
    if type(caller) is str:
        attributes[FLEET_CALLER] = caller
    with found.start_as_current_span(operation, context=parent, kind=SpanKind.SERVER, attributes=attributes):
        yield
