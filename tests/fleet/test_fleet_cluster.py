"""A fleet on a real Redis Cluster (three masters, ``tests/_redis_cluster.py``): ``RedisState(url,
cluster=True)`` with one seed node. The fleet's own tests, run here with every worker's state on the
cluster: an answer forwarded to the worker that asked (pub/sub, which a cluster broadcasts), progress
and logs following the session, a stream resumed on another worker (Redis Streams, per session's
slot), ``ctx.once`` run once across rounds on three workers (scripts whose keys share a hash tag).
Then: the keys really are spread over the three masters, and a script never crossed slots."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import redis
from test_fleet_in_process import (
    test_a_stream_resumes_on_another_worker_with_nothing_lost_or_repeated as a_stream_resumes,
)
from test_fleet_in_process import (
    test_an_elicitation_answered_on_another_worker_reaches_the_tool as an_answer_is_forwarded,
)
from test_fleet_in_process import test_progress_and_logs_follow_the_session_across_workers as progress_follows
from test_fleet_stateless import (
    test_a_multi_round_call_runs_its_work_once_whichever_worker_serves_each_round as once_across_rounds,
)

from _redis_cluster import RedisCluster, redis_cluster
from backchannel.state.redis import RedisState
from backchannel.state.shared import SharedState


@pytest.fixture(scope="module")
def cluster() -> Iterator[RedisCluster]:
    with redis_cluster() as started:
        yield started


def _nodes(cluster: RedisCluster) -> list[redis.Redis]:
    return [redis.Redis(host="127.0.0.1", port=port) for port in cluster.ports]


@pytest.fixture
def on_cluster(cluster: RedisCluster) -> Iterator[Callable[[], SharedState]]:
    for node in _nodes(cluster):
        with node:
            node.flushall()
            node.config_resetstat()
    yield lambda: RedisState(cluster.url, cluster=True)
    errors = {}
    for port, node in zip(cluster.ports, _nodes(cluster), strict=True):
        with node:
            stats = node.info("errorstats")
            errors[port] = stats.get("errorstat_CROSSSLOT")  # (a MOVED, while a client learns the slots, is fine)
    assert not any(errors.values()), f"scripts or commands across slots, refused by the cluster: {errors}"


def test_an_answer_reaches_the_worker_that_asked_on_a_cluster(on_cluster: Callable[[], SharedState]) -> None:
    an_answer_is_forwarded(on_cluster)


def test_progress_and_logs_follow_the_session_on_a_cluster(on_cluster: Callable[[], SharedState]) -> None:
    progress_follows(on_cluster)


def test_a_stream_resumes_on_another_worker_on_a_cluster(on_cluster: Callable[[], SharedState]) -> None:
    a_stream_resumes(on_cluster)


def test_once_runs_once_across_rounds_on_a_cluster(
    on_cluster: Callable[[], SharedState], cluster: RedisCluster
) -> None:
    once_across_rounds(on_cluster)
    keys = []
    for node in _nodes(cluster):
        with node:
            keys.append(node.dbsize())
    assert all(count > 0 for count in keys), f"keys per master {keys}: the slots were not split"
