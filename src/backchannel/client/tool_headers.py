"""SEP-2243 on the client: read each listed tool's ``x-mcp-header`` annotations, drop the broken ones.

A client on Streamable HTTP mirrors the annotated arguments of a stateless-era
``tools/call`` into ``Mcp-Param-*`` headers, and MUST leave out of ``tools/list``
every tool whose annotations break the rules (2026-07-28 tools.mdx §x-mcp-header),
logging why. The client reads the result here and hands the transport what it must
mirror (``NegotiatedHeaders.use_tool_headers``); the transport never reads results.
"""

from __future__ import annotations

__all__ = ["keep_tools_with_valid_headers"]

import logging
from typing import Any

from ..framing.mirrored_headers import XMcpHeaderError, parse_x_mcp_headers
from ..transports.http.negotiated import NegotiatedHeaders

# The rule belongs to the HTTP transport, so its warnings go where the transport's do.
logger = logging.getLogger("backchannel.http")


def keep_tools_with_valid_headers(result: dict[str, Any], transport: NegotiatedHeaders) -> None:
    """Tell ``transport`` each tool's header annotations, and remove from ``result["tools"]``
    (a stateless-era ``tools/list`` page, changed in place) every tool whose annotations are invalid."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        return
    kept: list[Any] = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str):
            kept.append(tool)
            continue
        try:
            headers = parse_x_mcp_headers(tool.get("inputSchema"))
        except XMcpHeaderError as exc:
            logger.warning("leaving tool %r out of tools/list: %s", name, exc)
            transport.use_tool_headers(name, None)
            continue
        transport.use_tool_headers(name, headers)
        kept.append(tool)
    result["tools"] = kept
