"""``run_http``'s server: the app's lifespan, a listening socket of ``h1.Connection``s, signals, a graceful stop.

No uvicorn on this path: its package loads its command line, reload supervisors and file
watchers with it (26 ms of CPU at every start, ``docs/performance.md``), and the guards of
``connection.py`` would have to reach into its private protocol class. The server here is small:

- ``lifespan.startup`` runs before the port is opened; a failure is said on stderr and
  ``serve`` returns 3 with the port never opened. So does a port already in use.
- SIGTERM or SIGINT stops it gracefully: no more accepting, idle kept-alive connections
  close, the requests being answered get ``GRACE`` seconds to finish, the rest are told the
  client left and their connections close; then ``lifespan.shutdown`` (which ends the
  sessions and flushes telemetry), and ``serve`` returns 0. A second signal stops it at once.
"""

from __future__ import annotations

__all__ = ["GRACE", "HttpServer"]

import asyncio
import logging
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

from ..asgi import Message
from ..limits import BODY_TIMEOUT, HEADER_TIMEOUT, MAX_CONNECTIONS, RETRY_AFTER, connection_cap
from .connection import KEEP_ALIVE, Shared

logger = logging.getLogger("backchannel.http")

#: Seconds the requests under way get to finish once a stop is asked for. Open SSE streams
#: (a session's GET stream) never finish by themselves, so the wait must end; 3 s lets an
#: ordinary tool call complete, and leaves the lifespan's shutdown (telemetry flush) time
#: before the SIGKILL that supervisors send a few seconds after their SIGTERM (5 s for
#: ``testing.stop_process``, 10 s for ``docker stop``).
GRACE = 3.0
#: Seconds the apps get, once told their clients left, to end before they are cancelled.
_CANCEL_AFTER = 1.0
#: Exit status of a server that could not start (uvicorn's STARTUP_FAILURE: scripts know it).
STARTUP_FAILURE = 3


class HttpServer:
    """``app`` (ASGI 3.0) served over HTTP/1.1 with ``run_http``'s limits (``connection.py``).

    ``max_connections`` is lowered to fit the process's file-descriptor limit (see
    ``limits.connection_cap``); None turns a limit off. ``keep_alive``: seconds an idle
    connection stays open; ``grace``: seconds a stop waits for the requests under way;
    ``lifespan=False`` sends the app no lifespan events (a side listener's pages).
    """

    def __init__(
        self,
        app: Any,
        *,
        header_timeout: float | None = HEADER_TIMEOUT,
        body_timeout: float | None = BODY_TIMEOUT,
        max_connections: int | None = MAX_CONNECTIONS,
        retry_after: int = RETRY_AFTER,
        keep_alive: float = KEEP_ALIVE,
        grace: float = GRACE,
        lifespan: bool = True,
    ) -> None:
        self.shared = Shared(
            app,
            header_timeout=header_timeout,
            body_timeout=body_timeout,
            max_connections=connection_cap(max_connections),
            retry_after=retry_after,
            keep_alive=keep_alive,
        )
        self.grace = grace
        self.lifespan = lifespan
        #: The addresses listened on, once listening.
        self.sockets: list[socket.socket] = []
        self._stop: asyncio.Event | None = None
        self._force: asyncio.Event | None = None

    @property
    def connections(self) -> set[Any]:
        return self.shared.connections

    @property
    def started(self) -> bool:
        return bool(self.sockets)

    def stop(self) -> None:
        """Stop gracefully; asked again, stop at once."""
        if self._stop is None or self._force is None:
            return
        if self._stop.is_set():
            self._force.set()
        self._stop.set()

    async def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        sock: socket.socket | None = None,
        signals: bool = True,
        on_listening: Callable[[], object] | None = None,
    ) -> int:
        """Serve until ``stop()`` (or SIGTERM/SIGINT, with ``signals``); 0, or 3 if it could not start.

        ``sock``: an already bound socket to accept on (``run_http(workers=N)``) instead of ``host:port``.
        ``on_listening`` is called once the app has started and the port accepts connections (so
        that "serving at URL" is never said of a server that then fails to start)."""
        loop = asyncio.get_running_loop()
        self._stop, self._force = asyncio.Event(), asyncio.Event()
        shared = self.shared
        lifespan = _Lifespan(shared.app, shared.state)
        problem = await lifespan.startup() if self.lifespan else None
        if problem is not None:
            print(f"backchannel: the HTTP app failed to start: {problem}", file=sys.stderr)
            await lifespan.abandon()
            return STARTUP_FAILURE
        try:
            if sock is not None:
                listener = await loop.create_server(shared.factory, sock=sock, backlog=2048)
            else:
                listener = await loop.create_server(shared.factory, host or None, port, backlog=2048)
        except OSError as exc:
            where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            print(f"backchannel: cannot listen on {where}: {exc.strerror or exc}", file=sys.stderr)
            await lifespan.shutdown()
            return STARTUP_FAILURE
        self.sockets = list(listener.sockets)
        handled = self._handle_signals(loop) if signals else []
        if on_listening is not None:
            on_listening()
        try:
            await self._stop.wait()
            await self._drain(listener)
            if not self._force.is_set():
                await _first(lifespan.shutdown(), self._force.wait(), timeout=None)
            if self._force.is_set():
                await lifespan.abandon()
        finally:
            for signum in handled:
                loop.remove_signal_handler(signum)
            self.sockets = []
            # (done already, unless cancelled on the way: no port, no connection outlives ``serve``)
            shared.stopping = True
            listener.close()
            for conn in list(shared.connections):
                conn.transport.abort()
        return 0

    def _handle_signals(self, loop: asyncio.AbstractEventLoop) -> list[int]:
        handled: list[int] = []
        for signum in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(signum, self.stop)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                continue
            handled.append(signum)
        return handled

    async def _drain(self, listener: asyncio.AbstractServer) -> None:
        """Stop accepting, let the requests under way finish (``grace`` seconds), end the rest."""
        assert self._force is not None
        shared = self.shared
        shared.stopping = True
        listener.close()
        for conn in list(shared.connections):
            conn.shutdown()
        emptied = shared.emptied = asyncio.Event()  # (set by the last connection to close, from now on)
        if shared.connections and not self._force.is_set():
            await _first(emptied.wait(), self._force.wait(), timeout=self.grace)
        for conn in list(shared.connections):
            for request in (conn.current, conn.reading):
                if request is not None:
                    request.leave()
            conn.transport.close()
        tasks = set(shared.tasks)
        if tasks and not self._force.is_set():
            await _first(asyncio.wait(tasks), self._force.wait(), timeout=_CANCEL_AFTER)
        for task in shared.tasks:
            task.cancel()
        if shared.tasks:
            await asyncio.wait(set(shared.tasks), timeout=_CANCEL_AFTER)
        for conn in list(shared.connections):
            conn.transport.abort()


