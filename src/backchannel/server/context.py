"""What a running handler can do besides return: the request it serves, seen from inside.

A ``Context`` is made for each request whose handler asks for one (a parameter
annotated ``Context``). It knows the era and the client's capabilities for
this request, so the same handler code serves both eras.
"""

from __future__ import annotations

__all__ = ["Context"]

from typing import TYPE_CHECKING, Any

from ..protocol.capabilities import has
from ..protocol.events import RequestReceived
from ..types.versions import Era

if TYPE_CHECKING:
    from ..runtime.connection import Connection
    from .server import Server

LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_RANK = {level: rank for rank, level in enumerate(LOG_LEVELS)}


class Context:
    """The request being served: progress, logging and facts about the client."""

    __slots__ = ("connection", "request", "server")

    def __init__(self, server: Server, connection: Connection, request: RequestReceived) -> None:
        self.server = server
        self.connection = connection
        self.request = request

    @property
    def request_id(self) -> int | str:
        return self.request.id

    @property
    def era(self) -> Era:
        return self.request.era

    @property
    def protocol_version(self) -> str | None:
        return self.request.version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.request.client_capabilities or {}

    @property
    def client_info(self) -> dict[str, Any]:
        return self.request.client_info or {}

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared ``capability`` (a dotted path like ``"elicitation.url"``)."""
        return has(self.client_capabilities, capability)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far along the work is.

        A no-op when the client asked for no progress. Values must increase;
        a value that does not, or one reported after the answer, raises
        ``LocalProtocolError`` and is not sent.
        """
        self.connection.report_progress(self.request.id, progress, total, message)

    def close_sse_stream(self) -> bool:
        """Handshake-era HTTP: end the SSE response carrying this request now.

        The handler goes on; what it sends next is kept, and the client fetches it
        by reconnecting with ``Last-Event-ID`` (SEP-1699 polling), which frees
        proxies and load balancers from long-held connections. Returns False where
        there is no such stream (stdio, the stateless era).
        """
        close_stream = getattr(self.connection.transport, "close_stream", None)
        return bool(close_stream(self.request.id)) if close_stream is not None else False

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send a log message to the client, if the client wants this level.

        Handshake era: at or above the level set with ``logging/setLevel``
        (or the server's default). Stateless era: only when the request
        carried a log level, and at or above it.
        """
        if level not in _RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        threshold = self.request.log_level if self.era == "modern" else self.server.log_level_for(self.connection)
        if threshold is None or _RANK[level] < _RANK[threshold]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.connection.notify("notifications/message", params, related=self.request.id)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)
