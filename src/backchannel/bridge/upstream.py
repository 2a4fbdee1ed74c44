"""An upstream server seen as a client: the requests forwarded to it, its questions relayed back.

``Upstream`` holds the clients of one upstream server (``UpstreamSpec``: a command over stdio or a
URL over HTTP) and forwards a downstream request to it with ``forward(method, params, ctx)``, where
``ctx`` is the downstream request's ``Context``. What the upstream does meanwhile reaches the
downstream client in the form of the client's own era:

- its progress becomes ``ctx.report_progress`` on the downstream token, its log messages ``ctx.log``
  at the downstream level;
- its questions (``elicitation/create``, ``sampling/createMessage``, ``roots/list``), whether it asks
  them as requests of its own (handshake era) or as an ``InputRequiredResult`` (stateless era), reach
  a handshake-era client as requests on its session and a stateless-era client as the
  ``inputRequests`` of an ``InputRequiredResult`` (see ``forward``);
- a downstream cancellation cancels the upstream request (the runtime cancels the handler, and a
  cancelled wait cancels its request on the wire), and a late answer is dropped.

Capabilities are carried honestly: the upstream session declares what the downstream client
declared of elicitation, sampling and roots, and nothing else. Clients are kept per set of those
capabilities, so two downstream clients that declared different ones never share a session whose
declaration fits only one of them.

A handshake-era upstream asks its questions on its session while the call waits; a stateless-era
downstream client can only be asked through its call's answer. The bridge then keeps the upstream
call running in this process (``_Held``), answers the downstream call with the questions and a
``requestState`` sealed with the server's key that names the held call, and resumes it when the
client retries with the answers. That state is only good in the process that made it, for the
sealer's TTL. An upstream's own ``requestState`` is sealed inside ours, so the client never sees it
raw and cannot send it anywhere else; it reaches the upstream byte for byte.
"""

from __future__ import annotations

__all__ = ["Upstream", "UpstreamSpec"]

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import msgspec

from ..client.client import Client
from ..client.inputs import InputHandlers
from ..client.task_state import TaskState
from ..client.tasks import ToolTask
from ..client.tool_headers import keep_tools_with_valid_headers
from ..framing.mirrored_headers import XMcpHeaderError, parse_x_mcp_headers
from ..protocol.events import NotificationReceived, ProgressReceived
from ..state.sealer import StateSealer, binding_of
from ..types import meta as M
from ..types.capabilities import with_extensions
from ..types.errors import (
    URL_ELICITATION_REQUIRED,
    ConnectionClosed,
    InvalidParams,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestError,
    UpstreamUnavailable,
)
from ..types.logging import LOG_LEVEL_RANK
from ..types.tasks import TASKS_EXTENSION
from ..types.versions import Era, EraSpelling
from .translate import CAPABILITY_OF, carried_capabilities, downstream_result, upstream_params

if TYPE_CHECKING:
    import httpx2

    from ..runtime.connection import Connection
    from ..server.context import Context
    from ..server.server import Server
    from ..transports.base import Transport
    from ..types.tools import CallToolResult

logger = logging.getLogger("backchannel.bridge")
_key_of = msgspec.json.Encoder(order="sorted").encode
#: How many times one downstream handshake-era call answers a stateless upstream's questions.
MAX_ROUNDS = 32
#: A stateless upstream that asks nothing yet says "not done" (a URL's page still open): the first
#: pause before asking again, the longest, and how long in all (seconds).
_NOT_YET_PAUSE, _NOT_YET_LONGEST, _NOT_YET_LIMIT = 0.1, 2.0, 600.0
#: ``requestState`` payload keys: the upstream's own state, or the id of a call held here.
_UPSTREAM_STATE = "u"
_HELD = "h"
_URLS_FIRST = "x"
#: How long a retry after the URLs of a -32042 waits for their completion before answering "not yet".
_URL_WAIT = 10.0
#: How many completions heard from upstream are remembered (a retry may come after the notification).
_URL_DONE_KEPT = 1000


