"""What a check found: a verdict, the rule it tested, and the evidence.

``Outcome`` is one line of the report card. Its evidence is a sentence (``summary``) and, on a
failure, the exchange that shows it: what was sent and what came back, in order, each message
cut to a readable length (``Line``). ``Verdict`` is ``"pass"``, ``"fail"`` or ``"n/a"`` (the
server did not declare the feature, or offers no tool that exercises it: the summary says which).
"""

from __future__ import annotations

__all__ = ["SHOWN_CHARS", "Line", "Outcome", "Verdict", "shown"]

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from .spec import CHECKS, Rule

Verdict = Literal["pass", "fail", "n/a"]

#: How much of one message the evidence keeps.
SHOWN_CHARS = 600


@dataclass(frozen=True, slots=True)
class Line:
    """One step of an exchange: ``"sent"``, ``"received"`` or a ``"note"`` of ours, ``at``
    seconds after the connection opened."""

    direction: Literal["sent", "received", "note"]
    at: float
    text: str

    def as_json(self) -> dict[str, Any]:
        """One line of the exchange as the JSON report shows it."""
        return {"direction": self.direction, "at": round(self.at, 3), "message": self.text}


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``value`` as compact JSON (bytes as they are), cut to ``limit`` characters with its full size said."""
    if isinstance(value, bytes | bytearray):
        text = bytes(value).decode("utf-8", "replace")
    elif isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters in all)"


@dataclass(slots=True)
class Outcome:
    """One check's verdict at one revision (None: the check is not tied to one)."""

    id: str
    verdict: Verdict
    summary: str
    revision: str | None = None
    exchange: list[Line] = field(default_factory=list)

    @property
    def group(self) -> str:
        """The group of checks this one belongs to."""
        return CHECKS[self.id].group

    @property
    def title(self) -> str:
        """What the check tests, in a few words."""
        return CHECKS[self.id].title

    @property
    def rule(self) -> Rule:
        """The spec line the check tests, in the revision it ran against."""
        return CHECKS[self.id].rule_for(self.revision)

    @property
    def key(self) -> str:
        """The id as the report lists it: with the revision when the check ran at one."""
        return f"{self.id}@{self.revision}" if self.revision else self.id

    def as_json(self) -> dict[str, Any]:
        """The check's entry of ``--json``: id, group, verdict, spec line and, on a failure, the evidence."""
        evidence: dict[str, Any] = {"summary": self.summary}
        if self.exchange:
            evidence["exchange"] = [line.as_json() for line in self.exchange]
        return {
            "id": self.key,
            "group": self.group,
            "verdict": self.verdict,
            "spec": self.rule.cited(),
            "evidence": evidence,
            "check": self.id,
            "revision": self.revision,
            "title": self.title,
            "rule": self.rule.as_json(),
        }
