"""Seeded, structured fuzzing of any server, and the ledger of what each frame may be answered.

``Frames`` writes frames in the shapes of the server's own era: requests of every method
with params of the wrong JSON type somewhere, broken envelopes, ids of every type,
duplicates, cancellations of recent requests, responses nobody asked for, notifications,
garbage lines, deep nesting and long strings. The names it uses are the server's own
prompts and templates and only the tools ``Plan.safe`` allows (read-only, closed-world, or
named safe), so fuzzing calls nothing that writes, and never a tool that is excluded.

Before a frame is written, ``Ledger.expect`` notes how many answers its id may get (a
request: one; a duplicate or a cancelled one: zero or one); ``Ledger.answered`` then counts
what came back and notes every breach: an answer to an id never sent, a second answer, a
response that is neither result nor error, and -32603 (a handler that failed on bad input).
The same seed writes the same frames. The fuzzing connection declares no client capability, so
that no fuzzed request can wait on a question of the server's (the server must not ask one).
"""

from __future__ import annotations

__all__ = ["Frames", "Ledger"]

import itertools
import json
import random
import string
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..types import meta as M
from .shapes import obj

#: The methods either era serves, drawn at random (tools/call three times as often as the others).
_BOTH_ERAS = (
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
)
_HANDSHAKE_METHODS = (
    *_BOTH_ERAS,
    "logging/setLevel",
    "ping",
    "resources/subscribe",
    "resources/unsubscribe",
    "initialize",
    "no/such/method",
    "",
)
_STATELESS_METHODS = (*_BOTH_ERAS, "server/discover", "ping", "initialize", "no/such/method", "")
_NOTIFICATIONS = (
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/message",
    "notifications/unknown",
)
_UNUSUAL = ("", " ", "\x00", "\u202e", "é", "\U0001f600", "\ufeff", "null", "../../etc/passwd", "%00", "{x}", "a" * 300)
_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: Codes a malformed or fuzzed request may be refused with; -32603 is a failure of the server's own.
REFUSALS = frozenset({-32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022, -32042})


@dataclass
class _Expected:
    low: int
    high: int
    frame: bytes


@dataclass
class Ledger:
    """How many answers each request id may get, what came back, and every breach."""

    expected: dict[tuple[str, Any], _Expected] = field(default_factory=dict)
    answers: Counter[tuple[str, Any]] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)
    codes: Counter[int] = field(default_factory=Counter)
    answered_count: int = 0

    @staticmethod
    def key(request_id: Any) -> tuple[str, Any]:
        return (type(request_id).__name__, request_id)

    def expect(self, request_id: Any, low: int, high: int, frame: bytes) -> None:
        key = self.key(request_id)
        known = self.expected.get(key)
        if known is None:
            self.expected[key] = _Expected(low, high, frame[:300])
        else:
            known.low, known.high = max(known.low, low), known.high + high

    def loosen(self, request_id: Any) -> None:
        """A cancellation was sent for ``request_id``: its answer may never come."""
        known = self.expected.get(self.key(request_id)) if type(request_id) in (int, str) else None
        if known is not None:
            known.low = 0

    def answered(self, message: dict[str, Any]) -> None:
        """Count one response the server sent."""
        self.answered_count += 1
        request_id = message.get("id")
        error = message.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), int):
            self.codes[error["code"]] += 1
        if not isinstance(error, dict) and "result" not in message:
            self.problems.append(f"a response that is neither a result nor an error: {_short(message)}")
            return
        if request_id is None:
            if not isinstance(error, dict):
                self.problems.append(f"a result with id null: {_short(message)}")
            elif error.get("code") == -32603:
                self.internal.append(f"-32603 with id null: {_short(error)}")
            return
        if type(request_id) not in (int, str):
            self.problems.append(f"an answer whose id is neither a string nor an integer: {_short(message)}")
            return
        key = self.key(request_id)
        known = self.expected.get(key)
        if known is None:
            self.problems.append(f"an answer to an id never sent: {_short(message)}")
            return
        self.answers[key] += 1
        if self.answers[key] > known.high:
            self.problems.append(f"answer #{self.answers[key]} to {request_id!r}: {_short(message)}")
        if isinstance(error, dict) and error.get("code") == -32603:
            self.internal.append(f"-32603 for {known.frame.decode('utf-8', 'replace')[:200]!r}: {_short(error)}")

    def missing(self) -> list[str]:
        return [
            f"no answer to {key[1]!r} for {known.frame.decode('utf-8', 'replace')[:200]!r}"
            for key, known in self.expected.items()
            if self.answers[key] < known.low
        ]

    def outstanding(self) -> int:
        """Requests still owed their answer."""
        return sum(1 for key, known in self.expected.items() if self.answers[key] < known.low)

    def settled(self) -> bool:
        return all(self.answers[key] >= known.low for key, known in self.expected.items())


