"""The OpenTelemetry SDK wired to in-memory exporters, once per test process, for tests/telemetry/.

Use the ``otel`` fixture (tests/telemetry/conftest.py re-exports it)::

    def test_something(otel: Otel) -> None:
        async def body() -> None:
            ...  # run a request; inside the loop, ``await otel.wait_spans(done)`` waits for spans
        asyncio.run(body())
        spans = otel.spans()  # the loop has finished: every in-process span has ended
        call = one_span(spans, "tools/call ask", kind="CLIENT")
        assert children_of(spans, call)[0].kind == "SERVER"

The global providers can be set only once per process, so :func:`install` sets them the first
time and every later test shares them; the fixture clears the exporters before each test.
Metrics: counters and histograms use DELTA temporality, so :meth:`Otel.metric_points` returns
what was recorded since the previous read (the fixture drains before each test); up-down
counters stay CUMULATIVE (an in-flight count reads as a level, back to 0 when all is done).

Once a telemetry test has run, every other test in the same pytest process runs with
telemetry on: that is intended (docs/observability.md and /tmp/brief/otel_design.md). Outside
a test that asked for ``otel`` the exporters drop what they are given (the spans are still made
and ended), so a test that counts the memory it keeps is not charged for our records, and the
propagator injects nothing, so a test that compares a request's exact params on the wire sees no
``traceparent`` it did not expect.

For a child process (a stdio server), :func:`configure_file_export` writes that process's spans
as JSON lines, and :func:`read_span_file` reads them back as :class:`SpanRecord` s, the same
shape the in-memory spans are read as, so the tree helpers work on both.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import _logs, metrics, propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import TextMapPropagator, default_getter, default_setter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, ObservableCounter
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

try:  # the SDK renamed it (1.39); the old name warns
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as InMemoryLogExporter
except ImportError:  # pragma: no cover - an older SDK
    from opentelemetry.sdk._logs.export import InMemoryLogExporter  # type: ignore[attr-defined,no-redef]

__all__ = [
    "JsonLinesExporter",
    "Otel",
    "SpanRecord",
    "children_of",
    "configure_file_export",
    "install",
    "one_span",
    "otel",
    "parent_of",
    "read_span_file",
    "record_of",
    "render_tree",
    "spans_by_name",
]


@dataclass(frozen=True)
class SpanRecord:
    """One finished span, as plain data (from the in-memory exporter or a child's span file)."""

    name: str
    kind: str  # "SERVER", "CLIENT", "INTERNAL", ...
    trace_id: int
    span_id: int
    parent_id: int | None
    attributes: Mapping[str, Any]
    events: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    links: tuple[tuple[int, int], ...] = ()  # (trace_id, span_id) of each linked span
    status: str = "UNSET"  # "UNSET", "OK" or "ERROR"
    description: str | None = None
    start_time: int = 0
    end_time: int = 0

    def event_names(self) -> list[str]:
        return [name for name, _ in self.events]

    def events_named(self, name: str) -> list[Mapping[str, Any]]:
        return [attributes for event, attributes in self.events if event == name]

    @property
    def duration(self) -> float:
        """Seconds between start and end."""
        return (self.end_time - self.start_time) / 1e9

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "trace_id": f"{self.trace_id:032x}",
            "span_id": f"{self.span_id:016x}",
            "parent_id": None if self.parent_id is None else f"{self.parent_id:016x}",
            "attributes": dict(self.attributes),
            "events": [[name, dict(attributes)] for name, attributes in self.events],
            "links": [[f"{t:032x}", f"{s:016x}"] for t, s in self.links],
            "status": self.status,
            "description": self.description,
            "start_time": self.start_time,
            "end_time": self.end_time,
        }


def record_of(span: ReadableSpan) -> SpanRecord:
    """A finished SDK span as a :class:`SpanRecord`."""
    assert span.context is not None
    return SpanRecord(
        name=span.name,
        kind=span.kind.name,
        trace_id=span.context.trace_id,
        span_id=span.context.span_id,
        parent_id=span.parent.span_id if span.parent is not None else None,
        attributes=dict(span.attributes or {}),
        events=tuple((event.name, dict(event.attributes or {})) for event in span.events),
        links=tuple((link.context.trace_id, link.context.span_id) for link in span.links),
        status=span.status.status_code.name,
        description=span.status.description,
        start_time=span.start_time or 0,
        end_time=span.end_time or 0,
    )


