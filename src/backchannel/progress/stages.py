"""Progress for work in stages, on one scale that only goes up.

The chapter's "percentage trap" (18.5.3): a second stage must not count from 0
again, because progress for one token MUST increase. ``ProgressStages`` maps
each stage onto its share of one total and puts the stage in ``message``:

    stages = ctx.stages(["build", "test"])          # or {"build": 3, "test": 1}: weights
    await stages.report("build", 1.0)               # 50/100  "Stage 1/2 (build)"
    await stages.report("test", 0.5, "tests 50%")   # 75/100  "Stage 2/2 (test): tests 50%"
"""

from __future__ import annotations

__all__ = ["ProgressStages"]

from collections.abc import Mapping, Sequence
from typing import Protocol


class _Reporter(Protocol):
    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...


class ProgressStages:
    def __init__(self, reporter: _Reporter, stages: Sequence[str] | Mapping[str, float], total: float = 100.0) -> None:
        weights = dict(stages) if isinstance(stages, Mapping) else dict.fromkeys(stages, 1.0)
        if not weights or any(weight <= 0 for weight in weights.values()):
            raise ValueError("give at least one stage, each with a positive weight")
        self._reporter = reporter
        self.total = total
        self._names = list(weights)
        scale = total / sum(weights.values())
        self._start: dict[str, float] = {}
        self._size: dict[str, float] = {}
        position = 0.0
        for name, weight in weights.items():
            self._start[name] = position
            self._size[name] = weight * scale
            position += weight * scale
        self._last: float | None = None

    async def report(self, stage: str, fraction: float, message: str | None = None) -> None:
        """``fraction`` (0 to 1) of ``stage`` is done. Going back raises ``ValueError``:
        the spec forbids progress that decreases, and a repeat is skipped, not sent."""
        if stage not in self._start:
            raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(self._names)}")
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be between 0 and 1, not {fraction!r}")
        progress = self._start[stage] + self._size[stage] * fraction
        if self._last is not None and progress < self._last:
            raise ValueError(
                f"stage {stage!r} at {fraction:g} would move progress back ({progress:g} < {self._last:g})"
            )
        if self._last is not None and progress == self._last:
            return
        self._last = progress
        number = self._names.index(stage) + 1
        label = f"Stage {number}/{len(self._names)} ({stage})"
        await self._reporter.report_progress(progress, self.total, f"{label}: {message}" if message else label)
