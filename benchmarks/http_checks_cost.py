"""What the HTTP endpoint's per-request work costs, in one process, without sockets: per check, and
per POST through the whole ASGI app (``HttpApp``), for one source tree against another.

    python benchmarks/http_checks_cost.py --src /tmp/before/src --src src          # ns per call
    python benchmarks/http_checks_cost.py --src /tmp/before/src --src src --instructions

The checks run on the request the bench driver sends: a stateless-era ``tools/call`` of ``echo``
with its seven headers (``Host``, ``Content-Type``, ``Accept``, the three mirrored ones,
``Content-Length``). ``app-handshake`` and ``app-stateless`` are one echo POST through the app of
``contract_server.py`` (a session opened first for the former), its ``receive`` and ``send`` plain
coroutines: the app's whole work, the MCP session's included, with no HTTP server under it.
``--instructions`` counts as ``docs/performance.md`` does: the process under ``valgrind
--tool=callgrind`` (``PYTHONHASHSEED=0``), the count for ``--calls`` calls minus the count for none,
over ``--calls``. Every loop is bounded; nothing listens anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = (
    "header_map",
    "host_origin",
    "accept",
    "parse_post_body",
    "posted_message",
    "stateless_headers",
    "app-handshake",
    "app-stateless",
)
_TOTALS = re.compile(rb"^(?:totals|summary):\s*(\d+)", re.MULTILINE)
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
HEADERS = [
    (b"host", b"127.0.0.1:41234"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]
MIRRORED = [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", b"echo")]


def _echo(i: int, meta: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": f"bench {i}"}}
    if meta:
        params["_meta"] = META
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}


def check_case(name: str) -> Callable[[], object]:
    """One call of the check ``name`` on the driver's stateless-era echo request."""
    import orjson

    from backchannel.framing import http as H
    from backchannel.http_host.asgi import header_map
    from backchannel.http_host.gate import posted_message

    message = _echo(7, True)
    body = orjson.dumps(message)
    scope = {"type": "http", "headers": [*HEADERS, *MIRRORED, (b"content-length", str(len(body)).encode())]}
    headers = header_map(scope)
    # The endpoint's Host/Origin check as the app makes it (kept per pair where the tree has that).
    kept = getattr(H, "HostOriginCheck", None)
    guard = kept() if kept is not None else None
    host_origin: Callable[[], object] = (
        (lambda: guard(headers)) if guard is not None else (lambda: H.check_host_and_origin(headers))
    )
    cases: dict[str, Callable[[], object]] = {
        "header_map": lambda: header_map(scope),
        "host_origin": host_origin,
        "accept": lambda: H.check_accept("POST", headers),
        "parse_post_body": lambda: H.parse_post_body(headers, body, max_bytes=4 << 20),
        "posted_message": lambda: posted_message(
            headers, body, max_bytes=4 << 20, auth=None, required_scopes=lambda method, params: ()
        ),
        "stateless_headers": lambda: H.check_stateless_headers(headers, message, param_headers={}),
    }
    return cases[name]


async def app_posts(era: str, count: int) -> float:
    """``count`` echo POSTs through ``contract_server.py``'s app after 50 unmeasured; seconds taken."""
    import orjson

    sys.path.insert(0, str(HERE))
    import contract_server

    app = contract_server.build().http_app(body_timeout=None, max_sessions_per_client=None)
    await app.join_fleet()

    async def post(extra: list[tuple[bytes, bytes]], message: dict[str, Any]) -> list[dict[str, Any]]:
        body = orjson.dumps(message)
        sent: list[dict[str, Any]] = []
        given = False

        async def receive() -> dict[str, Any]:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # (the client never leaves)
            raise AssertionError("unreachable")

        async def send(event: dict[str, Any]) -> None:
            sent.append(event)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "root_path": "",
            "query_string": b"",
            "client": ("127.0.0.1", 5555),
            "server": ("127.0.0.1", 41234),
            "headers": [*HEADERS, *extra, (b"content-length", str(len(body)).encode())],
            "state": {},
        }
        await app(scope, receive, send)
        return sent

    if era == "stateless":
        extra = MIRRORED
    else:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "cost", "version": "1"}}
        opened = await post([], {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        session = dict(opened[0]["headers"])[b"mcp-session-id"]
        extra = [(b"mcp-session-id", session), (b"mcp-protocol-version", b"2025-11-25")]
        await post(extra, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    stateless = era == "stateless"
    for i in range(1, 51):
        sent = await post(extra, _echo(i, stateless))
    if b'"bench 50"' not in sent[-1]["body"]:
        raise SystemExit(f"the app answered {sent!r:.300}")
    started = time.perf_counter()
    for i in range(100, 100 + count):
        await post(extra, _echo(i, stateless))
    return time.perf_counter() - started


def run_case(name: str, count: int) -> float:
    """Seconds for ``count`` calls of case ``name`` (in this process)."""
    if name.startswith("app-"):
        from backchannel.runtime import loops

        return loops.run(app_posts(name[4:], count))
    call = check_case(name)
    call()
    started = time.perf_counter()
    for _ in range(count):
        call()
    return time.perf_counter() - started


def child(src: Path, name: str, count: int, valgrind_out: Path | None) -> float:
    """Run the case in a process of its own with ``src`` first on its path; its seconds."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [sys.executable, __file__, "--case", name, "--count", str(count)]
    if valgrind_out is not None:
        env["PYTHONHASHSEED"] = "0"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={valgrind_out}", *cmd]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def instructions(path: Path) -> int:
    found = _TOTALS.search(path.read_bytes())
    if found is None:
        raise SystemExit(f"{path}: no totals line")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--src", type=Path, action="append", help="a source tree (one or more)")
    parser.add_argument("--only", nargs="*", choices=CASES, help="these cases (default: all)")
    parser.add_argument("--calls", type=int, default=10000, help="calls per case (app cases: a tenth as many POSTs)")
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    parser.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)  # (a child's one run)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.case is not None:
        print(run_case(ns.case, ns.count))
        return 0
    if not ns.src:
        parser.error("give --src (one or more source trees)")
    with tempfile.TemporaryDirectory(prefix="http-checks-") as tmp:
        for name in ns.only or CASES:
            count = max(1, ns.calls // 10) if name.startswith("app-") else ns.calls
            for src in ns.src:
                if ns.instructions:
                    totals = []
                    for n in (0, count):
                        out = Path(tmp) / f"callgrind.{name}.{n}"
                        child(src, name, n, out)
                        totals.append(instructions(out))
                    shown = f"{(totals[1] - totals[0]) / count / 1e3:.1f}k instructions"
                else:
                    shown = f"{child(src, name, count, None) / count * 1e9:,.0f} ns"
                print(f"{name:18} {shown:>20} per call  {src}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
