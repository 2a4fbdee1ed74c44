"""Stand-ins for a model, for the tests: an OpenAI-compatible chat-completions server on loopback.

``FakeChat`` is a real HTTP server (a thread of this process, bound to 127.0.0.1, port chosen
by the system), so the client under test (in this process or a child) reaches it over a socket,
as it would reach a provider. It records each request (headers and JSON body) and answers with
the text of the last user message echoed, or with what the test queued: a reply dict
(``{"text": ...}``, ``{"tool_calls": [...]}``) or an HTTP status to fail with.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ENDPOINT_PATH = "/v1/chat/completions"


@dataclass
class FakeChat:
    url: str
    #: (headers with lower-case names, the JSON body) of each request, in order.
    requests: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)
    #: What the next requests are answered with; empty: echo the last user text.
    replies: list[dict[str, Any] | int] = field(default_factory=list)
    model: str = "fake-1-2025"


def _answer(chat: FakeChat, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    reply = chat.replies.pop(0) if chat.replies else None
    if isinstance(reply, int):
        return reply, {"error": {"message": "the fake refuses", "type": "invalid_request_error"}}
    if reply is None:
        last = next(m for m in reversed(body["messages"]) if m["role"] == "user")
        reply = {"text": f"fake says: {last['content']}"}
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
    finish = "stop"
    if reply.get("tool_calls"):
        message["tool_calls"] = reply["tool_calls"]
        finish = "tool_calls"
    choice = {"index": 0, "message": message, "finish_reason": reply.get("finish_reason", finish)}
    return 200, {"id": "chatcmpl-1", "object": "chat.completion", "model": chat.model, "choices": [choice]}


@contextmanager
def fake_chat() -> Iterator[FakeChat]:
    chat = FakeChat(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's name
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length))
            chat.requests.append(({name.lower(): value for name, value in self.headers.items()}, body))
            status, answer = (404, {"error": "no such path"}) if self.path != ENDPOINT_PATH else _answer(chat, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    chat.url = f"http://127.0.0.1:{server.server_address[1]}{ENDPOINT_PATH}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
