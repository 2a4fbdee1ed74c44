"""Lifecycle and robustness: malformed input, big and deep messages, fuzzing, a client gone
mid-question, and over HTTP the Origin and Host checks, unknown sessions, slow bodies and
many sessions.

Every load is bounded in count and time (``--budget`` frames; 8 slow bodies for 10 s; 64
sessions by default), and the loads (slow bodies, many sessions) run only on a server on this
machine unless ``--load`` says otherwise. After each, the server must still answer.
"""

from __future__ import annotations

__all__ = ["CHECKS"]

import asyncio
import contextlib
import time
from typing import Any
from urllib.parse import urlsplit

from ..types.versions import Era
from .fuzz import REFUSALS, Frames, Ledger
from .outcome import Line
from .raw_http import RawAnswer, headers_for, post
from .run import Run, checks, result_of, said
from .target import CheckedHttp, CheckedStdio
from .wire import Wire, error_code

#: The oversized message: past the 4 MiB most servers cap a message at.
OVERSIZED_BYTES = 8 * 1024 * 1024
DEEP_LEVELS = 100_000
_SLOW_BODIES = 8
#: The longest the fuzzing runs, whatever the budget; and how many frames may wait for an answer at once.
FUZZ_SECONDS = 180.0
#: How long a server whose stdin closed has to exit ("promptly").
DEAD_CLIENT_SECONDS = 10.0
_IN_FLIGHT = 100
_SLOW_SECONDS = 10.0


def _era(run: Run) -> Era | None:
    """The era the single-connection checks speak: the handshake era where the server has it."""
    spoken = run.eras_spoken()
    return spoken[0] if spoken else None


def _liveness(era: Era) -> str:
    return "ping" if era == "handshake" else "server/discover"


async def _alive(wire: Wire, era: Era, timeout: float = 10.0) -> dict[str, Any] | None:
    return await wire.ask(_liveness(era), timeout=timeout)


@checks("robustness.capabilities")
async def capabilities(run: Run) -> None:
    pairs = (
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resources"),
    )
    for era in run.eras_spoken():
        declared = run.eras[era].capabilities
        undeclared = [(method, capability) for method, capability in pairs if capability not in declared]
        if era == "handshake" and "logging" not in declared:
            undeclared.append(("logging/setLevel", "logging"))
        if not undeclared:
            run.add("robustness.capabilities", "pass", f"declares {', '.join(sorted(declared))}", era=era)
            continue
        answered = []
        async with run.session(era) as wire:
            for method, capability in undeclared:
                params = {"level": "warning"} if method == "logging/setLevel" else None
                if result_of(await wire.ask(method, params)) is not None:
                    answered.append(f"{method} (no {capability} capability)")
        if answered:
            run.add("robustness.capabilities", "fail", f"answers {', '.join(answered)}", era=era, wire=wire)
        else:
            run.add(
                "robustness.capabilities",
                "pass",
                f"refuses what it does not declare ({', '.join(method for method, _ in undeclared)})",
                era=era,
            )


# -- malformed input -------------------------------------------------------------------------------


async def _malformed(
    run: Run, check: str, data: bytes, allowed: set[int], what: str, *, request_id: Any = None
) -> None:
    """Send ``data`` (stdio: one line; HTTP: one POST) and expect an error with a code in
    ``allowed`` (with id null, or ``request_id``), then a server that still answers."""
    era = _era(run)
    if era is None:
        return
    if run.target.kind == "http":
        await _malformed_http(run, check, era, data, allowed, what)
        return
    async with run.session(era) as wire:
        start = len(wire.messages)
        wire.send_raw(data + b"\n")
        answer = await wire.wait_for(
            lambda m: "method" not in m and (m.get("id") is None or m.get("id") == request_id), start=start
        )
        alive = await _alive(wire, era)
    code = error_code(answer)
    if result_of(alive) is None:
        run.add(
            check,
            "fail",
            f"after {what}, the server stopped answering ({_liveness(era)} got {said(alive)})",
            era=era,
            wire=wire,
        )
    elif code in allowed:
        run.add(check, "pass", f"{what}: error {code}; the server still answers", era=era)
    else:
        run.add(
            check,
            "fail",
            f"{what} got {said(answer)}, not {' or '.join(map(str, sorted(allowed)))}",
            era=era,
            wire=wire,
        )


