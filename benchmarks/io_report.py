"""The I/O-bound workload's rows in ``RESULTS.md``: its targets (in the summary table) and its section.

``run.py --io`` measures only these servers and ``splice``s the rows and the section into the file as it
stands; a full run, which does not measure them, keeps the last ones (``carry_over``).
"""

from __future__ import annotations

__all__ = ["HEADING", "IO_TARGETS", "carry_over", "section", "splice", "target_rows"]

import re

from io_bench import CONNECTIONS, LABELS, SERVERS, IoPlan
from report_format import Samples, Target, fmt, fmt_ratio, median_of, ratios, target_row

HEADING = "## I/O-bound workload: TM Dev Lab v2's tool shape, 50 users (issue #32)"
ROW_PREFIX = "| I/O workload: "
TS = "io-ts"

IO_TARGETS = [
    Target("I/O workload: 1 process ≥ 10x FastMCP, 1 worker (req/s)", "http", "io_per_s", "io-fastmcp", 10, True,
           server="io-backchannel"),
    Target("I/O workload: --workers 2 ≥ 10x FastMCP, 2 workers (req/s)", "http", "io_per_s", "io-fastmcp-2w", 10, True,
           server="io-backchannel-2w"),
    Target("I/O workload: 1 process ≥ 3x the TypeScript SDK (req/s)", "http", "io_per_s", TS, 3, True,
           server="io-backchannel"),
    Target("I/O workload: 1 process, tool-call p99 ≤ the TypeScript SDK's", "http", "io_call_p99_ms", TS, 1, False,
           server="io-backchannel"),
]  # fmt: skip
UNITS = {"io_per_s": "req/s", "io_call_p99_ms": "ms"}

#: TM Dev Lab v2's published table (RPS, one server on 2 vCPUs, 50 VUs): the ratios we are read against.
PUBLISHED = {"rmcp (Rust)": 4845, "Go (mcp-go)": 3616, "Node (TypeScript SDK)": 423, "Python (FastMCP, 4 workers)": 259}


def target_rows(samples: Samples) -> list[str]:
    labels = {**LABELS, "io-backchannel": "backchannel", "io-backchannel-2w": "backchannel"}
    rows = []
    for target in IO_TARGETS:
        if (target.server, "http") in samples and (target.against, "http") in samples:
            rows.append(target_row(samples, target, labels, UNITS[target.key]))
    return rows


