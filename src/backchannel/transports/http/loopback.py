"""A loopback-only HTTP side listener, started on demand in the running event loop.

A stdio server has no HTTP app, and an HTTP server may not know the address
browsers reach it by; yet URL-mode elicitation needs a page the person can open.
``LoopbackListener(app).start()`` binds ``127.0.0.1`` on a free port (never any
other interface), serves ``app`` there with uvicorn as a task of the current loop,
and gives its base URL; ``stop()`` ends it. uvicorn is imported only by ``start()``:
a server that never starts a listener loads no HTTP stack. The listener installs
no signal handlers and leaves the process's logging configuration alone.
"""

from __future__ import annotations

__all__ = ["LoopbackListener"]

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger("backchannel.http.loopback")

LOOPBACK = "127.0.0.1"


class LoopbackListener:
    """``app`` (ASGI) served on ``http://127.0.0.1:<free port>`` until ``stop()``."""

    def __init__(self, app: Any, *, startup_timeout: float = 10.0, shutdown_timeout: float = 5.0) -> None:
        self.app = app
        self.startup_timeout = startup_timeout
        self.shutdown_timeout = shutdown_timeout
        self.port: int | None = None
        self._socket: socket.socket | None = None
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

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
        import uvicorn

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # the host process keeps its own signal handling
                yield

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server: _Server | None = None
        task: asyncio.Task[None] | None = None
        try:
            sock.bind((LOOPBACK, 0))
            sock.setblocking(False)
            config = uvicorn.Config(
                self.app,
                lifespan="off",
                log_config=None,
                access_log=False,
                server_header=False,
                timeout_graceful_shutdown=1,
            )
            server = _Server(config)
            task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]), name="backchannel-loopback")
            async with asyncio.timeout(self.startup_timeout):
                while not server.started:
                    if task.done():
                        task.result()  # a failed start raises here
                        raise RuntimeError("the loopback listener stopped while starting")
                    await asyncio.sleep(0.005)
        except BaseException:
            if server is not None and task is not None:
                server.should_exit = True
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            sock.close()
            raise
        self._socket, self._server, self._task = sock, server, task
        self.port = sock.getsockname()[1]
        logger.info("serving out-of-band pages on %s", self.base_url)
        return self.base_url

    async def stop(self) -> None:
        """Stop serving and close the socket; does nothing when not running."""
        server, task, sock = self._server, self._task, self._socket
        self._server = self._task = self._socket = None
        try:
            if task is not None:
                server.should_exit = True
                done, _ = await asyncio.wait({task}, timeout=self.shutdown_timeout)
                if not done:
                    server.force_exit = True
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
