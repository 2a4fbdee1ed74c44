"""``python serve.py PORT BUNDLE``: one origin on 127.0.0.1:PORT serving the ext-apps test host
(``/``: index.html, ``/host.js``: the esbuild ``BUNDLE`` of host.mjs) and, at ``/mcp``, the MCP
server of ``tests/apps/apps_server.py`` (Streamable HTTP, both eras), so that the page's official
TypeScript client reaches it without CORS."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import uvicorn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from apps_server import server  # noqa: E402


def main() -> None:
    port, bundle = int(sys.argv[1]), Path(sys.argv[2])
    mcp = server.http_app()
    pages = {"/": (HERE / "index.html", "text/html"), "/host.js": (bundle, "text/javascript")}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/mcp"):
            await mcp(scope, receive, send)
            return
        found = pages.get(scope["path"])
        status, body, kind = (200, found[0].read_bytes(), found[1]) if found else (404, b"not found", "text/plain")
        headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
