"""A completion by a synchronous completer is answered in the read loop's turn, with no task
(``Server.answer_now``, as a plain synchronous tool's call is); an ``async`` one in a task.

What crosses the wire must not tell them apart: the same requests, sent over stdio pipes to a
server whose completers are plain functions and static lists and to one whose completers are
``async`` wrappers of the same functions, get the same bytes back: values, ``total``,
``hasMore``, every error (CP-03, CP-07, CP-08, CP-09), and the rate limit (CP-10, CP-16).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _completion_harness import bench_words, prompt_ref, run, template_ref

from backchannel import Server
from backchannel.protocol.events import RequestId
from backchannel.server.completion import complete_from
from backchannel.testing import FakeClock, open_link, start_transport
from backchannel.transports.base import Transport
from backchannel.types import meta as M
from backchannel.types.completion import Completion
from backchannel.types.versions import LATEST_HANDSHAKE, LATEST_STATELESS

WORDS = bench_words()
INDEX = complete_from(WORDS)


def _words(value: str) -> Any:
    return INDEX.lookup(value)


def _many(value: str) -> list[str]:
    return [f"{value}{i}" for i in range(1000)]


def _endless(value: str) -> Iterator[str]:
    return (f"{value}{i}" for i in itertools.count())


def _own(value: str) -> Completion:
    return Completion(values=[value] * 150, total=7, has_more=False)


def _by_language(value: str, arguments: dict[str, str]) -> list[str]:
    found = {"python": ["flask", "django"], "go": ["gin"]}.get(arguments.get("language", ""), [])
    return [name for name in found if name.startswith(value)]


def _boom(value: str) -> list[str]:
    raise RuntimeError("database down")


def _numbers(value: str) -> list[Any]:
    return [1, 2]


def _text(value: str) -> Any:
    return "not a list"


COMPLETERS: dict[str, Callable[..., Any]] = {
    "words": _words,
    "many": _many,
    "endless": _endless,
    "own": _own,
    "framework": _by_language,
    "boom": _boom,
    "numbers": _numbers,
    "text": _text,
}


def _asynchronous(fn: Callable[..., Any]) -> Callable[..., Any]:
    if fn is _by_language:

        async def both(value: str, arguments: dict[str, str]) -> Any:
            return fn(value, arguments)

        return both

    async def one(value: str) -> Any:
        return fn(value)

    return one


def _server(inline: bool, **options: Any) -> Server:
    server = Server("completing", clock=FakeClock(), **options)
    completers: dict[str, Any] = {name: fn if inline else _asynchronous(fn) for name, fn in COMPLETERS.items()}
    completers["listed"] = WORDS if inline else _asynchronous(_words)

    def pick(
        words: str = "",
        many: str = "",
        endless: str = "",
        own: str = "",
        language: str = "",
        framework: str = "",
        boom: str = "",
        numbers: str = "",
        text: str = "",
        listed: str = "",
        plain: str = "",
    ) -> str:
        return words

    server.add_prompt(pick, completers=completers)
    server.add_resource("file:///{name}", lambda name: name, completers={"name": completers["listed"]})
    return server


def _argument(name: str, value: str, **more: Any) -> dict[str, Any]:
    return {"ref": prompt_ref("pick"), "argument": {"name": name, "value": value}, **more}


#: Requests whose answers both servers must give alike: every kind of completer and of error.
QUESTIONS: list[dict[str, Any]] = [
    _argument("words", "ab"),
    _argument("words", ""),
    _argument("listed", "abc"),
    _argument("listed", "zz"),
    _argument("many", "x"),
    _argument("endless", "y"),
    _argument("own", "o"),
    _argument("framework", "", context={"arguments": {"language": "python"}}),
    _argument("framework", "d", context={"arguments": {"language": "python"}}),
    _argument("framework", ""),
    _argument("plain", "p"),
    {"ref": template_ref("file:///{name}"), "argument": {"name": "name", "value": "aa"}},
    _argument("boom", ""),
    _argument("numbers", ""),
    _argument("text", ""),
    _argument("nothing", ""),
    {"ref": prompt_ref("missing"), "argument": {"name": "words", "value": ""}},
    {"ref": template_ref("file:///{other}"), "argument": {"name": "name", "value": ""}},
    {"ref": {"type": "ref/other"}, "argument": {"name": "words", "value": ""}},
    {"ref": prompt_ref("pick"), "argument": {"name": "words"}},
    _argument("framework", "", context={"arguments": {"language": 3}}),
    {"ref": prompt_ref("pick")},
]


class _Peer:
    """A client written by hand on a raw transport: requests out, answers kept as sent."""

    def __init__(self, transport: Transport, era: str) -> None:
        self.transport = transport
        self.era = era
        self._ids = itertools.count(1)
        self._answers: dict[RequestId, dict[str, Any]] = {}

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        params = dict(params)
        if self.era == "stateless":
            params["_meta"] = {
                M.PROTOCOL_VERSION: LATEST_STATELESS,
                M.CLIENT_CAPABILITIES: {},
                M.CLIENT_INFO: {"name": "inline", "version": "1"},
            }
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}

    async def answers(self, *requests: dict[str, Any]) -> list[dict[str, Any]]:
        """Send ``requests`` in one write; their answers in the order they arrived."""
        self.transport.write(list(requests))
        wanted = {request["id"] for request in requests}
        arrived: list[dict[str, Any]] = []
        async with asyncio.timeout(10):
            while len(arrived) < len(wanted):
                batch = await self.transport.receive()
                assert batch is not None, "the server went away"
                arrived.extend(item for item in batch if "method" not in item and item.get("id") in wanted)
        return arrived

    async def handshake(self) -> None:
        if self.era == "handshake":
            init = {
                "protocolVersion": LATEST_HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            }
            (answer,) = await self.answers(self.request("initialize", init))
            assert "result" in answer
            self.transport.write([{"jsonrpc": "2.0", "method": "notifications/initialized"}])


async def _transcript(server: Server, era: str, questions: list[dict[str, Any]]) -> list[str]:
    """Each question's answer as the bytes the server wrote, one question at a time."""
    async with open_link(server, "stdio") as link:
        await start_transport(link.transport)
        peer = _Peer(link.transport, era)
        await peer.handshake()
        transcript = []
        for params in questions:
            (answer,) = await peer.answers(peer.request("completion/complete", params))
            transcript.append(json.dumps(answer))
        return transcript


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_inline_answers_are_the_bytes_a_task_gives(era: str) -> None:
    """CP-03, CP-07, CP-08, CP-09: synchronous completers (answered inline) and async ones (in a
    task) give the same answer to every question, errors included."""

    async def body() -> None:
        inline = await _transcript(_server(inline=True), era, QUESTIONS)
        tasked = await _transcript(_server(inline=False), era, QUESTIONS)
        for question, mine, theirs in zip(QUESTIONS, inline, tasked, strict=True):
            assert mine == theirs, question
        codes = [json.loads(answer).get("error", {}).get("code") for answer in inline]
        assert codes.count(-32603) == 3 and codes.count(-32602) == 7, codes  # the errors were reached

    run(body)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_the_rate_limit_counts_inline_answers_as_before(era: str) -> None:
    """CP-10, CP-16: past the burst, -31429 with the same message and data; a malformed request
    is answered for what it is and not counted, as before."""
    questions = [_argument("words", "a"), {"ref": prompt_ref("pick")}, _argument("listed", "b")] * 3

    async def body() -> None:
        inline = await _transcript(_server(True, completion_rate=1, completion_burst=4), era, questions)
        tasked = await _transcript(_server(False, completion_rate=1, completion_burst=4), era, questions)
        assert inline == tasked
        codes = [json.loads(answer).get("error", {}).get("code") for answer in inline]
        assert codes == [None, -32602, None, None, -32602, None, -31429, -32602, -31429], codes

    run(body)


