"""The handshake era's ``initialize`` exchange, read as data.

Pure functions the session calls on both sides: the server reads the client's
``initialize`` params, the client reads the server's result. They check the peer's
values and say what was agreed; the session makes the state moves (``states.py``).

A server keeps each client's ``clientInfo`` and ``capabilities`` for the life of its
session, and the clients of one deployment mostly send the same ones: sessions whose
client sent equal values share one copy (``shared_copy``), so read them, never change them.
"""

from __future__ import annotations

__all__ = ["Agreed", "read_initialize_params", "read_initialize_result", "shared_copy"]

from dataclasses import dataclass
from typing import Any

from ..types.errors import InvalidParams, UnsupportedProtocolVersion
from ..types.versions import negotiate_handshake, newer_first


@dataclass(frozen=True, slots=True, kw_only=True)
class Agreed:
    """What one side learned of the other in ``initialize``."""

    version: str
    peer_info: dict[str, Any]
    peer_capabilities: dict[str, Any]
    instructions: str | None = None


#: The shared copies: a bounded number, each small (a peer choosing what the server keeps
#: must not choose how much). The key is the value's ``repr``, which tells ``1`` from ``1.0``
#: and ``True`` (all equal in Python) as JSON does.
_SHARED: dict[str, dict[str, Any]] = {}
_SHARED_MAX = 256
_SHARED_MAX_CHARS = 2048


def shared_copy(value: dict[str, Any]) -> dict[str, Any]:
    """The copy of ``value`` (a decoded JSON object) that sessions share, ``value`` itself
    when none is shared yet (it becomes the shared one while there is room) or it is large."""
    key = repr(value)
    if len(key) > _SHARED_MAX_CHARS:
        return value
    shared = _SHARED.get(key)
    if shared is not None:
        return shared
    if len(_SHARED) < _SHARED_MAX:
        _SHARED[key] = value
    return value


def read_initialize_params(params: dict[str, Any], supported: tuple[str, ...], speaks: tuple[str, ...] = ()) -> Agreed:
    """Server: the client's ``initialize`` params, and the version to answer with (the
    client's when we speak it, else our newest: the counter-offer).

    Raises ``InvalidParams`` (-32602) for a version or capabilities of the wrong type, and
    ``UnsupportedProtocolVersion`` (-32022) naming ``speaks`` (every version the server speaks)
    when it speaks no handshake-era version at all (2026-07-28 versioning.mdx, "Backward
    Compatibility": such a server SHOULD name its versions in any error it returns to
    ``initialize``).
    """
    version = params.get("protocolVersion")
    if type(version) is not str:
        raise InvalidParams("initialize: protocolVersion must be a string")
    if not supported:
        names = newer_first(speaks)
        error = UnsupportedProtocolVersion(version, names)
        error.message = (
            f"this server speaks only the stateless era ({', '.join(names)}), which has no initialize: "
            "send each request with its version in _meta"
        )
        raise error
    capabilities = params.get("capabilities", {})
    if type(capabilities) is not dict:
        raise InvalidParams("initialize: capabilities must be an object")
    client_info = params.get("clientInfo", {})
    agreed = negotiate_handshake(version, supported)
    return Agreed(
        version=supported[supported.index(agreed)],  # our own string, not the copy decoded from the request
        peer_info=shared_copy(client_info) if type(client_info) is dict else {},
        peer_capabilities=shared_copy(capabilities),
    )


def read_initialize_result(result: dict[str, Any], supported: tuple[str, ...]) -> Agreed | UnsupportedProtocolVersion:
    """Client: the server's ``initialize`` result, or the error that fails the handshake when
    the server offered a version we do not speak. Send ``notifications/initialized`` after it."""
    version = result.get("protocolVersion")
    if version not in supported:
        error = UnsupportedProtocolVersion(version, newer_first(supported))
        error.message = f"the server offered protocol version {version!r}, which this client does not speak"
        return error
    assert isinstance(version, str)
    capabilities = result.get("capabilities")
    info = result.get("serverInfo")
    instructions = result.get("instructions")
    return Agreed(
        version=version,
        peer_info=info if type(info) is dict else {},
        peer_capabilities=capabilities if type(capabilities) is dict else {},
        instructions=instructions if isinstance(instructions, str) else None,
    )
