"""Real services for the tests of a fleet of workers: Redis and an nginx load balancer.

Both run as child processes of the test, on free loopback ports, with everything they
write in a temporary directory, and are stopped on exit whatever happened. They come
from Debian's packages (``tests/peers/install-services.sh`` installs them); nothing
here is a mock.

- ``redis_server()``: ``redis-server`` with persistence off; ``.url``, ``.stop()``,
  ``.start()`` (same port), ``.restart()``.
- ``nginx_round_robin(ports)``: nginx passing every request to the next of ``ports`` in
  turn, unbuffered (SSE flows through as it is written); ``.port``, ``.url``.
"""

from __future__ import annotations

__all__ = ["Nginx", "RedisServer", "nginx_round_robin", "redis_server"]

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from backchannel.testing import LOOPBACK, free_port, stop_process, wait_for_port

_INSTALL_HINT = "run tests/peers/install-services.sh (Debian packages redis-server and nginx)"


def _program(name: str) -> str:
    found = shutil.which(name) or next(
        (str(path) for path in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if path.exists()), None
    )
    if found is None:
        raise RuntimeError(f"{name} is not installed: {_INSTALL_HINT}")
    return found


def _tail(path: Path, size: int = 4000) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-size:]
    except OSError:
        return ""


class RedisServer:
    """One ``redis-server`` on ``127.0.0.1:port``, no persistence, its files in ``directory``."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.directory = directory
        self.port = port if port is not None else free_port()
        self.url = f"redis://{LOOPBACK}:{self.port}/0"
        self.log = directory / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> None:
        """Start it (on the same port as before) and return once it answers PING."""
        if self.process is not None and self.process.poll() is None:
            return
        argv = [
            _program("redis-server"),
            "--port", str(self.port),
            "--bind", LOOPBACK,
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.directory),
            "--daemonize", "no",
            "--logfile", str(self.log),
        ]  # fmt: skip
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not self.answers_ping():
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited {self.process.returncode}:\n{_tail(self.log)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer PING within {timeout}s:\n{_tail(self.log)}")
            time.sleep(0.02)  # another process's port: no event to wait on, so poll with a deadline

    def stop(self) -> None:
        """Stop it (SIGTERM; nothing is saved) and wait until it has exited."""
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def answers_ping(self) -> bool:
        try:
            with socket.create_connection((LOOPBACK, self.port), timeout=0.5) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(64).startswith(b"+PONG")
        except OSError:
            return False


@contextlib.contextmanager
def redis_server() -> Iterator[RedisServer]:
    """A fresh ``redis-server`` on a free loopback port, stopped and its files removed on exit."""
    with tempfile.TemporaryDirectory(prefix="bc-redis-") as directory:
        server = RedisServer(Path(directory))
        try:
            server.start()
            yield server
        finally:
            server.stop()


class Nginx:
    """nginx on ``127.0.0.1:port`` in front of the upstream ports, round-robin."""

    def __init__(self, port: int, process: subprocess.Popen[bytes], directory: Path) -> None:
        self.port = port
        self.url = f"http://{LOOPBACK}:{port}"
        self.process = process
        self.directory = directory

    def error_log(self) -> str:
        return _tail(self.directory / "error.log")


def _nginx_config(port: int, upstream_ports: Sequence[int], directory: Path) -> str:
    servers = "\n".join(f"        server {LOOPBACK}:{upstream};" for upstream in upstream_ports)
    temp = {name: directory / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    # One process (no master, so no switch to another user who could not write here);
    # every request to the next upstream in turn (nginx's default), nothing buffered, so
    # an SSE event reaches the client when the worker writes it; long reads for streams.
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
        }}
    }}
}}
"""


@contextlib.contextmanager
def nginx_round_robin(upstream_ports: Sequence[int]) -> Iterator[Nginx]:
    """nginx on a free loopback port passing each request to the next of ``upstream_ports``
    (consecutive requests of one client land on different upstreams), as a child process."""
    if not upstream_ports:
        raise ValueError("nginx needs at least one upstream port")
    with tempfile.TemporaryDirectory(prefix="bc-nginx-") as name:
        directory = Path(name)
        port = free_port()
        config = directory / "nginx.conf"
        config.write_text(_nginx_config(port, upstream_ports, directory), encoding="utf-8")
        argv = [_program("nginx"), "-p", str(directory), "-c", str(config), "-e", str(directory / "error.log")]
        with open(os.devnull, "wb") as quiet:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=quiet, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, process, timeout=10.0, output=lambda: _tail(directory / "error.log"))
            yield Nginx(port, process, directory)
        finally:
            stop_process(process)
