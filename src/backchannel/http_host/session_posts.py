"""What a POST to a handshake-era session does with the message it carries.

``open_session`` serves ``initialize`` on a new session and writes its record before the
client hears the session id. ``post_to_session`` serves the rest: a request is run here (the
runtime answers it on this POST's response); the client's answer to one of our requests goes
to the worker that asked (this one, or another of the fleet); a client notification is served
here and told to the session's other replicas, which is how a cancel reaches the worker
running the request it names.
"""

from __future__ import annotations

__all__ = ["INITIALIZED", "KEPT_PER_SESSION", "open_session", "post_to_session"]

from typing import Any

from ..framing import http as H
from ..protocol.states import SessionState
from ..telemetry.metrics import session_opened
from ..types.errors import InvalidRequest
from .asgi import Receive, Send, send_bytes
from .client_limits import StreamRules
from .fleet import Fleet
from .responses import send_rejection
from .session_responses import answer_request_post
from .sessions import HttpSession

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
#: Requests that change what the server keeps per session: in a fleet, the record follows.
KEPT_PER_SESSION = frozenset({"logging/setLevel", "resources/subscribe", "resources/unsubscribe"})


async def open_session(
    session: HttpSession,
    message: dict[str, Any],
    fleet: Fleet,
    receive: Receive,
    send: Send,
    *,
    retry_ms: int,
    rules: StreamRules | None = None,
) -> None:
    """Serve ``initialize`` on the new ``session`` (``rules``: its response's lifetime, if a stream).

    Its answer is plain JSON however long it takes (a server whose mounts connect first may take
    seconds), never an SSE stream begun before it: the stream's headers would tell the client the
    session id before its record was written, and in a fleet the client's next request, on another
    worker, would find no session (404)."""

    async def before_answer(answer: dict[str, Any]) -> None:
        # The record is written before the client hears the session id: its next request
        # may land on any worker, which must find the session.
        if "result" in answer and session.version is not None:
            session.timed = session_opened("server", session.connection.telemetry_attributes)
            await session.save()
            await fleet.join(session.session_id, session)

    await answer_request_post(
        session,
        message,
        receive,
        send,
        sse_after=None,
        retry_ms=retry_ms,
        before_answer=before_answer,
        rules=rules,
    )


async def post_to_session(
    session: HttpSession,
    message: dict[str, Any],
    kind: str,
    fleet: Fleet,
    receive: Receive,
    send: Send,
    *,
    sse_after: float,
    retry_ms: int,
    rules: StreamRules | None = None,
) -> None:
    """Serve what a POST carried to ``session`` (``kind``: request, response or notification;
    ``rules``: the lifetime of a request's stream)."""
    if kind == "response":
        owner = fleet.owner_of_answer(message)
        if owner is not None and not await fleet.forward_answer(owner, session.session_id, message):
            gone = InvalidRequest(
                f"the worker that sent request {message.get('id')!r} has stopped: "
                "the call that asked for this answer failed with it"
            )
            await send_rejection(send, H.Rejection(400, gone))
            return
        if owner is None:
            session.feed_messages([message])
        await send_bytes(send, 202, b"", [session.header_bytes])
        return
    if kind != "request":
        session.feed_messages([message])
        if message.get("method") != "notifications/initialized":
            await fleet.broadcast_note(session.session_id, message)
            if fleet.shared:
                await session.save_if_changed()  # roots changed: the record drops the old ones
        await send_bytes(send, 202, b"", [session.header_bytes])
        return
    if fleet.shared and session.protocol.state is SessionState.INITIALIZING:
        # The client's `initialized` went to another worker: a request after it means the
        # handshake is done from the client's side, here too.
        session.feed_messages([INITIALIZED])
    if not (fleet.shared and message["method"] in KEPT_PER_SESSION):
        await answer_request_post(session, message, receive, send, sse_after=sse_after, retry_ms=retry_ms, rules=rules)
        if fleet.shared:
            await session.save_if_changed()  # e.g. the roots a tool asked for, cached for the session
        return
    saved = False

    async def save(answer: dict[str, Any]) -> None:
        # Before the client hears the answer: its next request may land on another replica.
        nonlocal saved
        await session.save(announce=True)
        saved = True

    await answer_request_post(
        session, message, receive, send, sse_after=sse_after, retry_ms=retry_ms, before_answer=save, rules=rules
    )
    if not saved:  # the answer went out on a stream, not as plain JSON
        await session.save(announce=True)
