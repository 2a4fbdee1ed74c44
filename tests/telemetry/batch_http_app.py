"""A server for ``backchannel run batch_http_app.py --http`` (tests/telemetry/test_shutdown_flush.py):
an OpenTelemetry SDK as an operator sets one up, a ``BatchSpanProcessor`` that exports only every
minute (or at a flush), writing this process's spans to ``$SPANS_FILE`` as JSON lines."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _otel import JsonLinesExporter
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from backchannel import Server

provider = TracerProvider()
provider.add_span_processor(
    BatchSpanProcessor(JsonLinesExporter(Path(os.environ["SPANS_FILE"])), schedule_delay_millis=60_000)
)
trace.set_tracer_provider(provider)

server = Server("batched")


@server.tool()
def echo(text: str) -> str:
    return text
