"""Fleet (Streamable HTTP, with ``--fleet N``): does the server need sticky sessions?

Behind a load balancer, the requests of one client reach different workers unless the
balancer pins them. These checks send every request on a TCP connection of its own (a
balancer that pins connections cannot help), so a server that keeps a session, a pending
question or a stream in one process's memory is seen to need sticky sessions:

- ``fleet.sessions``: N sessions at once, each opened, listed and pinged;
- ``fleet.answer-elsewhere``: the answer to the server's question (a form; a stateless
  era's input round) reaches the call that asked, N times;
- ``fleet.resume-elsewhere`` (handshake era): a request's stream cut after its first event
  with an id, then resumed with ``GET`` and ``Last-Event-ID`` on another connection.

The group's verdict is said once more in the report's notes: "works without sticky sessions"
or "needs sticky sessions", with the check that showed it.
"""

from __future__ import annotations

__all__ = ["CHECKS"]

import asyncio
import contextlib
import time
from typing import Any

from ..framing.sse import SSEDecoder, SSEEventTooLarge
from ..types.versions import Era
from .asking import form_content
from .outcome import Verdict, shown
from .raw_http import headers_for
from .run import NoSession, Run, checks, result_of, said
from .target import CheckedHttp
from .wire import Wire

_RESUME_SECONDS = 20.0
#: Requests per session after initialize, and calls that ask a question: with a balancer that
#: picks a worker per request, a fleet that shares nothing is caught by all but chance.
_PINGS = 8
_CALLS = 8


def _liveness(era: Era) -> str:
    return "ping" if era == "handshake" else "server/discover"


def _said(
    run: Run, check: str, verdict: Verdict, summary: str, era: Era, wire: Wire | None = None
) -> tuple[str, str, str]:
    """Record the outcome (``Run.add``) and hand it back, for the note on sticky sessions."""
    run.add(check, verdict, summary, era=era, wire=wire)
    return check, verdict, summary


@checks("fleet.sessions")
async def sticky_sessions(run: Run) -> None:
    count = run.options.fleet
    if run.target.kind != "http" or count <= 0:
        return
    if not run.loads_allowed:
        for check in ("fleet.sessions", "fleet.answer-elsewhere", "fleet.resume-elsewhere"):
            run.not_applicable(check, "a load on a server not on this machine: --load runs it")
        return
    verdicts: list[tuple[str, str, str]] = []
    for era in run.eras_spoken():
        verdicts.append(await _sessions(run, era, count))
        verdicts.append(await _answer_elsewhere(run, era, count))
        if era == "handshake":
            verdicts.append(await _resume_elsewhere(run))
    failed = [f"{check}: {summary}" for check, verdict, summary in verdicts if verdict == "fail"]
    if failed:
        run.notes.append(f"fleet: needs sticky sessions ({failed[0]})")
    elif any(verdict == "pass" for _, verdict, _ in verdicts):
        run.notes.append(f"fleet: works without sticky sessions ({count} at once, every request on its own connection)")


async def _one_session(run: Run, era: Era) -> tuple[bool, str, Wire | None]:
    try:
        async with run.session(era, fresh_connections=True) as wire:
            listed = await wire.ask("tools/list")
            if result_of(listed) is None:
                return False, f"tools/list got {said(listed)}", wire
            for _ in range(_PINGS):  # each may reach another worker: enough that one surely does
                alive = await wire.ask(_liveness(era))
                if result_of(alive) is None:
                    return False, f"{_liveness(era)} got {said(alive)}", wire
        return True, "", wire
    except NoSession as exc:
        return False, exc.why, exc.wire


async def _sessions(run: Run, era: Era, count: int) -> tuple[str, str, str]:
    outcomes = await asyncio.gather(*(_one_session(run, era) for _ in range(count)))
    failed = [(why, wire) for ok, why, wire in outcomes if not ok]
    if failed:
        why, wire = failed[0]
        summary = f"{len(failed)} of {count} sessions failed, the first: {why}"
        return _said(run, "fleet.sessions", "fail", summary, era, wire)
    summary = f"{count} sessions at once, each request on its own connection: every one answered"
    return _said(run, "fleet.sessions", "pass", summary, era)


async def _answered_elsewhere(run: Run, era: Era, name: str, arguments: dict[str, Any]) -> tuple[bool, str, Wire]:
    def accept(params: dict[str, Any]) -> dict[str, Any]:
        if params.get("mode") == "url":
            return {"action": "decline"}
        return {"action": "accept", "content": form_content(params.get("requestedSchema"))}

    try:
        async with run.session(era, fresh_connections=True) as wire:
            wire.answers["elicitation/create"] = accept
            answer = await wire.ask("tools/call", {"name": name, "arguments": arguments})
    except NoSession as exc:
        return False, exc.why, exc.wire
    asked = any(q["method"] == "elicitation/create" for q in wire.questions)
    if result_of(answer) is None:
        return False, f"the call got {said(answer)}", wire
    if not asked:
        return False, "asked nothing", wire
    return True, "", wire


