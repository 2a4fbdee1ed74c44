"""The server behind ``benchmarks/run.py --curves`` (``curves.py``), on backchannel.

    CURVE_TOOLS=1000 CURVE_WORDS=100000 python benchmarks/curve_server.py stdio
    PORT=8123 python benchmarks/curve_server.py http

What the contract server has (``echo``, ``sleep``, the ``greet`` prompt, logging), plus what grows:

- ``blob(size)``: a text result of ``size`` characters (``curve_data.blob``: lines of prose with quotes,
  so the encoder escapes as it would in a real file's content);
- ``CURVE_TOOLS`` more tools (``tool_00000``, ...), all of one function, as a server that wraps an API
  registers them; ``curve_stats`` answers how long registering them took;
- prompt ``pick(word)``, whose ``word`` completes from ``CURVE_WORDS`` words (``curve_data.words``).

The peers' twins are ``peers/pysdk_curve_server.py`` and ``peers/ts_curve_server.mjs``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from backchannel.server import Server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from curve_data import blob as make_blob
from curve_data import words


def lookup(query: str, limit: int = 10) -> str:
    """Look the query up and answer at most limit lines."""
    return query[:limit]


def build() -> Server:
    server = Server("backchannel-curves", "1.0.0", log_level=None, completion_rate=None)

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Answer the text back."""
        return text

    @server.tool(structured_output=False)
    async def sleep(ms: int) -> str:
        """Wait ms milliseconds without blocking anything else."""
        await asyncio.sleep(ms / 1000)
        return "slept"

    @server.tool(structured_output=False)
    def blob(size: int) -> str:
        """Answer a text of size characters."""
        return make_blob(size)

    @server.prompt()
    def greet(word: str) -> str:
        """Greet with a word."""
        return f"Say {word}."

    count = int(os.environ.get("CURVE_TOOLS", "0"))
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        server.add_tool(
            lookup, name=f"tool_{i:05d}", description=f"Tool number {i}: looks a query up.", structured_output=False
        )
    registered, registered_cpu = time.perf_counter() - started, time.process_time() - cpu

    vocabulary = words(int(os.environ.get("CURVE_WORDS", "0")))
    started = time.perf_counter()

    def pick(word: str) -> str:
        """Pick a word."""
        return f"Picked {word}."

    server.add_prompt(pick, completers={"word": vocabulary})
    indexed = time.perf_counter() - started
    stats = json.dumps(
        {"register_ms": registered * 1e3, "register_cpu_ms": registered_cpu * 1e3, "index_ms": indexed * 1e3}
    )

    @server.tool(structured_output=False)
    def curve_stats() -> str:
        """How long building this server took."""
        return stats

    return server


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    server = build()
    if mode == "stdio":
        server.run()
    elif mode == "http":
        # The driver is one client (one address) opening up to 10,000 sessions, as a proxy would:
        # no per-client share of them (docs/reliability.md, "Each client's share").
        server.run_http("127.0.0.1", int(os.environ.get("PORT", "8000")), max_sessions_per_client=None)
    else:
        raise SystemExit(f"usage: {sys.argv[0]} stdio|http")


if __name__ == "__main__":
    main()
