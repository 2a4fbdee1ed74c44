"""A refusal of an HTTP request to the MCP endpoint, ready to send: status, headers, JSON-RPC body."""

from __future__ import annotations

__all__ = ["JSON_HEADERS", "Rejection", "header", "reject", "valid_id"]

from collections.abc import Mapping
from dataclasses import dataclass, field

import msgspec

from ..types.errors import MCPError
from ..types.ids import request_id_or_none

_encode_json = msgspec.json.Encoder().encode

#: The one place this project spells a JSON response's headers.
JSON_HEADERS: Mapping[str, str] = {"content-type": "application/json"}


@dataclass(frozen=True, slots=True)
class Rejection:
    """A response that ends the request here.

    ``body()`` is a JSON-RPC error response for ``error`` (``id`` null when the
    request's id is unknown), or empty when ``error`` is None. ``headers``
    already include ``content-type`` when there is a body.
    """

    status: int
    error: MCPError | None
    headers: dict[str, str] = field(default_factory=dict)
    request_id: str | int | None = None

    def body(self) -> bytes:
        if self.error is None:
            return b""
        return _encode_json({"jsonrpc": "2.0", "id": self.request_id, "error": self.error.to_error()})


def reject(status: int, error: MCPError, request_id: object = None, headers: dict[str, str] | None = None) -> Rejection:
    all_headers = dict(JSON_HEADERS)
    if headers:
        all_headers.update(headers)
    return Rejection(status, error, all_headers, valid_id(request_id))


#: The id an error answer echoes: the request's, if it may be one (``types/ids.py``), else None.
valid_id = request_id_or_none


def header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else value.strip(" \t")