def _short(value: Any, limit: int = 240) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


class Frames:
    """Seeded frames for a server in ``era``, using its own names (``tools`` only the safe ones)."""

    def __init__(
        self,
        seed: int,
        ledger: Ledger,
        era: str,
        version: str,
        *,
        tools: list[dict[str, Any]],
        prompts: list[dict[str, Any]],
        templates: list[dict[str, Any]],
    ) -> None:
        self.rng = random.Random(seed)
        self.ledger = ledger
        self.era = era
        self.version = version
        self.tools = tools
        self.prompt_names = [p.get("name") for p in prompts if isinstance(p.get("name"), str)] or ["no-such-prompt"]
        self.uris: list[str] = [str(t["uriTemplate"]) for t in templates if isinstance(t.get("uriTemplate"), str)] or [
            "x://y"
        ]
        self._ids = itertools.count(100_000)  # far from the ids of the connection's own requests
        self.recent: list[Any] = []
        kinds = [
            (self._good, 30),
            (self._mutated, 30),
            (self._envelope, 8),
            (self._notification, 8),
            (self._cancel, 4),
            (self._stray, 3),
            (self._duplicate, 2),
            (self._garbage, 6),
            (self._deep, 2),
        ]
        self._kinds = [kind for kind, _ in kinds]
        self._weights = [weight for _, weight in kinds]

    def next(self) -> list[bytes]:
        """The lines of one fuzzed step (usually one; a duplicate is two)."""
        return self.rng.choices(self._kinds, self._weights)[0]()

    # ------------------------------------------------------------------ helpers

    def _id(self) -> int | str:
        number = next(self._ids)
        return number if self.rng.random() < 0.6 else f"f{number}"

    def _meta(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.era != "stateless":
            return params
        params = dict(params)
        params["_meta"] = {
            M.PROTOCOL_VERSION: self.version,
            M.CLIENT_INFO: {"name": "fuzz", "version": "1"},
            M.CLIENT_CAPABILITIES: {},
        }
        return params

    def _request(self, method: str, params: dict[str, Any] | None, *, low: int = 1) -> list[bytes]:
        request_id = self._id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        line = _dumps(message)
        self.ledger.expect(request_id, low, 1, line)
        self.recent = [*self.recent[-31:], request_id]
        return [line]

    def _method_and_params(self) -> tuple[str, dict[str, Any]]:
        methods = _STATELESS_METHODS if self.era == "stateless" else _HANDSHAKE_METHODS
        method = self.rng.choice(methods)
        return method, self._meta(self._params(method))

    def _params(self, method: str) -> dict[str, Any]:
        rng = self.rng
        if method == "tools/call":
            if self.tools and rng.random() < 0.7:
                tool = rng.choice(self.tools)
                return {"name": tool["name"], "arguments": self._arguments(tool)}
            return {"name": self.string(), "arguments": {}}
        if method == "prompts/get":
            return {"name": rng.choice(self.prompt_names), "arguments": {"a": self.string()}}
        if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            return {"uri": rng.choice(self.uris).replace("{", "").replace("}", "")}
        if method == "completion/complete":
            return {
                "ref": {"type": "ref/prompt", "name": rng.choice(self.prompt_names)},
                "argument": {"name": self.string(4), "value": self.string(2)},
            }
        if method == "logging/setLevel":
            return {"level": rng.choice(_LEVELS)}
        if method == "initialize":
            return {
                "protocolVersion": rng.choice(("2025-11-25", "1999-01-01")),
                "capabilities": {},
                "clientInfo": {"name": "fuzz", "version": "1"},
            }
        if method.endswith("/list") and rng.random() < 0.3:
            return {"cursor": self.string()}
        return {}

    def _arguments(self, tool: dict[str, Any]) -> dict[str, Any]:
        schema = obj(tool.get("inputSchema"))
        properties = obj(schema.get("properties"))
        return {name: self.value(2) for name in properties}

    # ------------------------------------------------------------------ kinds of frame

    def _good(self) -> list[bytes]:
        method, params = self._method_and_params()
        return self._request(method, params)

    def _mutated(self) -> list[bytes]:
        method, params = self._method_and_params()
        self._mutate(params)
        return self._request(method, params)

    def _envelope(self) -> list[bytes]:
        """A request with something wrong in its envelope: answered once at most (maybe with id null)."""
        request_id: Any = self.rng.choice((None, 1.5, True, {"a": 1}, [1], self._id()))
        message: dict[str, Any] = {
            "jsonrpc": self.rng.choice(("1.0", 2, None, "2.0")),
            "id": request_id,
            "method": self.rng.choice(("ping", "tools/list", 42, None)),
        }
        if self.rng.random() < 0.5:
            message["params"] = self.rng.choice(("x", 1, [1, 2], None))
        line = _dumps(message)
        if type(request_id) in (int, str):
            self.ledger.expect(request_id, 0, 1, line)
        return [line]

    def _notification(self) -> list[bytes]:
        method = self.rng.choice(_NOTIFICATIONS)
        params = {"requestId": self.rng.randrange(1, 100), "progressToken": self.string(3), "progress": 1}
        if self.rng.random() < 0.4:
            self._mutate(params)
        return [_dumps({"jsonrpc": "2.0", "method": method, "params": self._meta(params)})]

    def _cancel(self) -> list[bytes]:
        target = self.rng.choice(self.recent) if self.recent and self.rng.random() < 0.7 else self.value(1)
        self.ledger.loosen(target)
        return [
            _dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": target, "reason": "fuzz"},
                }
            )
        ]

    def _stray(self) -> list[bytes]:
        request_id = self.rng.choice((self.rng.randrange(10_000, 20_000), f"x{self.rng.randrange(1000)}", None))
        body = {"result": self.value(2)} if self.rng.random() < 0.5 else {"error": {"code": -1, "message": "no"}}
        return [_dumps({"jsonrpc": "2.0", "id": request_id, **body})]

    def _duplicate(self) -> list[bytes]:
        method, params = self._method_and_params()
        request_id = self._id()
        line = _dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        self.ledger.expect(request_id, 1, 1, line)
        self.ledger.expect(request_id, 0, 1, line)
        return [line, line]

    def _garbage(self) -> list[bytes]:
        if self.rng.random() < 1 / 12:
            # A batch (2025-03-26's JSON-RPC batching, removed since): refused, ignored, or its
            # ping answered; any of them is fine, an answer to the ping included.
            request_id = f"batch{next(self._ids)}"
            line = _dumps([{"jsonrpc": "2.0", "id": request_id, "method": "ping"}])
            self.ledger.expect(request_id, 0, 1, line)
            return [line]
        return [
            self.rng.choice(
                (
                    b"{not json",
                    b'"\\ud800"',
                    b"\xff\xfe{}",
                    b"1",
                    b"null",
                    b"[]",
                    b"[1,2]",
                    b"{}",
                    b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
                    b'{"jsonrpc":"2.0"}',
                )
            )
        ]

    def _deep(self) -> list[bytes]:
        depth = self.rng.choice((40, 130, 1000, 20_000))
        body = "[" * depth + "0" + "]" * depth
        request_id = f"deep{next(self._ids)}"
        line = f'{{"jsonrpc":"2.0","id":"{request_id}","method":"ping","params":{{"x":{body}}}}}'.encode()
        self.ledger.expect(request_id, 0, 1, line)  # a refusal may come with id null
        return [line]

    # ------------------------------------------------------------------ values

    def _mutate(self, params: dict[str, Any]) -> None:
        places: list[tuple[Any, Any]] = [(params, None)]
        stack: list[Any] = [params]
        while stack:
            current = stack.pop()
            for key, item in list(current.items() if isinstance(current, dict) else enumerate(current)):
                places.append((current, key))
                if isinstance(item, dict | list):
                    stack.append(item)
        container, key = self.rng.choice(places)
        if key is None:
            if isinstance(container, dict):
                container[self.string(6)] = self.value(2)
        elif self.rng.random() < 0.2:
            del container[key]
        else:
            container[key] = self.value(3)

    def value(self, depth: int = 2) -> Any:
        roll = self.rng.randrange(12 if depth > 0 else 8)
        if roll == 0:
            return None
        if roll == 1:
            return self.rng.random() < 0.5
        if roll == 2:
            return self.rng.choice((0, -1, 2**31, -(2**63), 2**64, 10**30))
        if roll == 3:
            return self.rng.choice((0.5, -0.0, 1e308, 3.0))
        if roll in (4, 5):
            return self.string()
        if roll == 6:
            return self.rng.choice(_UNUSUAL)
        if roll == 7:
            return "x" * self.rng.choice((4096, 65536))
        if roll in (8, 9):
            return [self.value(depth - 1) for _ in range(self.rng.randrange(3))]
        return {self.string(5): self.value(depth - 1) for _ in range(self.rng.randrange(3))}

    def string(self, length: int | None = None) -> str:
        size = self.rng.randrange(10) if length is None else length
        return "".join(self.rng.choices(string.ascii_letters + string.digits + "/:?#&=%{}.", k=size))


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
