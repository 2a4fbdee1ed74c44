"""The contract server (``contract_server.py``) with the OpenTelemetry SDK configured, as an operator would.

    python benchmarks/telemetry_sdk_server.py stdio
    PORT=8123 python benchmarks/telemetry_sdk_server.py http
    python benchmarks/telemetry_sdk_server.py --api-only stdio    # the API imported, no SDK

A TracerProvider with a BatchSpanProcessor, a MeterProvider with a periodic reader (every second,
sixty times as often as the SDK's default, so its collections show in the numbers) and a LoggerProvider
with a batch processor, all exporting to exporters that discard what they get: the cost measured is
backchannel's instrumentation and the SDK's own, never a network's. Then ``contract_server.py`` runs
unchanged. ``benchmarks/telemetry_cost.py`` compares it with the server without an SDK and with the
tree from before the instrumentation.

``--api-only`` configures nothing but imports the API, as any library in the process that uses
``opentelemetry-api`` (the official MCP SDK, an instrumented web framework) does: then backchannel asks
the API for the providers on each request, and finds its proxies.

With ``TELEMETRY_COUNT_FILE`` set, the exporters write what they were given (``spans N metrics N
logs N``) when the server flushes the providers as it stops (the HTTP app's lifespan shutdown on
SIGTERM, the end of a stdio run: backchannel's ``telemetry.activation.flush``) and at exit: the cost
benchmark checks that the instrumentation was on, not merely installed.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry import _logs, metrics, trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

HERE = Path(__file__).resolve().parent
COUNTS = {"spans": 0, "metrics": 0, "logs": 0}


class DiscardSpans(SpanExporter):
    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        COUNTS["spans"] += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        report()


class DiscardMetrics(MetricExporter):
    def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        COUNTS["metrics"] += sum(
            len(scope.metrics) for resource in metrics_data.resource_metrics for scope in resource.scope_metrics
        )
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        # The metric reader's flush ends backchannel's flush at shutdown (spans and logs are flushed
        # before it): a server ended by a re-raised SIGTERM (uvicorn's way) reports here, never at exit.
        report()
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        report()


class DiscardLogs(LogRecordExporter):
    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        COUNTS["logs"] += len(batch)
        return LogRecordExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True

    def shutdown(self) -> None:
        report()


def report() -> None:
    # Each provider's shutdown calls this at exit, the metric exporter's flush at backchannel's
    # flush; the last call writes the final counts.
    path = os.environ.get("TELEMETRY_COUNT_FILE")
    if path:
        Path(path).write_text(" ".join(f"{k} {v}" for k, v in COUNTS.items()) + "\n")


def configure() -> None:
    tracing = TracerProvider()
    tracing.add_span_processor(BatchSpanProcessor(DiscardSpans()))
    trace.set_tracer_provider(tracing)
    reader = PeriodicExportingMetricReader(DiscardMetrics(), export_interval_millis=1000)
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    logging = LoggerProvider()
    logging.add_log_record_processor(BatchLogRecordProcessor(DiscardLogs()))
    _logs.set_logger_provider(logging)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == ["--api-only"]:
        arguments = arguments[1:]
    else:
        configure()
    sys.argv = [str(HERE / "contract_server.py"), *arguments]
    runpy.run_path(sys.argv[0], run_name="__main__")
