"""What a running handler can do besides return: the request it serves, seen from inside.

A ``Context`` is made for each request whose handler asks for one (a parameter
annotated ``Context``). It knows the era and the client's capabilities for
this request, so the same handler code serves both eras.
"""

from __future__ import annotations

__all__ = ["CURRENT_CONTEXT", "Context"]

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from ..protocol.capabilities import has, require
from ..protocol.events import RequestReceived
from ..runtime.caller_address import address_budget, caller_address
from ..state.store import slot_of
from ..types.errors import MissingCapability
from ..types.field_revisions import versions_without
from ..types.logging import LOG_LEVEL_RANK, LOGGING_LEVELS
from ..types.versions import Era
from . import elicitation, request_roots
from .delegation import deferred
from .log_sending import operator_log
from .mrtr import InputRequired, Round
from .once import run_once
from .request_roots import hidden_log, known_roots, text_hider
from .roots import Roots

if TYPE_CHECKING:
    from ..progress.parts import ProgressParts
    from ..progress.stages import ProgressStages
    from ..runtime.connection import Connection
    from . import sampling
    from .faces import ContextServer
    from .tasks.runner import TaskRunner
    from .url_elicitation import ask

#: The context of the request the running handler serves; set by the server in each request's task.
CURRENT_CONTEXT: ContextVar[Context] = ContextVar("backchannel_context")

T = TypeVar("T")
#: The revisions whose progress notification has no ``message`` (2024-11-05).
_NO_PROGRESS_MESSAGE = versions_without("ProgressNotificationParams", "message")


