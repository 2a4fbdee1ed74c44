"""Multi round-trip requests (2026-07-28).

A server that needs input from the client answers ``tools/call``, ``prompts/get`` or
``resources/read`` with an :class:`InputRequiredResult`; the client fulfils the
``inputRequests`` and retries the original request with ``inputResponses`` and the
echoed ``requestState`` (:class:`~backchannel.types.base.InputResponseRequestParams`).

An input request is ``{method, params}`` without ``jsonrpc``/``id``. :data:`InputRequest`
is a union tagged on ``method``; each member has a read-only ``method`` property.
Input responses have no tag, so :data:`~backchannel.types.base.InputResponses` holds
plain JSON and :func:`decode_input_response` turns one into its struct given the method
of the request it answers.
"""

from __future__ import annotations

__all__ = [
    "INPUT_REQUIRED",
    "INPUT_RESPONSE_TYPES",
    "CreateMessageRequest",
    "ElicitRequest",
    "InputRequest",
    "InputRequests",
    "InputRequiredResult",
    "InputResponse",
    "InputResponseRequestParams",
    "InputResponses",
    "ListRootsRequest",
    "decode_input_response",
    "is_input_required",
]

from collections.abc import Mapping
from typing import Any, TypeAlias

import msgspec

from .base import InputResponseRequestParams, InputResponses, Model, RequestParams, Result
from .elicitation import ElicitRequestParams, ElicitResult
from .roots import ListRootsResult
from .sampling import CreateMessageRequestParams, CreateMessageResult

#: The ``resultType`` of an :class:`InputRequiredResult`.
INPUT_REQUIRED = "input_required"


class ElicitRequest(Model, kw_only=True, tag_field="method", tag="elicitation/create"):
    """An ``elicitation/create`` the server asks inside an ``InputRequiredResult`` (2026-07-28)."""

    params: ElicitRequestParams

    @property
    def method(self) -> str:
        """``"elicitation/create"``, the method this input request stands for."""
        return "elicitation/create"


class CreateMessageRequest(Model, kw_only=True, tag_field="method", tag="sampling/createMessage"):
    """A ``sampling/createMessage`` the server asks inside an ``InputRequiredResult`` (2026-07-28)."""

    params: CreateMessageRequestParams

    @property
    def method(self) -> str:
        """``"sampling/createMessage"``, the method this input request stands for."""
        return "sampling/createMessage"


class ListRootsRequest(Model, kw_only=True, tag_field="method", tag="roots/list"):
    """A ``roots/list`` the server asks inside an ``InputRequiredResult`` (2026-07-28)."""

    params: RequestParams | None = None

    @property
    def method(self) -> str:
        """``"roots/list"``, the method this input request stands for."""
        return "roots/list"


InputRequest: TypeAlias = ElicitRequest | CreateMessageRequest | ListRootsRequest
InputRequests: TypeAlias = dict[str, InputRequest]
InputResponse: TypeAlias = ElicitResult | CreateMessageResult | ListRootsResult

#: The struct of the response to each input request method.
INPUT_RESPONSE_TYPES: Mapping[str, type[InputResponse]] = {
    "elicitation/create": ElicitResult,
    "sampling/createMessage": CreateMessageResult,
    "roots/list": ListRootsResult,
}


class InputRequiredResult(Result, kw_only=True):
    """The server needs input before it can complete the request.

    At least one of ``inputRequests`` and ``requestState`` must be present.
    ``resultType`` is set to ``"input_required"`` when not given.
    """

    input_requests: InputRequests | None = None
    request_state: str | None = None

    def __post_init__(self) -> None:
        if self.result_type is None:
            self.result_type = INPUT_REQUIRED


def decode_input_response(method: str, value: Any) -> InputResponse:
    """Validate the client's answer ``value`` to an input request of ``method``.

    Raises ``KeyError`` for a method that is not an input request and
    ``msgspec.ValidationError`` for a malformed answer.
    """
    return msgspec.convert(value, INPUT_RESPONSE_TYPES[method])


def is_input_required(result: Any) -> bool:
    """True when a raw (JSON) result is an ``InputRequiredResult``."""
    return isinstance(result, Mapping) and result.get("resultType") == INPUT_REQUIRED
