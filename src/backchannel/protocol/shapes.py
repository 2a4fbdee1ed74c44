"""Which JSON-RPC shape a decoded value has: request, notification, response, or malformed.

Pure and cheap: the session asks this first for every message it is fed, and reads the
fields itself afterwards. A malformed value comes back as ``Malformed`` with the error
to answer and the id to answer it under (None when the value carries no usable id).
"""

from __future__ import annotations

__all__ = ["Malformed", "Shape", "classify"]

from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..types.errors import InvalidParams, InvalidRequest, MCPError
from ..types.ids import RequestId, request_id_or_none


class Shape(Enum):
    # Members are singletons: identity hashing keeps the comparisons on the hot path cheap.
    __hash__ = object.__hash__

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed:
    """No JSON-RPC message: answer ``error`` under ``id``."""

    id: RequestId | None
    error: MCPError


def classify(message: Any) -> Shape | Malformed | None:
    """The shape of ``message``; ``Malformed`` for a value to answer with an error; None for a
    notification that is not well formed, which is dropped (a notification gets no answer)."""
    if type(message) is not dict:
        if isinstance(message, list):
            return Malformed(id=None, error=InvalidRequest("JSON-RPC batches are not supported"))
        return Malformed(id=None, error=InvalidRequest("a JSON-RPC message must be an object"))
    if message.get("jsonrpc") != "2.0":
        return Malformed(id=request_id_or_none(message.get("id")), error=InvalidRequest('"jsonrpc" must be "2.0"'))
    method = message.get("method")
    if method is not None:
        params = message.get("params")
        if params is not None and type(params) is not dict:
            if "id" in message:
                return Malformed(
                    id=request_id_or_none(message["id"]), error=InvalidParams('"params" must be an object')
                )
            return None
        if type(method) is not str:
            return Malformed(
                id=request_id_or_none(message.get("id")), error=InvalidRequest('"method" must be a string')
            )
        if "id" in message:
            kind = type(message["id"])  # ``is_request_id``, inlined: this runs for every request
            if kind is not str and kind is not int:
                return Malformed(id=None, error=InvalidRequest('"id" must be a string or an integer'))
            return Shape.REQUEST
        return Shape.NOTIFICATION
    if "id" in message and ("result" in message or "error" in message):
        return Shape.RESPONSE
    return Malformed(
        id=request_id_or_none(message.get("id")), error=InvalidRequest("not a request, notification or response")
    )
