"""The async driver: a short loop around the sans-IO session.

Read a batch from the transport, feed the session, act on its events, write
what it queued. Each inbound request runs in its own task, so the peer can
cancel it; each outbound request waits on a future with its own timeout.
``_answer_with_outcome`` is the one place where a handler's outcome becomes a message.

Two ways in: ``run()`` reads the transport in a loop (stdio, memory); ``feed()`` is
handed each batch by a transport whose messages are pushed to it (an HTTP POST).
"""

from __future__ import annotations

__all__ = ["Connection", "Handler", "ProgressCallback"]

import asyncio
import contextlib
import contextvars
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from ..protocol.events import (
    CancelRequested,
    ErrorReceived,
    Event,
    HandshakeCompleted,
    NotificationReceived,
    PeerClosed,
    ProgressReceived,
    RequestId,
    RequestReceived,
    ResponseReceived,
)
from ..protocol.session import Session
from ..telemetry.spans import start_server
from ..transports.base import Transport
from ..types.errors import ConnectionClosed, InternalError, LocalProtocolError, MCPError, ToolError
from ..types.ids import is_request_id
from .clocks import ProgressCallback
from .requesting import Requesting

logger = logging.getLogger("backchannel")

#: Messages queued by progress reports before they are written without waiting for the loop's turn.
_PROGRESS_BATCH = 256


#: What ``Handler.answer_now`` gives: the answer, None (``handle_request`` answers), or the
#: coroutine that answers, for the read loop to start.
Answering = dict[str, Any] | Coroutine[Any, Any, dict[str, Any]] | None