async def _malformed_http(run: Run, check: str, era: Era, data: bytes, allowed: set[int], what: str) -> None:
    async with run.session(era) as wire:
        transport = wire.transport
        assert isinstance(transport, CheckedHttp) and run.target.url is not None
        headers = headers_for(
            None, session_id=transport.session_id, version=wire.version if era == "handshake" else None
        )
        if era == "stateless":
            headers["mcp-protocol-version"] = wire.version
        answer = await run.posted(wire, data, headers)
        alive = await _alive(wire, era)
    code = answer.error_code()
    if result_of(alive) is None:
        run.add(check, "fail", f"after {what}, the server stopped answering", era=era, wire=wire)
    elif answer.status is not None and 400 <= answer.status < 500 and (code is None or code in allowed):
        run.add(check, "pass", f"{what}: {answer.said()[:160]}", era=era)
    else:
        run.add(check, "fail", f"{what} got {answer.said()}", era=era, wire=wire)


@checks("robustness.parse-error")
async def parse_error(run: Run) -> None:
    await _malformed(
        run,
        "robustness.parse-error",
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", ',
        {-32700},
        "a line that is not JSON",
    )


@checks("robustness.invalid-request")
async def invalid_request(run: Run) -> None:
    await _malformed(
        run,
        "robustness.invalid-request",
        b'{"jsonrpc":"2.0","id":"check-invalid","method":42}',
        {-32600},
        "a request whose method is a number",
        request_id="check-invalid",
    )


@checks("robustness.unknown-method")
async def unknown_method(run: Run) -> None:
    era = _era(run)
    if era is None:
        return
    async with run.session(era) as wire:
        answer = await wire.ask("backchannel/check-no-such-method")
    if error_code(answer) == -32601:
        run.add("robustness.unknown-method", "pass", "-32601", era=era)
    else:
        run.add(
            "robustness.unknown-method", "fail", f"an unknown method got {said(answer)}, not -32601", era=era, wire=wire
        )


@checks("robustness.invalid-params")
async def invalid_params(run: Run) -> None:
    era = _era(run)
    if era is None:
        return
    async with run.session(era) as wire:
        answer = await wire.ask("tools/call", {"name": 42, "arguments": "not an object"})
    code = error_code(answer)
    if code in (-32602, -32600):
        run.add("robustness.invalid-params", "pass", f"tools/call with a number for a name: {code}", era=era)
    else:
        run.add(
            "robustness.invalid-params",
            "fail",
            f"tools/call with a number for a name got {said(answer)}, not -32602",
            era=era,
            wire=wire,
        )


async def _big(run: Run, check: str, data: bytes, request_id: str, what: str) -> None:
    """``data`` is a request; accepted (answered) or refused, the server must answer after it."""
    era = _era(run)
    if era is None:
        return
    if run.target.kind == "http":
        async with run.session(era) as wire:
            transport = wire.transport
            assert isinstance(transport, CheckedHttp) and run.target.url is not None
            headers = headers_for(None, session_id=transport.session_id, version=wire.version)
            answer = await run.posted(wire, data, headers, timeout=run.options.timeout + 20)
            alive = await _alive(wire, era)
        ok = answer.status is not None and (answer.status < 500) and answer.error_code() != -32603
        said_it = answer.said()[:200]
    else:
        async with run.session(era) as wire:
            start = len(wire.messages)
            wire.send_raw(data + b"\n")
            reply = await wire.wait_for(
                lambda m: "method" not in m and m.get("id") in (None, request_id),
                timeout=run.options.timeout + 20,
                start=start,
            )
            alive = await _alive(wire, era)
        code = error_code(reply)
        ok = reply is not None and (result_of(reply) is not None or code in REFUSALS)
        said_it = said(reply)
    if result_of(alive) is None:
        run.add(check, "fail", f"after {what}, the server stopped answering ({said_it})", era=era, wire=wire)
    elif not ok:
        run.add(check, "fail", f"{what} got {said_it}", era=era, wire=wire)
    else:
        run.add(check, "pass", f"{what} got {said_it}; the server still answers", era=era)


