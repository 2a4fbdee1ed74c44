"""What the sending and the reading halves of the HTTP client transport share.

``HttpClientTransport`` (``client.py``) is an ``HttpLink`` with the transport
interface on top. ``client_send`` POSTs each message in order; ``client_streams``
reads what answers it (JSON, or SSE resumed after a break, and the GET stream).
Both work on the one ``HttpLink`` here: the endpoint and its session, the requests
in flight, the inbox the connection reads, and the verdict that the server is gone.
"""

from __future__ import annotations

__all__ = [
    "ACCEPT_BOTH",
    "CUT",
    "NETWORK_ERRORS",
    "SNIPPET_CHARS",
    "SSE",
    "UNREACHABLE",
    "Exchange",
    "HttpLink",
    "Post",
    "describe",
    "label",
    "snippet",
    "stateless_version",
]

import asyncio
import logging
import os
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx2
from httpx2._client import UseClientDefault

from ...types import meta as M
from ...types.errors import INTERNAL_ERROR
from ...types.ids import RequestId
from .negotiated import ParamHeaders

logger = logging.getLogger("backchannel.http")
_T = TypeVar("_T")

ACCEPT_BOTH = "application/json, text/event-stream"
SSE = "text/event-stream"
#: How much of a body or an event an error or log message quotes.
SNIPPET_CHARS = 200
NETWORK_ERRORS = (httpx2.HTTPError, OSError)
#: Nothing accepted our connection: the server is gone (or was never there), so no request can succeed.
UNREACHABLE = (httpx2.ConnectError, httpx2.ConnectTimeout)
#: The connection broke under a request: the server may have died, or only this connection did.
CUT = (
    httpx2.ReadError,
    httpx2.WriteError,
    httpx2.CloseError,
    httpx2.RemoteProtocolError,
    httpx2.ReadTimeout,
    httpx2.WriteTimeout,
    OSError,
)
#: How long the reachability check may take, per attempt; a dead pooled connection costs one more attempt.
_PROBE_TIMEOUT = httpx2.Timeout(10.0)
_PROBE_ATTEMPTS = 2


@dataclass(eq=False)
class Exchange:
    """A request we POSTed, and the task reading the HTTP response that should answer it."""

    request_id: RequestId
    method: str
    stateless: bool
    task: asyncio.Task[None] | None = None
    answered: bool = False
    abandoned: bool = False  # we cancelled it: no answer is expected and none is made up


@dataclass(eq=False)
class Post:
    """One message waiting its turn to be POSTed."""

    message: dict[str, Any]
    exchange: Exchange | None = None
    #: For ``notifications/cancelled``: the request whose stream to close once this is sent.
    then_close: Exchange | None = None


