"""Seeded raw HTTP/1.1 requests for the fuzz pass over ``run_http``'s own server (``test_fuzz_h1.py``).

``RequestMaker.case()`` picks a template and fills it in at random: the bytes to send (in writes
of random sizes), whether the client half-closes after them, and what the server must answer,
in order. Every request that reaches the app is a stateless-era ``tools/call`` of ``tick``, a
tool with a side effect the test counts, so a request that must not run is seen if it does.

- ``good``: framed by content-length or by chunks of random sizes (some with an ordinary chunk
  extension, some with a trailer), header names in random case, one or two pipelined: 200 each,
  one tick each.
- ``header_bomb`` (issue #26, 1): a line that never ends, in the request line, a header name, a
  header value or a chunked body's trailer, 64 KiB to 1 MiB of it, sent in pieces: 431 (400 in
  a trailer) at the limit, not a 408 after the header timeout.
- ``truncated`` (issue #26, 3): a whole JSON body in a message that never ends: short of its
  content-length, chunked with no last chunk, cut in a chunk's data, in a size line or in the
  trailer, then a half-close (400); or left to the body's timeout (408). Never a tick.
- ``bad_framing`` (issue #26, 11 and 14): a bad chunk size, a bad trailer, a transfer-coding other
  than chunked, a chunk extension past the line limit, content-length with transfer-encoding or
  twice over: 400, never a tick.
- ``pipelined_then_broken``: a good request, then a truncated or badly framed one: 200 then 400,
  one tick.
"""

from __future__ import annotations

__all__ = ["TEMPLATES", "Case", "RequestMaker", "stateless"]

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backchannel.framing.mirrored_headers import request_headers
from backchannel.http_host.h1 import connection as h1
from backchannel.types import meta as M

MODERN = "2026-07-28"
TRUNCATED = ("short", "no-last-chunk", "cut-in-data", "cut-in-size", "cut-in-trailer", "stall")
BAD_FRAMING = ("bad-size", "bad-trailer", "coding", "long-extension", "length-and-chunked", "two-lengths")


@dataclass
class Case:
    """One connection's worth: what to send, and what must come back."""

    template: str
    writes: list[bytes]
    half_close: bool
    statuses: list[int]
    ticks: int = 0
    #: Words the last answer's error message must contain.
    words: str = ""
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        sent = b"".join(self.writes)
        return f"{self.template} ({', '.join(self.notes)}): {len(sent)} bytes, starting {sent[:160]!r}"


