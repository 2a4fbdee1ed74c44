"""A client written by hand on one of the client's transports, with every message recorded.

The checks need to see what crosses the wire, not what a client makes of it: a late answer
to a cancelled request, progress after the answer, an error a client would hide. ``Wire``
sends the messages a check writes (``send``, or ``ask`` for a request and its answer),
records every message each way with its time (the evidence, ``lines``), answers the
server's own questions (``roots/list``, ``sampling/createMessage``, ``elicitation/create``)
with the handlers in ``answers``, and in the stateless era answers the rounds of an
``InputRequiredResult`` with the same handlers, retrying as the client would. Every wait is
bounded.

Open one with ``Wire(transport, era)``, ``await wire.start()``, then ``await
wire.initialize()`` in the handshake era; ``await wire.close()`` at the end.
"""

from __future__ import annotations

__all__ = [
    "CLIENT_INFO",
    "FULL_CAPABILITIES",
    "ROOT_URI",
    "SAMPLED_TEXT",
    "Answer",
    "Wire",
    "capabilities_for",
    "error_code",
]

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .._version import __version__
from ..transports.base import Transport, TransportBroken, TransportClosed
from ..transports.http.negotiated import NegotiatedHeaders
from ..types import meta as M
from ..types.errors import MCPError
from ..types.outgoing import CancelIntent
from ..types.versions import LATEST_HANDSHAKE, LATEST_STATELESS, Era
from .outcome import Line, shown
from .target import TRANSPORT_MADE, CheckedStdio

CLIENT_INFO = {"name": "backchannel-check", "version": __version__}
#: The root every check offers: a directory that need not exist (the server is told, not given it).
ROOT_URI = "file:///tmp/backchannel-check-root"
#: What our sampling answers say; a tool that passes it on shows the answer reached it.
SAMPLED_TEXT = "backchannel-check sampled text"

#: A question's answer: a result (dict), or an error (``{"error": {...}}``).
Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


def capabilities_for(
    era: Era, *, elicitation: bool = True, url: bool = True, roots: bool = True, sampling: bool = True
) -> dict[str, Any]:
    """The client capabilities a check declares: all of them, or some left out on purpose."""
    capabilities: dict[str, Any] = {}
    if elicitation or url:
        modes: dict[str, Any] = {}
        if elicitation:
            modes["form"] = {}
        if url:
            modes["url"] = {}
        capabilities["elicitation"] = modes
    if roots:
        capabilities["roots"] = {"listChanged": True} if era == "handshake" else {}
    if sampling:
        capabilities["sampling"] = {}
    return capabilities


FULL_CAPABILITIES = capabilities_for("handshake")


def error_code(message: dict[str, Any] | None) -> int | None:
    """The code of an error answer (None for a result, a made-up error or no answer)."""
    if message is None:
        return None
    error = message.get("error")
    if not isinstance(error, dict):
        return None
    data = error.get("data")
    if isinstance(data, dict) and data.get(TRANSPORT_MADE):
        return None
    code = error.get("code")
    return code if isinstance(code, int) else None


def _decline(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "decline"}


