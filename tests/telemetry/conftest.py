"""tests/telemetry/: every test here may ask for ``otel`` (the in-memory SDK, tests/telemetry/_otel.py)."""

from __future__ import annotations

from _otel import otel

__all__ = ["otel"]