@dataclass(frozen=True)
class UpstreamSpec:
    """Where the upstream server is: ``command`` (spawned, over stdio), ``url`` (Streamable HTTP,
    or HTTP+SSE found the way ``Client.http`` finds it) or ``server`` (a backchannel ``Server`` in
    this process, over a memory transport), with ``headers`` and ``auth`` for HTTP, and the ``era``
    to speak to it (``"auto"`` probes). ``wrap`` wraps each client transport made (a test's ``Tap``).
    ``connect_timeout`` bounds, in seconds, the wait for the upstream to answer its introduction
    (``initialize`` or ``server/discover``; a login's time is not counted): past it, the upstream
    is unavailable (None: no bound)."""

    command: Sequence[str] = ()
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth: httpx2.Auth | None = None
    era: EraSpelling = "auto"
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    server: Server | None = None
    wrap: Callable[[Transport], Transport] | None = None
    connect_timeout: float | None = 60.0

    def __post_init__(self) -> None:
        if sum((bool(self.command), self.url is not None, self.server is not None)) != 1:
            raise ValueError("an upstream is a command, a URL or a server: exactly one of them")

    @property
    def name(self) -> str:
        """The upstream as a person would name it: its URL, its command line or its server's name."""
        if self.server is not None:
            return f"server {self.server.name!r}"
        return self.url if self.url is not None else " ".join(self.command)

    def client(self, upstream: Upstream, declared: dict[str, Any], era: EraSpelling | None = None) -> UpstreamClient:
        """A client (not yet connected) of this upstream that declares ``declared``, speaking ``era``
        (default: the spec's)."""
        transport: Transport
        if self.server is not None:
            from ..transports.memory import memory_pair

            transport, served = memory_pair()
            upstream.serving.append(asyncio.get_running_loop().create_task(self.server.serve(served)))
        elif self.url is not None:
            from ..transports.http.client import HttpClientTransport

            transport = HttpClientTransport(self.url, headers=self.headers, auth=self.auth)
        else:
            from ..telemetry.spans import on_pipe
            from ..transports.stdio import StdioClientTransport

            env = None if self.env is None else {**os.environ, **self.env}
            transport = on_pipe(StdioClientTransport(self.command[0], self.command[1:], env=env, cwd=self.cwd))
        if self.wrap is not None:
            transport = self.wrap(transport)
        client = UpstreamClient(transport, upstream=upstream, declared=declared, era=era or self.era)
        if callable(pause_with := getattr(self.auth, "pause_clocks_with", None)):
            pause_with(client.connection.timeouts_paused)  # a login's time is the person's (as Client.http)
        return client


class _RelayedInputs(InputHandlers):
    """The answers to an upstream's questions, however it asks them (a request on its session, an
    ``InputRequiredResult``, a task's ``input_required``): the downstream client's."""

    def __init__(self, upstream: Upstream) -> None:
        super().__init__()
        self.upstream = upstream
        self.client: UpstreamClient | None = None

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.client is not None
        return await self.upstream.relay_question(self.client, method, params)


class UpstreamClient(Client):
    """A ``Client`` whose answers to the server's questions come from the downstream client."""

    def __init__(self, transport: Any, *, upstream: Upstream, declared: dict[str, Any], era: EraSpelling) -> None:
        super().__init__(transport, name="backchannel-proxy", era=era, request_timeout=None)
        # The tasks extension too, to stateless-era upstreams only: the bridge follows their tasks itself.
        self.capabilities = with_extensions(declared, {TASKS_EXTENSION: {}})
        self.session.config = replace(self.session.config, capabilities=self.capabilities)
        relayed = _RelayedInputs(upstream)
        relayed.client = self
        self.inputs = relayed
        self.upstream = upstream
        #: The log level last asked of a handshake-era upstream (``logging/setLevel``).
        self.level_set: str | None = None
        #: The tool definitions whose ``x-mcp-header`` annotations this client's transport mirrors.
        self._mirrored: dict[str, dict[str, Any]] = {}

    def listed_tools(self, result: dict[str, Any]) -> None:
        """SEP-2243, as ``Client.request`` does it: a stateless-era ``tools/list`` page over HTTP
        tells the transport each tool's ``x-mcp-header`` annotations and loses the invalid ones."""
        if self._negotiated is not None and self.session.era == "stateless":
            keep_tools_with_valid_headers(result, self._negotiated)

    def mirror(self, name: str, tool: dict[str, Any] | None) -> None:
        """Mirror the arguments ``tool`` (as the upstream listed it, maybe to another of the bridge's
        clients) annotates with ``x-mcp-header`` into this client's ``tools/call`` headers (SEP-2243)."""
        if self._negotiated is None or tool is None or self._mirrored.get(name) is tool:
            return
        self._mirrored[name] = tool
        with contextlib.suppress(XMcpHeaderError):  # such a tool is left out of the list it came in
            self._negotiated.use_tool_headers(name, parse_x_mcp_headers(tool.get("inputSchema")))

    @property
    def offers_tasks(self) -> bool:
        """Whether the upstream runs tool calls as tasks, in either era's form."""
        offered = self.server_capabilities
        extensions = offered.get("extensions")
        return "tasks" in offered or (isinstance(extensions, dict) and TASKS_EXTENSION in extensions)

    def handle_notification(self, notification: NotificationReceived, connection: Connection) -> Awaitable[None] | None:
        taken = super().handle_notification(notification, connection)  # its caches, listeners and URL flows
        passed = self.upstream.notified(self, notification.method, notification.params)
        if taken is None or passed is None:
            return taken if passed is None else passed
        return _both(taken, passed)


