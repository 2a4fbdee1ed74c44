"""The bounded fuzz pass over stdio (issue #12, "Proven by"): 20,000 structured frames of
every method and both eras against a real server process.

Checked on the wire: the process never exits; every request with a valid id gets
exactly the answers the JSON-RPC rules give it (one, or none after a cancel); no
error is -32603; a ping (or ``server/discover``) written after each batch of 100
frames is answered within 1 s of the batch's first byte; resident memory grows by
less than 64 MiB. The long pass is ``python tests/fuzz/long_run.py`` (1,000,000 frames).
``FUZZ_SEED`` replays a failing run.
"""

from __future__ import annotations

import os

from stdio_fuzz import StdioFuzz

FRAMES = 20_000
PING_BOUND = 1.0  # seconds
RSS_GROWTH_BOUND_KIB = 64 * 1024


def test_bounded_stdio_fuzz_pass() -> None:
    seed = int(os.environ.get("FUZZ_SEED", "12"))
    report = StdioFuzz(seed, FRAMES).run()
    summary = f"seed {seed}: {report.summary()}\nstderr:\n{report.stderr_tail}"
    assert report.problems == [], "\n".join(report.problems[:20]) + "\n" + summary
    assert report.frames == FRAMES, summary
    assert report.max_ping < PING_BOUND, summary
    assert report.rss_end_kib - report.rss_start_kib < RSS_GROWTH_BOUND_KIB, summary
    # The attack reached the refusals it is made of, not only the happy path.
    for code in (-32700, -32600, -32601, -32602):
        assert report.codes.get(code, 0) > 0, summary
    assert -32603 not in report.codes, summary