def test_a_synchronous_completion_is_answered_before_a_task_of_the_same_read() -> None:
    """The fast path is taken: a tool call and a completion read together; the tool's task has
    not run when the completion's answer is written (before, both ran in tasks, in order)."""
    server = _server(inline=True)

    @server.tool()
    async def quick() -> str:
        return "done"

    async def body() -> None:
        async with open_link(server, "memory") as link:
            await start_transport(link.transport)
            peer = _Peer(link.transport, "handshake")
            await peer.handshake()
            call = peer.request("tools/call", {"name": "quick", "arguments": {}})
            complete = peer.request("completion/complete", _argument("words", "ab"))
            first, second = await peer.answers(call, complete)
            assert (first["id"], second["id"]) == (complete["id"], call["id"])
            assert first["result"]["completion"]["total"] == 100

    run(body)


def test_a_callable_that_returns_an_awaitable_runs_once_and_counts_once() -> None:
    """Registration takes a lambda for synchronous; when it returns a coroutine, the answer comes
    from a task that awaits it: the completer is not called again, nor the caller counted again."""
    calls: list[str] = []

    async def found(value: str) -> list[str]:
        return [value + "!"]

    def sneaky(value: str) -> Any:
        calls.append(value)
        return found(value)

    server = Server("sneaky", completion_rate=1, completion_burst=2, clock=FakeClock())
    server.add_prompt(lambda word: word, name="say", completers={"word": sneaky})
    questions = [{"ref": prompt_ref("say"), "argument": {"name": "word", "value": v}} for v in ("a", "b", "c")]

    async def body() -> None:
        answers = [json.loads(answer) for answer in await _transcript(server, "handshake", questions)]
        assert calls == ["a", "b"]  # once each; the third was refused before it ran
        assert [a.get("result", {}).get("completion", {}).get("values") for a in answers[:2]] == [["a!"], ["b!"]]
        assert answers[2]["error"]["code"] == -31429

    run(body)
