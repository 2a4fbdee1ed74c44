"""This worker's part in a fleet: handshake-era sessions that any worker can serve.

A session is a record in the shared state (what ``initialize`` agreed, the principal, and
what the server keeps per session: the log level, resource subscriptions), and a replica
of it on each worker that serves one of its requests. A request runs where its POST
lands; only what belongs to work in flight travels between workers:

- the client's answer to a request a worker sent (``elicitation/create``, ``sampling/
  createMessage``, ``roots/list``) goes to the worker named in its id (``Session.id_prefix``):
  one ``publish``, and a publish that reaches nobody means that worker is gone;
- the client's notifications (``notifications/cancelled``, its progress, ``roots/list_changed``)
  go to every replica of the session (the session channel): the one running the request acts,
  the others ignore it;
- a change to the record (``logging/setLevel``, ``resources/subscribe``) and the end of the
  session (DELETE) go to every replica too;
- a message that belongs to no request goes to the worker holding the session's GET stream.

With a state that spans no processes (the default ``MemoryState``) there is one replica per
session and nothing to forward: the same code runs with ``shared`` False and publishes nothing.
"""

from __future__ import annotations

__all__ = ["FANNED_OUT", "Fleet", "SessionRecord", "refusing_when_unreachable"]

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..state.shared import SharedState, StateUnavailable
from ..types.ids import is_request_id
from .asgi import Message, Receive, Scope, Send
from .limits import busy
from .responses import send_rejection

logger = logging.getLogger("backchannel.http")

#: Notifications every worker sends to its own sessions when they happen anywhere (the server
#: fans them out): a replica without the GET stream drops them, the one holding it sends its own.
FANNED_OUT = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)
#: How long a worker's claim on a session's GET stream lasts unless renewed (it renews at a third).
_GET_CLAIM = 15.0
#: A ping on a worker's channel: nobody acts on it; ``publish`` counting 0 means the worker is gone.
_PING = b'{"k":"ping"}'
_encode = msgspec.json.encode
_decode = msgspec.json.decode


@dataclass(slots=True)
class SessionRecord:
    """What every worker needs to serve a session's requests (kept in the shared state)."""

    version: str
    capabilities: dict[str, Any]
    info: dict[str, Any]
    principal: str | None
    #: What the server keeps per session (``HostedServer.session_snapshot``).
    kept: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"v": self.version, "c": self.capabilities, "i": self.info, "p": self.principal, "k": self.kept}

    @classmethod
    def from_json(cls, value: Any) -> SessionRecord | None:
        if not isinstance(value, dict) or not isinstance(value.get("v"), str):
            return None
        return cls(value["v"], value.get("c") or {}, value.get("i") or {}, value.get("p"), value.get("k") or {})


def record_key(session_id: str) -> str:
    # The session id as a Redis Cluster hash tag: a session's keys live on one node.
    return f"session:{{{session_id}}}"


def session_channel(session_id: str) -> str:
    return f"session:{{{session_id}}}"


def worker_channel(worker_id: str) -> str:
    return f"worker:{worker_id}"


def events_prefix(session_id: str) -> str:
    return f"events:{{{session_id}}}:"


