"""Asking one worker of a fleet to do something, and waiting for its answer.

Some work can only be done where its state lives: a URL-elicitation flow (its page, its
confirmation code, the OAuth verifier its handler keeps) lives in the worker whose tool
started it. A worker that receives a request for it hands the request to that worker
with ``call`` and answers with what comes back. Requests and answers travel as messages
on each worker's ``calls:<worker>`` channel: a request that reaches no listener means the
worker is gone (``WorkerGone``), at once, without waiting out a timeout. With tracing on, a
request carries the caller's trace context and is handled in a span that is its child
(``telemetry/fleet_calls.py``).
"""

from __future__ import annotations

__all__ = ["CallFailed", "Calls", "WorkerGone"]

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ..telemetry import fleet_calls
from ..types.errors import CallFailed, MCPError, WorkerGone  # (the two defined in the errors tree)
from .shared import SharedState

logger = logging.getLogger("backchannel.state")

Handler = Callable[[Any], Awaitable[Any]]


def _channel(worker_id: str) -> str:
    return f"calls:{worker_id}"


class Calls:
    """This worker's side of fleet calls: ``handle(op, fn)`` what others may ask of it, ``await
    call(worker, op, args)`` to ask another. ``start`` before either is used; ``stop`` at the end.
    Arguments and answers are JSON data; ``fn`` raising ``MCPError`` sends its message back."""

    def __init__(self, state: SharedState) -> None:
        self.state = state
        self._handlers: dict[str, Handler] = {}
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._numbers = itertools.count(1)
        self._running: set[asyncio.Task[None]] = set()
        self._stop: Callable[[], None] | None = None

    def handle(self, op: str, handler: Handler) -> None:
        self._handlers[op] = handler

    async def start(self) -> None:
        if self._stop is None:
            channel = _channel(self.state.worker_id)
            self._stop = self.state.listen(channel, self._received)
            await self.state.listening(channel)

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None
        for waiter in self._waiting.values():
            if not waiter.done():
                waiter.set_exception(WorkerGone("this worker stopped before the answer came"))
        self._waiting.clear()
        for task in self._running:
            task.cancel()

    async def call(self, worker_id: str, op: str, args: Any, *, timeout: float = 10.0) -> Any:
        """What ``worker_id``'s handler of ``op`` returns for ``args``."""
        if self._stop is None:
            raise RuntimeError("Calls.start() first: the answer comes back on this worker's channel")
        number = next(self._numbers)
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[number] = waiter
        request = {"k": "call", "n": number, "op": op, "a": args, "r": self.state.worker_id}
        if (context := fleet_calls.carried()) is not None:  # the caller's trace goes on in the other worker
            request["t"] = context
        try:
            if await self.state.publish(_channel(worker_id), msgspec.json.encode(request)) == 0:
                raise WorkerGone(f"worker {worker_id} no longer serves")
            async with asyncio.timeout(timeout):
                return await waiter
        except TimeoutError:
            raise WorkerGone(f"worker {worker_id} did not answer within {timeout:g} s") from None
        finally:
            self._waiting.pop(number, None)

    def _received(self, data: bytes) -> None:
        message = msgspec.json.decode(data)
        if not isinstance(message, dict):
            return
        if message.get("k") == "reply":
            waiter = self._waiting.get(message.get("n"))  # type: ignore[arg-type]
            if waiter is not None and not waiter.done():
                if "e" in message:
                    waiter.set_exception(CallFailed(str(message["e"])))
                else:
                    waiter.set_result(message.get("v"))
        elif message.get("k") == "call" and isinstance(message.get("r"), str):
            task = asyncio.get_running_loop().create_task(self._serve(message))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _serve(self, message: dict[str, Any]) -> None:
        handler = self._handlers.get(message.get("op"))  # type: ignore[arg-type]
        reply: dict[str, Any] = {"k": "reply", "n": message.get("n")}
        if handler is None:
            reply["e"] = f"this worker does not handle {message.get('op')!r}"
        else:
            try:
                with fleet_calls.serving(str(message.get("op")), message.get("t"), message.get("r")):
                    reply["v"] = await handler(message.get("a"))
            except MCPError as exc:
                reply["e"] = exc.message
            except Exception:
                logger.exception("fleet call %r failed", message.get("op"))
                reply["e"] = f"the worker failed while handling {message.get('op')!r}"
        try:
            await self.state.publish(_channel(message["r"]), msgspec.json.encode(reply))
        except MCPError as exc:
            logger.warning("the answer to a fleet call was lost: %s", exc.message)
