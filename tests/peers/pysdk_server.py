"""A stdio MCP server built with the official Python SDK (``mcp==2.3.0``), used as a test peer.

Run it as ``python tests/peers/pysdk_server.py [--page-size N]``. It serves both protocol
eras over stdio: the SDK decides per connection from the first request (``initialize`` ->
handshake era; a request whose ``_meta`` carries ``io.modelcontextprotocol/protocolVersion``
-> 2026-07-28 per-request era).

Exposed surface (our own server exposes the same names so ``pysdk_client.py`` can drive both):

* tools: ``echo(text) -> str`` (unstructured: text content only), ``add(a, b) -> int``
  (structured: ``{"result": a + b}``), ``weather(city) -> WeatherReport`` (structured,
  pydantic model), ``fail(message)`` (raises ``ToolError`` -> ``isError: true``), and
  ``t00`` .. ``t24`` (filler tools, each returns its own name).
* prompts: ``greet(name)`` and ``compare(left, right)``.
* resources: static ``res://hello`` (text) and template ``res://items/{id}``.

Pagination: MCPServer 2.3.0 does NOT paginate any list (its handlers ignore the cursor and
return everything). ``--page-size N`` (N > 0) makes this peer paginate ``tools/list`` with
an opaque cursor so a client's cursor walk can be exercised; the default (0) keeps the
SDK's unpaginated behaviour (29 tools in one page).

``--http PORT`` serves Streamable HTTP (``MCPServer.run("streamable-http")``, uvicorn) on
``http://127.0.0.1:PORT/mcp`` instead of stdio; the SDK routes a POST whose
``MCP-Protocol-Version`` header is a non-handshake version to its 2026-07-28 handler, and
everything else to its session-based handshake-era transport.
"""

from __future__ import annotations

import argparse
import base64
import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ListToolsResult, PaginatedRequestParams
from pydantic import BaseModel, Field

FILLER_TOOLS = [f"t{i:02d}" for i in range(25)]


class WeatherReport(BaseModel):
    city: str
    temperature_c: float = Field(description="Temperature in degrees Celsius")
    conditions: str
    humidity_pct: int


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset}).encode()).decode()


def _decode_cursor(cursor: str) -> int:
    try:
        offset = json.loads(base64.urlsafe_b64decode(cursor.encode()))["o"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"invalid cursor {cursor!r}") from exc
    if not isinstance(offset, int) or offset < 0:
        raise ValueError(f"invalid cursor {cursor!r}")
    return offset


class PagingMCPServer(MCPServer[Any]):
    """MCPServer whose tools/list returns pages of ``page_size`` tools (0 = no paging)."""

    def __init__(self, *args: Any, page_size: int = 0, **kwargs: Any) -> None:
        self.page_size = page_size
        super().__init__(*args, **kwargs)

    async def _handle_list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        tools = await self.list_tools()
        if self.page_size <= 0:
            return ListToolsResult(tools=tools)
        cursor = params.cursor if params is not None else None
        try:
            start = _decode_cursor(cursor) if cursor else 0
        except ValueError as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from exc
        end = start + self.page_size
        next_cursor = _encode_cursor(end) if end < len(tools) else None
        return ListToolsResult(tools=tools[start:end], next_cursor=next_cursor)


def _filler(name: str) -> Any:
    def filler() -> str:
        return name

    return filler


def build_server(page_size: int = 0) -> MCPServer[Any]:
    server = PagingMCPServer("pysdk-peer", version="2.3.0-peer", page_size=page_size, log_level="WARNING")

    @server.tool(description="Echo the text back.", structured_output=False)
    def echo(text: str) -> str:
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="A canned weather report (structured output from a pydantic model).")
    def weather(city: str) -> WeatherReport:
        return WeatherReport(city=city, temperature_c=21.5, conditions="sunny", humidity_pct=40)

    @server.tool(description="Always fails with the given message (isError result).", structured_output=False)
    def fail(message: str = "boom") -> str:
        raise ToolError(message)

    for tool_name in FILLER_TOOLS:
        description = f"Filler tool {tool_name}."
        server.add_tool(_filler(tool_name), name=tool_name, description=description, structured_output=False)

    @server.prompt(description="Greet someone by name.")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    @server.prompt(description="Compare two things.")
    def compare(left: str, right: str) -> str:
        return f"Compare {left} with {right}."

    @server.resource("res://hello", name="hello", description="A static greeting.", mime_type="text/plain")
    def hello() -> str:
        return "Hello, world!"

    @server.resource("res://items/{id}", name="item", description="An item by id.", mime_type="text/plain")
    def item(id: str) -> str:
        return f"item {id}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--page-size", type=int, default=0, help="paginate tools/list (0 = SDK default: off)")
    parser.add_argument("--http", type=int, metavar="PORT", default=None, help="serve HTTP on 127.0.0.1:PORT")
    ns = parser.parse_args()
    server = build_server(ns.page_size)
    if ns.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=ns.http)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
