"""Reading the in-memory metric reader for tests/telemetry/test_metrics_*.py.

The reader collects every instrument at once and counters and histograms are DELTA (see
``_otel.py``), so a read drains all of them: :class:`Readings` reads once and keeps what it saw,
adding later reads to it, so a test may wait for one metric and then look at another.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from _otel import Otel


class Readings:
    """Every data point read so far in this test, by metric name."""

    def __init__(self, otel: Otel) -> None:
        self.otel = otel
        self.points: dict[str, list[Any]] = {}

    def read(self) -> Readings:
        data = self.otel.metric_reader.get_metrics_data()
        if data is not None:
            for resource_metrics in data.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        self.points.setdefault(metric.name, []).extend(metric.data.data_points)
        return self

    def of(self, name: str, **attributes: Any) -> list[Any]:
        """The points of ``name`` whose attributes include ``attributes`` (dots spelt ``__``)."""
        wanted = {key.replace("__", "."): value for key, value in attributes.items()}
        return [point for point in self.points.get(name, []) if _has(point.attributes, wanted)]

    def total(self, name: str, **attributes: Any) -> float:
        """A counter's sum over the points read, or a histogram's count."""
        return sum(getattr(point, "count", None) or getattr(point, "value", 0) for point in self.of(name, **attributes))

    def latest(self, name: str, **attributes: Any) -> float | None:
        """An up-down counter's value (cumulative): the last point read for these attributes."""
        found = self.of(name, **attributes)
        return found[-1].value if found else None

    async def wait(self, done: Callable[[Readings], bool], *, timeout: float = 5.0) -> Readings:
        """Read until ``done(self)`` holds; fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not done(self.read()):
            if time.monotonic() > deadline:
                raise AssertionError(f"metrics did not arrive within {timeout}s; have {sorted(self.points)}")
            await asyncio.sleep(0.005)
        return self


def _has(attributes: Mapping[str, Any] | None, wanted: Mapping[str, Any]) -> bool:
    attributes = attributes or {}
    return all(attributes.get(key) == value for key, value in wanted.items())