async def _first(*waits: Any, timeout: float | None) -> None:
    """Wait until one of ``waits`` is done, or ``timeout`` seconds."""
    tasks = [asyncio.ensure_future(wait) for wait in waits]
    try:
        await asyncio.wait(tasks, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class _Lifespan:
    """The app's ASGI lifespan: ``startup`` before serving, ``shutdown`` after."""

    def __init__(self, app: Any, state: dict[str, Any]) -> None:
        self.app = app
        self.state = state
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        self.started: asyncio.Future[str | None] = loop.create_future()
        self.ended: asyncio.Future[str | None] = loop.create_future()
        self.task: asyncio.Task[None] | None = None

    async def startup(self) -> str | None:
        """None once the app has started (or has no lifespan); else what went wrong."""
        self.task = asyncio.get_running_loop().create_task(self._main())
        await self.inbox.put({"type": "lifespan.startup"})
        waits: set[asyncio.Future[Any]] = {self.started, self.task}
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if self.started.done() and not self.started.cancelled():
            return self.started.result()
        failure = self.task.exception()
        return None if failure is None else f"{type(failure).__name__}: {failure}"

    async def shutdown(self) -> None:
        task = self.task
        if task is None or task.done():
            return
        await self.inbox.put({"type": "lifespan.shutdown"})
        waits: set[asyncio.Future[Any]] = {self.ended, task}
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        problem = self.ended.result() if self.ended.done() and not self.ended.cancelled() else None
        if task.done() and not task.cancelled():
            task.exception()  # (logged by ``_main``)
        if problem is not None:
            logger.error("the HTTP app's shutdown failed: %s", problem)

    async def abandon(self) -> None:
        """Stop the lifespan where it is (a failed start, a forced stop, an app that never returns)."""
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task})
        if task is not None and not task.cancelled():
            task.exception()  # (logged by ``_main`` already; retrieved so asyncio does not warn again)

    async def _main(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}
        try:
            await self.app(scope, self.inbox.get, self._send)
        except Exception:
            logger.exception("the HTTP app's lifespan failed")
            raise
        finally:
            for waiting in (self.started, self.ended):
                if not waiting.done():
                    waiting.cancel()

    async def _send(self, message: Message) -> None:
        kind = message["type"]
        if kind in ("lifespan.startup.complete", "lifespan.startup.failed"):
            if not self.started.done():
                self.started.set_result(None if kind.endswith("complete") else message.get("message") or kind)
        elif kind in ("lifespan.shutdown.complete", "lifespan.shutdown.failed") and not self.ended.done():
            self.ended.set_result(None if kind.endswith("complete") else message.get("message") or kind)