class Fleet:
    """Routes what a handshake-era session's replicas must tell each other (see the module).

    ``replicas`` maps a session id to the local replica's receiver: an object with
    ``deliver_answer(message)``, ``deliver_note(message)``, ``deliver_out(message)``,
    ``apply_record(record)`` and ``end_by_peer()`` (``HttpSession`` is one).
    """

    def __init__(self, state: SharedState, *, shared: bool, record_ttl: float) -> None:
        self.state = state
        self.shared = shared
        self.record_ttl = record_ttl
        self.worker_id = state.worker_id
        self.replicas: dict[str, Any] = {}
        self._stop_worker_channel: Callable[[], None] | None = None
        self._outbox: asyncio.Queue[tuple[str, bytes]] | None = None
        self._sender: asyncio.Task[None] | None = None

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Join: start the state (its heartbeat, its subscriber) and listen on this worker's channel."""
        if not self.shared or self._stop_worker_channel is not None:
            return
        await self.state.start()
        channel = worker_channel(self.worker_id)
        self._stop_worker_channel = self.state.listen(channel, self._on_worker_message)
        await self.state.listening(channel)

    async def aclose(self) -> None:
        """Leave: stop listening and stop the state this fleet started (its lease ends at once)."""
        if self._sender is not None:
            self._sender.cancel()
            self._sender = None
        if self._stop_worker_channel is not None:
            self._stop_worker_channel()
            self._stop_worker_channel = None
            await self.state.aclose()

    # ------------------------------------------------------------ records

    async def load(self, session_id: str) -> SessionRecord | None:
        if not self.shared:
            return None
        return SessionRecord.from_json(await self.state.get(record_key(session_id)))

    async def save(self, session_id: str, record: SessionRecord, *, announce: bool = False) -> None:
        """Write the record (and renew its TTL); with ``announce``, tell the other replicas."""
        if not self.shared:
            return
        value = record.to_json()
        await self.state.put(record_key(session_id), value, ttl=self.record_ttl)
        if announce:  # awaited: the caller answers the client after the replicas were told
            data = _encode({"k": "record", "o": self.worker_id, "r": value})
            await self.state.publish(session_channel(session_id), data)

    async def forget(self, session_id: str) -> None:
        """The session ended (DELETE): drop the record and end every other replica."""
        if not self.shared:
            return
        await self.state.delete(record_key(session_id))
        await self.state.publish(session_channel(session_id), _encode({"k": "end", "o": self.worker_id}))

    # ------------------------------------------------------------ the GET stream

    async def claim_get_stream(self, session_id: str) -> Callable[[], Awaitable[None]] | None:
        """Hold the session's one GET stream for this worker, fleet-wide: a release to await
        when the stream ends, or None when a live worker holds it already. The claim is a key
        with a short TTL, renewed while the stream is open, so a worker that dies lets it go."""
        if not self.shared:
            return _released
        key = f"getstream:{{{session_id}}}"
        mine = {"w": self.worker_id}
        if await self.state.add(key, mine, ttl=_GET_CLAIM) != "added":
            holder = await self.state.get(key)
            worker = holder.get("w") if isinstance(holder, dict) else None
            if isinstance(worker, str) and await self.reachable(worker):
                return None
            await self.state.put(key, mine, ttl=_GET_CLAIM)  # its holder is gone: the stream is free

        async def renew() -> None:
            while True:
                await asyncio.sleep(_GET_CLAIM / 3)
                with contextlib.suppress(StateUnavailable):
                    await self.state.put(key, mine, ttl=_GET_CLAIM)

        renewing = asyncio.get_running_loop().create_task(renew())

        async def release() -> None:
            renewing.cancel()
            with contextlib.suppress(StateUnavailable):
                holder = await self.state.get(key)
                if isinstance(holder, dict) and holder.get("w") == self.worker_id:
                    await self.state.delete(key)

        return release

    # ------------------------------------------------------------ replicas

    async def join(self, session_id: str, replica: Any) -> None:
        """``replica`` serves ``session_id`` here: it hears the session channel from now on."""
        if not self.shared:
            return  # one worker: nothing will be routed to the replica (and it costs each session an entry)
        self.replicas[session_id] = replica
        channel = session_channel(session_id)
        replica.stop_listening = self.state.listen(channel, lambda data: self._on_session_message(session_id, data))
        await self.state.listening(channel)

    def leave(self, session_id: str, replica: Any) -> None:
        if self.replicas.get(session_id) is replica:
            del self.replicas[session_id]
        stop = getattr(replica, "stop_listening", None)
        if stop is not None:
            stop()

    # ------------------------------------------------------------ forwarding

    def owner_of_answer(self, message: dict[str, Any]) -> str | None:
        """The worker that sent the request ``message`` answers, when it is another one."""
        if not self.shared:
            return None
        answered = message.get("id")
        if type(answered) is not str or ":" not in answered:
            return None
        owner = answered.split(":", 1)[0]
        return None if owner == self.worker_id else owner

    async def forward_answer(self, owner: str, session_id: str, message: dict[str, Any]) -> bool:
        """Hand the client's answer to the worker that asked; False when that worker is gone."""
        data = _encode({"k": "answer", "s": session_id, "m": message})
        return await self.state.publish(worker_channel(owner), data) > 0

    async def reachable(self, worker_id: str) -> bool:
        """Whether ``worker_id`` still serves: it holds its lease and its channel has a listener
        (a process killed outright loses the second at once, the first within the lease)."""
        if worker_id == self.worker_id:
            return True
        try:
            return await self.state.alive(worker_id) and await self.state.publish(worker_channel(worker_id), _PING) > 0
        except StateUnavailable:
            return True  # can't tell: keep waiting rather than fail a call that may be fine

    async def broadcast_note(self, session_id: str, message: dict[str, Any]) -> None:
        """A client notification for every other replica of the session, published before the
        client hears 202 (its next request may land where this must have arrived first)."""
        if self.shared:
            data = _encode({"k": "note", "o": self.worker_id, "m": message})
            await self.state.publish(session_channel(session_id), data)

    def send_out(self, session_id: str, message: dict[str, Any]) -> None:
        """A message of ours that belongs to no request, for the replica holding the GET stream."""
        if self.shared:
            self.post(session_channel(session_id), {"k": "out", "o": self.worker_id, "m": message})

    def post(self, channel: str, value: dict[str, Any]) -> None:
        """Publish in the background, in order (a synchronous caller: the runtime's write path)."""
        if self._outbox is None:
            self._outbox = asyncio.Queue()
        self._outbox.put_nowait((channel, _encode(value)))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_posted(self._outbox))

    async def _send_posted(self, outbox: asyncio.Queue[tuple[str, bytes]]) -> None:
        while not outbox.empty():
            channel, data = outbox.get_nowait()
            try:
                await self.state.publish(channel, data)
            except StateUnavailable as exc:
                logger.warning("a message for %s was lost: %s", channel, exc.message)

    # ------------------------------------------------------------ receiving

    def _on_worker_message(self, data: bytes) -> None:
        message = _decode(data)
        if not isinstance(message, dict) or message.get("k") != "answer":
            return
        replica = self.replicas.get(message.get("s"))  # type: ignore[arg-type]
        answer = message.get("m")
        if replica is None or not isinstance(answer, dict) or not is_request_id(answer.get("id")):
            logger.info("an answer for a session this worker no longer serves was dropped")
            return
        replica.deliver_answer(answer)

    def _on_session_message(self, session_id: str, data: bytes) -> None:
        message = _decode(data)
        replica = self.replicas.get(session_id)
        if replica is None or not isinstance(message, dict) or message.get("o") == self.worker_id:
            return
        kind = message.get("k")
        if kind == "note" and isinstance(message.get("m"), dict):
            replica.deliver_note(message["m"])
        elif kind == "out" and isinstance(message.get("m"), dict):
            replica.deliver_out(message["m"])
        elif kind == "record":
            record = SessionRecord.from_json(message.get("r"))
            if record is not None:
                replica.apply_record(record)
        elif kind == "end":
            replica.end_by_peer()


async def refusing_when_unreachable(
    route: Callable[[Scope, Receive, Send], Awaitable[None]],
    scope: Scope,
    receive: Receive,
    send: Send,
    retry_after: int,
) -> None:
    """Serve ``route``; while the shared state cannot be reached, a request that needs it is
    refused with 503, ``Retry-After`` and a JSON-RPC error naming the state (not a bare 500),
    and a response already under way ends there (the client resumes it or retries)."""
    started = False

    async def sending(message: Message) -> None:
        nonlocal started
        started = True
        await send(message)

    try:
        await route(scope, receive, sending)
    except StateUnavailable as exc:
        if started:
            logger.warning("a response was cut short: %s", exc.message)
            return
        await send_rejection(send, busy(exc.message, retry_after))


async def _released() -> None:
    """The release of a claim nobody else could contest (a state that spans no workers)."""
