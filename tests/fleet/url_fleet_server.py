"""One worker of the fleet that ``test_fleet_url_browser.py`` puts behind nginx: the same server in
every worker process, each on its own port, all sharing one Redis (``Server.run_http(redis=URL)``),
and all serving the URL-flow pages under the one public address, nginx's (``--base``).

    python tests/fleet/url_fleet_server.py --port P --redis URL --name w0 --base URL --provider URL --log FILE

- ``connect``, the tool: ``ctx.elicit_url(..., flow=Grant)``; ``"<action>@<worker>"``.
- ``Grant`` (``_url_fleet.py``) sends the browser to ``--provider`` (the test's stand-in) with a
  challenge made from a verifier it keeps in ``flow.data``; ``finish`` takes only the code made
  for that verifier, so it succeeds only in the flow's owner.
- ``GET /whoami`` (outside the MCP endpoint) answers this worker's id in the shared state, so the
  test can tell where nginx's round robin stands.
- ``--log`` gets one JSON line per HTTP request as it arrives (``{"t", "worker", "method", "path"}``,
  ``worker`` being the id in the shared state, ``t`` ``time.monotonic_ns()``, one clock for every
  process of the machine) and one per step of the handler (``{"t", "worker", "grant"}``, ``grant``
  being ``"begin"`` or ``"finish"``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from _url_fleet import Grant

from backchannel import Context, Server
from backchannel.server.url_elicitation import UrlElicitations, UrlFlow


class LoggedGrant(Grant):
    def __init__(self, server: Server, provider: str, sink: TextIO) -> None:
        super().__init__(lambda: UrlElicitations.of(server), provider)
        self.server, self.sink = server, sink

    def _note(self, step: str, flow: UrlFlow) -> None:
        entry = {"t": time.monotonic_ns(), "worker": getattr(self.server.state, "worker_id", "?"), "grant": step}
        self.sink.write(json.dumps(entry) + "\n")
        self.sink.flush()

    async def begin(self, flow: UrlFlow) -> str:
        target = await super().begin(flow)
        self._note("begin", flow)
        return target

    async def finish(self, flow: UrlFlow, params: Any) -> None:
        await super().finish(flow, params)
        self._note("finish", flow)


class Logged:
    """The worker's app, with ``GET /whoami`` and a line in the log for every request."""

    def __init__(self, app: Any, server: Server, sink: TextIO) -> None:
        self.app, self.server, self.sink = app, server, sink

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        worker = getattr(self.server.state, "worker_id", "?")
        query = scope.get("query_string", b"").decode("latin-1")
        path = scope["path"] + ("?" + query if query else "")
        entry = {"t": time.monotonic_ns(), "worker": worker, "method": scope["method"], "path": path}
        self.sink.write(json.dumps(entry) + "\n")
        self.sink.flush()
        if scope["path"] == "/whoami":
            body = worker.encode()
            headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


class LoggedServer(Server):
    sink: TextIO
    log: Callable[[Any, Server, TextIO], Any]

    def http_app(self, path: str = "/mcp", **options: Any) -> Any:
        return self.log(super().http_app(path, **options), self, self.sink)


def main(
    log: Callable[[Any, Server, TextIO], Any] = Logged, prog: str = "url_fleet_server.py", name: str = "url-fleet"
) -> None:
    """The worker, ``log`` wrapping its app as ``Logged`` does; ``_url_official_server.py`` runs it
    with a log that says more."""
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis", required=True, help="redis://... shared by every worker")
    parser.add_argument("--name", required=True, help="this worker's name, as the tool reports it")
    parser.add_argument("--base", required=True, help="the fleet's public address (nginx)")
    parser.add_argument("--provider", required=True, help="the stand-in provider's authorization URL")
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args()
    server = LoggedServer(name)
    server.sink, server.log = args.log.open("a", encoding="utf-8"), log
    server.url_elicitations = UrlElicitations(args.base)
    grant = LoggedGrant(server, args.provider, server.sink)

    @server.tool()
    async def connect(ctx: Context) -> str:
        outcome = await ctx.elicit_url("Connect your account.", flow=grant)
        return f"{outcome.action}@{args.name}"

    server.run_http("127.0.0.1", args.port, "/mcp", redis=args.redis)


if __name__ == "__main__":
    main()