def _record_from_json(data: Mapping[str, Any]) -> SpanRecord:
    return SpanRecord(
        name=data["name"],
        kind=data["kind"],
        trace_id=int(data["trace_id"], 16),
        span_id=int(data["span_id"], 16),
        parent_id=None if data["parent_id"] is None else int(data["parent_id"], 16),
        attributes=data["attributes"],
        events=tuple((name, attributes) for name, attributes in data["events"]),
        links=tuple((int(t, 16), int(s, 16)) for t, s in data["links"]),
        status=data["status"],
        description=data["description"],
        start_time=data["start_time"],
        end_time=data["end_time"],
    )


# --- reading a span tree ---------------------------------------------------------------------


def spans_by_name(spans: Sequence[SpanRecord], name: str) -> list[SpanRecord]:
    """The spans named ``name``, in the order they ended."""
    return [span for span in spans if span.name == name]


def one_span(spans: Sequence[SpanRecord], name: str, *, kind: str | None = None) -> SpanRecord:
    """The one span named ``name`` (and of ``kind``, when given); fails the test when not exactly one."""
    found = [span for span in spans_by_name(spans, name) if kind is None or span.kind == kind]
    assert len(found) == 1, f"expected one {kind or ''} span {name!r}, found {len(found)}:\n{render_tree(spans)}"
    return found[0]


def children_of(spans: Sequence[SpanRecord], parent: SpanRecord) -> list[SpanRecord]:
    """The spans whose parent is ``parent``, by start time."""
    found = [span for span in spans if span.parent_id == parent.span_id and span.trace_id == parent.trace_id]
    return sorted(found, key=lambda span: span.start_time)


def parent_of(spans: Sequence[SpanRecord], child: SpanRecord) -> SpanRecord | None:
    """``child`` 's parent among ``spans`` (None for a root, or a parent in another process)."""
    for span in spans:
        if span.span_id == child.parent_id and span.trace_id == child.trace_id:
            return span
    return None


def render_tree(spans: Sequence[SpanRecord]) -> str:
    """The spans as an indented tree (for assertion messages): ``name [KIND] status``."""
    ids = {span.span_id for span in spans}
    lines: list[str] = []

    def walk(span: SpanRecord, depth: int) -> None:
        status = "" if span.status == "UNSET" else f" {span.status}"
        lines.append(f"{'  ' * depth}{span.name} [{span.kind}]{status} trace={span.trace_id:032x}"[:160])
        for child in children_of(spans, span):
            walk(child, depth + 1)

    for root in sorted((s for s in spans if s.parent_id not in ids), key=lambda s: s.start_time):
        walk(root, 0)
    return "\n".join(lines)


# --- the in-process SDK ------------------------------------------------------------------------


class _Keeping:
    """Whether the exporters keep what they are given (only while a telemetry test runs)."""

    keeping = True


class _Propagator(TextMapPropagator):
    """The default W3C trace context + baggage, injecting only while a telemetry test runs."""

    def __init__(self) -> None:
        self._inner = CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])

    def inject(self, carrier: Any, context: Any = None, setter: Any = default_setter) -> None:
        if _Keeping.keeping:
            self._inner.inject(carrier, context, setter)

    def extract(self, carrier: Any, context: Any = None, getter: Any = default_getter) -> Any:
        return self._inner.extract(carrier, context, getter)

    @property
    def fields(self) -> set[str]:
        return self._inner.fields


