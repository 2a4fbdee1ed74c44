"""Between the workers of a fleet: what reaches the worker running a task, and its reply.

A task runs on the worker that created it; ``tasks/update`` and ``tasks/cancel`` may land on
any worker. That one publishes the command on the runner's channel (``tasks:<worker id>``)
and waits for its reply on its own: the runner applies the command and writes the record
before replying, so once the client has its acknowledgement, a ``tasks/get`` on any worker
sees the change (the harness checks a partial ``tasks/update`` that way). A publish that
reaches nobody means the runner's worker is gone (as ``http_host/fleet.py`` reads it).

With a state that spans no workers nothing here runs: every task is local.
"""

from __future__ import annotations

__all__ = ["RunningTasks", "TaskRelay"]

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ...state.shared import SharedState, StateUnavailable
from ...telemetry import fleet_calls

if TYPE_CHECKING:
    from .runner import TaskRunner

logger = logging.getLogger("backchannel")

#: How long a command waits for the runner's reply before acknowledging anyway: the extension
#: makes ``tasks/update`` and ``tasks/cancel`` eventually consistent, so a slow runner is no error.
REPLY_WAIT = 2.0
_encode = msgspec.json.encode
_decode = msgspec.json.decode


def channel_of(worker_id: str) -> str:
    return f"tasks:{worker_id}"


class RunningTasks(Protocol):
    """What the relay needs of this worker's tasks (``TaskService`` meets it; this module imports
    no ``service.py``, which makes the relay)."""

    @property
    def running(self) -> Mapping[str, TaskRunner]: ...
    @property
    def shared(self) -> SharedState | None: ...


class TaskRelay:
    """This worker's end of the task channels (see the module)."""

    def __init__(self, service: RunningTasks) -> None:
        self.service = service
        self._stop: Callable[[], None] | None = None
        self._joining: asyncio.Future[None] | None = None
        self._replies: dict[str, asyncio.Future[bool]] = {}
        self._serving: set[asyncio.Task[None]] = set()
        self._outbox: asyncio.Queue[tuple[str, bytes]] | None = None
        self._sender: asyncio.Task[None] | None = None

    async def ready(self, state: SharedState) -> None:
        """Listen on this worker's channel (once): before a task here is announced, and before
        this worker waits for a reply."""
        if self._joining is None:
            self._stop = state.listen(channel_of(state.worker_id), self._on_message)
            self._joining = asyncio.ensure_future(state.listening(channel_of(state.worker_id)))
        try:
            await asyncio.shield(self._joining)
        except BaseException:
            if self._joining.done():
                self._joining = None  # the next call listens again (Redis may be back)
                if self._stop is not None:
                    self._stop()
                    self._stop = None
            raise

    async def command(self, state: SharedState, worker: str, message: dict[str, Any]) -> bool | None:
        """Send ``message`` to ``worker``'s runner; True once it applied it, False when it has no
        such task (any more) or did not reply in time, None when the worker is gone."""
        await self.ready(state)
        nonce = os.urandom(8).hex()  # (secrets.token_hex(8), without loading hashlib's OpenSSL)
        reply: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._replies[nonce] = reply
        try:
            sent = {**message, "n": nonce, "f": state.worker_id}
            if (context := fleet_calls.carried()) is not None:  # the runner's span is the caller's child
                sent["c"] = context
            data = _encode(sent)
            if await state.publish(channel_of(worker), data) == 0:
                return None
            try:
                return await asyncio.wait_for(reply, REPLY_WAIT)
            except TimeoutError:
                return False
        finally:
            self._replies.pop(nonce, None)

    def announce(self, state: SharedState, channel: str, value: dict[str, Any]) -> None:
        """Publish ``value`` on ``channel`` in the background, in order (a task's status, for the
        streams following it on any worker)."""
        if self._outbox is None:
            self._outbox = asyncio.Queue()
        self._outbox.put_nowait((channel, _encode(value)))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send(state, self._outbox))

    async def _send(self, state: SharedState, outbox: asyncio.Queue[tuple[str, bytes]]) -> None:
        while not outbox.empty():
            channel, data = outbox.get_nowait()
            try:
                await state.publish(channel, data)
            except StateUnavailable as exc:
                logger.warning("a task's status did not reach its followers: %s", exc.message)

    def _on_message(self, data: bytes) -> None:
        message = _decode(data)
        if not isinstance(message, dict):
            return
        if message.get("k") == "reply":
            waiting = self._replies.get(message.get("n"))  # type: ignore[arg-type]
            if waiting is not None and not waiting.done():
                waiting.set_result(bool(message.get("ok")))
            return
        task = asyncio.get_running_loop().create_task(self._serve(message))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    async def _apply(self, message: dict[str, Any]) -> bool:
        runner = self.service.running.get(message.get("t"))  # type: ignore[arg-type]
        if runner is None or runner.record.owner != message.get("o"):
            return False
        kind = message.get("k")
        if kind == "update" and isinstance(message.get("r"), dict):
            if runner.answer(message["r"]):
                await runner.save()
            return True
        if kind == "cancel":
            await runner.cancel()
            return True
        return False

    async def _serve(self, message: dict[str, Any]) -> None:
        state = self.service.shared
        with fleet_calls.serving(f"tasks.{message.get('k')}", message.get("c"), message.get("f")):
            applied = await self._apply(message)
        if state is None or not isinstance(message.get("f"), str):
            return
        try:
            await state.publish(channel_of(message["f"]), _encode({"k": "reply", "n": message.get("n"), "ok": applied}))
        except StateUnavailable as exc:
            logger.warning("a task command's reply was lost: %s", exc.message)
