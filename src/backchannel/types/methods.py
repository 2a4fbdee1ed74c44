"""Which method exists in which revision, sent by whom, with which params and result.

:data:`METHODS` is keyed by method name. One entry per method:

* ``sender`` is the set of parties that may send it as a JSON-RPC message in *some*
  revision of ``versions``.
* ``versions`` is every revision in which the method exists as a JSON-RPC message of
  that ``kind``.
* ``sender_versions`` narrows a sender that may send the method only in some of those
  revisions (``notifications/progress`` is sent by clients only up to 2025-11-25). A
  sender absent from it may send the method in all of ``versions``.
* ``input_request_versions``: revisions in which the method is not a JSON-RPC message
  but an MRTR input request inside an ``InputRequiredResult`` (``elicitation/create``,
  ``sampling/createMessage``, ``roots/list`` in 2026-07-28). These are *not* in
  ``versions``.
* ``mrtr``: the request may be answered with an ``InputRequiredResult`` (2026-07-28).
* ``params``/``result``: the struct to ``msgspec.convert`` the params/result with.
  ``result`` is ``None`` for notifications. Results that may instead be a
  ``CreateTaskResult`` (task-augmented, 2025-11-25) or an ``InputRequiredResult``
  (``mrtr``) are listed with their normal type; check ``task`` / ``resultType`` first.

Use :func:`exists` for the question "may ``sender`` send ``method`` in ``version``".

:data:`EXTENSION_METHODS` lists, the same way, methods that exist in a revision only as part
of an extension (``extension`` names it): the tasks extension's ``tasks/get``,
``tasks/update``, ``tasks/cancel`` and ``notifications/tasks`` in 2026-07-28, which its
``schema.ts`` does not define. ``tasks/result`` and ``tasks/list`` exist in 2025-11-25 only.
The skills extension's ``skills/list``, ``skills/get`` and ``resources/directory/read``
(SEP-2640) exist in every revision: skills are resources, which every revision has.
:func:`requests_served` is what a server answers in a revision: the core's requests and
the extensions'.
"""

from __future__ import annotations