@checks("robustness.oversized")
async def oversized(run: Run) -> None:
    era = _era(run)
    if era is None:
        return
    padding = b"x" * OVERSIZED_BYTES
    head = b'{"jsonrpc":"2.0","id":"check-oversized","method":"' + _liveness(era).encode() + b'","params":{'
    meta = b""
    if era == "stateless":
        meta = (
            b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/'
            b'clientInfo":{"name":"check","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},'
        )
    data = head + meta + b'"padding":"' + padding + b'"}}'
    await _big(run, "robustness.oversized", data, "check-oversized", f"a {len(data) >> 20} MiB message")


@checks("robustness.deep")
async def deep(run: Run) -> None:
    era = _era(run)
    if era is None:
        return
    body = b"[" * DEEP_LEVELS + b"0" + b"]" * DEEP_LEVELS
    data = (
        b'{"jsonrpc":"2.0","id":"check-deep","method":"' + _liveness(era).encode() + b'","params":{"x":' + body + b"}}"
    )
    await _big(run, "robustness.deep", data, "check-deep", f"a message nested {DEEP_LEVELS} levels deep")


# -- fuzzing ---------------------------------------------------------------------------------------


@checks("robustness.fuzz")
async def fuzz(run: Run) -> None:
    era = _era(run)
    if era is None:
        return
    budget = run.options.config.budget if run.options.config.budget is not None else run.options.budget
    if budget <= 0:
        run.not_applicable("robustness.fuzz", "--budget 0: no frames", era=era)
        run.not_applicable("robustness.fuzz-errors", "--budget 0: no frames", era=era)
        return
    info = run.eras[era]
    ledger = Ledger()
    safe = [tool for tool in info.tools if tool.get("name") in info.plan.safe]
    frames = Frames(
        run.options.seed, ledger, era, info.version, tools=safe, prompts=info.prompts, templates=info.templates
    )
    if run.target.kind == "http":
        await _fuzz_http(run, era, frames, ledger, budget)
        return
    async with run.session(era, capabilities={}) as wire:
        counted = len(wire.messages)
        sent = 0
        stop = time.monotonic() + FUZZ_SECONDS
        while sent < budget and time.monotonic() < stop and not wire.ended.is_set():
            for line in frames.next():
                wire.send_raw(line + b"\n")
                sent += 1
            if sent % 25 == 0:  # no more than _IN_FLIGHT unanswered at once: a slow server is not a lost one
                await asyncio.sleep(0)
                counted = _count(wire, ledger, counted)
                wait_until = time.monotonic() + run.options.timeout
                while ledger.outstanding() > _IN_FLIGHT and time.monotonic() < wait_until and not wire.ended.is_set():
                    await wire.settle(0.05)
                    counted = _count(wire, ledger, counted)
        deadline = time.monotonic() + run.options.timeout
        while time.monotonic() < deadline and not wire.ended.is_set():
            counted = _count(wire, ledger, counted)
            if ledger.settled():
                break
            await wire.settle(0.1)
        counted = _count(wire, ledger, counted)
        alive = None if wire.ended.is_set() else await _alive(wire, era)
        counted = _count(wire, ledger, counted)
    _fuzz_verdicts(run, era, ledger, sent, alive, wire, None)


def _count(wire: Wire, ledger: Ledger, counted: int) -> int:
    for message in wire.messages[counted:]:
        answered = message.get("id")
        ours = type(answered) in (int, str) and answered in wire.sent_ids
        if "method" not in message and not ours:
            ledger.answered(message)
    return len(wire.messages)


async def _fuzz_http(run: Run, era: Era, frames: Frames, ledger: Ledger, budget: int) -> None:
    statuses: dict[int, int] = {}
    server_errors: list[str] = []
    lost: list[str] = []
    async with run.session(era, capabilities={}) as wire, run.target.raw_http() as http:
        transport = wire.transport
        assert isinstance(transport, CheckedHttp) and run.target.url is not None
        headers = headers_for(
            None, session_id=transport.session_id, version=wire.version if era == "handshake" else None
        )
        sent = 0
        stop = time.monotonic() + FUZZ_SECONDS
        while sent < budget and time.monotonic() < stop:
            for line in frames.next():
                sent += 1
                answer = await post(
                    http, run.target.url, line, _frame_headers(line, headers, era, wire.version), timeout=5.0
                )
                _read_http(answer, line, ledger, statuses, server_errors, lost)
        alive = await _alive(wire, era)
    _fuzz_verdicts(run, era, ledger, sent, alive, wire, (statuses, server_errors, lost))


