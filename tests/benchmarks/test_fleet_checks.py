"""The fleet benchmark's own checks, on real processes (issue #14): a fleet whose balancer sends
everything to one worker is caught, since a row measured so would not be a fleet's.

Starts a real ``redis-server``, two workers and nginx (``benchmarks/fleet_services.py``), with
nginx's upstream list made of the first worker twice: the workers still share Redis, but no
answer or retry ever lands on the other one.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import driver
import fleet_bench
import fleet_services
from fleet_redis import RedisCounts

from backchannel.testing import run

pytestmark = pytest.mark.skipif(fleet_services.missing_services() is not None, reason="no redis-server or nginx")


def test_answers_and_retries_served_by_the_asking_worker_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = fleet_services._nginx_config
    monkeypatch.setattr(fleet_services, "_nginx_config", lambda port, ups, d: real(port, [ups[0], ups[0]], d))
    plan = fleet_bench.QUICK_FLEET

    async def body(fleet: fleet_services.Fleet) -> None:
        counts = RedisCounts(fleet.redis_url)
        try:
            metrics: dict[str, float] = {}
            with pytest.raises(driver.ContractError, match=r"ask: 6 of 6 answers reached the worker that asked"):
                await fleet_bench.handshake_ask(fleet, counts, plan, metrics)
            with pytest.raises(driver.ContractError, match=r"6 of 6 retries reached the worker of their call"):
                await fleet_bench.stateless_ask(fleet, plan, metrics)
        finally:
            counts.close()

    with fleet_services.fleet_services(tmp_path) as fleet:
        run(lambda: body(fleet), timeout=60)


def test_a_fleet_behind_round_robin_passes_the_same_checks(tmp_path: Path) -> None:
    result = asyncio.run(fleet_bench.run_fleet(fleet_bench.QUICK_FLEET, tmp_path))
    assert result.errors == []
    metrics = result.metrics
    assert metrics["answer_round_trips"] <= 2 and metrics["answer_cmd_publish"] == 1
    assert metrics["session_redis_keys"] == 1 and metrics["session_record_bytes"] > 0
