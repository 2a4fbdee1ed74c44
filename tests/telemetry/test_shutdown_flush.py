"""A server stopped by SIGTERM still exports the spans its SDK was holding (issue #20).

``backchannel run app.py --http`` shuts the app down on SIGTERM; under uvicorn (an app mounted by
its user) the process then dies by the re-raised signal, before ``atexit``, where the OpenTelemetry
SDK would flush its batch processors. The app's lifespan shutdown flushes them
(``http_host/traced.flush``), whichever server runs it.
The child's SDK is an operator's: a ``BatchSpanProcessor`` that exports once a minute, so a span
can only reach the file before then through that flush.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from _otel import one_span, read_span_file, render_tree

from _subprocesses import checkout_env
from backchannel import Client
from backchannel.testing import free_port, run, stop_process, wait_for_port
from backchannel.transports.http.client import HttpClientTransport

APP = Path(__file__).resolve().parent / "batch_http_app.py"


def test_sigterm_on_backchannel_run_http_exports_the_spans_of_the_batch(tmp_path: Path) -> None:
    spans_file = tmp_path / "spans.jsonl"
    log = tmp_path / "server.log"
    port = free_port()
    command = [sys.executable, "-m", "backchannel", "run", str(APP), "--http", "--port", str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            env={**checkout_env(), "SPANS_FILE": str(spans_file)},
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, process, timeout=30.0, output=lambda: log.read_text(errors="replace"))

        async def call() -> str:
            async with Client(HttpClientTransport(f"http://127.0.0.1:{port}/mcp")) as client:
                [said] = (await client.call_tool("echo", {"text": "hi"})).content
                return str(said.text)

        assert run(call()) == "hi"
        assert read_span_file(spans_file) == []  # the batch processor holds them: its minute is not up
        process.send_signal(signal.SIGTERM)
        process.wait(15)
    finally:
        stop_process(process)
    spans = read_span_file(spans_file)
    assert spans, f"no span exported; the server said:\n{log.read_text(errors='replace')}"
    served = one_span(spans, "tools/call echo", kind="SERVER")
    assert served.attributes["network.transport"] == "tcp", render_tree(spans)
