"""The fleet's ask rows on a Redis Cluster, beside the same rows on one Redis (issue #32).

    python benchmarks/fleet_cluster.py [--reps 3]

Two workers behind nginx (``fleet_services.py``), their state on one ``redis-server`` or on a Redis
Cluster of three masters (``tests/_redis_cluster.py``; each worker ``RedisState(seed, cluster=True)``),
in turn, ``--reps`` times: ``fleet_bench.py``'s handshake-era ask (the answer forwarded to the worker
that asked) and stateless-era ask (the retry on the other worker), every answer checked as there.
Redis's counts are summed over the cluster's nodes. Prints one line per topology: the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import redis
from fleet_bench import FULL_FLEET, handshake_ask, stateless_ask
from fleet_redis import RedisCounts
from fleet_services import fleet_services


class ClusterCounts(RedisCounts):
    """``RedisCounts`` summed over every node of a cluster."""

    def __init__(self, ports: list[int]) -> None:
        self.nodes = [RedisCounts(f"redis://127.0.0.1:{port}/0") for port in ports]
        self.client = self.nodes[0].client

    def snapshot(self) -> dict[str, float]:
        total: dict[str, float] = {}
        for node in self.nodes:
            for name, value in node.snapshot().items():
                total[name] = total.get(name, 0.0) + value
        return total

    def close(self) -> None:
        for node in self.nodes:
            node.close()


def _ports(seed: str) -> list[int]:
    with redis.Redis.from_url(seed) as client:
        nodes: dict[str, Any] = client.execute_command("CLUSTER NODES")  # type: ignore[no-untyped-call]
    text = nodes if isinstance(nodes, str) else nodes.decode() if isinstance(nodes, bytes) else ""
    if not text:  # redis-py parses CLUSTER NODES into a dict keyed by "host:port"
        return [int(address.split(":")[1].split("@")[0]) for address in nodes]
    return [int(line.split()[1].split(":")[1].split("@")[0]) for line in text.splitlines() if line]


async def one(cluster: bool, log_dir: Path) -> dict[str, float]:
    metrics: dict[str, float] = {}
    with fleet_services(log_dir, cluster=cluster) as fleet:
        counts = ClusterCounts(_ports(fleet.redis_url)) if cluster else RedisCounts(fleet.redis_url)
        try:
            await handshake_ask(fleet, counts, FULL_FLEET, metrics)
            await stateless_ask(fleet, FULL_FLEET, metrics)
        finally:
            counts.close()
    return metrics


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=3)
    ns = parser.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"one Redis": [], "Redis Cluster, 3 masters": []}
    with tempfile.TemporaryDirectory(prefix="bc-fleet-cluster-") as logs:
        for rep in range(ns.reps):
            for name in runs if rep % 2 == 0 else reversed(list(runs)):
                runs[name].append(asyncio.run(one(name != "one Redis", Path(logs))))
                print(f"rep {rep + 1}: {name} done", flush=True)
    keys = ["ask_per_s", "ask_server_cpu_us", "ask_round_trips", "ask_commands", "stateless_ask_per_s",
            "stateless_ask_server_cpu_us"]  # fmt: skip
    print("| fleet of 2 workers on | " + " | ".join(keys) + " |")
    for name, found in runs.items():
        cells = [f"{statistics.median(m[key] for m in found):,.1f}" for key in keys]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
