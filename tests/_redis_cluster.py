"""A real Redis Cluster for the fleet's tests and benchmarks: three masters on loopback ports.

    with redis_cluster() as cluster:   # cluster.url (one seed node), cluster.ports, cluster.pids

Each master is a ``redis-server --cluster-enabled yes`` child process with persistence off, its
files (the cluster's ``nodes.conf`` included) in a temporary directory; ``redis-cli --cluster
create`` joins them and splits the 16,384 slots among them, and the cluster is handed over once
every node says ``cluster_state:ok``. Everything is stopped and removed on exit. Both programs
come from Debian's ``redis-server`` package (``tests/peers/install-services.sh``).
"""

from __future__ import annotations

__all__ = ["RedisCluster", "redis_cluster"]

import contextlib
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from _services import _program, _tail
from backchannel.testing import LOOPBACK, free_port, stop_process


@dataclass
class RedisCluster:
    url: str
    """The first master's: a seed node, from which a cluster client learns the others."""
    ports: list[int]
    pids: list[int]


def _ask(port: int, command: bytes) -> bytes:
    try:
        with socket.create_connection((LOOPBACK, port), timeout=1.0) as connection:
            connection.sendall(command)
            return connection.recv(65536)
    except OSError:
        return b""


def _until(what: str, ready: Callable[[], bool], timeout: float, logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the Redis cluster: {what} within {timeout:.0f} s:\n" + "\n".join(map(_tail, logs)))
        time.sleep(0.05)  # other processes' ports: no event to wait on, so poll with a deadline


def _cluster_port() -> int:
    """A free port P whose bus port P + 10000 is free too (Redis Cluster takes both; P <= 55535)."""
    for _ in range(1000):
        port = free_port()
        if port > 55535:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bus:
            try:
                bus.bind((LOOPBACK, port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free pair of ports (P, P + 10000) for a Redis Cluster node")


@contextlib.contextmanager
def redis_cluster(masters: int = 3, timeout: float = 30.0) -> Iterator[RedisCluster]:
    """A cluster of ``masters`` masters, no replicas; stopped and its files removed on exit."""
    server, cli = _program("redis-server"), _program("redis-cli")
    with tempfile.TemporaryDirectory(prefix="bc-redis-cluster-") as directory, contextlib.ExitStack() as stack:
        ports = [_cluster_port() for _ in range(masters)]
        processes, logs = [], []
        for port in ports:
            log = Path(directory) / f"redis-{port}.log"
            argv = [
                server,
                "--port", str(port),
                "--bind", LOOPBACK,
                "--cluster-enabled", "yes",
                "--cluster-config-file", f"nodes-{port}.conf",
                "--cluster-node-timeout", "5000",
                "--save", "",
                "--appendonly", "no",
                "--dir", directory,
                "--daemonize", "no",
                "--logfile", str(log),
            ]  # fmt: skip
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            stack.callback(stop_process, process)
            processes.append(process)
            logs.append(log)

        def answering() -> bool:
            return all(_ask(port, b"PING\r\n").startswith(b"+PONG") for port in ports)

        def serving() -> bool:
            return all(b"cluster_state:ok" in _ask(port, b"CLUSTER INFO\r\n") for port in ports)

        _until("a node did not answer PING", answering, timeout, logs)
        create = [cli, "--cluster", "create", *(f"{LOOPBACK}:{p}" for p in ports), "--cluster-replicas", "0"]
        made = subprocess.run([*create, "--cluster-yes"], capture_output=True, text=True, timeout=timeout)
        if made.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{made.stdout[-2000:]}\n{made.stderr[-2000:]}")
        _until("the slots were not all served", serving, timeout, logs)
        yield RedisCluster(f"redis://{LOOPBACK}:{ports[0]}/0", ports, [p.pid for p in processes])
