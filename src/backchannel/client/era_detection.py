"""Which era the server speaks, found as the spec says: probe, then fall back to the handshake.

``meet_server`` probes with ``server/discover``; a discover result (or a -32022 naming a
stateless-era version we speak) means the stateless era; any other error, or no answer within
the probe timeout, means the handshake era, so ``initialize``. ``Client.__aenter__`` calls it
once and keeps what the server said about itself (``ServerIntroduction``).

``auto`` stays in the stateless era whenever the server speaks it, even when a server's tool
turns out unable to ask its questions there: the spec makes the era a property of the server
(versioning.mdx: a dual-era client "stays modern" with a modern server) and gives a server no
way to declare that it cannot use ``InputRequiredResult`` (in 2026-07-28 that is core, not a
capability). Quietly reconnecting in the handshake era and calling the tool again would run
its work twice, so ``HandshakeEraNeeded`` names the failure instead, and the person or the
program chooses ``era="handshake"``.
"""

from __future__ import annotations

__all__ = ["EraChoice", "HandshakeEraNeeded", "ServerIntroduction", "converted", "meet_server"]

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import msgspec

from ..protocol.session import Session
from ..runtime.connection import Connection
from ..transports.http.negotiated import NegotiatedHeaders
from ..types import meta as M
from ..types.errors import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    RemoteProtocolError,
    RequestError,
    RequestTimeout,
)
from ..types.lifecycle import DiscoverResult
from ..types.tasks import TASKS_EXTENSION
from ..types.versions import LATEST_HANDSHAKE, STATELESS_VERSIONS, Era, EraChoice

R = TypeVar("R", bound=msgspec.Struct)
_PROBE_ATTEMPTS = 3  # a server that keeps refusing the versions it lists is not followed forever
# A server that tried to send one of the questions the stateless era carries in InputRequiredResult
# as a request of its own, and found no channel for it (the official Python SDK 2.3.0 says
# "Cannot send 'elicitation/create': this transport context has no back-channel ...").
_ASKED_AS_A_REQUEST = re.compile(r"elicitation/create|sampling/createMessage|roots/list")
_NO_CHANNEL = re.compile(r"back-?\s?channel|server-initiated", re.IGNORECASE)


class HandshakeEraNeeded(RequestError):
    """The server failed a stateless-era request because it tried to ask us something (a form,
    a sampling call, the roots) as a request of its own, which that era cannot carry: its tools
    ask only in the handshake era. Connect again with ``era="handshake"`` (``--era handshake``).

    The code, message and data are the server's; ``str()`` adds the advice."""

    ADVICE = (
        "this server cannot ask its questions in the stateless era (2026-07-28); "
        'connect in the handshake era: era="handshake", or --era handshake'
    )

    @classmethod
    def recognise(cls, error: RequestError, era: Era | None) -> HandshakeEraNeeded | None:
        """``error`` as a ``HandshakeEraNeeded`` when it is one, else None."""
        if era != "stateless" or isinstance(error, cls) or error.code == MISSING_REQUIRED_CLIENT_CAPABILITY:
            return None
        if not (_ASKED_AS_A_REQUEST.search(error.message) and _NO_CHANNEL.search(error.message)):
            return None
        return cls(error.message, code=error.code, data=error.data)

    @classmethod
    @contextlib.contextmanager
    def recognised(cls, era: Era | None) -> Iterator[None]:
        """Around a request sent in ``era``: its ``RequestError`` becomes a ``HandshakeEraNeeded`` when it is one."""
        try:
            yield
        except RequestError as exc:
            needed = cls.recognise(exc, era)
            if needed is None:
                raise
            raise needed from exc

    def __str__(self) -> str:
        return f"{self.message} ({self.ADVICE})"


@dataclass(slots=True)
class ServerIntroduction:
    """What the server said about itself while the era was found: copy it onto the client."""

    server_info: dict[str, Any] = field(default_factory=dict)
    server_capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
    #: The ``server/discover`` result (stateless era only).
    discover_result: DiscoverResult | None = None