class HttpLink:
    """The state of one client end of Streamable HTTP at ``url`` (see ``HttpClientTransport``)."""

    #: With telemetry on, what the client's spans say of the transport (``HttpClientTransport.describe``).
    telemetry_attributes: dict[str, Any] | None = None

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None,
        httpx_client: httpx2.AsyncClient | None,
        open_get_stream: bool,
        max_reconnects: int,
        auth: httpx2.Auth | None = None,
    ) -> None:
        if httpx_client is not None and not isinstance(httpx_client, httpx2.AsyncClient):
            # An httpx client would raise httpx's exceptions, which no handler here translates.
            raise TypeError(
                f"httpx_client must be an httpx2.AsyncClient, not {type(httpx_client).__module__}."
                f"{type(httpx_client).__qualname__}: backchannel uses httpx2, the maintained line of httpx"
            )
        self.url = url
        self.headers = httpx2.Headers(dict(headers or {}))
        self.open_get_stream = open_get_stream
        self.max_reconnects = max_reconnects
        self.owns_client = httpx_client is None
        self.http = httpx_client or httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None))
        #: Consulted on every request to ``url`` but the reachability probe: it adds the credentials
        #: and answers a 401 or 403 challenge (``backchannel.client.oauth.OAuth`` is one).
        self.auth: httpx2.Auth | UseClientDefault = auth or httpx2.USE_CLIENT_DEFAULT
        #: ``Mcp-Session-Id`` from the ``initialize`` response, sent on every later handshake-era request.
        self.session_id: str | None = None
        #: The handshake-era version the client says ``initialize`` chose (``use_protocol_version``).
        self.protocol_version: str | None = None
        #: Per tool, the ``x-mcp-header`` annotations the client handed over (``use_tool_headers``).
        self.tool_headers: dict[str, ParamHeaders] = {}
        self.inbox: asyncio.Queue[list[Any] | None] = asyncio.Queue()
        self.outbox: asyncio.Queue[Post] = asyncio.Queue()
        self.exchanges: dict[RequestId, Exchange] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self.sender: asyncio.Task[None] | None = None
        self.listener: asyncio.Task[None] | None = None
        self.probe: asyncio.Task[bool] | None = None
        self.closed = False
        #: Why the server is taken for gone, once it is: the transport is over.
        self.unreachable: str | None = None

    # ------------------------------------------------------------ delivery

    def deliver(self, messages: list[Any]) -> None:
        """Hand ``messages`` to the connection (the next ``receive``); an answer settles its exchange."""
        batch = [self._note_answer(message) for message in messages if isinstance(message, dict)]
        if batch and not self.closed and self.unreachable is None:
            self.inbox.put_nowait(batch)

    def _note_answer(self, message: dict[str, Any]) -> dict[str, Any]:
        if "method" not in message and "id" in message:
            exchange = self.exchanges.pop(message["id"], None)
            if exchange is not None:
                exchange.answered = True
        return message

    def fail(self, exchange: Exchange | None, message: str, code: int = INTERNAL_ERROR) -> None:
        """Answer ``exchange``'s request with an error, unless it is answered or abandoned."""
        if exchange is None or exchange.answered or exchange.abandoned:
            return
        self.deliver([{"jsonrpc": "2.0", "id": exchange.request_id, "error": {"code": code, "message": message}}])

    def stream_headers(self, last_event_id: str | None) -> httpx2.Headers:
        """Headers of a handshake-era GET (or, without ``accept``, the closing DELETE)."""
        headers = httpx2.Headers(self.headers)
        headers["accept"] = SSE
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        if self.protocol_version is not None:
            headers["mcp-protocol-version"] = self.protocol_version
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        return headers

    def spawn(self, coroutine: Coroutine[Any, Any, _T]) -> asyncio.Task[_T]:
        """Run ``coroutine`` as a task that ``close`` (or giving up) cancels."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def fall_back(self, message: dict[str, Any], status: int) -> bool:
        """Whether ``message``, refused with HTTP ``status``, went another way instead (the
        deprecated HTTP+SSE transport: ``HttpClientTransport`` decides); if not, its error stands."""
        return False

    # ------------------------------------------------------- a server gone

    async def reachable(self) -> bool:
        """Whether anything still serves our URL, after a connection broke under a request.

        Every request cut at the same moment (the server died) shares one check. When the
        answer is no, the transport is over before this returns.
        """
        if self.probe is None or self.probe.done():
            self.probe = self.spawn(self._check_reachable())
        return await asyncio.shield(self.probe)

    async def _check_reachable(self) -> bool:
        # A GET without the session: it opens no stream and touches no state, and any HTTP
        # answer, even an error status, proves that something serves the URL.
        headers = httpx2.Headers(self.headers)
        headers["accept"] = SSE
        failure: BaseException | None = None
        for _ in range(_PROBE_ATTEMPTS):  # a pooled connection the server had dropped fails once, harmlessly
            try:
                async with self.http.stream("GET", self.url, headers=headers, timeout=_PROBE_TIMEOUT):
                    return True
            except UNREACHABLE as exc:
                failure = exc
                break
            except httpx2.TimeoutException:
                return True  # it took the connection and is slow to answer: not gone
            except NETWORK_ERRORS as exc:
                failure = exc  # it took the connection and dropped it without an HTTP answer
        assert failure is not None
        self.give_up(failure)
        return False

    def give_up(self, exc: BaseException) -> None:
        """The server cannot be reached: end the transport, so that every pending call fails
        now with ``ConnectionClosed`` (instead of each retrying a server that is not there)."""
        self.lose(f"the server at {self.url} cannot be reached: {describe(exc)}")

    def lose(self, reason: str) -> None:
        """The server is gone for ``reason``: end the transport (see ``give_up``)."""
        if self.closed or self.unreachable is not None:
            return
        self.unreachable = reason
        logger.info("%s; closing the HTTP transport", self.unreachable)
        current = asyncio.current_task()
        for task in (self.sender, self.listener, *self.tasks):
            if task is not None and task is not current:
                task.cancel()
        self.inbox.put_nowait(None)


def stateless_version(message: dict[str, Any]) -> str | None:
    """The stateless-era version a message carries in ``params._meta``; None for a handshake-era one."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(M.PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def snippet(body: bytes) -> str:
    """The start of a body, for an error message."""
    text = body.decode("utf-8", "replace").strip()
    return text[:SNIPPET_CHARS] if text else "(empty body)"


def label(message: dict[str, Any]) -> str:
    """How a log line names a message that has no request of ours to fail."""
    method = message.get("method")
    return str(method) if method is not None else f"the answer to request {message.get('id')!r}"


def describe(exc: BaseException) -> str:
    """An exception as a log or error message says it, with the system's reason when httpx2 hides it."""
    text = str(exc)
    described = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    # httpx2 says "All connection attempts failed"; the system's reason ("Connection refused") is further down.
    reason = _system_reason(exc)
    return f"{described} ({reason})" if reason and reason not in described else described


def _system_reason(exc: BaseException) -> str | None:
    seen: set[int] = set()
    cause: BaseException | None = exc
    reason = None
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and isinstance(cause.errno, int) and cause.errno > 0:
            reason = os.strerror(cause.errno)
        cause = cause.__cause__ or cause.__context__
    return reason
