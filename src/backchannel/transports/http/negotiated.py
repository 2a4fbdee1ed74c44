"""What the client layer tells an HTTP transport, so the transport never reads it out of results.

Streamable HTTP repeats in headers some of what the session settled: the
handshake-era version goes in ``MCP-Protocol-Version`` on every request after
``initialize``, and in the stateless era (SEP-2243) a ``tools/call`` mirrors the
arguments its tool annotated with ``x-mcp-header`` into ``Mcp-Param-*`` headers.
The client reads the ``initialize`` and ``tools/list`` results; a transport that
implements ``NegotiatedHeaders`` is handed what it needs through these two methods.

This module imports no HTTP stack, so ``backchannel.client`` can name the
interface without loading httpx2.
"""

from __future__ import annotations

__all__ = ["NegotiatedHeaders", "ParamHeaders"]

import abc
from collections.abc import Mapping

#: ``x-mcp-header`` name -> the property path of the argument it mirrors
#: (what ``framing.mirrored_headers.parse_x_mcp_headers`` returns for one tool).
ParamHeaders = Mapping[str, tuple[str, ...]]


class NegotiatedHeaders(abc.ABC):
    """A transport that puts what the session negotiated into its request headers."""

    @abc.abstractmethod
    def use_protocol_version(self, version: str) -> None:
        """Send ``version`` as ``MCP-Protocol-Version`` on every later handshake-era request.

        Call it with the version of the ``initialize`` result as soon as that result is in,
        before awaiting anything else: ``notifications/initialized`` is queued in the same
        turn, and its POST takes its headers when it leaves, which is after this call.
        """

    @abc.abstractmethod
    def use_tool_headers(self, tool: str, headers: ParamHeaders | None) -> None:
        """Mirror ``headers`` on every later stateless-era ``tools/call`` of ``tool``; None forgets them.

        Call it for each tool of a stateless-era ``tools/list`` page whose annotations are
        valid, and with None for each tool left out of the list because they are not.
        """