@dataclass(slots=True, eq=False)
class _Call:
    """A downstream request under way upstream: where the upstream's questions and logs go."""

    ctx: Context
    #: Set when the downstream client is of the stateless era and the upstream asks on its session.
    held: _Held | None = None
    #: The URL questions this call asked a handshake-era client under an id the bridge made up (the
    #: stateless era has none): the bridge says each is complete when the upstream's call ends.
    url_ids: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class _Held:
    """An upstream call kept running across a stateless-era client's rounds."""

    id: str
    task: asyncio.Task[dict[str, Any]] | None = None
    #: Questions asked and not yet answered: key -> (the request as ``inputRequests`` shows it, its answer).
    asked: dict[str, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    expiry: asyncio.TimerHandle | None = None
    numbers: itertools.count[int] = field(default_factory=itertools.count)

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        key = f"upstream-{next(self.numbers)}"
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        request: dict[str, Any] = {"method": method}
        if params:
            request["params"] = params
        self.asked[key] = (request, answer)
        self.changed.set()
        try:
            return await answer
        finally:
            self.asked.pop(key, None)

    def stop(self) -> None:
        if self.expiry is not None:
            self.expiry.cancel()
        if self.task is not None:
            self.task.cancel()


class Upstream:
    """One upstream server, its clients, and the downstream requests under way on it."""

    def __init__(
        self,
        spec: UpstreamSpec,
        *,
        sealer: StateSealer,
        notified: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.spec = spec
        self.sealer = sealer
        #: Told each notification of the upstream the bridge passes on (list changes, resource updates...).
        self.on_notification = notified
        self._clients: dict[bytes, UpstreamClient] = {}
        self._last: UpstreamClient | None = None
        self._connecting = asyncio.Lock()
        self._calls: dict[UpstreamClient, list[_Call]] = {}
        self._held: dict[str, _Held] = {}
        #: The eras the upstream refused (``UpstreamSpec(era="auto")``): not tried again.
        self._refused: set[Era] = set()
        #: URL questions asked of handshake-era clients, by elicitationId: who to tell of their completion.
        self._url_hosts: dict[str, Connection] = {}
        #: ``notifications/elicitation/complete`` heard from upstream, by elicitationId.
        self._url_done: dict[str, asyncio.Event] = {}
        #: The upstream's tools as last listed, by name: their ``x-mcp-header`` annotations are
        #: checked on a call's way in (``Proxy.tool_definition``) and mirrored on its way up.
        self.tools: dict[str, dict[str, Any]] = {}
        #: The handshake-era downstream connection a question or log with no call of its own goes to.
        self.downstream: Connection | None = None
        self._listening: list[asyncio.Task[None]] = []
        #: In-process upstream servers' ``serve`` tasks (``UpstreamSpec.server``).
        self.serving: list[asyncio.Task[None]] = []
        self._watchers: dict[str, int] = {}
        self._watching: dict[str, asyncio.Task[None]] = {}

    # ---------------------------------------------------------------- clients

    async def client_for(self, declared: dict[str, Any] | None, era: Era | None = None) -> UpstreamClient:
        """The connected client that declares what a downstream client that declared ``declared``
        may be asked; connected now if there is none (``UpstreamUnavailable`` when it can't be).
        ``era`` is the downstream client's: with ``UpstreamSpec(era="auto")`` the upstream is met
        in that era when it speaks it (the same era both sides: questions, keys and states pass as
        they are), else in the other."""
        carried = carried_capabilities(declared)
        key = _key_of([carried, self._era_met(era)])
        client = self._clients.get(key)
        if client is not None and not client.connection.closed.is_set():
            self._last = client
            return client
        async with self._connecting:
            client = self._clients.get(key)
            if client is not None and not client.connection.closed.is_set():
                return client
            if client is not None:
                await self._drop(client)
            client = await self._connected(carried, era)
            client.request_timeout = None  # forwarded requests wait as long as their callers do
            self._clients[_key_of([carried, client.session.era if self.spec.era == "auto" else None])] = client
            self._clients[key] = client
            self._last = client
            if client.session.era == "stateless":  # its list changes come on a listen stream only
                self._listen_for_lists(client)
            return client

    def _era_met(self, era: Era | None) -> Era | None:
        """The era a client for a downstream client of ``era`` meets the upstream in, as far as
        known now (None: whatever the spec says): the preferred one, unless the upstream refused it."""
        if self.spec.era != "auto":
            return None
        preferred: Era = era or "handshake"
        if preferred in self._refused:
            return "stateless" if preferred == "handshake" else "handshake"
        return preferred

    async def _connected(self, carried: dict[str, Any], preferred: Era | None) -> UpstreamClient:
        """A new client of the upstream, connected. ``era="auto"`` tries ``preferred`` (the downstream
        client's era; the handshake era when none is known: a session carries every question of a
        server that speaks both eras, some ask only in it), then the other; an era the upstream
        refused once (``initialize`` of a stateless-only server, ``server/discover`` of an older one)
        is not tried again."""
        eras: tuple[EraSpelling, ...]
        if self.spec.era != "auto":
            eras = (self.spec.era,)
        else:
            first: Era = preferred or "handshake"
            eras = tuple(
                e for e in (first, "stateless" if first == "handshake" else "handshake") if e not in self._refused
            )
        failure: Exception | None = None
        for era in eras:
            client = self.spec.client(self, carried, era)
            client.request_timeout = self.spec.connect_timeout  # a server that never answers is unavailable
            try:
                await client.__aenter__()
            except asyncio.CancelledError:
                raise
            except (RequestError, RemoteProtocolError) as exc:  # this era refused: the next one
                failure = exc
                if self.spec.era == "auto":
                    self._refused.add(era)  # type: ignore[arg-type]
                continue
            except Exception as exc:
                failure = exc
                break
            return client
        message = f"upstream {self.spec.name} is unavailable: {_one_line(failure or RuntimeError('no era'))}"
        logger.error("%s", message)
        raise UpstreamUnavailable(message, data={"upstream": self.spec.name}) from None

    def _listen_for_lists(self, client: UpstreamClient) -> None:
        offered = client.server_capabilities
        wanted = {
            kind: isinstance(offered.get(kind), dict) and offered[kind].get("listChanged") is True
            for kind in ("tools", "prompts", "resources")
        }
        if any(wanted.values()):
            self._listening.append(asyncio.get_running_loop().create_task(self._hear(client.listen(**wanted))))

    @staticmethod
    async def _hear(events: Any) -> None:
        """Keep a listen stream open; what it hears reaches ``notified`` as the client takes it in."""
        with contextlib.suppress(Exception):
            async with events as stream:
                async for _ in stream:
                    pass

    async def watch(self, uri: str) -> None:
        """Hear of changes to the resource ``uri`` upstream (``resources/subscribe``, or a
        ``subscriptions/listen`` of a stateless-era upstream); once however many ask."""
        self._watchers[uri] = self._watchers.get(uri, 0) + 1
        if self._watchers[uri] > 1:
            return
        client = self.connected
        if client is None:
            return
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def hear() -> None:
            try:
                async with client.listen(uri) as stream:
                    started.set_result(None)
                    async for _ in stream:
                        pass
            except Exception as exc:
                if not started.done():
                    started.set_exception(exc)

        self._watching[uri] = asyncio.get_running_loop().create_task(hear())
        await started

    def unwatch(self, uri: str) -> None:
        """The last of those who asked ``watch(uri)`` no longer needs it."""
        count = self._watchers.get(uri, 0) - 1
        if count > 0:
            self._watchers[uri] = count
            return
        self._watchers.pop(uri, None)
        task = self._watching.pop(uri, None)
        if task is not None:
            task.cancel()

    @property
    def connected(self) -> UpstreamClient | None:
        """A connected client, if any (what the upstream offers is read from it, a resource watched
        with it): the one a downstream request used last, when it is still connected."""
        last = self._last
        if last is not None and not last.connection.closed.is_set():
            return last
        for client in self._clients.values():
            if not client.connection.closed.is_set():
                return client
        return None

    async def _drop(self, client: UpstreamClient) -> None:
        for key, kept in list(self._clients.items()):
            if kept is client:
                del self._clients[key]
        with contextlib.suppress(Exception):
            await client.aclose()

    async def aclose(self) -> None:
        """Stop every held call and close every client."""
        for task in [*self._listening, *self._watching.values()]:
            task.cancel()
        for held in list(self._held.values()):
            held.stop()
        self._held.clear()
        for client in list(self._clients.values()):
            await self._drop(client)
        for task in self.serving:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 5)
        self.serving.clear()

    # ---------------------------------------------------------------- forwarding

    async def forward(self, method: str, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """Send the downstream request ``method`` upstream and return its result, as the
        downstream client's era and revision have it; the upstream's error, code and data
        unchanged, as an ``MCPError``."""
        era = ctx.era
        if era == "handshake":
            self.downstream = ctx.connection
        # What a sealed state is bound to: only the stateless era seals or opens one (a digest of the arguments).
        binding = binding_of(method, params, ctx.principal) if era == "stateless" else ""
        sent = upstream_params(method, params)
        state = params.get("requestState")
        if era == "stateless" and "inputResponses" in params:
            _check_responses(params["inputResponses"])  # checked here: a handshake-era upstream never sees them
        if era == "stateless" and state is not None and not method.startswith("tasks/"):
            payload = self.sealer.open(state, binding)
            if _HELD in payload:
                return await self._resume(payload[_HELD], method, params, ctx, binding)
            if _URLS_FIRST in payload:
                not_yet = await self._after_urls(payload[_URLS_FIRST], method, params, ctx, binding)
                if not_yet is not None:
                    return not_yet
            if _UPSTREAM_STATE in payload:
                sent = {**sent, "inputResponses": params.get("inputResponses", {})}
                if payload[_UPSTREAM_STATE] is not None:
                    sent["requestState"] = payload[_UPSTREAM_STATE]
        client = await self.client_for(ctx.client_capabilities, ctx.era)
        if era == "stateless" and state is None and "inputResponses" in params and client.session.era == "stateless":
            sent = {**sent, "inputResponses": params["inputResponses"]}  # answers sent before any question
        if method == "tools/call" and isinstance(name := params.get("name"), str):
            client.mirror(name, self.tools.get(name))
        sent = await self._with_log_level(client, sent, ctx)
        if era == "stateless" and client.session.era == "handshake" and method in _MAY_ASK:
            return await self._hold(client, method, sent, ctx, binding)
        call = _Call(ctx)
        result = await self._call(client, call, method, sent)
        rounds, pause, until = 0, _NOT_YET_PAUSE, 0.0
        while result.get("resultType") == "input_required":
            if era == "stateless":  # the same era both sides: the questions pass as they are
                sealed = self.sealer.seal({_UPSTREAM_STATE: result.get("requestState")}, binding)
                passed: dict[str, Any] = {"resultType": "input_required", "requestState": sealed}
                if "inputRequests" in result:
                    passed["inputRequests"] = result["inputRequests"]
                return passed
            if requests := result.get("inputRequests") or {}:
                rounds += 1
                if rounds > MAX_ROUNDS:
                    raise MCPError(f"{method}: the upstream asked more than {MAX_ROUNDS} rounds of questions")
                pause, until = _NOT_YET_PAUSE, 0.0
            else:  # nothing asked: an out-of-band step (a URL's page) is not done yet; retry later
                now = asyncio.get_running_loop().time()
                until = until or now + _NOT_YET_LIMIT
                if now >= until:
                    raise MCPError(f"{method}: the upstream's out-of-band step took over {_NOT_YET_LIMIT:.0f} s")
                await asyncio.sleep(pause)
                pause = min(pause * 2, _NOT_YET_LONGEST)
            answers = await self._answer_here(call, requests)
            retry = {**sent, "inputResponses": answers}
            if "requestState" in result:
                retry["requestState"] = result["requestState"]  # byte for byte
            result = await self._call(client, call, method, retry)
        self._completed(call)
        if result.get("resultType") == "task" and not _takes_tasks(ctx):
            result = await self._followed(client, call, sent, result)
        if method == "tools/list":
            self._listed(client, result)
        return downstream_result(method, result, era, ctx.protocol_version)

    def _listed(self, client: UpstreamClient, result: dict[str, Any]) -> None:
        """Keep the tools of an upstream ``tools/list`` page (less those ``client`` must leave out)."""
        client.listed_tools(result)
        for tool in result.get("tools") or ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tools[tool["name"]] = tool

    async def _followed(
        self, client: UpstreamClient, call: _Call, params: dict[str, Any], created: dict[str, Any]
    ) -> dict[str, Any]:
        """A stateless upstream made the call a task the downstream client cannot follow: the bridge
        follows it to its end (its questions relayed as any other) and answers with its result."""
        name, arguments = params.get("name", ""), params.get("arguments")
        state = TaskState.from_wire(created, "tools/call")
        task = ToolTask(client, str(name), arguments, state, client.tasks.number()).follow()
        return await self._run_followed(client, call, task)

    @contextlib.contextmanager
    def _under_way(self, client: UpstreamClient, call: _Call) -> Iterator[None]:
        """``call`` is under way on ``client`` meanwhile: the upstream's questions and logs go to it."""
        calls = self._calls.setdefault(client, [])
        calls.append(call)
        try:
            yield
        finally:
            calls.remove(call)

    async def _run_followed(self, client: UpstreamClient, call: _Call, task: ToolTask) -> dict[str, Any]:
        with self._under_way(client, call):
            result = await task
        return cast("dict[str, Any]", msgspec.to_builtins(result))

    async def run_task(self, name: str, arguments: dict[str, Any], ctx: Context) -> CallToolResult:
        """Call tool ``name`` upstream as a task in the upstream's own form (or plainly, where it
        runs the tool without one) and return its result: the body of a task the bridge runs for
        a downstream client whose tasks are of the other era's form."""
        client = await self.client_for(ctx.client_capabilities, ctx.era)
        call = _Call(ctx)
        with self._under_way(client, call):
            task = await client.start_task(
                name, arguments, on_progress=self._progress_to(call) if _asks_progress(call) else None
            )
            return await task

    async def _call(self, client: UpstreamClient, call: _Call, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            with self._under_way(client, call):
                return await client.connection.request(
                    method, params, timeout=None, on_progress=self._progress_to(call) if _asks_progress(call) else None
                )
        except ConnectionClosed as exc:  # it died or went away: said as a failed start is
            message = f"upstream {self.spec.name} is unavailable: {_one_line(exc)}"
            logger.error("%s", message)
            raise UpstreamUnavailable(message, data={"upstream": self.spec.name}) from None

    @staticmethod
    def _progress_to(call: _Call) -> Callable[[ProgressReceived], Awaitable[None]]:
        async def progressed(progress: ProgressReceived) -> None:
            with contextlib.suppress(LocalProtocolError):  # not increasing, or after the answer: not passed on
                await call.ctx.report_progress(progress.progress, progress.total, progress.message)

        return progressed

    async def _with_log_level(self, client: UpstreamClient, sent: dict[str, Any], ctx: Context) -> dict[str, Any]:
        """The downstream client's log level, carried upstream: in the stateless era in the
        request's ``_meta``; in the handshake era by ``logging/setLevel`` when it changed."""
        level = _level_of(ctx)
        if level is None or "logging" not in client.server_capabilities:
            return sent
        if client.session.era == "stateless":
            return {**sent, "_meta": {**sent.get("_meta", {}), M.LOG_LEVEL: level}}
        if client.level_set != level:
            client.level_set = level
            with contextlib.suppress(MCPError):
                await client.connection.request("logging/setLevel", {"level": level}, timeout=None)
        return sent

    async def level_changed(self, level: str) -> None:
        """A handshake-era downstream client set its log level: handshake-era upstreams hear it now
        (their log messages outside any call are sent at it); stateless ones with each request."""
        for client in list(self._clients.values()):
            if (
                client.session.era == "handshake"
                and "logging" in client.server_capabilities
                and client.level_set != level
                and not client.connection.closed.is_set()
            ):
                client.level_set = level
                with contextlib.suppress(MCPError):
                    await client.connection.request("logging/setLevel", {"level": level}, timeout=None)

    async def _answer_here(self, call: _Call, requests: dict[str, Any]) -> dict[str, Any]:
        """A stateless upstream's ``inputRequests``, asked of a handshake-era downstream client as requests."""

        async def one(request: Any) -> dict[str, Any]:
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise MCPError("the upstream sent a malformed input request", data=request)
            return await self._ask(call, request["method"], request.get("params") or {})

        keys = list(requests)
        answers = await asyncio.gather(*(one(requests[key]) for key in keys))
        return dict(zip(keys, answers, strict=True))

    async def _ask(self, call: _Call, method: str, params: dict[str, Any]) -> dict[str, Any]:
        ctx = call.ctx
        capability = CAPABILITY_OF.get(method)
        if capability is None:
            raise MCPError(f"the upstream asked {method}, which the bridge cannot carry", code=-32601)
        if method == "elicitation/create" and params.get("mode") == "url":
            capability = "elicitation.url"
            if ctx.era == "handshake":
                elicitation_id = params.get("elicitationId")
                if not isinstance(elicitation_id, str):
                    # 2025-11-25 requires one of a URL request (client/elicitation.mdx:345); 2026-07-28 has none
                    elicitation_id = os.urandom(12).hex()
                    params = {**params, "elicitationId": elicitation_id}
                    call.url_ids.append(elicitation_id)
                self._url_hosts[elicitation_id] = ctx.connection  # its completion goes to this client only
            else:
                params = {key: value for key, value in params.items() if key != "elicitationId"}
        return await ctx.request_input(method, params, capability)

    def url_host(self, elicitation_id: Any) -> Connection | None:
        """The client that was asked the URL question ``elicitation_id`` (forgotten once told it is complete)."""
        return self._url_hosts.pop(elicitation_id, None) if isinstance(elicitation_id, str) else None

    def _completed(self, call: _Call) -> None:
        """Tell the client the URL questions the bridge named for it are complete: the upstream's call ended."""
        for elicitation_id in call.url_ids:
            connection = self._url_hosts.pop(elicitation_id, None)
            if connection is not None and not connection.closed.is_set():
                connection.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})
        call.url_ids.clear()

    # ---------------------------------------------------------------- held calls

    async def _hold(
        self, client: UpstreamClient, method: str, sent: dict[str, Any], ctx: Context, binding: str
    ) -> dict[str, Any]:
        held = _Held(os.urandom(12).hex())
        call = _Call(ctx, held)
        held.task = asyncio.get_running_loop().create_task(self._call(client, call, method, sent))
        self._held[held.id] = held
        held.task.add_done_callback(lambda _: self._held.pop(held.id, None) if not held.asked else None)
        return await self._outcome(held, call, method, binding)

    async def _resume(
        self, held_id: Any, method: str, params: dict[str, Any], ctx: Context, binding: str
    ) -> dict[str, Any]:
        held = self._held.get(held_id) if isinstance(held_id, str) else None
        if held is None or held.task is None:
            raise InvalidParams(
                f"{method}: the upstream call this requestState continues is gone (it expired, or another "
                "proxy process made it); send the request again without requestState"
            )
        if held.expiry is not None:
            held.expiry.cancel()
            held.expiry = None
        responses = params.get("inputResponses") or {}
        if not isinstance(responses, dict):
            raise InvalidParams("inputResponses must be an object keyed like the inputRequests")
        for key, (_, answer) in list(held.asked.items()):
            response = responses.get(key)
            if isinstance(response, dict) and not answer.done():
                answer.set_result(response)
        for calls in self._calls.values():  # its questions and progress go to this round now
            for call in calls:
                if call.held is held:
                    call.ctx = ctx
        return await self._outcome(held, _Call(ctx, held), method, binding)

    async def _outcome(self, held: _Held, call: _Call, method: str, binding: str) -> dict[str, Any]:
        """Wait until the held call asks something not yet answered, or ends."""
        assert held.task is not None
        try:
            while True:
                unanswered = {key: request for key, (request, answer) in held.asked.items() if not answer.done()}
                if unanswered:
                    break
                if held.task.done():
                    self._held.pop(held.id, None)
                    failure = None if held.task.cancelled() else held.task.exception()
                    if isinstance(failure, RequestError) and failure.code == URL_ELICITATION_REQUIRED:
                        return self._url_questions(failure, binding)  # -32042 has no stateless-era form
                    return downstream_result(method, held.task.result(), call.ctx.era, call.ctx.protocol_version)
                held.changed.clear()
                waiter = asyncio.ensure_future(held.changed.wait())
                try:
                    await asyncio.wait((waiter, held.task), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
        except asyncio.CancelledError:  # the downstream client cancelled this round: the call ends
            self._held.pop(held.id, None)
            held.stop()
            raise
        sealed = self.sealer.seal({_HELD: held.id}, binding)
        held.expiry = asyncio.get_running_loop().call_later(self.sealer.ttl, self._expire, held.id)
        return {"resultType": "input_required", "inputRequests": unanswered, "requestState": sealed}

    def _url_questions(self, failure: RequestError, binding: str) -> dict[str, Any]:
        """A handshake-era upstream's -32042 (these URLs first, then call again), as a stateless-era
        client must be told it: the URLs as ``inputRequests`` (2026-07-28 forbids -32042 and has no
        ``elicitationId``, basic/index.mdx); the retry waits for the upstream's completions and
        calls again (``_after_urls``)."""
        data = failure.data if isinstance(failure.data, dict) else {}
        wanted = [e for e in data.get("elicitations") or [] if isinstance(e, dict) and isinstance(e.get("url"), str)]
        if not wanted:
            raise failure
        requests = {
            f"url-{index}": {
                "method": "elicitation/create",
                "params": {key: value for key, value in asked.items() if key != "elicitationId"},
            }
            for index, asked in enumerate(wanted)
        }
        ids = [asked.get("elicitationId") for asked in wanted]
        sealed = self.sealer.seal({_URLS_FIRST: {"ids": ids, "keys": list(requests)}}, binding)
        return {"resultType": "input_required", "inputRequests": requests, "requestState": sealed}

    async def _after_urls(
        self, first: dict[str, Any], method: str, params: dict[str, Any], ctx: Context, binding: str
    ) -> dict[str, Any] | None:
        """The retry after ``_url_questions``: None once the upstream said every URL flow is complete
        (then the call is made again); a refusal when the person declined; else "not yet"."""
        responses = params.get("inputResponses") or {}
        for key in first.get("keys", []):
            action = (responses.get(key) or {}).get("action")
            if action in ("decline", "cancel"):
                raise MCPError(f"{method}: the upstream needs the person to open a page, and they {action}d")
        ids = [i for i in first.get("ids", []) if isinstance(i, str)]
        waits = [self._url_done.setdefault(i, asyncio.Event()).wait() for i in ids]
        try:
            await asyncio.wait_for(asyncio.gather(*waits), _URL_WAIT)
        except TimeoutError:  # not yet: the client retries with the same state (elicitation.mdx 376-381)
            return {"resultType": "input_required", "requestState": self.sealer.seal({_URLS_FIRST: first}, binding)}
        for i in ids:
            self._url_done.pop(i, None)
        return None

    def _expire(self, held_id: str) -> None:
        held = self._held.pop(held_id, None)
        if held is not None:
            held.stop()

    # ---------------------------------------------------------------- upstream -> downstream

    def _call_of(self, client: UpstreamClient) -> _Call | None:
        """The downstream call an upstream question or log belongs to: the latest under way on
        ``client``. (Neither stdio nor a handshake-era session says which request a question
        serves; over Streamable HTTP it comes on that request's stream, which the client does
        not yet tell us.)"""
        calls = self._calls.get(client)
        return calls[-1] if calls else None

    async def relay_question(self, client: UpstreamClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The downstream client's answer to the upstream's question ``method``."""
        call = self._call_of(client)
        if call is not None and call.held is not None:
            return await call.held.ask(method, params)
        if call is not None:
            return await self._ask(call, method, params)
        downstream = self.downstream
        if downstream is None or downstream.closed.is_set():
            raise MCPError(f"{method}: no downstream client is connected to answer it")
        return await downstream.request(method, params)

    def notified(self, client: UpstreamClient, method: str, params: dict[str, Any]) -> Awaitable[None] | None:
        """Pass an upstream notification on: a log message to the call it belongs to, the rest
        to the server (``on_notification``)."""
        if method == "notifications/message":
            if "logging" not in client.server_capabilities:  # not offered downstream: not sent there
                return None
            call = self._call_of(client)
            level = params.get("level")
            if call is not None and isinstance(level, str) and level in LOG_LEVEL_RANK:
                return call.ctx.log(level, params.get("data"), params.get("logger"))
            downstream = self.downstream
            if call is None and downstream is not None and not downstream.closed.is_set():
                downstream.notify(method, params)
            return None
        if method in ("notifications/progress", "notifications/cancelled"):
            return None
        if method == "notifications/elicitation/complete" and isinstance(done := params.get("elicitationId"), str):
            self._url_done.setdefault(done, asyncio.Event()).set()
            while len(self._url_done) > _URL_DONE_KEPT:  # oldest first (dicts keep insertion order)
                del self._url_done[next(iter(self._url_done))]
        if self.on_notification is not None:
            self.on_notification(method, params)
        return None


#: The methods whose handlers may ask the client something.
_MAY_ASK = frozenset(("tools/call", "prompts/get", "resources/read", "completion/complete"))


async def _both(first: Awaitable[None], second: Awaitable[None]) -> None:
    await first
    await second


def _check_responses(given: Any) -> None:
    """``inputResponses`` as a server must find them (an object of objects), or ``InvalidParams``."""
    if not isinstance(given, dict):
        raise InvalidParams("inputResponses must be an object keyed like the inputRequests")
    for key, value in given.items():
        if not isinstance(value, dict):
            raise InvalidParams(f"inputResponses[{key!r}] must be an object (the answer to that input request)")


def _takes_tasks(ctx: Context) -> bool:
    """Whether the downstream client takes a stateless-era task result (it declared the extension)."""
    if ctx.era != "stateless":
        return False
    extensions = ctx.client_capabilities.get("extensions")
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _asks_progress(call: _Call) -> bool:
    meta = call.ctx.request.params.get("_meta")
    return type(meta) is dict and M.PROGRESS_TOKEN in meta


def _level_of(ctx: Context) -> str | None:
    if ctx.era == "stateless":
        return ctx.request.log_level
    return ctx.server.log_level_for(ctx.connection)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
