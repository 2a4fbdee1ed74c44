"""``backchannel.testing.processes``: a server in another process, on a loopback port."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from backchannel.testing import free_port, port_accepts, running_process, stop_process, wait_for_port

#: A child that listens on the port in argv[1] until it is terminated.
LISTENER = """
import socket, sys, time
sock = socket.socket()
sock.bind(("127.0.0.1", int(sys.argv[1])))
sock.listen()
time.sleep(60)
"""

#: A child that ignores SIGTERM, so only a kill ends it.
STUBBORN = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
"""


def test_free_port_is_bindable_and_nothing_listens_on_it() -> None:
    port = free_port()
    assert not port_accepts(port)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_running_process_waits_for_the_port_and_stops_the_process() -> None:
    port = free_port()
    with running_process([sys.executable, "-c", LISTENER, str(port)], port=port) as process:
        assert port_accepts(port)
        assert process.poll() is None
    assert process.poll() is not None
    assert not port_accepts(port)


def test_a_process_that_dies_before_listening_is_reported_with_its_output() -> None:
    port = free_port()
    argv = [sys.executable, "-c", "import sys; print('no config here'); sys.exit(3)"]
    with (
        pytest.raises(RuntimeError, match=r"exited 3 before listening:\nno config here"),
        running_process(argv, port=port),
    ):
        raise AssertionError("never reached")


def test_a_process_that_never_listens_times_out_and_is_stopped() -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(RuntimeError, match=f"nothing listened on 127.0.0.1:{port} within 0.2s"):
            wait_for_port(port, process, timeout=0.2)
    finally:
        stop_process(process)
    assert process.returncode is not None


def test_stop_process_kills_what_ignores_terminate() -> None:
    process = subprocess.Popen([sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    stop_process(process, timeout=0.2)
    assert process.returncode == -9
    stop_process(process)  # already gone: nothing to do