def _frame_headers(line: bytes, base: dict[str, str], era: Era, version: str) -> dict[str, str]:
    import json

    headers = dict(base)
    if era == "stateless":
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        headers.update({k: v for k, v in headers_for(message).items() if k.lower().startswith("mcp")})
        headers.setdefault("MCP-Protocol-Version", version)
    return headers


def _read_http(
    answer: RawAnswer, line: bytes, ledger: Ledger, statuses: dict[int, int], server_errors: list[str], lost: list[str]
) -> None:
    import json

    if answer.status is None:
        if "nothing more within" not in (answer.problem or ""):
            lost.append(f"{answer.problem} for {line[:160]!r}")
        return
    statuses[answer.status] = statuses.get(answer.status, 0) + 1
    if answer.status >= 500:
        server_errors.append(f"HTTP {answer.status} for {line[:160]!r}: {answer.body[:160]!r}")
    responses = [m for m in answer.messages if "method" not in m]
    for message in responses:
        ledger.answered(message)
    if not responses and answer.status >= 400:  # refused by HTTP alone: that is the frame's answer
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict) and type(value.get("id")) in (int, str):
                ledger.answered({"jsonrpc": "2.0", "id": value["id"], "error": {"code": -32600, "message": "HTTP"}})


def _fuzz_verdicts(
    run: Run,
    era: Era,
    ledger: Ledger,
    sent: int,
    alive: dict[str, Any] | None,
    wire: Wire,
    http: tuple[dict[int, int], list[str], list[str]] | None,
) -> None:
    problems = list(ledger.problems)
    if http is None:
        problems.extend(ledger.missing()[:20])
    else:
        problems.extend(http[2][:10])
    codes = ", ".join(f"{code}: {count}" for code, count in sorted(ledger.codes.items()))
    statuses = f"; HTTP statuses {dict(sorted(http[0].items()))}" if http is not None else ""
    evidence = [Line("note", 0.0, problem) for problem in problems[:30]]
    if result_of(alive) is None:
        run.add(
            "robustness.fuzz",
            "fail",
            f"after {sent} fuzzed frames the server no longer answers ({_liveness(era)} got {said(alive)})",
            era=era,
            exchange=[*evidence, *wire.exchange(20)],
        )
    elif problems:
        run.add(
            "robustness.fuzz",
            "fail",
            f"{len(problems)} breach(es) in {sent} frames: {problems[0]}",
            era=era,
            exchange=evidence,
        )
    else:
        run.add(
            "robustness.fuzz",
            "pass",
            f"{sent} frames (seed {run.options.seed}), {ledger.answered_count} "
            f"answers, each once; error codes {{{codes}}}{statuses}",
            era=era,
        )
    internal = list(ledger.internal) + (http[1] if http is not None else [])
    if internal:
        run.add(
            "robustness.fuzz-errors",
            "fail",
            f"{len(internal)} internal error(s) for bad input: {internal[0]}",
            era=era,
            exchange=[Line("note", 0.0, item) for item in internal[:30]],
        )
    else:
        run.add(
            "robustness.fuzz-errors", "pass", f"no -32603{' nor HTTP 5xx' if http else ''} in {sent} frames", era=era
        )


# -- a client gone mid-question ----------------------------------------------------------------------


