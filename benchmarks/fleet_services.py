"""The fleet the fleet rows measure: one ``redis-server``, two backchannel workers, nginx in front.

    with fleet_services(log_dir) as fleet:   # fleet.url, fleet.worker_ports, fleet.pids, fleet.redis_url

Each worker is ``benchmarks/contract_server.py http --redis URL``, its own process on its own port
(``Server.run_http(port=P, redis=URL)``); nginx passes every request to the next worker in turn,
unbuffered, as ``docs/deploy.md`` configures it. Redis comes from ``tests/_services.py`` (persistence
off, a free loopback port). The nginx here is that file's, plus two lines:

- ``keepalive 32`` in the upstream block: nginx reuses its connections to the workers, as nginx
  advises for proxying to application servers. Without it every request opens a new TCP connection
  to a worker, which costs the fleet 15-25% more CPU per ``ask`` on the bench machine;
- ``add_header X-Upstream``, naming the worker that served each request: the driver checks on the
  wire that a call and its answer (or its retry) reached different workers.

Everything is a child process on 127.0.0.1, stopped on exit whatever happened.
"""

from __future__ import annotations

__all__ = ["Fleet", "fleet_services", "missing_services"]

import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from _services import redis_server  # noqa: E402  (tests/ is not a package: its path first)
from backchannel.testing import LOOPBACK, free_port, stop_process, wait_for_port  # noqa: E402

WORKERS = 2
START_TIMEOUT = 60.0


@dataclass
class Fleet:
    url: str
    """nginx, in front of the workers."""
    port: int
    worker_ports: list[int]
    pids: list[int]
    """The workers', Redis's and nginx's: everything that serves a request of the fleet."""
    worker_pids: list[int]
    redis_pid: int
    redis_url: str


def _program(name: str) -> str | None:
    return shutil.which(name) or next(
        (str(path) for path in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if path.exists()), None
    )


def missing_services() -> str | None:
    """Why the fleet cannot run here (no redis-server or nginx), or None."""
    absent = [name for name in ("redis-server", "nginx") if _program(name) is None]
    if absent:
        return f"{' and '.join(absent)} not installed (tests/peers/install-services.sh)"
    return None


def _nginx_config(port: int, upstream_ports: list[int], directory: Path) -> str:
    servers = "\n".join(f"        server {LOOPBACK}:{upstream};" for upstream in upstream_ports)
    temp = {name: directory / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    # tests/_services.py's configuration (docs/deploy.md's), plus connections kept open to the
    # workers and X-Upstream on every response ("always": add_header skips a 202 otherwise).
    return f"""
daemon off;
master_process off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {temp["client_body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    upstream workers {{
{servers}
        keepalive 32;
    }}
    server {{
        listen {LOOPBACK}:{port};
        location / {{
            proxy_pass http://workers;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_cache off;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


def _wait_ready(port: int, timeout: float, log: Path) -> None:
    """Until the worker answers ``initialize`` with 200. It listens before it has joined the fleet
    when its first try at startup failed (a slow Redis subscription on a loaded machine): the first
    requests then try again, and answer 500 until one succeeds. A health check, as a balancer's."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "ready", "version": "1"},
            },
        }
    )
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    deadline = time.monotonic() + timeout
    while True:
        connection = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
        status: int | str
        try:
            connection.request("POST", "/mcp", body, headers)
            status = connection.getresponse().status
        except OSError as exc:
            status = repr(exc)
        finally:
            connection.close()
        if status == 200:
            return
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the worker on port {port} still answers {status} after {timeout:.0f} s:\n{tail}")
        time.sleep(0.1)


@contextlib.contextmanager
def _cluster_as_redis() -> Iterator[Any]:
    """A three-master Redis Cluster (``tests/_redis_cluster.py``) where ``fleet_services`` wants a
    Redis: ``.url`` its seed node, ``.process.pid`` the seed's (the others: ``.pids``)."""
    from _redis_cluster import redis_cluster

    with redis_cluster() as cluster:
        yield SimpleNamespace(url=cluster.url, process=SimpleNamespace(pid=cluster.pids[0]), pids=cluster.pids)


@contextlib.contextmanager
def fleet_services(log_dir: Path, *, cluster: bool = False) -> Iterator[Fleet]:
    """Start Redis (with ``cluster``: a Redis Cluster of three masters), the workers and nginx;
    stop them all on exit. Workers' output: ``log_dir``."""
    nginx = _program("nginx")
    if nginx is None or missing_services():
        raise RuntimeError(missing_services() or "nginx not installed")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(_cluster_as_redis() if cluster else redis_server())
        assert redis.process is not None
        workers: list[tuple[int, subprocess.Popen[bytes], Path]] = []
        for number in range(WORKERS):  # all at once: they import and connect side by side
            port = free_port()
            out = log_dir / f"fleet-worker{number}.log"
            flag = "--redis-cluster" if cluster else "--redis"
            argv = [sys.executable, str(HERE / "contract_server.py"), "http", flag, redis.url]
            with out.open("ab") as sink:
                worker_env = {**env, "PORT": str(port)}
                process = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, env=worker_env
                )
            stack.callback(stop_process, process)
            workers.append((port, process, out))
        for port, process, out in workers:
            wait_for_port(port, process, timeout=START_TIMEOUT, output=partial(out.read_text, errors="replace"))
            _wait_ready(port, START_TIMEOUT, out)
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bc-bench-nginx-")))
        port = free_port()
        config = directory / "nginx.conf"
        config.write_text(_nginx_config(port, [p for p, _, _ in workers], directory), encoding="utf-8")
        argv = [nginx, "-p", str(directory), "-c", str(config), "-e", str(directory / "error.log")]
        proxy = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        stack.callback(stop_process, proxy)
        error_log = directory / "error.log"
        wait_for_port(port, proxy, timeout=10.0, output=lambda: error_log.read_text(errors="replace"))
        worker_pids = [process.pid for _, process, _ in workers]
        yield Fleet(
            url=f"http://{LOOPBACK}:{port}/mcp",
            port=port,
            worker_ports=[p for p, _, _ in workers],
            pids=[*worker_pids, *getattr(redis, "pids", [redis.process.pid]), proxy.pid],
            worker_pids=worker_pids,
            redis_pid=redis.process.pid,
            redis_url=redis.url,
        )
