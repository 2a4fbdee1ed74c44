"""Running the checks: find out what the server speaks and offers, then run each group.

``run_checks(target, options)`` returns the ``Report``. First the survey (``Run.survey``, in
``run.py``): ``server/discover`` (the stateless era) and ``initialize`` (the handshake era), each
on a connection of its own, and in each era the server speaks, its tools, prompts and resource
templates, from which ``Plan`` picks the tools the second layer calls. Then the groups, in order; each check opens
its own connections through ``Run.session`` (a fresh process over stdio, a fresh session over
HTTP), so that one check's leftovers cannot pass or fail the next.
"""

from __future__ import annotations

__all__ = [
    "CheckOptions",
    "EraInfo",
    "NoSession",
    "Report",
    "Run",
    "bounded",
    "checks",
    "result_of",
    "run_checks",
    "said",
]

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .outcome import Outcome, Verdict
from .run import CheckFunction, CheckOptions, EraInfo, NoSession, Run, bounded, checks, result_of, said
from .spec import GROUPS
from .target import Target


@dataclass
class Report:
    """The report card: the target, what it speaks, and every outcome."""

    target: str
    transport: str
    server: dict[str, Any]
    eras: dict[str, str]  # era -> revision spoken
    outcomes: list[Outcome]
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Whether any check failed (the command then exits 1)."""
        return any(outcome.verdict == "fail" for outcome in self.outcomes)

    def counts(self) -> dict[Verdict, int]:
        """How many checks passed, failed and did not apply."""
        counts: dict[Verdict, int] = {"pass": 0, "fail": 0, "n/a": 0}
        for outcome in self.outcomes:
            counts[outcome.verdict] += 1
        return counts

    def as_json(self) -> dict[str, Any]:
        """The whole card as ``--json`` prints it: the target and every check's entry."""
        return {
            "target": self.target,
            "transport": self.transport,
            "server": self.server,
            "eras": self.eras,
            "counts": self.counts(),
            "seconds": round(self.seconds, 1),
            "notes": self.notes,
            "checks": [outcome.as_json() for outcome in self.outcomes],
        }


async def run_checks(target: Target, options: CheckOptions | None = None) -> Report:
    """Run every group of checks on ``target``; the report card."""
    from . import asking, eras, robustness, tasks, utilities
    from .auth import CHECKS as AUTH_CHECKS
    from .conformance import run_conformance
    from .fleet import CHECKS as FLEET_CHECKS

    options = options or CheckOptions()
    run = Run(target, options)
    started = time.monotonic()
    await run.sign_in()
    await run.survey()
    groups: dict[str, Sequence[CheckFunction]] = {
        "eras": eras.CHECKS,
        "second-layer": (*asking.CHECKS, *utilities.CHECKS, *tasks.CHECKS),
        "robustness": robustness.CHECKS,
        "fleet": FLEET_CHECKS,
        "auth": AUTH_CHECKS,
        "conformance": (run_conformance,) if options.with_conformance else (),
    }
    for group in GROUPS:
        if group not in options.groups:
            continue
        for function in groups[group]:
            await _guarded(run, function)
        if group == "second-layer":
            utilities.run_wide(run)
    info = next(iter(run.eras.values()), None)
    return Report(
        target=target.describe(),
        transport=target.kind,
        server=info.server_info if info is not None else {},
        eras={era: run.eras[era].version for era in run.eras_spoken()},
        outcomes=run.outcomes,
        seconds=time.monotonic() - started,
        notes=run.notes,
    )


async def _guarded(run: Run, function: CheckFunction) -> None:
    """Run one check function; a connection it could not open, or an answer it could not read,
    is the server's failure, said as such."""
    before = len(run.outcomes)
    try:
        await function(run)
    except NoSession as exc:
        check = _check_id_of(function)
        run.add(check, "fail", f"could not open a session: {exc.why}", wire=exc.wire)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        check = _check_id_of(function)
        if len(run.outcomes) == before:
            run.add(check, "fail", f"the server's answers could not be read: {type(exc).__name__}: {exc}")
    except Exception as exc:  # a server that does what no check foresaw: said, and the run goes on
        check = _check_id_of(function)
        if len(run.outcomes) == before:
            run.add(check, "fail", f"the check could not finish: {type(exc).__name__}: {exc}")


def _check_id_of(function: CheckFunction) -> str:
    check = getattr(function, "check_id", None)
    return check if isinstance(check, str) else "robustness.fuzz"