@checks("robustness.dead-client")
async def dead_client(run: Run) -> None:
    if run.target.kind != "stdio":
        return
    era = _era(run)
    if era is None:
        return
    plan = run.eras[era].plan
    use = plan.use("elicits") or plan.use("slow")
    never = asyncio.Event()

    async def hold(params: dict[str, Any]) -> dict[str, Any]:
        await never.wait()
        return {"action": "cancel"}

    async with run.session(era) as wire:
        transport = wire.transport
        assert isinstance(transport, CheckedStdio)
        wire.answers["elicitation/create"] = hold
        where = "while idle"
        if use is not None:
            wire.send(wire.request("tools/call", {"name": use.name, "arguments": use.arguments}))
            asked = await wire.wait_for(lambda m: m.get("method") == "elicitation/create", timeout=3.0)
            where = "with a form pending" if asked is not None else f"during {use.name}"
        wire.note(f"closed the server's stdin {where}")
        closed_at = time.monotonic()
        transport.close_stdin()
        process = transport.process
        assert process is not None
        try:
            await asyncio.wait_for(process.wait(), DEAD_CLIENT_SECONDS)
            took: float | None = time.monotonic() - closed_at
        except TimeoutError:
            took = None
    if took is None:
        run.add(
            "robustness.dead-client",
            "fail",
            f"stdin closed {where}: the server was still running {DEAD_CLIENT_SECONDS:.0f} s later "
            "(the client then has to SIGTERM it)",
            era=era,
            wire=wire,
        )
    else:
        run.add("robustness.dead-client", "pass", f"stdin closed {where}: the server exited in {took:.1f} s", era=era)


# -- HTTP ------------------------------------------------------------------------------------------


@checks("http.origin")
async def origin(run: Run) -> None:
    era = _era(run)
    if run.target.kind != "http" or era is None:
        return
    answer, wire = await _foreign(run, era, {"origin": "http://evil.example"})
    if answer.status == 403:
        run.add("http.origin", "pass", "Origin http://evil.example got 403", era=era)
    else:
        run.add("http.origin", "fail", f"Origin http://evil.example got {answer.said()}", era=era, exchange=wire.lines)


@checks("http.host")
async def host(run: Run) -> None:
    era = _era(run)
    if run.target.kind != "http" or era is None:
        return
    if not run.target.loopback:
        run.not_applicable(
            "http.host", "the server is not on this machine: DNS rebinding threatens local servers", era=era
        )
        return
    answer, wire = await _foreign(run, era, {"host": "evil.example"})
    if answer.status is not None and 400 <= answer.status < 500:
        run.add("http.host", "pass", f"Host evil.example got {answer.status}", era=era)
    else:
        run.add("http.host", "fail", f"Host evil.example got {answer.said()}", era=era, exchange=wire.lines)


async def _foreign(run: Run, era: Era, extra: dict[str, str]) -> tuple[RawAnswer, Wire]:
    wire = run.wire(era)
    message = wire.introduction()
    headers = {**headers_for(message), **extra}
    answer = await run.posted(wire, message, headers, how=f"with {', '.join(f'{k}: {v}' for k, v in extra.items())}")
    await wire.close()
    return answer, wire


@checks("http.unknown-session")
async def unknown_session(run: Run) -> None:
    if run.target.kind != "http" or "handshake" not in run.eras_spoken():
        return
    async with run.session("handshake") as wire:
        transport = wire.transport
        assert isinstance(transport, CheckedHttp) and run.target.url is not None
        if transport.session_id is None:
            run.not_applicable(
                "http.unknown-session", "the server keeps no sessions (no Mcp-Session-Id)", era="handshake"
            )
            return
        message = wire.request("ping")
        headers = headers_for(message, session_id="backchannel-check-no-such-session", version=wire.version)
        answer = await run.posted(wire, message, headers, how="with Mcp-Session-Id: backchannel-check-no-such-session")
    if answer.status == 404:
        run.add("http.unknown-session", "pass", "an unknown session id got 404", era="handshake")
    else:
        run.add(
            "http.unknown-session",
            "fail",
            f"an unknown session id got {answer.said()}, not 404",
            era="handshake",
            wire=wire,
        )


@checks("http.slow-body")
async def slow_body(run: Run) -> None:
    era = _era(run)
    if run.target.kind != "http" or era is None:
        return
    if not run.loads_allowed:
        run.not_applicable("http.slow-body", "a load on a server not on this machine: --load runs it", era=era)
        return
    assert run.target.url is not None
    parts = urlsplit(run.target.url)
    slow = [asyncio.create_task(_trickle(parts)) for _ in range(_SLOW_BODIES)]
    try:
        await asyncio.sleep(1.0)
        started = time.monotonic()
        async with run.session(era, timeout=10.0) as wire:
            answer = await _alive(wire, era)
        took = time.monotonic() - started
    finally:
        for task in slow:
            task.cancel()
        await asyncio.gather(*slow, return_exceptions=True)
    if result_of(answer) is not None:
        run.add(
            "http.slow-body",
            "pass",
            f"with {_SLOW_BODIES} bodies trickling a byte each half second, a new client was answered in {took:.1f} s",
            era=era,
        )
    else:
        run.add(
            "http.slow-body",
            "fail",
            f"with {_SLOW_BODIES} bodies trickling, a new client got {said(answer)}",
            era=era,
            wire=wire,
        )


