"""What log redaction costs per message: the numbers behind ``server/redaction.py``.

    python benchmarks/redaction.py

Every ``notifications/message`` passes ``Server.log_redactor`` before it is sent,
so this is on the hot path of logging. Measures ``Redactor().redact(message)`` for
typical messages, best of 5 runs of 20,000 each, and, when git can show it, the
redactor before issue #12 (keys by whole word, 4 patterns, one pass per pattern)
for comparison. Also the one-time cost of building the default redactor (cold
start is benchmarked).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

from backchannel.redaction.redaction import Redactor

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "4ea6abd"  # the last commit with the old redactor


@dataclasses.dataclass
class Login:
    user: str
    password: str
    attempts: int


MESSAGES: dict[str, Any] = {
    "plain short string": "fetched 3 pages from the index",
    "plain sentence (110 chars)": (
        "the quick brown fox jumps over the lazy dog while the index is being rebuilt for the next run of the job"
    ),
    "string with a secret": "login with password=hunter2 for user 17",
    "dict of 5 fields": {"tool": "search", "query": "weather in Oslo", "results": 12, "elapsed_ms": 35.2, "ok": True},
    "nested, with a secret": {
        "request": {
            "url": "https://api.example.com/v1/items?page=2",
            "headers": {"Authorization": "Bearer abcDEF123456", "Accept": "application/json"},
        },
        "attempt": 2,
        "error": "timeout after 30 s",
    },
    "sampling usage (counters)": {"model": "claude", "max_tokens": 1024, "input_tokens": 312, "output_tokens": 88},
    "dataclass with a secret": Login("ada", "hunter2", 3),
}


def old_redactor() -> Any | None:
    """The redactor as it was before issue #12, loaded from git (None without git)."""
    try:
        source = subprocess.run(
            ["git", "show", f"{BEFORE}:src/backchannel/server/redaction.py"],
            cwd=ROOT,
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "old_redaction.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("old_redaction", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.Redactor()


def micros(redactor: Any, message: Any, number: int = 20_000) -> float:
    return min(timeit.repeat(lambda: redactor.redact(message), number=number, repeat=5)) / number * 1e6


def build_cost() -> float:
    """Milliseconds to build the default redactor (compiling its expressions) in a fresh process.

    ``server.py`` builds one at import, so this is what redaction adds to cold start."""
    code = (
        "import re, time; import backchannel.redaction.redaction as r; re.purge(); "
        "t = time.perf_counter(); r.Redactor(); print((time.perf_counter() - t) * 1000)"
    )
    return min(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, text=True).stdout)
        for _ in range(5)
    )


def main() -> None:
    new = Redactor()
    old = old_redactor()
    started = time.perf_counter()
    print("| message | before (µs) | now (µs) |\n|---|---|---|")
    for name, message in MESSAGES.items():
        before = f"{micros(old, message):.2f}" if old is not None else "-"
        print(f"| {name} | {before} | {micros(new, message):.2f} |")
    print(f"\nbuilding the default redactor: {build_cost():.1f} ms (fresh process, best of 5)")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
