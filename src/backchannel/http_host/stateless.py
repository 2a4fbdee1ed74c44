"""A stateless-era POST (2026-07-28): one request, its own protocol session, one response.

Nothing is shared between requests but the server itself, so any worker can
serve any request. The answer is plain JSON when it is ready first, otherwise an
SSE stream of the request's notifications ending with the answer. A client that
closes the response has cancelled the request (2026-07-28 cancellation.mdx).
"""

from __future__ import annotations

__all__ = ["MirroredHeaders", "serve_stateless"]

import math
from typing import TYPE_CHECKING, Any

from ..framing import http as H
from ..framing.sse import encode_json_event
from ..protocol.events import Outgoing, RequestId
from ..transports.base import PushedTransport, TransportClosed, wire_messages
from . import traced
from .asgi import NoItem, Receive, Send, encode_headers, next_item, send_bytes, send_start, watching
from .streams import JSON_HEADERS, SSE_HEADERS, MessageFeed, encode_message, is_answer_to

if TYPE_CHECKING:
    from .served import HostedServer

#: How long a request runs before its client's departure is watched for. Most are answered
#: sooner and then cost a timer, not a watcher task made, started and cancelled (about 8% of
#: the instructions a stateless ``tools/call`` costs its worker). A client that leaves sooner
#: has its request cancelled this much later: it is noticed when the watch starts.
WATCH_AFTER = 0.05

_RAW_JSON_HEADERS = encode_headers(JSON_HEADERS)
_RAW_SSE_HEADERS = encode_headers(SSE_HEADERS)


class _OneRequest(PushedTransport):
    """Carries what the runtime sends about the one request to its response, until that is done;
    an ``AuthenticatedTransport``."""

    authenticates_callers = True
    principal: str | None = None

    def __init__(self, request_id: RequestId) -> None:
        super().__init__()
        self.feed = MessageFeed(request_id)

    def write(self, items: list[Outgoing]) -> None:
        if self.ended:
            raise TransportClosed("the response is finished")
        for message in wire_messages(items):
            self.feed.put(message)


class MirroredHeaders:
    """The ``x-mcp-header`` annotations of each tool's ``inputSchema`` (SEP-2243), read once per
    definition: every stateless-era ``tools/call`` checks its ``Mcp-Param-*`` headers against
    them, and reading a schema on every call costs more than the check itself."""

    def __init__(self, server: HostedServer) -> None:
        self.server = server
        self._read: dict[str, tuple[dict[str, Any], Any]] = {}

    def of(self, message: dict[str, Any]) -> Any:
        """The annotations of the tool a ``tools/call`` names; None for a tool we do not have."""
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            return None
        tool = self.server.tool_definition(name)
        if tool is None:
            return None
        held = self._read.get(name)
        if held is not None and held[0] is tool:  # the same definition: a re-registered tool is read again
            return held[1]
        headers = H.x_mcp_headers(tool.get("inputSchema", {}))
        self._read[name] = (tool, headers)
        return headers


async def serve_stateless(
    server: HostedServer,
    message: dict[str, Any],
    receive: Receive,
    send: Send,
    *,
    sse_after: float,
    principal: str | None = None,
) -> None:
    request_id: RequestId = message["id"]
    transport = _OneRequest(request_id)
    transport.principal = principal
    connection = server.connect(transport, finish_grace=0.0)
    traced.describe(connection)  # with telemetry on: HTTP, the client's address (no session here)
    connection.feed([message])
    try:
        async with watching(receive, transport.feed.queue, after=WATCH_AFTER) as gone:
            first = await next_item(transport.feed.queue, gone, sse_after)
            if gone.is_set():
                connection.abort(request_id, "the client closed the response")
                return
            if type(first) is not NoItem and is_answer_to(first, request_id):
                assert type(first) is dict
                error = first.get("error")
                status = H.status_for_error(error["code"]) if isinstance(error, dict) else 200
                headers = _RAW_JSON_HEADERS
                if status == 429:  # RateLimited: say when, as HTTP does (its data carries the same)
                    data = error.get("data") if isinstance(error, dict) else None
                    wait_ms = data.get("retryAfterMs") if isinstance(data, dict) else None
                    if isinstance(wait_ms, int | float):
                        wait = str(max(1, math.ceil(wait_ms / 1000)))
                        headers = [*headers, *encode_headers({"retry-after": wait})]
                await send_bytes(send, status, encode_message(first), headers)
                return
            await send_start(send, 200, _RAW_SSE_HEADERS)
            message_out = first
            while True:
                if type(message_out) is dict:
                    event = encode_json_event(encode_message(message_out))
                    last = is_answer_to(message_out, request_id)  # the answer ends the stream in the same write
                    await send({"type": "http.response.body", "body": event, "more_body": not last})
                    if last:
                        return
                following = await next_item(transport.feed.queue, gone)
                message_out = following
                if gone.is_set():
                    connection.abort(request_id, "the client closed the response")
                    return
    finally:
        await transport.close()
        connection.finish("the response is finished")
