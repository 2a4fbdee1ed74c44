"""The base of the wire model and the shapes every feature shares.

One set of classes covers every revision in :data:`~backchannel.types.versions.VERSIONS`:
a field that exists in only some revisions is optional here, and which revision
needs it is the business of the code that builds or checks a message, not of the
model. Unknown fields are accepted on decode (and dropped on re-encode).

Conventions:

* Python names are snake_case; wire names are their camelCase (``rename="camel"``)
  unless a ``msgspec.field(name=...)`` says otherwise.
* ``_meta`` is the attribute ``meta``.
* Optional fields default to ``None`` and are left out when encoding
  (``omit_defaults=True``), so ``None`` never reaches the wire. A wire ``null`` for an
  optional field therefore decodes to ``None`` and is not re-emitted. The one exception
  is ``structuredContent``, where ``null`` is a legitimate value: it uses ``msgspec.UNSET``.
  ``CallToolResult.is_error`` defaults to ``False``, which the schema says an absent
  ``isError`` means; so ``isError: false`` is not re-emitted either.
"""

from __future__ import annotations

__all__ = [
    "BaseMetadata",
    "CacheScope",
    "CacheableResult",
    "Cursor",
    "EmptyResult",
    "Icon",
    "Implementation",
    "InputResponseRequestParams",
    "InputResponses",
    "Model",
    "NotificationParams",
    "PaginatedRequestParams",
    "PaginatedResult",
    "ProgressToken",
    "RequestId",
    "RequestParams",
    "Result",
    "ResultType",
    "Role",
]

from typing import Any, Literal, TypeAlias

import msgspec


class Model(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """Base of every wire struct: keyword-only, camelCase on the wire, ``None`` omitted.

    msgspec inherits the config, but mypy does not carry ``kw_only`` to subclasses, so
    every subclass repeats ``kw_only=True`` (otherwise a required field after an
    inherited optional one is a mypy error).
    """


#: A JSON-RPC request id.
RequestId: TypeAlias = int | str

#: A progress token, chosen by the requester and echoed in ``notifications/progress``.
ProgressToken: TypeAlias = int | str

#: An opaque pagination cursor.
Cursor: TypeAlias = str

#: The sender or recipient of a message in a conversation.
Role: TypeAlias = Literal["user", "assistant"]

#: ``"complete"``, ``"input_required"`` or an extension value (2026-07-28).
ResultType: TypeAlias = str

#: Scope of a cacheable result (2026-07-28).
CacheScope: TypeAlias = Literal["public", "private"]

#: Answers to the input requests of an ``InputRequiredResult`` (2026-07-28), by the
#: server-chosen key. Each value is an ``ElicitResult``, ``CreateMessageResult`` or
#: ``ListRootsResult``; the shape depends on the method of the matching input request,
#: so they stay plain JSON here (see :func:`backchannel.types.mrtr.decode_input_response`).
InputResponses: TypeAlias = dict[str, dict[str, Any]]


class Icon(Model, kw_only=True):
    """An optionally-sized icon for a user interface (2025-11-25+)."""

    src: str
    mime_type: str | None = None
    sizes: list[str] | None = None
    theme: Literal["light", "dark"] | None = None


class BaseMetadata(Model, kw_only=True):
    """``name`` (programmatic identifier) and ``title`` (display name, 2025-06-18+)."""

    name: str
    title: str | None = None


class Implementation(BaseMetadata, kw_only=True):
    """Name and version of an MCP implementation (``clientInfo`` / ``serverInfo``)."""

    version: str
    description: str | None = None
    website_url: str | None = None
    icons: list[Icon] | None = None


class RequestParams(Model, kw_only=True):
    """Common params of every request.

    ``_meta`` is optional in the handshake era and required in the stateless era,
    where it carries the protocol version and client capabilities
    (keys in :mod:`backchannel.types.meta`).
    """

    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class PaginatedRequestParams(RequestParams, kw_only=True):
    """Params of the ``*/list`` requests."""

    cursor: Cursor | None = None


class InputResponseRequestParams(RequestParams, kw_only=True):
    """Params of a request that may be retried after an ``InputRequiredResult`` (2026-07-28).

    The base of ``tools/call``, ``prompts/get`` and ``resources/read`` params.
    """

    input_responses: InputResponses | None = None
    request_state: str | None = None


class NotificationParams(Model, kw_only=True):
    """Common params of every notification."""

    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Result(Model, kw_only=True):
    """Common result fields.

    ``resultType`` exists only in 2026-07-28, where it is required; a result without
    it counts as ``"complete"``.
    """

    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")
    result_type: ResultType | None = None


#: A result that carries no data (``ping``, ``resources/subscribe``, ...).
EmptyResult: TypeAlias = Result


class CacheableResult(Result, kw_only=True):
    """A result with a client-side caching hint (2026-07-28: required there)."""

    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None


class PaginatedResult(CacheableResult, kw_only=True):
    """A result of a ``*/list`` request.

    Every paginated result of 2026-07-28 is also a ``CacheableResult``, so this
    class carries ``ttlMs``/``cacheScope`` too (optional, like everything era-specific).
    """

    next_cursor: Cursor | None = None
