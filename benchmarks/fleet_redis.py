"""What Redis counted around a measurement of the fleet: commands by name (``INFO commandstats``),
round trips (``INFO stats`` ``total_reads_processed``: one per command, or per pipeline, a client
sends), memory and keys; and the same per operation, the background left out."""

from __future__ import annotations

__all__ = ["BACKGROUND", "RedisCounts", "per"]

import asyncio
import time
from typing import Any

import driver
import redis

#: Commands Redis serves whatever the clients do (lease renewals, subscriber pings, our INFO).
BACKGROUND = ("set", "ping", "info")


class RedisCounts:
    """Snapshots of Redis's counters (sync client: taken between measurements, never inside one)."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)

    def snapshot(self) -> dict[str, float]:
        info: dict[str, Any] = self.client.info("stats", "commandstats", "memory", "keyspace")  # type: ignore[assignment]
        counts = {"reads": float(info["total_reads_processed"]), "used_memory": float(info["used_memory"])}
        counts["keys"] = float(sum(v["keys"] for k, v in info.items() if k.startswith("db") and isinstance(v, dict)))
        for name, value in info.items():
            if name.startswith("cmdstat_"):
                counts[name[len("cmdstat_") :]] = float(value["calls"])
        return counts

    async def wait_for(self, since: dict[str, float], command: str, count: float, limit: float = 10.0) -> None:
        """Until Redis has served ``count`` more ``command`` than at ``since`` (what a worker queued
        is written in the background): a bounded poll of another process's counter."""
        deadline = time.perf_counter() + limit
        while self.snapshot().get(command, 0) - since.get(command, 0) < count:
            if time.perf_counter() > deadline:
                raise driver.ContractError(f"Redis saw fewer than {count:.0f} {command} within {limit:.0f} s")
            await asyncio.sleep(0.02)

    async def settled(self, limit: float = 15.0) -> dict[str, float]:
        """A snapshot once ``used_memory`` holds still (within 1 KiB for a second): Redis shrinks
        its clients' buffers for a few seconds after a busy measurement, tens of KiB."""
        deadline = time.perf_counter() + limit
        readings = [self.snapshot()]
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.25)
            readings.append(self.snapshot())
            recent = [reading["used_memory"] for reading in readings[-5:]]
            if len(recent) == 5 and max(recent) - min(recent) <= 1024:
                break
        return readings[-1]

    def close(self) -> None:
        self.client.close()


def per(before: dict[str, float], after: dict[str, float], count: int, prefix: str, metrics: dict[str, float]) -> None:
    """Commands per operation by name, and round trips (reads less the background's) per operation."""
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    background = sum(delta.get(name, 0) for name in BACKGROUND)
    metrics[f"{prefix}_round_trips"] = (delta["reads"] - background) / count
    commands = 0.0
    for name, value in delta.items():
        if name not in (*BACKGROUND, "reads", "used_memory", "keys") and value > 0:
            metrics[f"{prefix}_cmd_{name}"] = value / count
            commands += value
    metrics[f"{prefix}_commands"] = commands / count
