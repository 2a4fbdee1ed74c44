"""A loopback-only HTTP side listener, started on demand in the running event loop.

A stdio server has no HTTP app, and an HTTP server may not know the address
browsers reach it by; yet URL-mode elicitation needs a page the person can open.
``LoopbackListener(app).start()`` binds ``127.0.0.1`` on a free port (never any
other interface), serves ``app`` there with ``run_http``'s own HTTP/1.1 server
(``serving.HttpServer``, no lifespan events) as a task of the current loop, and gives
its base URL; ``stop()`` ends it. The server is imported only by ``start()``: a server
that never starts a listener loads no HTTP stack. The listener installs no signal
handlers and leaves the process's logging configuration alone.

Binding to loopback keeps other machines out, not other web sites: a page elsewhere
can point a name of its own at 127.0.0.1 (DNS rebinding) and talk to the listener
from the person's browser. So every request must name the listener by a loopback
name in ``Host`` (``127.0.0.1``, ``localhost`` or ``[::1]``, any port); any other Host
gets a 403 with a JSON-RPC error body, as on the MCP endpoint, and never reaches ``app``.
"""

from __future__ import annotations

__all__ = ["LoopbackListener"]

import asyncio
import contextlib
import logging
import socket
from typing import Any

from ...framing.http import LOCALHOST_HOSTS, check_host_and_origin
from ..asgi import Receive, Scope, Send, header_map, send_bytes

logger = logging.getLogger("backchannel.http.loopback")

LOOPBACK = "127.0.0.1"


class LoopbackListener:
    """``app`` (ASGI) served on ``http://127.0.0.1:<free port>`` until ``stop()``, to
    requests whose ``Host`` is a loopback name only."""

    def __init__(self, app: Any, *, startup_timeout: float = 10.0, shutdown_timeout: float = 5.0) -> None:
        self.app = app
        self.startup_timeout = startup_timeout
        self.shutdown_timeout = shutdown_timeout
        self.port: int | None = None
        self._socket: socket.socket | None = None
        self._server: Any = None
        self._task: asyncio.Task[int] | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the loopback listener is not running")
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> str:
        """Bind, start serving, and return the base URL once connections are accepted."""
        if self.running:
            return self.base_url
        from .serving import HttpServer

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server = HttpServer(self._guarded, lifespan=False, grace=self.shutdown_timeout)
        task: asyncio.Task[int] | None = None
        try:
            sock.bind((LOOPBACK, 0))
            sock.setblocking(False)
            task = asyncio.get_running_loop().create_task(
                server.serve(sock=sock, signals=False), name="backchannel-loopback"
            )
            async with asyncio.timeout(self.startup_timeout):
                while not server.started:
                    if task.done():
                        task.result()  # a failed start raises here
                        raise RuntimeError("the loopback listener stopped while starting")
                    await asyncio.sleep(0.005)
        except BaseException:
            if task is not None:
                server.stop()
                server.stop()  # (at once)
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            sock.close()
            raise
        self._socket, self._server, self._task = sock, server, task
        self.port = sock.getsockname()[1]
        logger.info("serving out-of-band pages on %s", self.base_url)
        return self.base_url

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            # Origin is left to the app: a form posted from a no-referrer page says
            # ``Origin: null``, and the pages check the poster themselves.
            headers = header_map(scope)
            rejection = check_host_and_origin(headers, allowed_hosts=LOCALHOST_HOSTS, allowed_origins=("*",))
            if rejection is not None:
                logger.info("refused a request for Host %r", headers.get("host"))
                await send_bytes(send, rejection.status, rejection.body(), rejection.headers)
                return
        await self.app(scope, receive, send)

    async def stop(self) -> None:
        """Stop serving and close the socket; does nothing when not running."""
        server, task, sock = self._server, self._task, self._socket
        self._server = self._task = self._socket = None
        try:
            if task is not None:
                server.stop()
                done, _ = await asyncio.wait({task}, timeout=self.shutdown_timeout + 1.0)
                if not done:
                    server.stop()  # the second time: at once
                    task.cancel()
                    await asyncio.wait({task}, timeout=1.0)
                elif not task.cancelled() and task.exception() is not None:
                    logger.error("the loopback listener failed", exc_info=task.exception())
        except asyncio.CancelledError:
            if task is not None:
                task.cancel()
            raise
        finally:
            if sock is not None:
                sock.close()
            if self.port is not None:
                logger.info("stopped serving on http://%s:%d", LOOPBACK, self.port)
            self.port = None
