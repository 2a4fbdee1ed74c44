"""The high-level client: connect, find out which era the server speaks, call it.

``async with Client.stdio("python", ["server.py"]) as client:`` spawns a server
and connects; ``Client(transport)`` uses any transport. Era detection follows
the spec: probe with ``server/discover``; a discover result (or a recognised
stateless-era error) means the stateless era; any other error, or no answer
within ``probe_timeout`` (counted from when a spawned server has read the probe),
means the handshake era, so ``initialize`` (to a server spawned afresh when the
probe went unanswered: ``era_detection``).
"""

from __future__ import annotations

__all__ = ["Client"]

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import msgspec

from .._version import __version__ as _VERSION
from ..protocol.events import NotificationReceived, RequestReceived
from ..protocol.session import Session, SessionConfig
from ..runtime.connection import Connection, ProgressCallback
from ..telemetry.metrics import session_closed, session_opened
from ..telemetry.spans import on_pipe
from ..transports.base import Transport
from ..transports.http.negotiated import NegotiatedHeaders
from ..types.capabilities import with_extensions
from ..types.errors import LocalProtocolError, MCPError, RequestError
from ..types.lifecycle import DiscoverResult
from ..types.logging import LOGGING_LEVELS, LoggingLevel
from ..types.prompts import GetPromptResult, ListPromptsResult, Prompt
from ..types.resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
)
from ..types.tasks import TASKS_EXTENSION
from ..types.tools import ListToolsResult, Tool
from ..types.versions import VERSIONS, Era, EraChoice, EraSpelling, era_from_user
from . import cards, completions, listening, skills, tool_calls
from .cache import ClientCache
from .era_detection import HandshakeEraNeeded, converted, meet_server
from .input_rounds import answer_input_rounds, rounds_span
from .inputs import ElicitationHandler, InputHandlers, RootsProvider, SamplingHandler
from .log_messages import LogCallback, LogDelivery
from .options import FlatOptions, InputOptions, LogOptions, RetryOptions, TimeoutOptions, resolve_options
from .pages import cursor_params, every_page
from .tasks import TaskRegistry
from .tool_headers import keep_tools_with_valid_headers
from .url_flow import UrlElicitationHandler, retry_after_url_flows

if TYPE_CHECKING:
    import httpx2

R = TypeVar("R", bound=msgspec.Struct)
logger = logging.getLogger("backchannel.client")
_ASKS_A_PERSON = frozenset(("elicitation/create", "sampling/createMessage"))


