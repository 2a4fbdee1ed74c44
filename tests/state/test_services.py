"""The real services the fleet tests run on (``tests/_services.py``): redis-server starts,
stops and comes back on its port; nginx sends consecutive requests to the upstreams in
turn and passes each event of a streamed response on as the upstream writes it."""

from __future__ import annotations

import http.server
import itertools
import threading
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from _services import nginx_round_robin, redis_server


def test_redis_server_stops_and_starts_again_on_its_port() -> None:
    with redis_server() as server:
        assert server.answers_ping() and server.url == f"redis://127.0.0.1:{server.port}/0"
        port = server.port
        server.stop()
        assert not server.answers_ping()
        server.start()
        assert server.answers_ping() and server.port == port
        server.restart()
        assert server.answers_ping()
    assert not server.answers_ping()  # stopped on exit


@contextmanager
def _upstream(handle: Callable[[http.server.BaseHTTPRequestHandler], None]) -> Iterator[int]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            handle(self)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _answer(name: bytes) -> Callable[[http.server.BaseHTTPRequestHandler], None]:
    def handle(request: http.server.BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Length", str(len(name)))
        request.end_headers()
        request.wfile.write(name)

    return handle


def test_nginx_sends_consecutive_requests_to_the_upstreams_in_turn() -> None:
    answers = []
    with (
        _upstream(_answer(b"a")) as port_a,
        _upstream(_answer(b"b")) as port_b,
        nginx_round_robin([port_a, port_b]) as nginx,
    ):
        for _ in range(6):
            with urllib.request.urlopen(f"{nginx.url}/mcp", timeout=5) as response:
                answers.append(response.read())
    assert sorted(set(answers)) == [b"a", b"b"]
    assert all(first != second for first, second in itertools.pairwise(answers)), answers


def test_nginx_passes_each_event_of_a_stream_on_as_it_is_written() -> None:
    first_event_seen = threading.Event()

    def stream(request: http.server.BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/event-stream")
        request.send_header("Transfer-Encoding", "chunked")
        request.end_headers()
        for event, wait in ((b"data: one\n\n", True), (b"data: two\n\n", False)):
            request.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            request.wfile.flush()
            # The second event is written only once the client has the first: a proxy that
            # held the first back (until more came, or the end) would leave this waiting.
            if wait and not first_event_seen.wait(5):
                return
        request.wfile.write(b"0\r\n\r\n")

    with (
        _upstream(stream) as port,
        nginx_round_robin([port]) as nginx,
        urllib.request.urlopen(f"{nginx.url}/stream", timeout=10) as response,
    ):
        assert response.headers["Content-Type"] == "text/event-stream"
        assert response.readline() == b"data: one\n"
        first_event_seen.set()
        assert response.read() == b"\ndata: two\n\n"
