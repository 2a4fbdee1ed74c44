"""OpenTelemetry traces, metrics and logs by the MCP semantic conventions (docs/observability.md).

Layer 1, beside ``protocol``: it may import ``types`` only. Nothing here imports
``opentelemetry`` at import time; each signal switches on when an SDK is configured
(:mod:`.activation`). Import the modules themselves (``from backchannel.telemetry import spans``);
this package re-exports nothing, so importing it stays free.
"""

from __future__ import annotations

__all__: list[str] = []