class Client:
    """An MCP client over one transport. Use it as an async context manager."""

    def __init__(
        self,
        transport: Transport,
        *,
        name: str = "backchannel",
        version: str = _VERSION,
        era: EraSpelling = "auto",
        versions: tuple[str, ...] = VERSIONS,
        elicitation: ElicitationHandler | None = None,
        url_elicitation: UrlElicitationHandler | None = None,
        roots: RootsProvider | None = None,
        sampling: SamplingHandler | None = None,
        on_log: LogCallback | None = None,
        timeouts: TimeoutOptions | None = None,
        retries: RetryOptions | None = None,
        logs: LogOptions | None = None,
        inputs: InputOptions | None = None,
        **flat: Unpack[FlatOptions],
    ) -> None:
        """Wire a client to ``transport``; ``async with`` connects it.

        ``name``/``version`` say who we are; ``era`` picks the protocol era: ``"handshake"``,
        ``"stateless"`` or ``"auto"`` (probes); ``"legacy"``/``"modern"`` are the old spellings of the first two.
        ``versions`` limits the revisions we speak. The handlers answer the server's questions
        (see ``client.inputs``); ``on_log`` receives its log messages, and ``log_level="info"``
        asks for them at that level and above in either era (without it a stateless-era server
        sends none: ``LogOptions``). Everything else is in the option groups of ``client.options``,
        each also settable by its flat keyword (``request_timeout=None``, ``log_level="info"``).
        """
        options = resolve_options(timeouts=timeouts, retries=retries, logs=logs, inputs=inputs, flat=flat)
        #: The settings as resolved from the groups and flat keywords (read only).
        self.options = options
        self.transport = transport
        #: Set when the transport mirrors the session into its headers (HTTP): we tell it what it needs.
        self._negotiated = transport if isinstance(transport, NegotiatedHeaders) else None
        #: Called with the params of each ``notifications/message`` (level, logger, data).
        self.on_log = on_log
        self._log_delivery = LogDelivery(options.logs.rate, options.logs.burst)
        self.era_choice: EraChoice = era_from_user(era)
        self.probe_timeout = options.timeouts.probe
        self.request_timeout = options.timeouts.request
        self.info: dict[str, Any] = {"name": name, "version": version}
        #: Answers to the server's questions; the capabilities we declare follow from them.
        self.inputs = InputHandlers(
            elicitation=elicitation,
            url_elicitation=url_elicitation,
            roots=roots,
            sampling=sampling,
            roots_consent=options.inputs.roots_consent,
            resolve_symlinks=options.inputs.resolve_symlinks,
            sampling_tools=options.inputs.sampling_tools,
        )
        self.max_input_rounds = options.retries.input_rounds
        #: ``-32042``: how long to wait for the URL flows before retrying, and how many retries.
        self.url_wait = options.retries.url_wait
        self.url_retries = options.retries.url_retries
        # The tasks extension is declared to stateless-era servers (``initialize`` leaves it out): we follow tasks.
        extensions = {TASKS_EXTENSION: {}, **options.extensions.declared}  # ``Client(extensions=...)``: SEP-2133
        self.capabilities: dict[str, Any] = with_extensions(self.inputs.capabilities(), extensions)
        self.session = Session(
            SessionConfig("client", info=self.info, capabilities=self.capabilities, versions=versions)
        )
        self.connection = Connection(self.session, transport, self)
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.discover_result: DiscoverResult | None = None
        self._runner: asyncio.Task[None] | None = None
        #: The tasks this client follows (``start_task``, or a call the server made a task).
        self.tasks = TaskRegistry()
        #: Results kept while the server says they are fresh (2026-07-28 caching.mdx; ``Client(cache=...)``).
        self.cache = ClientCache.for_transport(transport, options.cache, lambda: self.protocol_version)
        #: The open ``listen``, ``notifications`` and ``log_messages`` iterators.
        self.listeners = listening.Listeners(self)

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> Client:
        """A client for a server spawned as ``command args...`` speaking over its stdio."""
        from ..transports.stdio import StdioClientTransport

        return cls(on_pipe(StdioClientTransport(command, args, env=env, cwd=cwd)), **options)

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        httpx_client: httpx2.AsyncClient | None = None,
        auth: httpx2.Auth | None = None,
        **options: Any,
    ) -> Client:
        """A client for the Streamable HTTP endpoint at ``url``, either era.

        ``headers`` go on every request; ``httpx_client`` (closed by its owner, not
        by us) chooses TLS, proxies, or an in-process ``httpx2.ASGITransport``; ``auth``
        logs in where the server asks (``backchannel.client.oauth.OAuth``)."""
        from ..transports.http.client import HttpClientTransport

        client = cls(HttpClientTransport(url, headers=headers, httpx_client=httpx_client, auth=auth), **options)
        if callable(pause_with := getattr(auth, "pause_clocks_with", None)):
            pause_with(client.connection.timeouts_paused)  # a login's time is the person's, not the server's
        return client

    # ------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Client:
        await self.transport.start()
        self._runner = asyncio.get_running_loop().create_task(self.connection.run())
        try:
            await self._connect()
        except BaseException:
            await self.aclose()
            raise
        self._timed = session_opened("client", self.connection.telemetry_attributes)  # None: metrics off
        self.inputs.server_name = self._server_name()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection and stop what runs for it (listeners, task watchers); ``async with`` calls this for
        you."""
        session_closed(getattr(self, "_timed", None), version=self.protocol_version)
        self.tasks.close()
        await self.connection.close()
        if self._runner is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner

    @property
    def dropped_log_messages(self) -> int:
        """Log messages dropped because the server sent more than ``log_rate`` a second."""
        return self._log_delivery.dropped

    @property
    def era(self) -> Era | None:
        """The protocol era agreed with the server, ``"handshake"`` or ``"stateless"``; ``None`` before connecting."""
        return self.session.era

    @property
    def protocol_version(self) -> str | None:
        """The protocol revision in use with this server (e.g. ``"2025-11-25"``); ``None`` before connecting."""
        return self.session.stateless_version if self.session.era == "stateless" else self.session.protocol_version

    async def _connect(self) -> None:
        introduction = await meet_server(
            self.connection,
            self.session,
            era_choice=self.era_choice,
            probe_timeout=self.probe_timeout,
            request_timeout=self.request_timeout,
            negotiated=self._negotiated,
            start_afresh=self._start_afresh if self.transport.respawns else None,
        )
        self.server_info = introduction.server_info
        self.server_capabilities = introduction.server_capabilities
        self.instructions = introduction.instructions
        self.discover_result = introduction.discover_result
        level = self.options.logs.level
        if level is not None and "logging" in self.server_capabilities:
            try:
                await self.set_logging_level(level)
            except RequestError as exc:  # the server's own failure: it costs its log messages, not the connection
                logger.warning("%s refused logging/setLevel %s: %s", self._server_name(), level, exc)

    def _server_name(self) -> str:
        return str(self.server_info.get("title") or self.server_info.get("name") or "the server")

    async def _start_afresh(self) -> tuple[Connection, Session]:
        """Our era probe went unanswered: stop the server and spawn it again, with a new session
        and connection, so that a late answer to the probe cannot meet ``initialize``."""
        await self.connection.close()
        if self._runner is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        self.session = Session(self.session.config)
        self.connection = Connection(self.session, self.transport, self)
        await self.transport.start()
        self._runner = asyncio.get_running_loop().create_task(self.connection.run())
        return self.connection, self.session

    # ----------------------------------------------------- server -> client

    def answer_now(self, request: RequestReceived, connection: Connection) -> dict[str, Any] | None:
        """A client answers nothing inline: every request of the server's runs in a task."""
        return None

    async def handle_request(self, request: RequestReceived, connection: Connection) -> dict[str, Any]:
        """Answer a request the server sent (ping, sampling, elicitation, roots) with the handlers given in
        ``InputOptions``; the connection calls this, not you."""
        if request.method == "ping":
            return {}
        if request.method in _ASKS_A_PERSON:
            # The person's time is not the server's: our own calls' clocks stop meanwhile.
            with connection.timeouts_paused():
                return await self.inputs.answer(request.method, request.params)
        return await self.inputs.answer(request.method, request.params)

    def handle_notification(self, notification: NotificationReceived, connection: Connection) -> Awaitable[None] | None:
        """Take a notification the server sent to the listeners, the cache, the task handles and ``on_log``; the
        connection calls this, not you."""
        received = self.listeners.received(notification.method, notification.params)  # stale cache entries go first
        if notification.method == "notifications/elicitation/complete":
            self.inputs.url_flows.notified(notification.params)
            return None
        if self.tasks.notified(notification.method, notification.params):
            return None
        if notification.method == "notifications/tools/list_changed":
            self.tasks.support = None  # a tool's taskSupport may have changed with it
        if notification.method == "notifications/message" and self.on_log is not None:
            return self._log_delivery.deliver(self.on_log, notification.params)
        return received

    async def set_roots(self, roots: RootsProvider) -> bool:
        """Replace the roots (see ``roots`` of the constructor); True when the set changed.

        Handshake era: a change is announced with ``notifications/roots/list_changed``
        (we declare ``roots.listChanged``) unless the consent hook refused the roots.
        Stateless era: nothing is sent; the server asks for roots on each request.
        A client made without ``roots`` declared no capability, so the server will
        not ask: pass ``roots=[]`` to declare it with none yet.
        """
        changed = await self.inputs.set_roots(roots)
        if (
            changed
            and self.session.era == "handshake"
            and "roots" in self.capabilities
            and not self.inputs.roots_refused
            and not self.connection.closed.is_set()
        ):
            self.connection.notify("notifications/roots/list_changed")
        return changed

    async def set_logging_level(self, level: LoggingLevel) -> None:
        """Ask for log messages at ``level`` and above: ``logging/setLevel`` in the handshake
        era; in the stateless era the level rides in every request's ``_meta`` from now on.
        (``Client(log_level=...)`` does this as the client connects; ``LogOptions`` says how.)"""
        if level not in LOGGING_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOGGING_LEVELS)}")
        if "logging" not in self.server_capabilities:  # it sends no logs, and would refuse logging/setLevel
            raise LocalProtocolError(f"{self._server_name()} declares no logging capability: it sends no logs")
        if self.session.era == "stateless":
            self.session.log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    # -------------------------------------------------------------- calls

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        progress_resets_timeout: bool = False,
        max_timeout: float | None = None,
        cached: bool = True,
    ) -> dict[str, Any]:
        """Send any request; the raw result dict. Timeout defaults to ``request_timeout``;
        with ``progress_resets_timeout`` each progress notification restarts it, up to
        ``max_timeout`` seconds in all. A list or read the server said is still fresh comes
        from ``cache`` unless ``cached`` is False."""

        async def send(attempt: dict[str, Any] | None) -> dict[str, Any]:
            return await self.connection.request(
                method,
                attempt,
                timeout=timeout or self.request_timeout,
                on_progress=on_progress,
                progress_resets_timeout=progress_resets_timeout,
                max_timeout=max_timeout,
            )

        hit, stamp = await self.cache.fresh(method, params) if cached else None, self.cache.stamp()
        try:
            with HandshakeEraNeeded.recognised(self.session.era), rounds_span(self.session.era, method, params):
                # -32042 (handshake era): run the URL flows it lists, then retry, both bounded.
                first = hit or await retry_after_url_flows(
                    lambda: send(params), self.inputs, wait=self.url_wait, retries=self.url_retries
                )
                # Stateless era: answer what the server asks, and retry, until it answers for good.
                result = await answer_input_rounds(method, params, first, send, self.inputs, self.max_input_rounds)
        except RequestError:
            await self.cache.forget_pages(method, params)  # a page's cursor may be void now
            raise
        # ``resultType: "task"`` (the tasks extension) answers only tools/call: call_tool follows it.
        kind = result.get("resultType", "complete")
        if kind != "complete" and (method, kind) != ("tools/call", "task"):
            raise MCPError(
                f"{method}: the server answered with resultType {result.get('resultType')!r}, "
                "which this client cannot continue",
                data=result,
            )
        if method == "tools/list" and self._negotiated is not None and self.session.era == "stateless":
            keep_tools_with_valid_headers(result, self._negotiated)  # SEP-2243, Streamable HTTP only
        if hit is None and result is first:  # an MRTR retry's result is never kept (caching.mdx)
            await self.cache.keep(method, params, result, stamp)
        return result

    async def _typed(self, kind: type[R], method: str, params: dict[str, Any] | None = None, **kw: Any) -> R:
        return converted(await self.request(method, params, **kw), kind, method)

    async def ping(self) -> None:
        """Check that the server answers. The stateless era has no ``ping``, so there
        this sends ``server/discover``, the one request every such server must answer."""
        await self.request("server/discover" if self.session.era == "stateless" else "ping", cached=False)

    async def list_tools_page(self, cursor: str | None = None) -> ListToolsResult:
        """One page of ``tools/list``: pass the previous page's ``next_cursor`` for the next; ``list_tools`` walks
        them all."""
        return await self._typed(ListToolsResult, "tools/list", cursor_params(cursor))

    async def list_tools(self) -> list[Tool]:
        """Every tool, following ``nextCursor`` through all pages."""
        tools = [tool async for page in every_page(self.list_tools_page) for tool in page.tools]
        self.tasks.learn(tools)  # which take a task (2025-11-25), for call_tool
        return tools

    call_tool = tool_calls.call_tool
    start_task = tool_calls.start_task

    async def list_prompts_page(self, cursor: str | None = None) -> ListPromptsResult:
        """One page of ``prompts/list``: pass the previous page's ``next_cursor`` for the next; ``list_prompts``
        walks them all."""
        return await self._typed(ListPromptsResult, "prompts/list", cursor_params(cursor))

    async def list_prompts(self) -> list[Prompt]:
        """Every prompt, following ``nextCursor`` through all pages."""
        return [prompt async for page in every_page(self.list_prompts_page) for prompt in page.prompts]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> GetPromptResult:
        """The messages of prompt ``name`` filled in with ``arguments``; a server's error answer raises
        ``RequestError``."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self._typed(GetPromptResult, "prompts/get", params)

    async def list_resources_page(self, cursor: str | None = None) -> ListResourcesResult:
        """One page of ``resources/list``: pass the previous page's ``next_cursor`` for the next; ``list_resources``
        walks them all."""
        return await self._typed(ListResourcesResult, "resources/list", cursor_params(cursor))

    async def list_resources(self) -> list[Resource]:
        """Every resource, following ``nextCursor`` through all pages."""
        return [item async for page in every_page(self.list_resources_page) for item in page.resources]

    async def list_resource_templates_page(self, cursor: str | None = None) -> ListResourceTemplatesResult:
        """One page of ``resources/templates/list``: pass the previous page's ``next_cursor`` for the next."""
        return await self._typed(ListResourceTemplatesResult, "resources/templates/list", cursor_params(cursor))

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, following ``nextCursor`` through all pages."""
        pages = every_page(self.list_resource_templates_page)
        return [item async for page in pages for item in page.resource_templates]

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """The contents of the resource at ``uri``; an unknown URI raises ``RequestError`` (``ResourceNotFound``'s
        code)."""
        return await self._typed(ReadResourceResult, "resources/read", {"uri": uri})

    # Skills (SEP-2640): entries, directories, and files checked against their digests (``skills.py``).
    list_skills_page = skills.list_skills_page
    list_skills = skills.list_skills
    get_skill = skills.get_skill
    read_skill_directory = skills.read_skill_directory
    read_skill_file = skills.read_skill_file

    #: ``await Client.discover_card(url)``: a Server Card, read before connecting (``cards.py``).
    discover_card = staticmethod(cards.discover_card)

    complete = completions.complete
    listen = listening.listen
    notifications = listening.notifications
    log_messages = listening.log_messages
