"""Raw wire clients for the tasks tests: what crosses HTTP is written here by hand, per spec.

- ``Stateless``: 2026-07-28 requests (the ``_meta`` envelope, SEP-2243 headers, ``Mcp-Name``
  = ``taskId`` on ``tasks/*``), declaring the tasks extension unless told otherwise.
- ``Session``: a 2025-11-25 session (``initialize``, ``Mcp-Session-Id``) whose requests read
  their SSE streams to the end, answering the server's own requests on the way (the
  elicitation a ``tasks/result`` relays) and keeping the notifications it saw.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2

from backchannel.types import meta as M
from backchannel.types.tasks import TASKS_EXTENSION

STATELESS = "2026-07-28"
HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
WITH_TASKS: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}
NAME_FIELD = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
_ids = itertools.count(1)


def messages_of(response: httpx2.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response: one JSON body, or the ``data:`` lines of an SSE stream."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return [response.json()]
    lines = response.text.splitlines()
    return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip()]


class Stateless:
    """Stateless-era requests to ``url`` (see the module)."""

    def __init__(
        self, http: httpx2.AsyncClient, url: str, *, capabilities: dict[str, Any] | None = None, **headers: str
    ) -> None:
        self.http = http
        self.url = url
        self.capabilities = WITH_TASKS if capabilities is None else capabilities
        self.headers = headers

    def _request(
        self, method: str, params: dict[str, Any], headers: dict[str, str]
    ) -> tuple[dict[str, Any], dict[str, str]]:
        meta = {M.PROTOCOL_VERSION: STATELESS, M.CLIENT_CAPABILITIES: self.capabilities}
        message = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": {**params, "_meta": meta}}
        sent = {
            "accept": ACCEPT,
            "content-type": "application/json",
            "mcp-protocol-version": STATELESS,
            "mcp-method": method,
            **self.headers,
        }
        if method in NAME_FIELD and isinstance(params.get(NAME_FIELD[method]), str):
            sent["mcp-name"] = params[NAME_FIELD[method]]
        sent.update(headers)
        return message, sent

    async def send(self, method: str, params: dict[str, Any], **headers: str) -> dict[str, Any]:
        """The response message (``result`` or ``error``) to one request."""
        message, sent = self._request(method, params, headers)
        response = await self.http.post(self.url, json=message, headers=sent)
        answers = [m for m in messages_of(response) if m.get("id") == message["id"]]
        assert answers, (response.status_code, response.text)
        return answers[-1]

    async def stream(self, method: str, params: dict[str, Any], **headers: str) -> AsyncIterator[dict[str, Any]]:
        """Each message of one request's SSE stream as it comes (``subscriptions/listen``); leaving
        the loop closes the response, which cancels the request."""
        message, sent = self._request(method, params, headers)
        async with self.http.stream("POST", self.url, json=message, headers=sent) as response:
            if response.headers.get("content-type", "").startswith("application/json"):
                yield json.loads(await response.aread())
                return
            async for line in response.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    yield json.loads(line[5:])

    async def call(self, method: str, params: dict[str, Any], **headers: str) -> dict[str, Any]:
        """The ``result`` of one request (an error fails the test, showing it)."""
        answer = await self.send(method, params, **headers)
        assert "result" in answer, answer
        return answer["result"]  # type: ignore[no-any-return]

    async def until(self, task_id: str, done: Callable[[dict[str, Any]], bool], timeout: float = 5.0) -> dict[str, Any]:
        """Poll ``tasks/get`` until ``done(task)``; the task then. ``TimeoutError`` after ``timeout``."""
        async with asyncio.timeout(timeout):
            while True:
                task = await self.call("tasks/get", {"taskId": task_id})
                if done(task):
                    return task
                await asyncio.sleep(0.02)


Answerer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


class Session:
    """A 2025-11-25 session over HTTP (see the module)."""

    def __init__(self, http: httpx2.AsyncClient, url: str, **headers: str) -> None:
        self.http = http
        self.url = url
        self.headers = headers
        self.session_id: str | None = None
        #: Every notification the server sent on the streams this session read.
        self.notifications: list[dict[str, Any]] = []
        #: Every request the server sent (answered with ``answer``).
        self.asked: list[dict[str, Any]] = []
        self.answer: Answerer = lambda request: {"action": "cancel"}
        self._answering: set[asyncio.Task[None]] = set()

    def _headers(self) -> dict[str, str]:
        headers = {"accept": ACCEPT, "content-type": "application/json", **self.headers}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
            headers["mcp-protocol-version"] = HANDSHAKE
        return headers

    async def open(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {"protocolVersion": HANDSHAKE, "capabilities": capabilities or {"elicitation": {}}}
        params["clientInfo"] = {"name": "tasks-wire", "version": "0"}
        response = await self.http.post(
            self.url,
            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params},
            headers=self._headers(),
        )
        self.session_id = response.headers["mcp-session-id"]
        (answer,) = messages_of(response)
        await self.http.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self._headers()
        )
        return answer["result"]  # type: ignore[no-any-return]

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The response message to one request, its stream read to the end."""
        request_id = next(_ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        async with self.http.stream("POST", self.url, json=message, headers=self._headers()) as response:
            if response.headers.get("content-type", "").startswith("application/json"):
                return json.loads(await response.aread())  # type: ignore[no-any-return]
            async for line in response.aiter_lines():
                if not line.startswith("data:") or not line[5:].strip():
                    continue  # not data, or the empty priming event (SEP-1699)
                item = json.loads(line[5:])
                if item.get("id") == request_id and "method" not in item:
                    return item  # type: ignore[no-any-return]
                if "method" in item and "id" in item:
                    self.asked.append(item)
                    task = asyncio.ensure_future(self._reply(item))
                    self._answering.add(task)
                    task.add_done_callback(self._answering.discard)
                elif "method" in item:
                    self.notifications.append(item)
        raise AssertionError(f"the stream of {method} ended without its answer")

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = await self.send(method, params)
        assert "result" in answer, answer
        return answer["result"]  # type: ignore[no-any-return]

    async def _reply(self, request: dict[str, Any]) -> None:
        result = self.answer(request)
        if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
            result = await result
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        await self.http.post(self.url, json=reply, headers=self._headers())
