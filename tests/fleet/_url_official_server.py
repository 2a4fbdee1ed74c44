"""One worker of the fleet that ``test_fleet_url_official.py`` puts behind nginx for the official
SDK clients: ``url_fleet_server.py``'s tool and handler, with a request log that also says what
each POST carried, so the test can tell when the client has answered (and gone quiet).

    python tests/fleet/_url_official_server.py --port P --redis URL --name w0 --base URL --provider URL --log FILE

- ``connect``, the tool, its handler and arguments: ``url_fleet_server.main``'s, with this log.
- ``GET /whoami`` answers this worker's id in the shared state (where nginx's round robin stands).
- ``--log`` gets one JSON line per HTTP request as it arrives: ``{"t", "worker", "method", "path",
  "session", "rpc"}`` (``worker``: the id in the shared state; ``t``: ``time.monotonic_ns()``, one
  clock for every process of the machine; ``rpc``: for each JSON-RPC message of a POST,
  ``{"method", "id", "tool"}`` or, for the client's answer to our request, ``{"answer": id,
  "action"}``), and ``LoggedGrant``'s ``{"t", "worker", "grant"}`` for each step of the handler.
"""

from __future__ import annotations

import json
import time
from typing import Any, TextIO

from url_fleet_server import main

from backchannel import Server


def summary(body: bytes) -> list[dict[str, Any]]:
    try:
        value = json.loads(body) if body else []
    except ValueError:
        return [{"unreadable": len(body)}]
    out: list[dict[str, Any]] = []
    for message in value if isinstance(value, list) else [value]:
        if not isinstance(message, dict):
            continue
        params, result = message.get("params"), message.get("result")
        if "method" in message:
            tool = params.get("name") if isinstance(params, dict) else None
            out.append({"method": message["method"], "id": message.get("id"), "tool": tool})
        else:
            action = result.get("action") if isinstance(result, dict) else None
            out.append({"answer": message.get("id"), "action": action})
    return out


class RequestLog:
    """The worker's app, with ``GET /whoami`` and a line in the log for every request."""

    def __init__(self, app: Any, server: Server, sink: TextIO) -> None:
        self.app, self.server, self.sink = app, server, sink

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        arrived = time.monotonic_ns()
        worker = getattr(self.server.state, "worker_id", "?")
        held: list[dict[str, Any]] = []  # the body, read whole here, then handed to the app
        body = b""
        if scope["method"] == "POST" and scope["path"] == "/mcp":
            while True:
                message = await receive()
                held.append(message)
                body += message.get("body", b"")
                if message["type"] != "http.request" or not message.get("more_body"):
                    break
        query = scope.get("query_string", b"").decode("latin-1")
        headers = dict(scope["headers"])
        entry = {
            "t": arrived,
            "worker": worker,
            "method": scope["method"],
            "path": scope["path"] + ("?" + query if query else ""),
            "session": headers.get(b"mcp-session-id", b"").decode("latin-1") or None,
            "rpc": summary(body),
        }
        self.sink.write(json.dumps(entry) + "\n")
        self.sink.flush()
        if scope["path"] == "/whoami":
            answer = worker.encode()
            start = [(b"content-type", b"text/plain"), (b"content-length", str(len(answer)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": start})
            await send({"type": "http.response.body", "body": answer})
            return

        async def replay() -> Any:
            return held.pop(0) if held else await receive()

        await self.app(scope, replay, send)


if __name__ == "__main__":
    main(RequestLog, prog="_url_official_server.py", name="url-official")