async def meet_server(
    connection: Connection,
    session: Session,
    *,
    era_choice: EraChoice,
    probe_timeout: float | None,
    request_timeout: float | None,
    negotiated: NegotiatedHeaders | None,
) -> ServerIntroduction:
    """Find the era (``session`` is set to it) and what the server says about itself.

    Raises ``RemoteProtocolError`` when ``era_choice="stateless"`` and the server speaks no
    stateless-era version of ours; errors of ``initialize`` propagate as they are.
    """
    if era_choice != "handshake":
        ours = [v for v in reversed(session.config.versions) if v in STATELESS_VERSIONS]
        version: str | None = ours[0] if ours else None
        for _ in range(_PROBE_ATTEMPTS):
            if version is None:
                break
            outcome, version, introduction = await _probe(connection, session, version, probe_timeout)
            if introduction is not None:
                return introduction
            if outcome == "handshake":
                break
        if era_choice == "stateless":
            raise RemoteProtocolError("the server does not speak a stateless-era version we support")
    return await _initialize(connection, session, request_timeout, negotiated)


async def _probe(
    connection: Connection, session: Session, version: str, timeout: float | None
) -> tuple[Literal["stateless", "handshake", "retry"], str | None, ServerIntroduction | None]:
    """One ``server/discover`` attempt: stateless, handshake, or retry with the version returned.

    A -32022 naming a stateless-era version we speak means retry with it and never
    fall back (the spec's rule); any other error, or no answer in time, means the
    handshake era.
    """
    try:
        result = await connection.request("server/discover", {}, stateless_version=version, timeout=timeout)
    except RequestError as exc:
        if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            listed = supported if isinstance(supported, list) else []
            ours = [
                v for v in listed if isinstance(v, str) and v in STATELESS_VERSIONS and v in session.config.versions
            ]
            return ("retry", ours[0], None) if ours else ("handshake", None, None)
        return "handshake", None, None
    except RequestTimeout:
        return "handshake", None, None
    discovered = converted(result, DiscoverResult, "server/discover")
    offered = [v for v in discovered.supported_versions if v in STATELESS_VERSIONS]
    chosen = version if version in offered or not offered else offered[0]
    session.use_stateless(chosen)
    capabilities, meta = result.get("capabilities"), result.get("_meta")
    info = meta.get(M.SERVER_INFO) if isinstance(meta, dict) else None
    introduction = ServerIntroduction(
        server_info=info if isinstance(info, dict) else {},
        server_capabilities=capabilities if isinstance(capabilities, dict) else {},
        instructions=discovered.instructions,
        discover_result=discovered,
    )
    return "stateless", chosen, introduction


async def _initialize(
    connection: Connection, session: Session, timeout: float | None, negotiated: NegotiatedHeaders | None
) -> ServerIntroduction:
    # Ask for our newest handshake-era version: one we do not speak would be echoed back and refused.
    version = (session.config.handshake_versions or (LATEST_HANDSHAKE,))[-1]
    params = {
        "protocolVersion": version,
        "capabilities": _without_tasks_extension(session.config.capabilities),
        "clientInfo": session.config.info,
    }
    await connection.request("initialize", params, timeout=timeout)
    # Before awaiting anything: the POST of ``notifications/initialized`` takes the header.
    if negotiated is not None and session.protocol_version is not None:
        negotiated.use_protocol_version(session.protocol_version)
    return ServerIntroduction(session.peer_info, session.peer_capabilities, session.instructions)


def _without_tasks_extension(capabilities: dict[str, Any]) -> dict[str, Any]:
    """``capabilities`` for ``initialize``: the tasks extension is 2026-07-28's (2025-11-25 has its
    own tasks, which a client that only calls them need not declare), so it is left out there."""
    extensions = capabilities.get("extensions")
    if not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
        return capabilities
    rest = {name: settings for name, settings in extensions.items() if name != TASKS_EXTENSION}
    shaped = {key: value for key, value in capabilities.items() if key != "extensions"}
    return {**shaped, "extensions": rest} if rest else shaped


def converted(value: Any, kind: type[R], method: str) -> R:
    """The server's ``value`` as ``kind``; ``RemoteProtocolError`` naming the field when it does not fit."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise RemoteProtocolError(f"{method}: the server's result is malformed: {exc}") from None