__all__ = [
    "EXTENSION_METHODS",
    "METHODS",
    "Kind",
    "MethodSpec",
    "Sender",
    "exists",
    "is_input_request",
    "methods_for",
    "requests_served",
    "spec_for",
]

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .base import NotificationParams, PaginatedRequestParams, RequestParams, Result
from .completion import CompleteRequestParams, CompleteResult
from .elicitation import ElicitationCompleteNotificationParams, ElicitRequestParams, ElicitResult
from .lifecycle import DiscoverResult, InitializeRequestParams, InitializeResult
from .logging import LoggingMessageNotificationParams, SetLevelRequestParams
from .notifications import (
    CancelledNotificationParams,
    ProgressNotificationParams,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from .prompts import GetPromptRequestParams, GetPromptResult, ListPromptsResult
from .resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from .roots import ListRootsResult
from .sampling import CreateMessageRequestParams, CreateMessageResult
from .skills import (
    SKILLS_EXTENSION,
    GetSkillRequestParams,
    GetSkillResult,
    ListSkillsResult,
    ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult,
)
from .tasks import (
    TASKS_EXTENSION,
    CancelTaskRequestParams,
    DetailedTask,
    DetailedTaskNotificationParams,
    GetTaskPayloadRequestParams,
    GetTaskRequestParams,
    GetTaskResult,
    ListTasksResult,
    TaskStatusNotificationParams,
    UpdateTaskRequestParams,
)
from .tools import CallToolRequestParams, CallToolResult, ListToolsResult
from .versions import HANDSHAKE_VERSIONS, STATELESS_VERSIONS, VERSIONS, at_least

Kind: TypeAlias = Literal["request", "notification"]
Sender: TypeAlias = Literal["client", "server"]


@dataclass(frozen=True)
class MethodSpec:
    """One row of the ``(method, version)`` table: who may send ``method``, in which revisions, and its params and
    result structs."""

    method: str
    kind: Kind
    sender: frozenset[Sender]
    params: type | None
    result: type | None
    versions: frozenset[str]
    mrtr: bool = False
    sender_versions: Mapping[Sender, frozenset[str]] = field(default_factory=dict, hash=False)
    input_request_versions: frozenset[str] = frozenset()
    #: The extension that defines the method (rows of ``EXTENSION_METHODS`` only).
    extension: str | None = None

    def versions_for(self, sender: str) -> frozenset[str]:
        """The revisions in which ``sender`` may send this method (empty if never)."""
        if sender not in self.sender:
            return frozenset()
        for narrowed, versions in self.sender_versions.items():
            if narrowed == sender:
                return versions
        return self.versions

    def sent_by(self, sender: str, version: str) -> bool:
        """Whether ``sender`` (``"client"`` or ``"server"``) may send this method in revision ``version``."""
        return version in self.versions_for(sender)


_ALL = frozenset(VERSIONS)
_HANDSHAKE = frozenset(HANDSHAKE_VERSIONS)
_STATELESS = frozenset(STATELESS_VERSIONS)
_SINCE_2025_06_18 = frozenset(v for v in HANDSHAKE_VERSIONS if at_least(v, "2025-06-18"))
_ONLY_2025_11_25 = frozenset({"2025-11-25"})

_CLIENT: frozenset[Sender] = frozenset({"client"})
_SERVER: frozenset[Sender] = frozenset({"server"})
_BOTH: frozenset[Sender] = frozenset({"client", "server"})


def _request(
    method: str,
    sender: frozenset[Sender],
    params: type | None,
    result: type | None,
    versions: frozenset[str],
    *,
    mrtr: bool = False,
    input_request_versions: frozenset[str] = frozenset(),
) -> MethodSpec:
    return MethodSpec(
        method,
        "request",
        sender,
        params,
        result,
        versions,
        mrtr=mrtr,
        input_request_versions=input_request_versions,
    )


def _notification(
    method: str,
    sender: frozenset[Sender],
    params: type | None,
    versions: frozenset[str],
    *,
    sender_versions: Mapping[Sender, frozenset[str]] | None = None,
) -> MethodSpec:
    return MethodSpec(
        method,
        "notification",
        sender,
        params,
        None,
        versions,
        sender_versions=dict(sender_versions or {}),
    )


_SPECS: tuple[MethodSpec, ...] = (
    # Client requests.
    _request("initialize", _CLIENT, InitializeRequestParams, InitializeResult, _HANDSHAKE),
    _request("ping", _BOTH, RequestParams, Result, _HANDSHAKE),
    _request("server/discover", _CLIENT, RequestParams, DiscoverResult, _STATELESS),
    _request("tools/list", _CLIENT, PaginatedRequestParams, ListToolsResult, _ALL),
    _request("tools/call", _CLIENT, CallToolRequestParams, CallToolResult, _ALL, mrtr=True),
    _request("prompts/list", _CLIENT, PaginatedRequestParams, ListPromptsResult, _ALL),
    _request("prompts/get", _CLIENT, GetPromptRequestParams, GetPromptResult, _ALL, mrtr=True),
    _request("resources/list", _CLIENT, PaginatedRequestParams, ListResourcesResult, _ALL),
    _request("resources/templates/list", _CLIENT, PaginatedRequestParams, ListResourceTemplatesResult, _ALL),
    _request("resources/read", _CLIENT, ReadResourceRequestParams, ReadResourceResult, _ALL, mrtr=True),
    _request("resources/subscribe", _CLIENT, SubscribeRequestParams, Result, _HANDSHAKE),
    _request("resources/unsubscribe", _CLIENT, UnsubscribeRequestParams, Result, _HANDSHAKE),
    _request("completion/complete", _CLIENT, CompleteRequestParams, CompleteResult, _ALL),
    _request("logging/setLevel", _CLIENT, SetLevelRequestParams, Result, _HANDSHAKE),
    _request(
        "subscriptions/listen",
        _CLIENT,
        SubscriptionsListenRequestParams,
        SubscriptionsListenResult,
        _STATELESS,
    ),
    # Server requests (handshake era); MRTR input requests in 2026-07-28.
    _request(
        "elicitation/create",
        _SERVER,
        ElicitRequestParams,
        ElicitResult,
        _SINCE_2025_06_18,
        input_request_versions=_STATELESS,
    ),
    _request(
        "sampling/createMessage",
        _SERVER,
        CreateMessageRequestParams,
        CreateMessageResult,
        _HANDSHAKE,
        input_request_versions=_STATELESS,
    ),
    _request("roots/list", _SERVER, RequestParams, ListRootsResult, _HANDSHAKE, input_request_versions=_STATELESS),
    # Tasks (2025-11-25, either direction).
    _request("tasks/get", _BOTH, GetTaskRequestParams, GetTaskResult, _ONLY_2025_11_25),
    _request("tasks/result", _BOTH, GetTaskPayloadRequestParams, dict, _ONLY_2025_11_25),
    _request("tasks/list", _BOTH, PaginatedRequestParams, ListTasksResult, _ONLY_2025_11_25),
    _request("tasks/cancel", _BOTH, CancelTaskRequestParams, GetTaskResult, _ONLY_2025_11_25),
    # Notifications.
    _notification("notifications/initialized", _CLIENT, NotificationParams, _HANDSHAKE),
    # In 2026-07-28 the server sends it only to end a subscriptions/listen stream.
    _notification("notifications/cancelled", _BOTH, CancelledNotificationParams, _ALL),
    _notification(
        "notifications/progress",
        _BOTH,
        ProgressNotificationParams,
        _ALL,
        sender_versions={"client": _HANDSHAKE},
    ),
    _notification("notifications/message", _SERVER, LoggingMessageNotificationParams, _ALL),
    _notification("notifications/resources/updated", _SERVER, ResourceUpdatedNotificationParams, _ALL),
    _notification("notifications/resources/list_changed", _SERVER, NotificationParams, _ALL),
    _notification("notifications/tools/list_changed", _SERVER, NotificationParams, _ALL),
    _notification("notifications/prompts/list_changed", _SERVER, NotificationParams, _ALL),
    _notification("notifications/roots/list_changed", _CLIENT, NotificationParams, _HANDSHAKE),
    _notification(
        "notifications/elicitation/complete",
        _SERVER,
        ElicitationCompleteNotificationParams,
        _ONLY_2025_11_25,
    ),
    _notification(
        "notifications/subscriptions/acknowledged",
        _SERVER,
        SubscriptionsAcknowledgedNotificationParams,
        _STATELESS,
    ),
    _notification("notifications/tasks/status", _BOTH, TaskStatusNotificationParams, _ONLY_2025_11_25),
)

METHODS: dict[str, MethodSpec] = {spec.method: spec for spec in _SPECS}


def _tasks_extension(method: str, kind: Kind, params: type, result: type | None) -> MethodSpec:
    return MethodSpec(
        method, kind, _CLIENT if kind == "request" else _SERVER, params, result, _STATELESS, extension=TASKS_EXTENSION
    )


def _skills_extension(method: str, params: type, result: type) -> MethodSpec:
    return MethodSpec(method, "request", _CLIENT, params, result, _ALL, extension=SKILLS_EXTENSION)


#: Methods an extension adds to a revision (``versions``) whose schema does not define them.
EXTENSION_METHODS: dict[str, MethodSpec] = {
    spec.method: spec
    for spec in (
        _tasks_extension("tasks/get", "request", GetTaskRequestParams, DetailedTask),
        _tasks_extension("tasks/update", "request", UpdateTaskRequestParams, Result),
        _tasks_extension("tasks/cancel", "request", CancelTaskRequestParams, Result),
        _tasks_extension("notifications/tasks", "notification", DetailedTaskNotificationParams, None),
        _skills_extension("skills/list", PaginatedRequestParams, ListSkillsResult),
        _skills_extension("skills/get", GetSkillRequestParams, GetSkillResult),
        _skills_extension("resources/directory/read", ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult),
    )
}


def spec_for(method: str) -> MethodSpec | None:
    """The table's row for ``method``, or ``None`` for a method no revision defines."""
    return METHODS.get(method)


def exists(method: str, version: str, sender: str) -> bool:
    """True when ``sender`` may send ``method`` as a JSON-RPC message in ``version``.

    MRTR input requests are not JSON-RPC messages: see :func:`is_input_request`.
    """
    spec = METHODS.get(method)
    return spec is not None and spec.sent_by(sender, version)


def is_input_request(method: str, version: str) -> bool:
    """True when ``method`` travels as an MRTR input request in ``version``."""
    spec = METHODS.get(method)
    return spec is not None and version in spec.input_request_versions


def requests_served(version: str) -> frozenset[str]:
    """Every request a server answers in ``version``: the core's and its extensions'."""
    core = (spec.method for spec in _SPECS if spec.kind == "request" and spec.sent_by("client", version))
    extended = (
        spec.method for spec in EXTENSION_METHODS.values() if spec.kind == "request" and version in spec.versions
    )
    return frozenset((*core, *extended))


def methods_for(version: str, sender: str, kind: Kind | None = None) -> list[MethodSpec]:
    """Every method ``sender`` may send in ``version`` (of ``kind``, if given)."""
    return [spec for spec in _SPECS if spec.sent_by(sender, version) and (kind is None or spec.kind == kind)]