def _roots(params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": ROOT_URI, "name": "backchannel-check"}]}


def _sample(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": SAMPLED_TEXT},
        "model": "backchannel-check",
        "stopReason": "endTurn",
    }


class Wire:
    """One connection to the server, in ``era``, declaring ``capabilities``; everything recorded."""

    def __init__(
        self,
        transport: Transport,
        era: Era,
        *,
        capabilities: dict[str, Any] | None = None,
        log_level: str | None = None,
        timeout: float = 10.0,
        on_message: Callable[[Wire, dict[str, Any]], None] | None = None,
    ) -> None:
        self.transport = transport
        self.era: Era = era
        self.version = LATEST_STATELESS if era == "stateless" else LATEST_HANDSHAKE
        self.capabilities = capabilities if capabilities is not None else capabilities_for(era)
        #: Stateless era: the logLevel every request carries (None: none, so no log messages).
        self.log_level = log_level
        self.timeout = timeout
        self.on_message = on_message
        #: The exchange so far, in order (the evidence).
        self.lines: list[Line] = []
        #: Every message the server sent, in order, and when each came (seconds, as ``now``).
        self.messages: list[dict[str, Any]] = []
        self.arrivals: list[float] = []
        #: Lines the server wrote that were not JSON-RPC (what the decoder said of each).
        self.undecodable: list[str] = []
        #: The server's questions, in order: ``{"method", "params"}`` (requests, or a round's inputRequests).
        self.questions: list[dict[str, Any]] = []
        self.answers: dict[str, Answer] = {
            "ping": lambda params: {},
            "roots/list": _roots,
            "sampling/createMessage": _sample,
            "elicitation/create": _decline,
        }
        self.ended = asyncio.Event()
        self.end_reason: str | None = None
        self.initialize_result: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        #: The ids of the requests this wire made (``request``): a check tells them from others'.
        self.sent_ids: set[int | str] = set()
        self._arrived = asyncio.Event()
        self._started = time.monotonic()
        self._reader: asyncio.Task[None] | None = None
        self._answering: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._started = time.monotonic()
        await self.transport.start()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def close(self) -> None:
        for task in list(self._answering):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.transport.close(), 15)
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def initialize(
        self, version: str | None = None, capabilities: dict[str, Any] | None = None, *, notify: bool = True
    ) -> dict[str, Any] | None:
        """``initialize`` (then ``notifications/initialized`` when it succeeded); the answer, or None."""
        params = {
            "protocolVersion": version or self.version,
            "capabilities": self.capabilities if capabilities is None else capabilities,
            "clientInfo": CLIENT_INFO,
        }
        answer = await self.ask("initialize", params)
        result = answer.get("result") if answer is not None else None
        if isinstance(result, dict):
            self.initialize_result = result
            agreed = result.get("protocolVersion")
            if isinstance(agreed, str):
                self.version = agreed
                if isinstance(self.transport, NegotiatedHeaders):
                    self.transport.use_protocol_version(agreed)
            if notify:
                self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    # ------------------------------------------------------------------ sending

    def now(self) -> float:
        return time.monotonic() - self._started

    def note(self, text: str) -> None:
        self.lines.append(Line("note", self.now(), text))

    def send(self, message: dict[str, Any]) -> None:
        """Write one message (recorded); a transport already gone is noted, not raised."""
        self.lines.append(Line("sent", self.now(), shown(message)))
        try:
            self.transport.write([message])
        except (TransportBroken, TransportClosed, ConnectionError) as exc:
            self.note(f"could not write: {exc}")

    def sent_elsewhere(self, message: Any, how: str) -> None:
        """Record ``message`` as sent by other means (``how``: a plain HTTP request of the check's)."""
        self.lines.append(Line("sent", self.now(), f"{shown(message)} ({how})"))

    def send_raw(self, data: bytes) -> None:
        """Write bytes that are no message to a stdio server's stdin."""
        self.lines.append(Line("sent", self.now(), shown(data)))
        if not isinstance(self.transport, CheckedStdio):
            raise TypeError("raw bytes go to a stdio server only")
        try:
            self.transport.write_raw(data)
        except (ConnectionError, OSError) as exc:
            self.note(f"could not write: {exc}")

    def next_id(self) -> int:
        return next(self._ids)

    def envelope(
        self, params: dict[str, Any] | None, *, progress: str | int | None = None, version: str | None = None
    ) -> dict[str, Any]:
        """``params`` with what this era's requests carry in ``_meta``: the stateless era's
        version, identity, capabilities (and log level); a progress token in either era."""
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        if self.era == "stateless":
            meta[M.PROTOCOL_VERSION] = version or self.version
            meta[M.CLIENT_INFO] = CLIENT_INFO
            meta[M.CLIENT_CAPABILITIES] = self.capabilities
            if self.log_level is not None:
                meta[M.LOG_LEVEL] = self.log_level
        if progress is not None:
            meta[M.PROGRESS_TOKEN] = progress
        if meta:
            params["_meta"] = meta
        return params

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: str | int | None = None,
        request_id: int | str | None = None,
        plain: bool = False,
    ) -> dict[str, Any]:
        """A request message of this era (``plain``: exactly ``params``, no envelope)."""
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": self.next_id() if request_id is None else request_id,
            "method": method,
        }
        self.sent_ids.add(message["id"])
        body = params if plain else self.envelope(params, progress=progress)
        if body is not None and (body or method != "ping"):
            message["params"] = body
        return message

    def introduction(self) -> dict[str, Any]:
        """The request that opens this era's exchange, for a check to POST by plain HTTP:
        ``server/discover``, or ``initialize`` declaring no capabilities."""
        if self.era == "stateless":
            return self.request("server/discover")
        return self.request(
            "initialize",
            {
                "protocolVersion": self.version,
                "capabilities": {},
                "clientInfo": {"name": "backchannel-check", "version": "1"},
            },
        )

    def cancel(self, request_id: int | str, reason: str = "backchannel check") -> None:
        """Cancel our request the way this era and transport do: ``notifications/cancelled``,
        or (stateless era over HTTP) closing the request's stream."""
        if self.era == "stateless" and not isinstance(self.transport, CheckedStdio):
            self.note(f"closed the stream of request {request_id!r} (the stateless era's cancellation over HTTP)")
            with contextlib.suppress(TransportBroken, TransportClosed):
                self.transport.write([CancelIntent(request_id=request_id, reason=reason)])
            return
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": reason},
            }
        )

    # ------------------------------------------------------------------ waiting

    async def wait_for(
        self, found: Callable[[dict[str, Any]], bool], timeout: float | None = None, *, start: int = 0
    ) -> dict[str, Any] | None:
        """The first message from index ``start`` on that ``found`` accepts, waiting at most
        ``timeout`` seconds (the wire's own by default); None when none came."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.timeout if timeout is None else timeout)
        index = start
        while True:
            while index < len(self.messages):
                message = self.messages[index]
                index += 1
                if found(message):
                    return message
            remaining = deadline - loop.time()
            if remaining <= 0 or self.ended.is_set():
                return None
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), remaining)

    async def settle(self, seconds: float) -> None:
        """Wait ``seconds`` (or until the connection ends) and let what comes arrive."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ended.wait(), seconds)

    async def answer_to(
        self, request_id: int | str, timeout: float | None = None, *, start: int = 0
    ) -> dict[str, Any] | None:
        return await self.wait_for(lambda m: _answers(m, request_id), timeout, start=start)

    def answers_to(self, request_id: int | str) -> list[dict[str, Any]]:
        return [m for m in self.messages if _answers(m, request_id)]

    async def ask(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: str | int | None = None,
        rounds: int = 6,
        plain: bool = False,
    ) -> dict[str, Any] | None:
        """Send a request and wait for its answer (None when none came in time). In the
        stateless era an ``InputRequiredResult`` is answered with ``answers`` and retried,
        up to ``rounds`` times, as a client would; the last answer is returned."""
        message = self.request(method, params, progress=progress, plain=plain)
        self.send(message)
        answer = await self.answer_to(message["id"], timeout)
        base = dict(params or {})
        while answer is not None and rounds > 0 and _input_required(answer):
            rounds -= 1
            result = answer["result"]
            responses = await self._answer_round(result.get("inputRequests") or {})
            retry = dict(base)
            if responses:
                retry["inputResponses"] = responses
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
            message = self.request(method, retry, progress=progress)
            self.send(message)
            answer = await self.answer_to(message["id"], timeout)
        return answer

    async def _answer_round(self, requests: Any) -> dict[str, Any]:
        responses: dict[str, Any] = {}
        if not isinstance(requests, dict):
            return responses
        for key, request in requests.items():
            if not isinstance(request, dict):
                continue
            method, params = request.get("method"), request.get("params") or {}
            self.questions.append({"method": method, "params": params})
            handler = self.answers.get(method) if isinstance(method, str) else None
            if handler is None:
                continue
            answer = handler(params if isinstance(params, dict) else {})
            if asyncio.iscoroutine(answer) or isinstance(answer, Awaitable):
                answer = await answer
            if isinstance(answer, dict) and "error" not in answer:
                responses[key] = answer
        return responses

    # ------------------------------------------------------------------ reading

    async def _read(self) -> None:
        try:
            while True:
                try:
                    batch = await self.transport.receive()
                except (TransportBroken, TransportClosed, ConnectionError) as exc:
                    self.end_reason = str(exc)
                    self.note(f"the connection ended: {exc}")
                    return
                if batch is None:
                    self.end_reason = self.end_reason or "the server closed the connection"
                    self.note(self.end_reason)
                    return
                for item in batch:
                    self._received(item)
                self._arrived.set()
        finally:
            self.ended.set()
            self._arrived.set()

    def _received(self, item: Any) -> None:
        if isinstance(item, MCPError):
            raw = getattr(item, "raw_line", None)
            said = f"{raw!r} ({item.message})" if raw is not None else item.message
            self.undecodable.append(said)
            self.lines.append(Line("received", self.now(), f"(not a JSON-RPC message) {said}"))
            return
        if not isinstance(item, dict):
            self.undecodable.append(shown(item, 200))
            self.lines.append(Line("received", self.now(), shown(item)))
            return
        self.lines.append(Line("received", self.now(), shown(item)))
        self.messages.append(item)
        self.arrivals.append(self.now())
        if self.on_message is not None:
            self.on_message(self, item)
        if "method" in item and "id" in item:
            self.questions.append({"method": item.get("method"), "params": item.get("params") or {}})
            task = asyncio.get_running_loop().create_task(self._answer_question(item))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)

    async def _answer_question(self, request: dict[str, Any]) -> None:
        method = request.get("method")
        handler = self.answers.get(method) if isinstance(method, str) else None
        if handler is None:
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "error": {"code": -32601, "message": f"backchannel check does not answer {method}"},
                }
            )
            return
        params = request.get("params")
        answer = handler(params if isinstance(params, dict) else {})
        if asyncio.iscoroutine(answer) or isinstance(answer, Awaitable):
            answer = await answer
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            self.send({"jsonrpc": "2.0", "id": request["id"], "error": answer["error"]})
        else:
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": answer})

    # ------------------------------------------------------------------ reading the record

    def progress_of(self, token: str | int) -> list[tuple[int, dict[str, Any]]]:
        """(index in ``messages``, params) of every progress notification naming ``token``."""
        return [
            (index, message.get("params") or {})
            for index, message in enumerate(self.messages)
            if message.get("method") == "notifications/progress"
            and (message.get("params") or {}).get("progressToken") == token
        ]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m.get("method") == method and "id" not in m]

    def index_of(self, message: dict[str, Any]) -> int:
        for index, candidate in enumerate(self.messages):
            if candidate is message:
                return index
        return len(self.messages)

    def exchange(self, last: int = 40) -> list[Line]:
        """The evidence: the last ``last`` lines of the exchange (the first line kept when cut)."""
        if len(self.lines) <= last:
            return list(self.lines)
        cut = len(self.lines) - last + 1
        return [
            self.lines[0],
            Line("note", self.lines[cut].at, f"({cut - 1} earlier lines left out)"),
            *self.lines[cut + 1 :],
        ]

    def stderr_tail(self) -> list[str]:
        return list(self.transport.stderr_tail) if isinstance(self.transport, CheckedStdio) else []


def _answers(message: dict[str, Any], request_id: int | str) -> bool:
    if "method" in message or ("result" not in message and "error" not in message):
        return False
    answered = message.get("id")
    return answered == request_id and type(answered) is type(request_id)


def _input_required(answer: dict[str, Any]) -> bool:
    result = answer.get("result")
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def methods_in(messages: Iterable[dict[str, Any]]) -> list[str]:
    return [str(m.get("method")) for m in messages if "method" in m]