async def _trickle(parts: Any) -> None:
    """A POST whose body comes a byte every half second, for at most ``_SLOW_SECONDS``."""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    reader, writer = await asyncio.open_connection(parts.hostname, port, ssl=parts.scheme == "https" or None)
    try:
        path = parts.path or "/"
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Length: 4096\r\n\r\n"
        )
        writer.write(head.encode())
        deadline = time.monotonic() + _SLOW_SECONDS
        while time.monotonic() < deadline and not reader.at_eof():
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.5)
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


@checks("http.sessions")
async def sessions(run: Run) -> None:
    if run.target.kind != "http" or "handshake" not in run.eras_spoken():
        return
    if not run.loads_allowed:
        run.not_applicable("http.sessions", "a load on a server not on this machine: --load runs it", era="handshake")
        return
    assert run.target.url is not None
    count = run.options.sessions
    opened: list[str] = []
    refusals: dict[str, int] = {}
    wire = run.wire("handshake")
    async with run.target.raw_http() as http:
        for _ in range(count):
            message = wire.introduction()
            answer = await post(http, run.target.url, message, headers_for(message), run.options.timeout)
            session = answer.headers.get("mcp-session-id")
            if answer.status == 200 and session:
                opened.append(session)
            else:
                key = answer.said()[:80]
                refusals[key] = refusals.get(key, 0) + 1
        if not opened and not refusals:
            return
        try:
            async with run.session("handshake") as fresh:
                alive = await _alive(fresh, "handshake")
            fresh_ok = result_of(alive) is not None
            fresh_said = said(alive)
        except Exception as exc:  # the new session itself refused: said below
            fresh_ok, fresh_said, fresh = False, f"no session: {exc}", wire
        first = None
        if opened:
            ping = wire.request("ping")
            first = await post(
                http,
                run.target.url,
                ping,
                headers_for(ping, session_id=opened[0], version=run.eras["handshake"].version),
                run.options.timeout,
            )
        for session in opened:  # leave nothing behind
            with contextlib.suppress(Exception):
                await http.delete(run.target.url, headers={"mcp-session-id": session})
    await wire.close()
    kept = f"; the first session's ping got {first.said()[:80]}" if first is not None else ""
    refused = f"; refused {sum(refusals.values())} ({', '.join(refusals)})" if refusals else ""
    if fresh_ok or (refusals and not fresh_ok and "HTTP 4" in fresh_said + " ".join(refusals)):
        run.add(
            "http.sessions",
            "pass",
            f"opened {len(opened)} of {count} sessions{refused}; a new client then got {fresh_said}{kept}",
            era="handshake",
        )
    else:
        run.add(
            "http.sessions",
            "fail",
            f"after {len(opened)} sessions, a new client got {fresh_said}{refused}",
            era="handshake",
            wire=fresh,
        )


@checks("robustness.stdout")
async def stdout(run: Run) -> None:
    if run.target.kind != "stdio":
        return
    if run.undecodable:
        lines = [Line("received", 0.0, f"{line}") for line, _ in run.undecodable[:20]]
        run.add(
            "robustness.stdout",
            "fail",
            f"{len(run.undecodable)} line(s) on stdout were no JSON-RPC message: {run.undecodable[0][0][:160]}",
            exchange=lines,
        )
    else:
        run.add("robustness.stdout", "pass", "every line the server wrote, in every check, was a message")


CHECKS = (
    capabilities,
    parse_error,
    invalid_request,
    unknown_method,
    invalid_params,
    oversized,
    deep,
    fuzz,
    dead_client,
    origin,
    host,
    unknown_session,
    slow_body,
    sessions,
    stdout,
)