class _SpanExporter(InMemorySpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return super().export(spans) if _Keeping.keeping else SpanExportResult.SUCCESS


class _LogExporter(InMemoryLogExporter):  # type: ignore[misc,valid-type]
    def export(self, batch: Sequence[Any]) -> Any:
        return super().export(batch if _Keeping.keeping else [])


@dataclass
class Otel:
    """The process's in-memory exporters; :func:`install` makes the one instance."""

    span_exporter: InMemorySpanExporter
    metric_reader: InMemoryMetricReader
    log_exporter: InMemoryLogExporter
    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    logger_provider: LoggerProvider
    _extra: list[Any] = field(default_factory=list)

    def clear(self) -> None:
        """Forget every span and log record so far, and drain the metrics recorded so far."""
        self.span_exporter.clear()
        self.log_exporter.clear()
        self.metric_reader.get_metrics_data()

    def spans(self) -> list[SpanRecord]:
        """The spans finished so far in this test, as records, in the order they ended."""
        return [record_of(span) for span in self.span_exporter.get_finished_spans()]

    async def wait_spans(self, done: Callable[[list[SpanRecord]], bool], *, timeout: float = 5.0) -> list[SpanRecord]:
        """The finished spans, once ``done(spans)`` holds; fails after ``timeout`` seconds.

        A span ends after its answer is sent, so the peer may hold the answer a moment before the
        span is exported: wait on the spans you expect rather than reading them at once.
        """
        deadline = time.monotonic() + timeout
        while True:
            spans = self.spans()
            if done(spans):
                return spans
            if time.monotonic() > deadline:
                raise AssertionError(f"spans did not arrive within {timeout}s; have:\n{render_tree(spans)}")
            await asyncio.sleep(0.005)

    def logs(self) -> list[Any]:
        """The OpenTelemetry log records emitted so far in this test (SDK ``ReadableLogRecord`` s)."""
        return list(self.log_exporter.get_finished_logs())

    def metric_points(self, name: str) -> list[Any]:
        """The data points of metric ``name`` since the previous read (see the module docstring).

        Reading drains: read once per check, and keep the result.
        """
        data = self.metric_reader.get_metrics_data()
        points: list[Any] = []
        if data is None:
            return points
        for resource_metrics in data.resource_metrics:
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    if metric.name == name:
                        points.extend(metric.data.data_points)
        return points


_installed: Otel | None = None


def install() -> Otel:
    """Set the global tracer, meter and logger providers (once per process) and return them."""
    global _installed
    _Keeping.keeping = True
    if _installed is not None:
        return _installed
    propagate.set_global_textmap(_Propagator())
    span_exporter = _SpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    trace.set_tracer_provider(tracer_provider)
    if trace.get_tracer_provider() is not tracer_provider:  # someone set one first: share it
        existing = trace.get_tracer_provider()
        assert isinstance(existing, TracerProvider), f"a non-SDK tracer provider is set: {existing!r}"
        existing.add_span_processor(SimpleSpanProcessor(span_exporter))
        tracer_provider = existing

    delta = AggregationTemporality.DELTA
    metric_reader = InMemoryMetricReader(
        preferred_temporality={Counter: delta, Histogram: delta, ObservableCounter: delta}
    )
    meter_provider = MeterProvider(metric_readers=[metric_reader])
    metrics.set_meter_provider(meter_provider)
    assert metrics.get_meter_provider() is meter_provider, "a meter provider was set before tests/telemetry/_otel.py"

    log_exporter = _LogExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    _logs.set_logger_provider(logger_provider)
    assert _logs.get_logger_provider() is logger_provider, "a logger provider was set before tests/telemetry/_otel.py"

    _installed = Otel(span_exporter, metric_reader, log_exporter, tracer_provider, meter_provider, logger_provider)
    return _installed


@pytest.fixture
def otel() -> Iterator[Otel]:
    """The process's in-memory OpenTelemetry SDK, cleared for this test."""
    installed = install()
    installed.clear()
    yield installed
    _Keeping.keeping = False
    installed.clear()


# --- a child process's spans ---------------------------------------------------------------------


class JsonLinesExporter(SpanExporter):
    """Writes each span it is given to ``path`` as a line of JSON (:func:`read_span_file` reads them)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._path.open("a", encoding="utf-8") as out:
            for span in spans:
                out.write(json.dumps(record_of(span).as_json()) + "\n")
        return SpanExportResult.SUCCESS


def configure_file_export(path: str | Path) -> TracerProvider:
    """In a child process: export its spans to ``path`` as JSON lines, one span a line, as they end.

    A stdio server script calls this before it serves; the test reads the file with
    :func:`read_span_file` after the child has exited (or while it runs: lines are appended whole).
    """
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(Path(path))))
    trace.set_tracer_provider(provider)
    return provider


def read_span_file(path: str | Path) -> list[SpanRecord]:
    """The spans a child wrote with :func:`configure_file_export` (none when it wrote none)."""
    file = Path(path)
    if not file.exists():
        return []
    return [_record_from_json(json.loads(line)) for line in file.read_text(encoding="utf-8").splitlines() if line]
