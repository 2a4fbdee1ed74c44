"""README's speed line is held to ``benchmarks/RESULTS.md`` (issue #28, item 9): every ratio it
quotes is the median of that target's row in the targets table, written as README rounds it,
and the run's date is the one RESULTS.md was written on. A new benchmark run that moves a ratio
fails this test until README says the new figure.

The line is the bullet of "What works" that starts ``- speed,``; a figure is written
``<ratio>x`` right after the words that name its row (``PHRASES``).
"""

from __future__ import annotations

import re

from _subprocesses import ROOT

README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "RESULTS.md"

#: The words README puts before a figure -> the start of that target's row in RESULTS.md.
PHRASES = {
    "on stdio": "stdio echo one at a time ≥ 4x official Python SDK",
    "time and": "stdio echo 32 in flight ≥ 20x official Python SDK",
    "flight,": "stdio echo 32 in flight ≥ TypeScript SDK",
    "over HTTP": "HTTP echo one at a time ≥ TypeScript SDK",
    "cold start at": "cold start ≤ 0.25x official Python SDK (stdio)",
}
_RATIO = r"(\d+(?:\.\d+)?)x"


def speed_line() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n- speed,")
    end = text.index("\n- ", start + 1) if "\n- " in text[start + 1 :] else len(text)
    end = min(end, text.index("\n\n", start + 1))
    return " ".join(text[start:end].split())


def results_ratio(row: str) -> float:
    for line in RESULTS.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| {row} |"):
            return float(re.search(r"\| " + _RATIO + r" \(", line).group(1))  # type: ignore[union-attr]
    raise AssertionError(f"RESULTS.md has no target row {row!r}")


def test_every_figure_of_readmes_speed_line_is_results_md_s() -> None:
    line = speed_line()
    for phrase, row in PHRASES.items():
        found = re.search(re.escape(phrase) + r" (?:about )?" + _RATIO, line)
        assert found, f"README's speed line has no figure after {phrase!r}: {line}"
        shown = found.group(1)
        decimals = len(shown.split(".")[1]) if "." in shown else 0
        measured = results_ratio(row)
        assert float(shown) == round(measured, decimals), (
            f"README says {shown}x after {phrase!r}; RESULTS.md's row {row!r} says {measured}x"
        )


def test_the_speed_line_names_the_run_it_quotes() -> None:
    written = re.search(r"on (\d{4}-\d{2}-\d{2}) \d{2}:\d{2} UTC", RESULTS.read_text(encoding="utf-8"))
    assert written, "RESULTS.md does not say when it was written"
    assert f"the run of {written.group(1)}" in speed_line()
