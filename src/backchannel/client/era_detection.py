"""Which era the server speaks, found as the spec says: probe, then fall back to the handshake.

``meet_server`` probes with ``server/discover``; a discover result (or a -32022 naming a
stateless-era version we speak) means the stateless era; any other error, or no answer within
the probe timeout, means the handshake era, so ``initialize``. ``Client.__aenter__`` calls it
once and keeps what the server said about itself (``ServerIntroduction``).

Two rules keep the answer independent of how busy the machine is (issue #27):

- **The probe's clock starts when the server can answer.** Over stdio it starts once the server
  process has read the probe, which we learn from the kernel (``Transport.until_read``: the
  bytes still unread in its stdin). Reading is the one sound sign that the process is up: a
  write into a pipe completes before the child exists as a reader, and ``ping`` is no probe
  (the stateless era has none, and handshake-era servers need not answer it before
  ``initialize``). So a server that takes 4 s to start (a loaded machine, a big import) is
  still found to speak 2026-07-28 within a 3 s ``probe_timeout``. The wait for that read is
  bounded by ``request_timeout``; where the transport cannot tell (HTTP, memory) the clock
  starts when the probe is sent, as before.
- **One probe, one answer, one decision.** A probe that goes unanswered is cancelled, but its
  answer may still come, and a server like the official Python SDK's takes the probe for its
  era and then refuses ``initialize``. So ``initialize`` never follows an unanswered probe on
  the same stream: a spawned server is stopped and spawned again (``Transport.respawns``) and
  ``initialize`` goes to the new process, which has seen no probe; over HTTP each request has
  its own response, so a late answer cannot meet it. (A transport that can do neither, an
  in-memory pair or one of your own, falls back on the same stream as the spec describes.)

Every failure says what happened: "no answer to server/discover within 3 s of the server
reading it", the error the server answered with, or the versions it named.

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
import logging
import re
from collections.abc import Awaitable, Callable, Iterator
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
logger = logging.getLogger("backchannel.client")
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
    start_afresh: Callable[[], Awaitable[tuple[Connection, Session]]] | None = None,
) -> ServerIntroduction:
    """Find the era (``session`` is set to it) and what the server says about itself.

    Raises ``RemoteProtocolError`` when ``era_choice="stateless"`` and the server answered that
    it speaks no stateless-era version of ours, ``RequestTimeout`` when it did not answer (or
    the process read nothing within ``request_timeout``); errors of ``initialize`` propagate as
    they are. ``start_afresh`` (a spawned server's) stops the server and starts it again, and
    gives the new connection and session: called when the probe went unanswered, before
    ``initialize`` (see the module docstring).
    """
    if era_choice != "handshake":
        ours = [v for v in reversed(session.config.versions) if v in STATELESS_VERSIONS]
        probe = _Probe("handshake", said="this client speaks no stateless-era version")
        version: str | None = ours[0] if ours else None
        for _ in range(_PROBE_ATTEMPTS):
            if version is None:
                break
            probe = await _probe(connection, session, version, probe_timeout, request_timeout)
            if probe.introduction is not None:
                return probe.introduction
            if probe.outcome != "retry":
                break
            version = probe.version
        else:
            probe = _Probe("handshake", said=f"the server refused {_PROBE_ATTEMPTS} times the versions it named")
        if era_choice == "stateless":
            failure = RequestTimeout if probe.outcome == "unanswered" else RemoteProtocolError
            raise failure(f"cannot use the stateless era (2026-07-28): {probe.said}")
        if (
            probe.outcome == "unanswered"
            and not getattr(connection.transport, "routes_by_request", False)
            and start_afresh is not None
        ):
            logger.info("%s; starting the server again for the handshake era", probe.said)
            connection, session = await start_afresh()
    return await _initialize(connection, session, request_timeout, negotiated)


@dataclass(slots=True)
class _Probe:
    """What one ``server/discover`` attempt found: the era (with what the server said about
    itself), a version to retry with, an error answer (``handshake``) or none (``unanswered``)."""

    outcome: Literal["stateless", "retry", "handshake", "unanswered"]
    version: str | None = None
    introduction: ServerIntroduction | None = None
    #: What happened, for a person: "no answer to server/discover within 3 s of the server reading it".
    said: str = ""


async def _probe(
    connection: Connection, session: Session, version: str, timeout: float | None, start_bound: float | None
) -> _Probe:
    """One ``server/discover`` attempt; its clock starts once the server has read it (at most
    ``start_bound`` seconds after it was sent, where the transport can tell).

    A -32022 naming a stateless-era version we speak means retry with it and never
    fall back (the spec's rule); any other error, or no answer in time, means the
    handshake era.
    """
    read: list[bool | None] = []

    async def read_by_server() -> None:
        read.append(await connection.transport.until_read(start_bound))

    try:
        result = await connection.request(
            "server/discover", {}, stateless_version=version, timeout=timeout, timeout_from=read_by_server
        )
    except RequestError as exc:
        if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            listed = supported if isinstance(supported, list) else []
            ours = [
                v for v in listed if isinstance(v, str) and v in STATELESS_VERSIONS and v in session.config.versions
            ]
            if ours:
                return _Probe("retry", version=ours[0])
            named = ", ".join(str(v) for v in listed) or "none"
            return _Probe("handshake", said=f"it supports none of our stateless-era versions (it named: {named})")
        return _Probe("handshake", said=f"it answered server/discover with error {exc.code}: {exc.message}")
    except RequestTimeout:
        if read == [False] and start_bound is not None:
            raise RequestTimeout(f"the server process read none of its input within {start_bound:g} s") from None
        after = " of the server reading it" if read == [True] else ""
        return _Probe("unanswered", said=f"no answer to server/discover within {timeout:g} s{after}")
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
    return _Probe("stateless", version=chosen, introduction=introduction)


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