class Context:
    """The request being served: progress, logging and facts about the client."""

    __slots__ = ("connection", "declines", "found_roots", "request", "round", "server", "task")

    def __init__(self, server: ContextServer, connection: Connection, request: RequestReceived) -> None:
        self.server = server
        self.connection = connection
        self.request = request
        #: Stateless era, on tools/call, prompts/get and resources/read: this run's answers.
        self.round: Round | None = None
        #: What ``list_roots()`` found for this request (None until it is awaited).
        self.found_roots: Roots | None = None
        #: The task this request's tool runs as (``server/tasks/``); None for a plain request.
        self.task: TaskRunner | None = None
        #: Declines remembered before: to forget, or that answered a form (``server/elicitation.py``).
        self.declines: elicitation.Declines | None = None

    @classmethod
    def current(cls) -> Context | None:
        """The context of the request the calling code runs for, or None outside a handler."""
        return CURRENT_CONTEXT.get(None)

    @property
    def request_id(self) -> int | str:
        """The JSON-RPC id of the request this handler answers."""
        return self.request.id

    @property
    def era(self) -> Era:
        """``"handshake"`` or ``"stateless"``: how the client speaks to us on this request."""
        return self.request.era

    @property
    def protocol_version(self) -> str | None:
        """The protocol revision of this request (the session's, or the request's own ``_meta``
        in the stateless era); None before a handshake-era session has one."""
        return self.request.version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared it can do; read it, don't change it (sessions share it).
        To ask about one capability, ``client_supports`` is shorter."""
        return self.request.client_capabilities or {}

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's ``clientInfo`` (name, version, ...); read it, don't change it."""
        return self.request.client_info or {}

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared ``capability`` (a dotted path like ``"elicitation.url"``)."""
        return has(self.client_capabilities, capability)

    @property
    def principal(self) -> str | None:
        """Who is calling, as the HTTP authenticator named them; None without one (stdio, memory)."""
        principal: str | None = getattr(self.connection.transport, "principal", None)  # an AuthenticatedTransport's
        return principal

    def disable(self, kind: str, *names: str) -> None:
        """Hide the ``kind`` (``"tool"``, ``"prompt"`` or ``"resource"``) items ``names`` (names or
        ``fnmatch`` patterns, as the client sees them) from this session only, and refuse them as
        unknown; its client is sent ``notifications/*/list_changed`` (``Server.disable``)."""
        self._serving_server().disable(kind, *names, session=self.connection)

    def enable(self, kind: str, *names: str) -> None:
        """Show ``names`` to this session again, or despite a broader rule of the server's (``Server.enable``)."""
        self._serving_server().enable(kind, *names, session=self.connection)

    def _serving_server(self) -> Any:
        # The server the client is connected to (a mount's handler runs on its mounting server's
        # connection, whose names the client sees): it keeps the rules, made at its first.
        server = self.connection.handler
        if not hasattr(server, "disable"):
            raise RuntimeError("this connection's server has no visibility rules")
        return server

    def caller_scope(self, *, anonymous: str | None) -> str | None:
        """The name under which per-caller state (``once`` results, declined forms) is kept
        for this request in the stateless era: the authenticated principal over HTTP; this
        connection over stdio and memory (one client each); ``anonymous`` for an HTTP caller
        without a principal, whose every request is a connection of its own."""
        principal = self.principal
        if principal is not None:  # hashed: keys of one fixed shape, whatever names the authenticator uses
            import hashlib

            return "principal:" + hashlib.sha256(str(principal).encode()).hexdigest()[:32]
        if getattr(self.connection.transport, "authenticates_callers", False):
            return anonymous
        return self.server.connection_scope(self.connection)

    # ctx.elicit_url, ctx.elicit, ctx.list_roots and ctx.sample are the functions that do the work,
    # taken as methods (their first parameter is the context): one signature and one docstring
    # each, which type checkers, help() and IDEs all read.
    if TYPE_CHECKING:
        elicit_url = ask.elicit_url
    else:  # (the URL flows load when a tool first asks for one: 0.1 MiB and 2 ms of every start)
        elicit_url = deferred("backchannel.server.url_elicitation.ask", "elicit_url")

    async def request_input(
        self,
        method: str,
        params: dict[str, Any],
        capability: str,
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the client something (``elicitation/create``, ``roots/list``,
        ``sampling/createMessage``) and return its answer, in either era.

        Handshake era: a request on the live connection (on HTTP, on this request's
        stream). Stateless era: the handler stops here, the client is sent an
        ``InputRequiredResult``, and when it retries with the answer the handler
        runs again from the top and this call returns the answer. Raises
        ``MissingCapability`` (-32021) when the client did not declare ``capability``.
        ``key`` names the question in ``inputRequests`` (default: numbered in the order
        asked); each question of one request needs its own.
        """
        require(self.client_capabilities, capability)
        if self.task is not None and self.task.begun:  # asked through the task, in both eras
            return await self.task.ask(method, params, timeout=timeout, key=key)
        if self.era == "handshake":

            def ask(asked: dict[str, Any]) -> Awaitable[dict[str, Any]]:
                return self._ask(method, asked, timeout)

            return await self.asked_through_middleware(method, params, ask)
        # Stateless era: the question is part of this request's result (a middleware sees it there).
        if self.round is None:
            raise MissingCapability(
                capability, f"{self.request.method} cannot ask the client anything in the stateless era"
            )
        key = self.round.next_key(method, key)
        answer = self.round.answer(key)
        if answer is None:
            request: dict[str, Any] = {"method": method}
            if params:
                request["params"] = params
            raise InputRequired(key, request)
        return answer

    async def _ask(self, method: str, params: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        return await self.connection.request(method, params, related=self.request.id, timeout=timeout)

    def asked_through_middleware(
        self, method: str, params: dict[str, Any], ask: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
    ) -> Awaitable[dict[str, Any]]:
        """The client's answer to a question sent as a request while serving this one (the handshake
        era): ``ask(params)`` sends it, through the serving server's middleware, which see it go and
        its answer come (its own handler's questions, and those of a task it relays)."""
        middleware = getattr(self.connection.handler, "middleware", None)  # the serving server's
        if not middleware:
            return ask(params)
        return middleware.asked(method, params, self.connection, self.era, self.principal, self.request.id, ask)  # type: ignore[no-any-return]

    elicit = elicitation.elicit
    forget_decline = elicitation.forget_decline

    async def once(self, name: str, work: Callable[[], Awaitable[T] | T]) -> T:
        """Run ``work`` exactly once for this request, however often the handler re-runs.

        In the stateless era a handler runs again from the top after every question it
        asks (see ``request_input``); work before a question would repeat. ``once``
        runs it the first time and returns the remembered result on every re-run, also
        when a client replays an older ``requestState``: the result is kept in the
        server's state store (``Server(state=...)``; the default one lives in this
        process, so several workers need a shared one) until every state that can replay
        it has expired. The result must be JSON data (dict, list, str, int, float, bool
        or None): anything else raises ``TypeError`` here, and the work is still not run
        again. When ``work`` raises, nothing is kept and a retry runs it again. Each
        caller may hold ``Server(once_limit=...)`` results at a time (per authenticated
        principal over HTTP, per connection over stdio, per address for anonymous HTTP
        callers), and all callers together ``once_limit_total``; past either the request
        fails with -32603 naming which, and ``work`` is not run. A retry whose request began
        before the state store lost its data (Redis restarted without persistence) is refused
        with -32602 rather than run again. In the handshake era the handler runs once anyway,
        and so does ``work``.
        """
        if self.round is None:
            outcome = work()
            return await outcome if inspect.isawaitable(outcome) else outcome
        scope = self.caller_scope(anonymous=None)
        who = "this caller"
        if scope is None:  # an anonymous HTTP caller: its address's bucket
            address = caller_address()
            where = address_budget(address) if address is not None else None
            scope = "anonymous" if where is None else "address:" + where
            who = "anonymous callers" if where is None else f"anonymous callers from {where}"
        server = self.server
        return await run_once(
            server.state,
            server.state_sealer,
            self.round,
            name,
            work,
            bucket=f"once:{slot_of(scope)}",
            limit=server.once_limit,
            limit_total=server.options.state.once_limit_total,
            who=who,
        )

    async def gather(self, *questions: Awaitable[Any]) -> list[Any]:
        """Ask several questions at once (``ctx.elicit``, ``ctx.list_roots``, ``ctx.sample``
        calls): answers in the same order.

        Handshake era: the questions run concurrently. Stateless era: every question
        not yet answered goes out in one ``InputRequiredResult``, so the client answers
        them all in one round trip instead of one each.
        """
        if self.era == "handshake" or self.round is None:
            return list(await asyncio.gather(*questions))
        answers: list[Any] = []
        unanswered: list[InputRequired] = []
        for position, question in enumerate(questions):
            try:
                answers.append(await question)
            except BaseException as failure:
                if isinstance(failure, InputRequired) and failure.request is not None:
                    unanswered.append(failure)
                    answers.append(None)
                    continue
                # The questions after this one will never be awaited: close them, or each
                # leaves a "coroutine was never awaited" warning behind.
                for rest in questions[position + 1 :]:
                    if inspect.iscoroutine(rest):
                        rest.close()
                raise
        if unanswered:
            raise InputRequired.together(unanswered)
        return answers

    list_roots = request_roots.list_roots

    @property
    def roots(self) -> Roots:
        """The roots known without asking: those ``list_roots()`` found for this request,
        the session's cache, or the server's default when the client has no ``roots``
        capability. Raises ``LookupError`` otherwise: ``await ctx.list_roots()`` first."""
        if self.found_roots is not None:
            return self.found_roots
        known = known_roots(self)
        if known is None:
            raise LookupError("the client's roots are not known yet; await ctx.list_roots() first")
        return known

    if TYPE_CHECKING:
        sample = sampling.sample
    else:  # (sampling's checks load with a first ctx.sample)
        sample = deferred("backchannel.server.sampling", "sample")

    @property
    def cancelled(self) -> bool:
        """True once the client has cancelled this request: a long loop can check it and stop.

        (The handler's task is cancelled as well; this is for work that shields itself.) In a
        task: once ``tasks/cancel`` reached it.
        """
        if self.task is not None and self.task.begun:
            return self.task.cancel_requested
        return self.connection.session.is_cancelled(self.request.id)

    @property
    def task_id(self) -> str | None:
        """The id of the task this tool runs as, once it is one (``server/tasks/``); else None."""
        return self.task.record.task_id if self.task is not None and self.task.begun else None

    async def start_task(self) -> None:
        """Where a tool registered with ``task_start="explicit"`` becomes a task: the client is
        answered with the task now, and the rest of the body runs on as it. What the body asked
        before was asked synchronously (in the stateless era, as multi round-trip rounds of the
        call itself). Does nothing when the call runs inline or is a task already."""
        if self.task is not None and not self.task.begun:
            await self.task.begin()

    async def shield(self, work: Awaitable[T]) -> T:
        """Run ``work`` to the end even if the client cancels meanwhile (an open transaction).

        If a cancellation arrived during it, it is honoured as soon as ``work`` is
        done: ``CancelledError`` is raised then, and no answer is sent.
        """
        task = asyncio.ensure_future(work)
        interrupted = False
        while True:
            try:
                result = await asyncio.shield(task)
                break
            except asyncio.CancelledError:
                if task.done() and not task.cancelled():
                    result = task.result()
                    interrupted = True
                    break
                if task.cancelled():
                    raise
                interrupted = True
        if interrupted:
            raise asyncio.CancelledError("cancelled by the client during a shielded section")
        return result

    def stages(self, stages: Sequence[str] | Mapping[str, float], total: float = 100.0) -> ProgressStages:
        """Progress for multi-stage work on one monotonic scale (see ``ProgressStages``)."""
        from ..progress.stages import ProgressStages  # (loaded by a first use, as the parts are)

        return ProgressStages(self, stages, total)

    def progress_parts(
        self, parts: Sequence[str] | Mapping[str, float] | None = None, total: float = 100.0
    ) -> ProgressParts:
        """Progress for sub-tasks that run at once, as one increasing stream that ends at
        ``total``: ``async with ctx.progress_parts() as parts: part = parts.add("download",
        weight=3)``, then ``await part.advance(4096, of=size)`` (see ``ProgressParts``)."""
        from ..progress.parts import ProgressParts  # (0.05 MiB that a server without it does not load)

        return ProgressParts(self, parts, total)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far along the work is.

        A no-op when the client asked for no progress. Values must increase;
        a value that does not, or one reported after the answer, raises
        ``LocalProtocolError`` and is not sent. A root the client marked sensitive
        shows in ``message`` as ``[REDACTED:sensitive root]``. A 2024-11-05 session gets no
        ``message`` (that revision's progress has none).
        """
        if message:
            if self.request.version in _NO_PROGRESS_MESSAGE:
                message = None  # 2024-11-05's progress has no message
            elif (hide := text_hider(self)) is not None:
                message = hide(message)
        if self.task is not None and self.task.begun:  # the record's status message (and the token)
            await self.task.progress(progress, total, message)
            return
        connection = self.connection
        if connection.report_progress(self.request.id, progress, total, message):
            # A batch just left: a handler reporting in a tight loop lets the loop read the
            # client (its cancellation) and waits while the output is backed up.
            await asyncio.sleep(0)
            await connection.transport.drain()

    def close_sse_stream(self) -> bool:
        """Handshake-era HTTP: end the SSE response carrying this request now.

        The handler goes on; what it sends next is kept, and the client fetches it
        by reconnecting with ``Last-Event-ID`` (SEP-1699 polling), which frees
        proxies and load balancers from long-held connections. Returns False where
        there is no such stream (stdio, the stateless era).
        """
        close_stream = getattr(self.connection.transport, "close_stream", None)  # a RoutedTransport's
        return close_stream is not None and bool(close_stream(self.request.id))

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message to the client, if the client wants this level.

        Handshake era: at or above the level set with ``logging/setLevel``
        (or the server's default). Stateless era: only when the request
        carried a log level, and at or above it; never from a task, which the tasks
        extension gives no log channel. ``data`` is any JSON value;
        secrets and personal data in it are redacted, the paths of roots the client
        marked sensitive are hidden, and the rate is limited.
        """
        self.log_nowait(level, data, logger)

    def log_nowait(self, level: str, data: Any, logger: str | None = None) -> bool:
        """``log`` for code that cannot await; True when the message was sent."""
        if level not in LOG_LEVEL_RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOGGING_LEVELS)}")
        operator_log(self, level, data, logger)  # the OpenTelemetry record, whatever the client asked for
        request = self.request
        if self.task is not None and self.task.begun:
            if self.era == "stateless":
                return False
            request = self.task.stream_request()  # on the stream of an open tasks/result, if any
        threshold = self.request.log_level if self.era == "stateless" else self.server.log_level_for(self.connection)
        if threshold is None or LOG_LEVEL_RANK[level] < LOG_LEVEL_RANK[threshold]:
            return False
        hide = text_hider(self)
        if hide is not None:
            data, logger = hidden_log(self.server.log_redactor, hide, data, logger)
        return self.server.send_log(self.connection, request, level, data, logger)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        """``log("debug", data, logger)``: sent only if the client's level lets it through."""
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        """``log("info", data, logger)``: sent only if the client's level lets it through."""
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        """``log("warning", data, logger)``: sent only if the client's level lets it through."""
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        """``log("error", data, logger)``: sent only if the client's level lets it through."""
        await self.log("error", data, logger)
