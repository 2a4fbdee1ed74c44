"""The network address of the client whose HTTP request is being served, for what is kept per address.

An HTTP caller without a principal is known by nothing else: the server keeps such callers' tasks
(``server/tasks/``) and ``ctx.once`` results in budgets per address, so one address filling its
own does not refuse another's. The HTTP host notes the address (``serving_from(scope)``, ASGI's
``scope["client"]``) as it routes each request; the handlers of that request read it with
``caller_address()`` (a context variable: a handler's task starts in the request's context).

Behind a reverse proxy the address is the proxy's, unless the ASGI server is told to take the
client's from a header it trusts (uvicorn's ``--proxy-headers``).
"""

from __future__ import annotations

__all__ = ["address_budget", "caller_address", "serving_from"]

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

_ADDRESS: ContextVar[str | None] = ContextVar("backchannel_caller_address", default=None)


def serving_from(scope: Mapping[str, Any]) -> None:
    """Note the client address of the HTTP request ``scope`` for the rest of its handling."""
    client = scope.get("client")
    _ADDRESS.set(str(client[0]) if client else None)  # (host, port); None on a unix socket


def caller_address() -> str | None:
    """The client address of the HTTP request being served; None outside one, or when unknown."""
    return _ADDRESS.get()


def address_budget(address: str) -> str:
    """The name of ``address``'s budget: the address itself, or for IPv6 its /64 (one host is
    commonly handed a whole /64, so its addresses are one caller's)."""
    if ":" not in address:
        return address
    import ipaddress  # (loaded by a first IPv6 caller that keeps something, not at start)

    try:
        parsed = ipaddress.IPv6Address(address.split("%", 1)[0])
    except ValueError:
        return address
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.IPv6Network((parsed, 64), strict=False))