class Handler(Protocol):
    """What a connection asks of the side it serves (a server, or a client's handlers).

    Subclass it to inherit ``answer_now``'s default (no inline answers).
    """

    def answer_now(self, request: RequestReceived, connection: Connection) -> Answering:
        """The answer to ``request`` when it can be given without waiting (a plain synchronous
        tool), else None: then ``handle_request`` runs in a task of its own. Called inline by
        the read loop; an exception it raises is answered like one from ``handle_request``.
        It may also return the coroutine that answers (not yet started): the read loop runs it
        at once, and answers in its turn when it finishes without waiting; at its first wait,
        the rest runs in a task of its own, as ``handle_request`` would (``_finish``)."""
        return None

    async def handle_request(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """The result of ``request``; raise ``MCPError`` for an error answer (other exceptions
        become -32603). Cancelled (``CancelledError``) when the peer gives up on it."""
        ...

    def handle_notification(self, notification: NotificationReceived, connection: Connection) -> Awaitable[None] | None:
        """Called inline by the read loop: return quickly, or return an awaitable to run as a task."""


class Connection(Requesting):
    """Drives one ``Session`` over one ``Transport``; ``run()`` until the peer goes away.

    The half that sends (``request``, ``notify``, ``timeouts_paused``) is ``Requesting``;
    the records and the output are ``ConnectionBase``; what is here serves the peer.
    """

    def __init__(self, session: Session, transport: Transport, handler: Handler, *, finish_grace: float = 0.0) -> None:
        super().__init__(session, transport)
        #: After the peer's input ends, how long handlers still running may take to answer.
        #: A server gives them a moment (``printf request | server`` expects its answer);
        #: a client gives none: a server that stopped talking will not answer.
        self.finish_grace = finish_grace
        self.handler = handler
        self._answer_now: Callable[[RequestReceived, Connection], Answering] = handler.answer_now
        self.handshake_completed: HandshakeCompleted | None = None

    # ------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Serve until the transport ends; then fail what is pending and stop handlers."""
        reason = "the peer closed the connection"
        try:
            self._take_pushed_batches()
            while True:
                batch = await self.transport.receive()
                if batch is None:
                    await self._let_handlers_finish()
                    break
                self._feed_batch(batch)
                await self.transport.drain()
        except ConnectionClosed as exc:
            reason = exc.message
        finally:
            self._shutdown(reason)

    def _take_pushed_batches(self) -> None:
        """Where the transport can hand us each batch from its read callback (stdio's server side),
        have it do so: an answer given at once then leaves in that callback, and a peer's answer
        settles its waiter there, with no wake-up of this task in between. ``receive`` then brings
        only the end of the input (or the failure that ends it), and the loop below goes on as it
        would. Batches are served in this task's context, as the loop would serve them."""
        serve_in_context: Callable[..., None] = contextvars.copy_context().run
        self.transport.push_to(functools.partial(serve_in_context, self._feed_batch))

    def feed(self, batch: list[Any]) -> None:
        """Serve one inbound batch now, in the caller's turn: the push-fed way, instead of ``run``.

        A transport that is handed its messages (an HTTP POST) gives them here, sparing a
        queue and a loop turn per message; requests are served exactly as ``run`` serves
        them (answered at once, or in a task of their own). ``finish`` ends such a connection.
        (Once it has ended, ``_feed_batch`` drops the batch.)
        """
        try:
            self._feed_batch(batch)
        except ConnectionClosed as exc:
            self._shutdown(exc.message)

    def finish(self, reason: str) -> None:
        """A push-fed connection is over: fail what is pending and stop handlers (no answers)."""
        self._flush()
        self._shutdown(reason)

    def _feed_batch(self, batch: list[Any]) -> None:
        if self._ended:  # (a transport that pushes may read on a little after the end)
            return
        receive = self.session.receive_message
        routes = self._routes
        for item in batch:
            if isinstance(item, MCPError):
                self.session.receive_invalid(item)
                if routes:
                    self._route(None)
                continue
            # A bug of ours that one message trips must cost that message only, never the
            # connection: the peer gets -32603 for it and the next message is read as usual.
            try:
                events = receive(item)
            except Exception:
                self._refuse_after_bug(item, received=False)
                continue
            if routes:
                self._route_received()
            for event in events:
                try:
                    self._dispatch(event)
                except Exception:
                    self._refuse_after_bug(item, received=True)
        self._flush()

    def _refuse_after_bug(self, item: Any, *, received: bool) -> None:
        request_id = item.get("id") if type(item) is dict and "method" in item else None
        method = item.get("method") if type(item) is dict else None
        stage = "dispatching" if received else "reading"
        logger.exception("internal error while %s %r (request %r)", stage, method, request_id)
        if is_request_id(request_id) and request_id not in self._tasks:
            error = InternalError(f"Internal error while handling {method}")
            self.session.refuse(request_id, error, received=received)
        if self._routes:
            self._route(request_id if is_request_id(request_id) else None)

    async def _let_handlers_finish(self) -> None:
        if self._tasks and self.finish_grace > 0:
            self.session.start_closing()
            await asyncio.wait(list(self._tasks.values()), timeout=self.finish_grace)
            self._flush()

    def _dispatch(self, event: Event) -> None:
        """Act on one event."""
        kind = type(event)
        if kind is RequestReceived:
            assert isinstance(event, RequestReceived)
            # A handler that can answer without waiting (a plain synchronous tool) is
            # answered here, sparing a task per request; the outcome takes the same path.
            # (``run`` writes after each batch, so these answers leave in the same turn.)
            operation = start_server(event, self)
            # With a span, the handler runs with it current (its own requests become its children).
            context = None if operation is None else self._serving(event.id, operation)
            answer_now = self._answer_now
            try:
                result = answer_now(event, self) if context is None else context.run(answer_now, event, self)
            except Exception as exc:
                self._answer_with_outcome(event, None, exc)
                return
            if isinstance(result, dict):  # the inline answer first: the hot path
                self._answer_with_outcome(event, result, None)
                return
            started: tuple[Coroutine[Any, Any, Any], ...] = ()
            if result is None:
                answering: Coroutine[Any, Any, dict[str, Any]] | None = None  # (made in the task: ``_run_handler``)
            else:  # the coroutine that answers: run here until it finishes or first waits
                if context is None:
                    context = contextvars.copy_context()  # what it sets stays its own, in this turn and its task
                try:
                    waited = context.run(result.send, None)
                except StopIteration as done:
                    self._answer_with_outcome(event, done.value, None)
                    return
                except Exception as exc:
                    self._answer_with_outcome(event, None, exc)
                    return
                answering = _finish(result, waited)
                started = (answering, result)
            serving = asyncio.get_running_loop().create_task(self._run_handler(event, answering), context=context)
            self._tasks[event.id] = serving
            serving.add_done_callback(functools.partial(self._handler_task_done, event.id, started))
        elif kind is ResponseReceived or kind is ErrorReceived:
            assert isinstance(event, ResponseReceived | ErrorReceived)
            waiter = self._waiters.pop(event.id, None)
            if waiter is not None and not waiter.done():
                if isinstance(event, ResponseReceived):
                    waiter.set_result(event.result)
                else:
                    waiter.set_exception(event.error)
        elif kind is ProgressReceived:
            assert isinstance(event, ProgressReceived)
            callback = self._progress.get(event.request_id)
            if callback is not None:
                self._run_callback(callback, event)
            if self._sent_operations is not None:
                self._progress_received(event)
        elif kind is CancelRequested:
            assert isinstance(event, CancelRequested)
            self.abort(event.id, event.reason)
            self.transport.request_cancelled(event.id)  # no answer will come: its stream may end
        elif kind is NotificationReceived:
            assert isinstance(event, NotificationReceived)
            outcome = self.handler.handle_notification(event, self)
            if outcome is not None:
                self._spawn(outcome)
        elif kind is HandshakeCompleted:
            assert isinstance(event, HandshakeCompleted)
            self.handshake_completed = event
        elif kind is PeerClosed:
            self._progress.clear()  # what tasks' tokens kept: the session forgot them too
            self._task_progress.clear()

    async def _run_handler(
        self, request: RequestReceived, answering: Coroutine[Any, Any, dict[str, Any]] | None
    ) -> None:
        try:
            result: dict[str, Any] | None = None
            failure: Exception | None = None
            try:
                result = await (self.handler.handle_request(request, self) if answering is None else answering)
            except Exception as exc:
                failure = exc
            if self._progressed and request.id in self._progressed:
                await self._let_progress_be_read(request.id)
        except asyncio.CancelledError:
            # Cancelled by the peer, or we are shutting down: either way no answer is sent.
            if self._progressed:
                self._progressed.discard(request.id)
            self.session.forget(request.id)
            if self._served_operations is not None:
                self._served_unanswered(request.id)
            return
        else:
            self._answer_with_outcome(request, result, failure)
        finally:
            self._tasks.pop(request.id, None)
        # Each HTTP answer has its own response, and with no other handler running there is no
        # answer to coalesce with: either way, no loop turn to wait for the write.
        if self._routes or not self._tasks:
            self._flush()
        else:
            self._schedule_flush()

    async def _let_progress_be_read(self, request_id: RequestId) -> None:
        """The handler of ``request_id`` reported progress and is done: write that progress now,
        and let the peer read it before the answer is queued (``Transport.progress_read``: the
        TypeScript SDK drops progress it reads in one chunk with the answer). Only such answers
        wait; the peer may still cancel meanwhile, and then gets none."""
        assert self._progressed is not None
        self._progressed.discard(request_id)
        self._flush()
        await self.transport.progress_read()

    def _answer_with_outcome(
        self, request: RequestReceived, result: dict[str, Any] | None, failure: Exception | None
    ) -> None:
        """The one place where a handler's outcome becomes the answer on the wire. (What a
        method makes of its own failures, as a tool call's ``isError`` result, is its
        handler's business: the server's ``tools.failure_result`` makes that result. A
        ``ToolError`` that reaches here came from another handler: -32603 with its message.)"""
        if failure is None:
            self._send_answer(request, result, None)
        elif isinstance(failure, MCPError):
            self._send_answer(request, None, failure)
        elif isinstance(failure, ToolError):  # its message is written for the peer
            self._send_answer(request, None, InternalError(str(failure)))
        else:
            logger.error("handler for %s (request %r) failed", request.method, request.id, exc_info=failure)
            self._send_answer(request, None, InternalError(f"Internal error while handling {request.method}"))

    def _send_answer(self, request: RequestReceived, result: dict[str, Any] | None, error: MCPError | None) -> None:
        try:
            if error is None:
                assert result is not None
                self.session.send_result(request.id, result)
            else:
                self.session.send_error(request.id, error)
        except LocalProtocolError:
            # Our own bug (say, an error code the request's era forbids): the peer still gets an answer.
            logger.exception("could not send the answer to %s (request %r)", request.method, request.id)
            with contextlib.suppress(LocalProtocolError):
                self.session.send_error(request.id, InternalError(f"Internal error while handling {request.method}"))
        if self._served_operations is not None:
            self._served_answered(request.id, result, error)
        if self._routes:
            self._route(request.id)

    def abort(self, request_id: RequestId, reason: str | None = "the peer went away") -> None:
        """Stop the handler of the peer's request; no answer will be sent (a closed
        stateless-era HTTP stream is such a cancellation)."""
        task = self._tasks.get(request_id)
        if task is not None:
            if self._served_operations is not None:
                self._cancel_received(request_id, reason)
            task.cancel(reason)

    def report_progress(
        self, request_id: RequestId, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Progress on the peer's request; see ``Session.send_progress`` for the rules it enforces.

        True when this report filled a batch, written now: a handler reporting in a tight loop
        should then give the loop a turn (``Context.report_progress`` does), so that the peer's
        messages (a cancellation) are read and the output drains."""
        if not self.session.send_progress(request_id, progress, total, message):
            return False
        progressed = self._progressed
        if progressed is None:
            progressed = self._progressed = set()
        progressed.add(request_id)
        if self._served_operations is not None:
            self._progress_sent(request_id, progress, total)
        if self._routes:
            self._route(request_id)
        # Batches, not the whole burst at the end: the peer reads one while we make the next,
        # and the messages are freed young (a queue of thousands makes the GC walk them all).
        if self.session.queued < _PROGRESS_BATCH:
            self._schedule_flush()
            return False
        self._flush()
        return True

    def _shutdown(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self._close_reason = reason
        self._flush()
        for event in self.session.connection_lost(reason):
            self._dispatch(event)
        self.closed.set()
        self._ended = True
        for task in list(self._tasks.values()):
            task.cancel("connection closed")
        for task in list(self._background or ()):
            task.cancel()

    def _handler_task_done(
        self, request_id: RequestId, started: tuple[Coroutine[Any, Any, Any], ...], task: asyncio.Task[None]
    ) -> None:
        # A task cancelled before its first step (the request and its cancellation came
        # in one read) never enters ``_run_handler``, so its cleanup happens here; a handler the
        # read loop started (``answer_now``) is closed where it waits, its ``finally`` run.
        if self._tasks.get(request_id) is task:
            for coroutine in started:
                coroutine.close()
            del self._tasks[request_id]
            self.session.forget(request_id)
            if self._served_operations is not None:
                self._served_unanswered(request_id)


async def _finish(answering: Coroutine[Any, Any, dict[str, Any]], waited: Any) -> dict[str, Any]:
    """The rest of a coroutine the read loop started (``Handler.answer_now``), in its own task:
    what it waits on (``waited``, a future, or None for a bare yield) is waited on here, and it
    goes on when that is done, as the task would have run it. Cancelled, it is cancelled where it
    waits: that future is cancelled and the ``CancelledError`` thrown in."""
    while True:
        resume: Callable[[Any], Any] = answering.send
        sent: Any = None
        if waited is not None:
            try:
                await asyncio.wait((waited,))
            except asyncio.CancelledError as cancelled:
                waited.cancel()
                resume, sent = answering.throw, cancelled
        try:
            waited = resume(sent)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
