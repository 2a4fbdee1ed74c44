"""The stateless-era envelope: what every 2026-07-28 request carries and every result gets.

Pure functions over JSON values, used by the session. A request of that era
names its version, the client's capabilities and (optionally) the client and a
log level in ``params._meta``; its result carries ``resultType`` and the
server's identity.
"""

from __future__ import annotations

__all__ = [
    "StatelessEnvelope",
    "handshake_result",
    "read_stateless_meta",
    "stamp_stateless_result",
    "stateless_capabilities",
    "stateless_meta",
]

from dataclasses import dataclass
from typing import Any

from ..types import meta as M
from ..types.errors import InvalidParams, UnsupportedProtocolVersion
from ..types.logging import LOG_LEVEL_RANK
from ..types.versions import era_of, newer_first


@dataclass(frozen=True, slots=True)
class StatelessEnvelope:
    version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None


def read_stateless_meta(meta: dict[str, Any], supported: tuple[str, ...]) -> StatelessEnvelope:
    """Check a stateless-era request's ``_meta``.

    Raises ``UnsupportedProtocolVersion`` (-32022, listing ``supported`` newest
    first) or ``InvalidParams`` (-32602) naming the key that is missing or wrong.
    """
    # Every value here comes from the peer: check its JSON type before hashing or comparing it.
    # A version of another JSON type is one we don't support either: -32022 tells the client
    # which ones we do. (The type check comes first so nothing hashes a list or an object.)
    version = meta[M.PROTOCOL_VERSION]
    if type(version) is not str or version not in supported or era_of(version) != "stateless":
        raise UnsupportedProtocolVersion(version, newer_first(supported))
    capabilities = meta.get(M.CLIENT_CAPABILITIES)
    if type(capabilities) is not dict:
        raise InvalidParams(f"params._meta[{M.CLIENT_CAPABILITIES!r}] is required and must be an object")
    client_info = meta.get(M.CLIENT_INFO)
    if client_info is not None and type(client_info) is not dict:
        raise InvalidParams(f"params._meta[{M.CLIENT_INFO!r}] must be an object")
    level = meta.get(M.LOG_LEVEL)
    if level is not None and (type(level) is not str or level not in LOG_LEVEL_RANK):
        raise InvalidParams(f"params._meta[{M.LOG_LEVEL!r}] is not a logging level: {level!r}")
    return StatelessEnvelope(version, capabilities, client_info, level)


def stateless_meta(version: str, capabilities: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    """The ``_meta`` keys a client puts on every stateless-era request."""
    return {
        M.PROTOCOL_VERSION: version,
        M.CLIENT_CAPABILITIES: stateless_capabilities(capabilities),
        M.CLIENT_INFO: info,
    }


def stateless_capabilities(capabilities: dict[str, Any]) -> dict[str, Any]:
    """Client capabilities in their 2026-07-28 shape: ``roots`` has no ``listChanged`` there
    and ``tasks`` left the core, so neither is declared to a stateless-era server."""
    if "roots" not in capabilities and "tasks" not in capabilities:
        return capabilities
    shaped = {key: value for key, value in capabilities.items() if key != "tasks"}
    if "roots" in shaped:
        shaped["roots"] = {key: value for key, value in shaped["roots"].items() if key != "listChanged"}
    return shaped


def stamp_stateless_result(result: dict[str, Any], server_info: dict[str, Any]) -> dict[str, Any]:
    """``result`` with ``resultType`` (default ``"complete"``) and the server's identity in ``_meta``.

    A handler's own values win; the input is not modified.
    """
    meta = result.get("_meta")
    if "resultType" in result and meta is not None and M.SERVER_INFO in meta:
        return result
    return {"resultType": "complete", **result, "_meta": {M.SERVER_INFO: server_info, **(meta or {})}}


def handshake_result(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without the stateless era's ``resultType``, which older clients do not expect."""
    if "resultType" not in result:
        return result
    return {key: value for key, value in result.items() if key != "resultType"}