def stateless(method: str, request_id: int | str, **params: Any) -> dict[str, Any]:
    """A stateless-era request: ``params`` with the ``_meta`` envelope."""
    meta = {M.PROTOCOL_VERSION: MODERN, M.CLIENT_CAPABILITIES: {}, M.CLIENT_INFO: {"name": "h1-fuzz", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}


class RequestMaker:
    """Seeded maker of raw requests to ``127.0.0.1:port``, one ``Case`` at a time."""

    def __init__(self, seed: int, port: int) -> None:
        self.rng = random.Random(seed)
        self.port = port
        self.ids = 0
        self._templates: list[tuple[Callable[[], Case], int]] = [
            (self.good, 30),
            (self.header_bomb, 12),
            (self.truncated, 25),
            (self.bad_framing, 20),
            (self.pipelined_then_broken, 8),
        ]

    def case(self) -> Case:
        makers, weights = zip(*self._templates, strict=True)
        case = self.rng.choices(makers, weights)[0]()
        case.writes = self._split(b"".join(case.writes)) if case.template != "header_bomb" else case.writes
        return case

    # ------------------------------------------------------------------ pieces

    def _name(self, name: str) -> str:
        roll = self.rng.random()
        if roll < 0.2:
            return name.upper()
        if roll < 0.4:
            return "-".join(part.capitalize() for part in name.split("-"))
        return name

    def _head(self, framing: list[tuple[str, str | None]], missing: int = 0) -> tuple[bytes, bytes]:
        """A tick's head (ending in its blank line) with ``framing`` headers, and its JSON body;
        a value of None is the body's length (plus ``missing``)."""
        self.ids += 1
        message = stateless("tools/call", self.ids, name="tick", arguments={})
        body = json.dumps(message).encode()
        headers: list[tuple[str, str]] = [("host", f"127.0.0.1:{self.port}")]
        headers.append(("accept", "application/json, text/event-stream"))
        headers += [("content-type", "application/json")]
        headers += [(name.lower(), value) for name, value in request_headers(message).items()]
        headers += [(name, str(len(body) + missing) if value is None else value) for name, value in framing]
        if self.rng.random() < 0.3:
            headers.append((f"x-fuzz-{self.rng.randrange(1000)}", "v" * self.rng.randrange(200)))
        self.rng.shuffle(headers)
        lines = "".join(f"{self._name(name)}: {value}\r\n" for name, value in headers)
        return f"POST /mcp HTTP/1.1\r\n{lines}\r\n".encode(), body

    def _chunks(self, body: bytes, *, extensions: bool = True) -> bytes:
        out = bytearray()
        at = 0
        while at < len(body):
            size = self.rng.randint(1, max(1, len(body) - at))
            extension = b";kind=fuzz" if extensions and self.rng.random() < 0.2 else b""
            out += b"%x%s\r\n%s\r\n" % (size, extension, body[at : at + size])
            at += size
        return bytes(out)

    def _split(self, data: bytes) -> list[bytes]:
        """``data`` in writes of random sizes (most often one)."""
        if self.rng.random() < 0.6 or len(data) < 2:
            return [data]
        cuts = sorted(self.rng.sample(range(1, len(data)), min(len(data) - 1, self.rng.randint(1, 6))))
        return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]

    def _good_bytes(self) -> bytes:
        if self.rng.random() < 0.5:
            head, body = self._head([("content-length", None)])
            return head + body
        head, body = self._head([("transfer-encoding", "chunked")])
        trailer = b"x-checksum: 0\r\n" if self.rng.random() < 0.2 else b""
        return head + self._chunks(body) + b"0\r\n" + trailer + b"\r\n"

    # ------------------------------------------------------------------ templates

    def good(self) -> Case:
        count = 1 if self.rng.random() < 0.7 else 2
        sent = b"".join(self._good_bytes() for _ in range(count))
        return Case("good", [sent], True, [200] * count, ticks=count)

    def header_bomb(self) -> Case:
        where = self.rng.choice(["request-line", "name", "value", "trailer"])
        size = self.rng.randint(h1.MAX_HEAD_BYTES + h1.PIECE + 1, 1024 * 1024)
        start = {
            "request-line": b"POST /",
            "name": b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-",
            "value": b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-bomb: ",
        }.get(where)
        if start is None:
            head, body = self._head([("transfer-encoding", "chunked")])
            start = head + self._chunks(body) + b"0\r\nx-bomb: "
        step = self.rng.choice([1024, 16 * 1024, 64 * 1024])
        writes = [start] + [b"a" * step] * (size // step)
        status, words = (400, "trailer") if where == "trailer" else (431, "Request Header Fields Too Large")
        return Case("header_bomb", writes, False, [status], words=words, notes=[where, f"{size} bytes"])

    def _broken(self, kinds: tuple[str, ...]) -> tuple[bytes, bool, int, str, str]:
        """A request that must not run: its bytes, whether to half-close, the status, words, note."""
        kind = self.rng.choice(kinds)
        if kind in ("short", "stall"):
            head, body = self._head([("content-length", None)], missing=self.rng.randint(1, 200))
            if kind == "stall":
                return head + body, False, 408, "did not arrive", kind
            return head + body, True, 400, "middle of a request", kind
        if kind in ("length-and-chunked", "two-lengths"):
            second = ("transfer-encoding", "chunked") if kind == "length-and-chunked" else ("content-length", "1")
            head, body = self._head([("content-length", "2"), second])
            return head + body, False, 400, "valid HTTP/1.1", kind
        if kind == "coding":
            coding = self.rng.choice(["identity", "gzip", "chunked, gzip", "gzip, identity", "deflate"])
            head, body = self._head([("transfer-encoding", coding)])
            return head + body, False, 400, "Transfer-Encoding", f"{kind} {coding}"
        head, body = self._head([("transfer-encoding", "chunked")])
        chunks = self._chunks(body, extensions=False)
        if kind == "no-last-chunk":
            return head + chunks, True, 400, "middle of a request", kind
        if kind == "cut-in-data":
            return head + b"%x\r\n%s" % (len(body) + 5, body), True, 400, "middle of a request", kind
        if kind == "cut-in-size":
            return head + chunks + b"1", True, 400, "middle of a request", kind
        if kind == "cut-in-trailer":
            return head + chunks + b"0\r\nx-t: 1", True, 400, "middle of a request", kind
        if kind == "bad-size":
            size = self.rng.choice([b"zz", b"-1", b"g", b"1 2"])
            return head + chunks + size + b"\r\nxx\r\n0\r\n\r\n", False, 400, "chunk", kind
        if kind == "bad-trailer":
            trailer = self.rng.choice([b"not a field", b": no name", b"x y: 1"])
            return head + chunks + b"0\r\n" + trailer + b"\r\n\r\n", False, 400, "valid HTTP/1.1", kind
        length = h1.MAX_CHUNK_LINE + h1.PIECE + self.rng.randrange(4096)
        return head + b"2;" + b"e" * length + b"\r\n{}\r\n0\r\n\r\n", False, 400, "chunk-size line", kind

    def truncated(self) -> Case:
        sent, half_close, status, words, note = self._broken(TRUNCATED)
        return Case("truncated", [sent], half_close, [status], words=words, notes=[note])

    def bad_framing(self) -> Case:
        sent, half_close, status, words, note = self._broken(BAD_FRAMING)
        return Case("bad_framing", [sent], half_close, [status], words=words, notes=[note])

    def pipelined_then_broken(self) -> Case:
        sent, half_close, status, words, note = self._broken(TRUNCATED + BAD_FRAMING)
        return Case("pipelined_then_broken", [self._good_bytes() + sent], half_close, [200, status], 1, words, [note])


TEMPLATES = ("good", "header_bomb", "truncated", "bad_framing", "pipelined_then_broken")
