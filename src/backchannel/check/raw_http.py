"""Plain HTTP for the checks that send what no MCP client sends, and read the status too.

``post`` sends one body (a message, or bytes that are none) with the headers a check chooses
and reads what comes back, bounded in time and size: the status, and the JSON-RPC messages
of a JSON or SSE body. Nothing here retries or logs in again: a check sees the server's
first word.
"""

from __future__ import annotations

__all__ = ["RawAnswer", "headers_for", "post"]

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..framing.http import request_headers
from ..framing.sse import SSEDecoder, SSEEventTooLarge
from .outcome import shown

if TYPE_CHECKING:
    import httpx2

_BODY_LIMIT = 1 << 20
_ACCEPT = "application/json, text/event-stream"


@dataclass
class RawAnswer:
    """What one POST got: ``status`` (None: no HTTP answer at all, ``problem`` says why),
    the JSON-RPC messages of its body, and the start of the body."""

    status: int | None
    messages: list[dict[str, Any]] = field(default_factory=list)
    body: str = ""
    problem: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def said(self) -> str:
        if self.status is None:
            return f"no HTTP answer ({self.problem})"
        first = self.messages[0] if self.messages else None
        what = f": {shown(first, 300)}" if first is not None else (f": {shown(self.body, 200)}" if self.body else "")
        return f"HTTP {self.status}{what}"

    def error_code(self) -> int | None:
        for message in self.messages:
            error = message.get("error")
            if isinstance(error, dict) and isinstance(error.get("code"), int):
                return int(error["code"])
        return None


def headers_for(message: Any, *, session_id: str | None = None, version: str | None = None) -> dict[str, str]:
    """The headers a client sends with ``message``: the stateless era's (SEP-2243) when it
    carries its version in ``_meta``, else the session's id and version."""
    headers = {"content-type": "application/json", "accept": _ACCEPT}
    if isinstance(message, dict):
        with contextlib.suppress(ValueError):
            headers.update(request_headers(message))
    if "MCP-Protocol-Version" not in headers:
        if session_id is not None:
            headers["mcp-session-id"] = session_id
        if version is not None:
            headers["mcp-protocol-version"] = version
    return headers


async def post(
    http: httpx2.AsyncClient, url: str, body: bytes | dict[str, Any], headers: dict[str, str], timeout: float = 10.0
) -> RawAnswer:
    """POST ``body`` (a message is encoded as JSON) and read the answer within ``timeout``."""
    import httpx2

    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    answer = RawAnswer(None)
    try:
        async with asyncio.timeout(timeout):
            async with http.stream("POST", url, content=data, headers=headers) as response:
                answer.status = response.status_code
                answer.headers = {key.lower(): value for key, value in response.headers.items()}
                await _read_body(response, answer)
    except TimeoutError:
        answer.problem = f"nothing more within {timeout:g} s"
    except httpx2.HTTPError as exc:
        answer.problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return answer


async def _read_body(response: httpx2.Response, answer: RawAnswer) -> None:
    sse = response.headers.get("content-type", "").partition(";")[0].strip().lower() == "text/event-stream"
    decoder = SSEDecoder()
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if sse:
            try:
                events = decoder.feed(chunk)
            except SSEEventTooLarge as exc:
                events = exc.events
            for event in events:
                _add(answer, event.data)
            if any("id" in m and "method" not in m for m in answer.messages):
                break  # the answer came: the rest of the stream is not ours to wait for
        if len(raw) >= _BODY_LIMIT:
            break
    answer.body = raw[:4000].decode("utf-8", "replace")
    if not sse and raw:
        _add(answer, raw.decode("utf-8", "replace"))


def _add(answer: RawAnswer, text: str) -> None:
    try:
        value = json.loads(text)
    except ValueError:
        return
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            answer.messages.append(item)