def _per_server(samples: Samples) -> list[str]:
    out = [
        "| server | req/s ↑ | HTTP req/s | tool call p50 / p95 / p99 (ms) ↓ | initialize p50 (ms) "
        "| server CPU per req (µs) ↓ | server cores busy | Redis / API CPU per req (µs) | Redis commands per req |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for server in SERVERS:
        if (server.name, "http") not in samples:
            continue

        def m(key: str, name: str = server.name) -> str:
            return fmt(median_of(samples, name, "http", key))

        out.append(
            f"| {server.label} | {fmt(median_of(samples, server.name, 'http', 'io_per_s'), 'calls/s')} "
            f"| {fmt(median_of(samples, server.name, 'http', 'io_http_per_s'), 'calls/s')} "
            f"| {m('io_call_p50_ms')} / {m('io_call_p95_ms')} / {m('io_call_p99_ms')} | {m('io_init_p50_ms')} "
            f"| {m('io_server_cpu_us')} | {m('io_server_cores')} | {m('io_redis_cpu_us')} / {m('io_api_cpu_us')} "
            f"| {m('io_redis_commands')} |"
        )
    return out


def _ratios(samples: Samples) -> list[str]:
    out = ["| against the TypeScript SDK | req/s ratio (range) | server CPU per req, theirs / ours |", "|---|---|---|"]
    for server in SERVERS:
        if server.name == TS or (server.name, "http") not in samples or (TS, "http") not in samples:
            continue
        found = ratios(samples, "http", "io_per_s", server.name, TS)
        cpu = ratios(samples, "http", "io_server_cpu_us", TS, server.name)
        out.append(f"| {server.label} | {fmt_ratio(found)} | {fmt_ratio(cpu)} |")
    node = PUBLISHED["Node (TypeScript SDK)"]
    for name, rps in PUBLISHED.items():
        if not name.startswith("Node"):
            out.append(f"| TM Dev Lab's published {name} | {rps / node:.2f}x ({rps:,} / {node} RPS) | - |")
    return out


def _commands(samples: Samples) -> list[str]:
    keys = {key for reps in samples.values() for metrics in reps for key in metrics}
    names = sorted(key[len("io_cmd_") :] for key in keys if key.startswith("io_cmd_"))
    shown = [s for s in SERVERS if (s.name, "http") in samples]
    out = ["| Redis command | " + " | ".join(s.label for s in shown) + " |", "|---|" + "---|" * len(shown)]
    for name in names:
        cells = [fmt(median_of(samples, s.name, "http", f"io_cmd_{name}")) for s in shown]
        out.append(f"| `{name.upper()}` | " + " | ".join(cells) + " |")
    return out


def section(samples: Samples, reps: int, plan: IoPlan, when: str) -> str:
    out = [
        HEADING,
        "",
        f"{when}; {reps} repetition(s), the servers in a rotating order, each for {plan.warmup} s of warm-up and "
        f"{plan.seconds} s measured (`python benchmarks/run.py --io`; `benchmarks/io_bench.py` says what runs).",
        "",
        "The tools are TM Dev Lab v2's, reproduced from its public description (`benchmarks/io_tools.py`: "
        "`search_products`: the API's search and a Redis `ZREVRANGE`, side by side; `get_user_cart`: Redis "
        "`HGETALL`, then the API's product and Redis `LRANGE`; `checkout`: the API's pricing and one Redis "
        "pipeline of `INCR`, `RPUSH`, `ZINCRBY`), against a real `redis-server` and a small local HTTP JSON API "
        "(`benchmarks/peers/products_api.mjs`). One body of Python for backchannel and FastMCP; the TypeScript "
        "SDK's in `benchmarks/peers/ts_io_server.mjs`. The load: autocannon (npm), "
        f"{CONNECTIONS} connections, each running the published pattern: a session per tool call (initialize, "
        "initialized, the call, DELETE where the server keeps sessions), then tools/list; no think time. "
        "*req/s* is the published benchmark's RPS (initialize, tools/call and tools/list answered per second); "
        "latencies are the tool calls'. backchannel keeps each session (`--workers 2`: in Redis, db 1); FastMCP "
        "and the TypeScript SDK run stateless, as TM Dev Lab's servers and their own documentation for several "
        "workers do. Server CPU is every process of the server (a fleet's workers included); everything, the "
        "load generator, Redis and the API included, shares the machine's 2 cores, so the servers' req/s are "
        "their capacity here, not on a core of their own. With the machine shared (a load average above its 2 "
        "cores) the req/s swing widely with the scheduler, from one repetition to the next; the CPU per request, "
        "much less: it is the steadier comparison.",
        "",
        *_per_server(samples),
        "",
        *_ratios(samples),
        "",
        "Redis commands per request (`INFO commandstats` around the measured seconds, every database, the "
        "driver's `INFO` left out): the tools' own (the same for every server) and, for the fleet, its sessions'.",
        "",
        *_commands(samples),
        "",
    ]
    return "\n".join(out)


def _insert_rows(lines: list[str], rows: list[str]) -> list[str]:
    heading = next((i for i, line in enumerate(lines) if line.startswith("## Targets")), None)
    if heading is not None:
        end = next((i for i in range(heading + 1, len(lines)) if lines[i].startswith("|")), len(lines))
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        lines[end:end] = rows
    return lines


def _put_section(body: str, block: str) -> str:
    found = re.search(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", body, flags=re.MULTILINE | re.DOTALL)
    block = block.rstrip("\n") + "\n\n"
    if found is not None:
        return body[: found.start()] + block + body[found.end() :].lstrip("\n")
    before = re.search(r"^## Answers that broke the contract", body, flags=re.MULTILINE)
    at = before.start() if before is not None else len(body)
    return body[:at].rstrip("\n") + "\n\n" + block + body[at:]


def splice(text: str, samples: Samples, reps: int, plan: IoPlan, when: str) -> str:
    """``text`` (a RESULTS.md) with its I/O workload target rows and section replaced by these."""
    lines = [line for line in text.splitlines() if not line.startswith(ROW_PREFIX)]
    body = "\n".join(_insert_rows(lines, target_rows(samples))) + "\n"
    return _put_section(body, section(samples, reps, plan, when))


def carry_over(old: str, new: str) -> str:
    """``new`` (a RESULTS.md written without these rows) with ``old``'s I/O workload rows and section."""
    kept = [line for line in old.splitlines() if line.startswith(ROW_PREFIX)]
    found = re.search(rf"^{re.escape(HEADING)}\n.*?(?=^## |\Z)", old, flags=re.MULTILINE | re.DOTALL)
    if not kept and found is None:
        return new
    body = "\n".join(_insert_rows(new.splitlines(), kept)) + "\n"
    return body if found is None else _put_section(body, found.group(0))