async def _answer_elsewhere(run: Run, era: Era, count: int) -> tuple[str, str, str]:
    use = run.eras[era].plan.use("elicits")
    if use is None:
        summary = run.eras[era].plan.missing.get("elicits", "no tool that elicits")
        return _said(run, "fleet.answer-elsewhere", "n/a", summary, era)
    outcomes = await asyncio.gather(
        *(_answered_elsewhere(run, era, use.name, use.arguments) for _ in range(max(_CALLS, min(count, 16))))
    )
    if all(why == "asked nothing" for ok, why, _ in outcomes if not ok) and not any(ok for ok, _, _ in outcomes):
        summary = f"{use.name} asked nothing"
        return _said(run, "fleet.answer-elsewhere", "n/a", summary, era)
    failed = [(why, wire) for ok, why, wire in outcomes if not ok]
    if failed:
        why, wire = failed[0]
        summary = f"{len(failed)} of {len(outcomes)} calls of {use.name} did not end: {why}"
        return _said(run, "fleet.answer-elsewhere", "fail", summary, era, wire)
    how = "its input rounds retried" if era == "stateless" else "the answer posted"
    summary = f"{len(outcomes)} calls of {use.name}, {how} on another connection: each ended with a result"
    return _said(run, "fleet.answer-elsewhere", "pass", summary, era)


async def _resume_elsewhere(run: Run) -> tuple[str, str, str]:
    check = "fleet.resume-elsewhere"
    plan = run.eras["handshake"].plan
    use = plan.use("progress") or plan.use("slow")  # one that streams: progress before its answer
    if use is None:
        summary = plan.missing.get("progress", "no tool that reports progress")
        return _said(run, check, "n/a", summary, "handshake")
    assert run.target.url is not None
    async with run.session("handshake", fresh_connections=True) as wire:
        transport = wire.transport
        assert isinstance(transport, CheckedHttp)
        message = wire.request("tools/call", {"name": use.name, "arguments": use.arguments}, progress="check-resume")
        headers = headers_for(message, session_id=transport.session_id, version=wire.version)
        cut, why = await _first_event(run, wire, message, headers)
        if cut is None:
            return _said(run, check, "n/a", why, "handshake")
        answer = await _resume(run, wire, message["id"], headers, cut)
    if answer is not None:
        summary = f"{use.name}'s stream, cut after event {cut!r}, resumed on another connection to its answer"
        return _said(run, check, "pass", summary, "handshake")
    summary = (
        f"{use.name}'s stream, cut after event {cut!r}: no answer on another connection within {_RESUME_SECONDS:.0f} s"
    )
    return _said(run, check, "fail", summary, "handshake", wire)


async def _first_event(
    run: Run, wire: Wire, message: dict[str, Any], headers: dict[str, str]
) -> tuple[str | None, str]:
    """POST ``message`` and read its stream to the first event that has an id, then cut the
    connection: (that id, ""), or (None, why there is none)."""
    assert run.target.url is not None
    wire.sent_elsewhere(message, "plain HTTP, its own connection")
    async with (
        run.target.raw_http(False) as http,
        http.stream("POST", run.target.url, json=message, headers=headers) as response,
    ):
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind != "text/event-stream":
            body = await response.aread()
            wire.note(f"HTTP {response.status_code} {kind}: {shown(body, 300)}")
            return None, f"the answer came as {kind or 'no'} body, not a stream: nothing to resume"
        decoder = SSEDecoder()
        async with asyncio.timeout(run.options.timeout):
            async for chunk in response.aiter_bytes():
                try:
                    events = decoder.feed(chunk)
                except SSEEventTooLarge:
                    return None, "an event too large to read"
                for event in events:
                    wire.note(f"event {event.event_id!r}: {shown(event.data, 300)}")
                    if '"result"' in event.data or '"error"' in event.data:
                        return None, "the answer came before the stream could be cut"
                    if event.event_id:
                        wire.note("cut the connection here")
                        return event.event_id, ""
        return None, "the server gives its events no id: nothing to resume from"


async def _resume(run: Run, wire: Wire, request_id: Any, headers: dict[str, str], cut: str) -> dict[str, Any] | None:
    """GET with ``Last-Event-ID``, each time on a new connection, until the answer comes (bounded)."""
    import json

    assert run.target.url is not None
    last = cut
    deadline = time.monotonic() + _RESUME_SECONDS
    while time.monotonic() < deadline:
        get_headers = {"accept": "text/event-stream", "last-event-id": last}
        get_headers.update(
            {k: v for k, v in headers.items() if k.lower() in ("mcp-session-id", "mcp-protocol-version")}
        )
        wire.note(f"GET with Last-Event-ID: {last} (a new connection)")
        async with run.target.raw_http(False) as http:
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    async with http.stream("GET", run.target.url, headers=get_headers) as response:
                        if response.status_code != 200:
                            wire.note(f"HTTP {response.status_code}: {shown(await response.aread(), 300)}")
                            return None
                        decoder = SSEDecoder()
                        async for chunk in response.aiter_bytes():
                            for event in decoder.feed(chunk):
                                wire.note(f"event {event.event_id!r}: {shown(event.data, 300)}")
                                if event.event_id:
                                    last = event.event_id
                                with contextlib.suppress(ValueError):
                                    value = json.loads(event.data) if event.data else None
                                    if (
                                        isinstance(value, dict)
                                        and value.get("id") == request_id
                                        and "method" not in value
                                    ):
                                        return value
            except TimeoutError:
                return None
            except Exception as exc:  # a broken stream: try again with what was read
                wire.note(f"the stream broke: {type(exc).__name__}: {exc}")
        await asyncio.sleep(0.2)  # SEP-1699: the server may close a stream and expect the client back
    return None


CHECKS = (sticky_sessions,)
