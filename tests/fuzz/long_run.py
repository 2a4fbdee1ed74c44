"""The long fuzz pass (issue #12): ``python tests/fuzz/long_run.py --frames 1000000``.

The same attack as ``test_fuzz_stdio.py`` against one server process for as many
frames as asked. It passes when the process is still running, every request got
its answers, no error was -32603, every ping was answered within ``--ping-bound``
seconds, and resident memory grew by less than ``--rss-bound`` MiB after warm-up.
It prints the figures ``docs/reliability.md`` records, and exits 1 on any breach.
"""

from __future__ import annotations

import argparse
import sys

from stdio_fuzz import StdioFuzz


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--batch", type=int, default=100, help="frames between two pings")
    parser.add_argument("--ping-bound", type=float, default=1.0, help="seconds")
    parser.add_argument("--rss-bound", type=float, default=64.0, help="MiB of growth after warm-up")
    parser.add_argument("--no-deep", action="store_true", help="leave out nesting past the decoder's limit")
    parser.add_argument("--no-meta-types", action="store_true", help="leave out wrong types under _meta keys")
    options = parser.parse_args(argv)
    fuzz = StdioFuzz(
        options.seed,
        options.frames,
        batch=options.batch,
        warm_frames=min(20_000, options.frames // 10),
        deep=not options.no_deep,
        meta_types=not options.no_meta_types,
        progress=True,
    )
    report = fuzz.run()
    print(f"seed {options.seed}: {report.summary()}")
    growth = (report.rss_end_kib - report.rss_warm_kib) / 1024
    failures = list(report.problems)
    if report.frames < options.frames:
        failures.append(f"stopped after {report.frames} of {options.frames} frames")
    if report.max_ping >= options.ping_bound:
        failures.append(f"a ping took {report.max_ping:.3f} s (bound {options.ping_bound} s)")
    if growth >= options.rss_bound:
        failures.append(f"RSS grew by {growth:.1f} MiB after warm-up (bound {options.rss_bound} MiB)")
    for failure in failures[:50]:
        print(f"FAIL: {failure}")
    if failures:
        print(report.stderr_tail)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
