"""Resumable SSE streams kept in the shared state, so a client resumes on any worker.

Each handshake-era stream of a session is a log of the shared state, under the session's
key (a stream of another session is not found from this one). Its first entry names the
request the stream answers; then come the events, numbered as their ids say; an empty
entry marks the end (the answer went out). A worker that is asked to resume a stream it
does not hold replays the log and follows it until that end. When the worker writing the
stream is gone before the end, the follower answers the request with a clear error itself,
so the client never waits on a dead worker.
"""

from __future__ import annotations

__all__ = ["StateEventStore", "follow_remote_stream", "stream_owner"]

import asyncio
import contextlib
from typing import Any

import msgspec

from ..framing.codec import encode_message
from ..framing.sse import encode_json_event
from ..protocol.events import RequestId
from ..state.shared import SharedState, StateUnavailable
from ..types.errors import InternalError
from .asgi import Receive, Send
from .client_limits import OpenStream
from .event_store import EventStore

#: How long a follower waits for the next event before it checks that the writer still serves.
_CHECK_EVERY = 0.25
_END = b""


def stream_owner(stream_id: str) -> str | None:
    """The worker that writes ``stream_id`` (``"<worker>.<rest>"``), or None for a local-style id."""
    owner, dot, _ = stream_id.partition(".")
    return owner if dot else None


class StateEventStore(EventStore):
    """One session's streams as logs of the shared state (entry 1: the request; then events)."""

    def __init__(self, state: SharedState, prefix: str, ttl: float) -> None:
        self.state = state
        self.prefix = prefix
        self.ttl = ttl
        self._opened: set[str] = set()  # begun by ``open``, before the stream itself begins

    async def open(self, stream: str, request_id: RequestId | None) -> None:
        """Write the stream's first entry and wait until it is in the shared state, before the
        client hears of the stream: should this worker die, the one the client resumes on finds
        the stream (and answers for it) instead of calling its id unknown. Before the stream's
        events are queued, so they are not waited for. Unreachable state: go on regardless."""
        self.begin(stream, request_id)
        self._opened.add(stream)
        with contextlib.suppress(StateUnavailable):
            await self.state.flush()

    def begin(self, stream: str, request_id: RequestId | None) -> None:
        if stream in self._opened:
            self._opened.discard(stream)
            return
        self.state.log_append(self.prefix + stream, 1, b"#" + msgspec.json.encode(request_id), ttl=self.ttl)

    def store(self, stream: str, position: int, event: bytes) -> None:
        self.state.log_append(self.prefix + stream, position + 1, event, ttl=self.ttl)

    def finish(self, stream: str, position: int) -> None:
        self.state.log_append(self.prefix + stream, position + 2, _END, ttl=self.ttl)

    async def replay_after(self, stream: str, position: int) -> list[tuple[int, bytes]]:
        entries = await self.state.log_read(self.prefix + stream, max(position + 1, 1))
        return [(number - 1, data) for number, data in entries if data != _END]

    async def forget(self, stream: str) -> None:
        await self.state.log_delete(self.prefix + stream)

    async def request_of(self, stream: str) -> tuple[bool, RequestId | None]:
        """Whether the stream exists, and the request it answers."""
        entries = await self.state.log_read(self.prefix + stream, 0)
        if not entries or entries[0][0] != 1 or not entries[0][1].startswith(b"#"):
            return False, None
        request_id: Any = msgspec.json.decode(entries[0][1][1:])
        return True, request_id


async def follow_remote_stream(
    store: StateEventStore,
    stream_id: str,
    after: int,
    send: Send,
    receive: Receive,
    *,
    alive: Any,
    lifetime: OpenStream | None = None,
) -> None:
    """Send the events of ``stream_id`` after ``after`` and follow it to its end, or until the
    client leaves, or until ``lifetime`` is over (its ``farewell``, an SSE ``retry`` field, is then
    the last thing sent); ``await alive(worker)`` says whether the writer still serves. The
    caller has sent the response's start."""
    log = store.prefix + stream_id
    owner = stream_owner(stream_id)

    async def client_left() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.get_running_loop().create_task(client_left())
    try:
        position = after + 1  # log positions are event numbers plus one
        while not watcher.done():
            if lifetime is not None and lifetime.over:
                await send({"type": "http.response.body", "body": lifetime.farewell, "more_body": False})
                return
            entries = await store.state.log_read(log, position, wait=_CHECK_EVERY)
            if not entries:
                if owner is not None and not await alive(owner):
                    entries = await store.state.log_read(log, position)  # what it wrote last
                    if not entries:
                        await _answer_for_the_gone(store, stream_id, position - 1, send)
                        return
                else:
                    continue
            chunk = bytearray()
            for number, data in entries:
                if data == _END:
                    await send({"type": "http.response.body", "body": bytes(chunk), "more_body": False})
                    return
                chunk += data
                position = number
            await send({"type": "http.response.body", "body": bytes(chunk), "more_body": True})
    except OSError:
        return
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


async def _answer_for_the_gone(store: StateEventStore, stream_id: str, last: int, send: Send) -> None:
    _, request_id = await store.request_of(stream_id)
    error = InternalError(
        "the worker serving this request stopped before it answered (its process ended); "
        "the outcome is unknown: retry if the call is safe to repeat"
    )
    message = {"jsonrpc": "2.0", "id": request_id, "error": {"code": error.code, "message": error.message}}
    event = encode_json_event(encode_message(message), f"{stream_id}_{last + 1}")
    await send({"type": "http.response.body", "body": event, "more_body": False})
