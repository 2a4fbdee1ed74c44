"""What the ready-made middleware read of a ``Call``: the item it names, how it ended, who made it."""

from __future__ import annotations

__all__ = ["caller_key", "item_name", "outcome_of", "protocol_version"]

from typing import Any

from ..composition.middleware import Call
from ..runtime.caller_address import address_budget, caller_address
from ..types import meta as M


def item_name(params: dict[str, Any]) -> str | None:
    """The tool, prompt or resource a request's ``params`` are about: ``name`` (``tools/call``,
    ``prompts/get``), ``uri`` (``resources/*``), a completion's ``ref``; else None."""
    name = params.get("name")
    if isinstance(name, str):
        return name
    uri = params.get("uri")
    if isinstance(uri, str):
        return uri
    ref = params.get("ref")
    if isinstance(ref, dict):
        named = ref.get("name", ref.get("uri"))
        return named if isinstance(named, str) else None
    return None


def outcome_of(result: Any) -> str:
    """How a request that was answered ended: ``input_required`` (stateless era: the client is
    asked first), ``task`` (a task was made), ``tool_error`` (``isError``), else ``ok``."""
    if not isinstance(result, dict):
        return "ok"
    kind = result.get("resultType")
    if kind == "input_required":
        return "input_required"
    if kind == "task" or isinstance(result.get("task"), dict):
        return "task"
    if result.get("isError") is True:
        return "tool_error"
    return "ok"


def caller_key(call: Call) -> tuple[str, str]:
    """Who made ``call``, for what is kept per caller: ``("principal", key)`` when an HTTP
    authenticator named one; else ``("session", id)`` for a handshake-era HTTP session; else
    ``("address", host)`` for an anonymous stateless-era HTTP caller (an IPv6 host by its /64);
    else ``("connection", scope)`` over stdio and memory, one client each. Behind a reverse proxy
    every anonymous caller has the proxy's address: authenticate them to tell them apart."""
    if call.principal is not None:
        return ("principal", call.principal)
    if call.session is not None:
        return ("session", call.session)
    address = caller_address()
    if address is not None and getattr(call.connection.transport, "authenticates_callers", False):
        return ("address", address_budget(address))
    scope = getattr(call.connection.handler, "connection_scope", None)
    named = scope(call.connection) if scope is not None else None
    return ("connection", named if isinstance(named, str) else str(id(call.connection)))


def protocol_version(call: Call) -> str | None:
    """The protocol revision of ``call``: a stateless-era request's own, else the session's."""
    meta = call.params.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(M.PROTOCOL_VERSION), str):
        return meta[M.PROTOCOL_VERSION]  # type: ignore[no-any-return]
    version = call.connection.session.protocol_version
    return version if isinstance(version, str) else None
