"""Which era the server speaks, found as the spec says: probe, then fall back to the handshake.

``meet_server`` probes with ``server/discover``; a discover result (or a -32022 naming a
stateless-era version we speak) means the stateless era; any other error, or no answer within
the probe timeout, means the handshake era, so ``initialize``. ``Client.__aenter__`` calls it
once and keeps what the server said about itself (``ServerIntroduction``).
"""

from __future__ import annotations

__all__ = ["EraChoice", "ServerIntroduction", "converted", "meet_server"]

from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import msgspec

from ..protocol.session import Session
from ..runtime.connection import Connection
from ..transports.http.negotiated import NegotiatedHeaders
from ..types import meta as M
from ..types.errors import UNSUPPORTED_PROTOCOL_VERSION, RemoteProtocolError, RequestError, RequestTimeout
from ..types.lifecycle import DiscoverResult
from ..types.versions import LATEST_HANDSHAKE, STATELESS_VERSIONS, EraChoice

R = TypeVar("R", bound=msgspec.Struct)
_PROBE_ATTEMPTS = 3  # a server that keeps refusing the versions it lists is not followed forever


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
        "capabilities": session.config.capabilities,
        "clientInfo": session.config.info,
    }
    await connection.request("initialize", params, timeout=timeout)
    # Before awaiting anything: the POST of ``notifications/initialized`` takes the header.
    if negotiated is not None and session.protocol_version is not None:
        negotiated.use_protocol_version(session.protocol_version)
    return ServerIntroduction(session.peer_info, session.peer_capabilities, session.instructions)


def converted(value: Any, kind: type[R], method: str) -> R:
    """The server's ``value`` as ``kind``; ``RemoteProtocolError`` naming the field when it does not fit."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise RemoteProtocolError(f"{method}: the server's result is malformed: {exc}") from None
