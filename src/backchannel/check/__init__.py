"""``backchannel check``: a report card for any MCP server, in any language."""

from __future__ import annotations

__all__ = ["CheckOptions", "Outcome", "PlanConfig", "Report", "Target", "run_checks"]

from .outcome import Outcome
from .plan import PlanConfig
from .runner import CheckOptions, Report, run_checks
from .target import Target
