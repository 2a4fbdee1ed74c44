"""Structured fuzzing frames for both eras, and the ledger that checks what came back.

``FrameMaker`` writes NDJSON lines: valid envelopes of every method of both eras with
mutated params (wrong JSON types anywhere, deep nesting, huge and unusual strings),
broken envelopes, duplicated ids, cancels for random ids, responses to ids nobody
asked, and notifications. It registers, before a line is written, how many answers
each request id must get; ``Ledger`` counts what the server answered and reports
every breach: an answer to an id never sent, a second answer, -32603 (a crash in a
handler), an error code outside the expected set, or a missing answer at the end.

The maker is seeded (``random.Random``), so a failing run is replayed with its seed.
It also answers the server's own questions (``elicitation/create``, ``roots/list``,
``sampling/createMessage``), with fuzzed answers, and retries stateless-era requests
that came back ``input_required`` with fuzzed ``inputResponses`` and the (sometimes
tampered) ``requestState``, so the multi-round paths are reached too.
"""

from __future__ import annotations

__all__ = [
    "ALLOWED_CODES",
    "LEGACY",
    "MODERN",
    "FrameMaker",
    "Ledger",
    "deep_json",
]

import base64
import copy
import itertools
import json
import random
import string
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backchannel.types import meta as M

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
#: Codes a fuzzed request may be refused with. -32603 is a handler that crashed: never expected.
ALLOWED_CODES = frozenset({-32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022})
#: The deepest nesting a line may have (the message itself is level 1); deeper is -32700 with id null.
MAX_DEPTH = 128

Key = tuple[str, int | str]

TOOLS = ("echo", "add", "shapes", "chatty", "ask", "roots", "sample", "several", "once")
PROMPTS = ("greet", "confirm")
TEMPLATES = ("fuzz://items/{id}", "fuzz://files/{+path}", "fuzz://search{?q,limit}", "fuzz://asks/{topic}")
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LIST_KINDS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "templates",
}
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
UNUSUAL = (
    "",
    " ",
    "\x00",
    "\u202e",
    "é",
    "\U0001f600",
    "\ufeff",
    "null",
    "../../etc/passwd",
    "%00",
    "%",
    "{x}",
    "a" * 300,
)


def key_of(request_id: int | str) -> Key:
    return (type(request_id).__name__, request_id)


def deep_json(depth: int, leaf: str = "0") -> str:
    """A JSON array nested ``depth`` levels, written as text (no recursion needed)."""
    return "[" * depth + leaf + "]" * depth


def depth_of(value: Any) -> int:
    """How deep ``value`` nests (a scalar 0, ``[]`` 1), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass
class _Expectation:
    low: int
    high: int
    frame: bytes
    method: str | None = None
    params: dict[str, Any] | None = None


@dataclass
class Ledger:
    """How many answers each request id may get, and what actually came back. Thread-safe."""

    expected: dict[Key, _Expectation] = field(default_factory=dict)
    answers: Counter[Key] = field(default_factory=Counter)
    codes: Counter[int] = field(default_factory=Counter)
    #: Ids that had all the answers they may get.
    finished: set[Key] = field(default_factory=set)
    null_errors: int = 0
    notifications: int = 0
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def expect(
        self,
        request_id: int | str,
        low: int,
        high: int,
        frame: bytes,
        method: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        with self.lock:
            key = key_of(request_id)
            known = self.expected.get(key)
            if known is None:
                self.finished.discard(key)  # an id used again on purpose (a duplicate) starts over
                self.expected[key] = _Expectation(low, high, frame[:400], method, params)
            else:  # the same id again (a duplicate on purpose): each may be answered
                known.low, known.high = max(known.low, low), known.high + high

    def loosen(self, request_id: Any) -> None:
        """A cancel was sent for ``request_id``: its answer may never come."""
        if type(request_id) not in (int, str):
            return
        with self.lock:
            known = self.expected.get(key_of(request_id))
            if known is not None:
                known.low = 0

    def answered(self, message: dict[str, Any]) -> _Expectation | None:
        """Count one response; returns what was expected of its id (None for id null)."""
        request_id = message.get("id")
        error = message.get("error")
        with self.lock:
            if isinstance(error, dict):
                self.codes[error.get("code")] += 1  # type: ignore[index]
            if request_id is None:
                self.null_errors += 1
                if not isinstance(error, dict):
                    self.problems.append(f"a result with id null: {_short(message)}")
                elif error.get("code") not in ALLOWED_CODES:
                    self.problems.append(f"unexpected error code for id null: {_short(message)}")
                return None
            if type(request_id) not in (int, str):
                self.problems.append(f"an answer with an id of the wrong type: {_short(message)}")
                return None
            key = key_of(request_id)
            known = self.expected.get(key)
            if known is None:
                if key in self.finished:
                    self.problems.append(f"one answer too many to {request_id!r}: {_short(message)}")
                else:
                    self.problems.append(f"an answer to an id never sent: {_short(message)}")
                return None
            self.answers[key] += 1
            if self.answers[key] > known.high:
                self.problems.append(f"answer #{self.answers[key]} to {request_id!r}: {_short(message)}")
            elif self.answers[key] == known.high:
                # Settled: only the key is kept (to catch one answer too many), so a long pass stays small.
                del self.expected[key], self.answers[key]
                self.finished.add(key)
            if isinstance(error, dict) and error.get("code") not in ALLOWED_CODES:
                self.problems.append(f"error {error.get('code')} for frame {known.frame[:300]!r}: {_short(error)}")
            elif not isinstance(error, dict) and not isinstance(message.get("result"), dict):
                self.problems.append(f"a response that is neither a result nor an error: {_short(message)}")
            return known

    def settled(self, request_id: int | str) -> bool:
        """True once ``request_id`` had every answer it may get."""
        with self.lock:
            return key_of(request_id) in self.finished

    def missing(self) -> list[Key]:
        with self.lock:
            return [key for key, known in self.expected.items() if self.answers[key] < known.low]

    def report(self) -> list[str]:
        """Every breach so far, plus each id still short of its answers."""
        with self.lock:
            problems = list(self.problems)
            for key, known in self.expected.items():
                if self.answers[key] < known.low:
                    problems.append(f"no answer to {key[1]!r} for frame {known.frame[:300]!r}")
        return problems


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


class FrameMaker:
    """Seeded generator of fuzzed NDJSON lines, registering each request's expectations.

    ``deep`` adds lines nested past the decoder's limit; ``meta_types`` puts values of
    the wrong JSON type under the reserved ``_meta`` keys; ``huge`` adds strings of up
    to ``huge_bytes`` (and, rarely, lines over ``max_line``). Call ``frames()`` for the
    lines of one fuzzed step, ``ping()`` for a liveness probe of either era.
    """

    def __init__(
        self,
        seed: int,
        ledger: Ledger,
        *,
        deep: bool = True,
        meta_types: bool = True,
        huge: bool = True,
        max_line: int = 1024 * 1024,
        huge_bytes: int = 200_000,
        initialized: bool = True,
    ) -> None:
        self.rng = random.Random(seed)
        self.ledger = ledger
        self.deep = deep
        self.meta_types = meta_types
        self.huge = huge
        self.max_line = max_line
        self.huge_bytes = huge_bytes
        self.initialized = initialized
        self._ids = itertools.count(1)
        self.recent: deque[int | str] = deque(maxlen=64)
        #: Stateless-era requests answered ``input_required``: (method, params, result), for retries.
        self.rounds: deque[tuple[str, dict[str, Any], dict[str, Any]]] = deque(maxlen=64)
        #: The server's own requests waiting for our answer.
        self.questions: deque[dict[str, Any]] = deque()
        self.listens: list[int | str] = []
        kinds: list[tuple[Callable[[], list[bytes]], int]] = [
            (self._good_request, 30),
            (self._mutated_request, 30),
            (self._retry_round, 6),
            (self._envelope, 6),
            (self._notification, 8),
            (self._cancel, 4),
            (self._stray_response, 3),
            (self._duplicate, 2),
            (self._garbage, 3),
            (self._listen_then_cancel, 1),
        ]
        if deep:
            kinds.append((self._deep, 2))
        self._kinds = [kind for kind, _ in kinds]
        self._weights = [weight for _, weight in kinds]

    # ------------------------------------------------------------------ public

    def frames(self) -> list[bytes]:
        """The lines of one fuzzed step (usually one line; a duplicate is two)."""
        return self.rng.choices(self._kinds, self._weights)[0]()

    def ping(self) -> tuple[int | str, bytes]:
        """A liveness probe: ``ping`` in the handshake era, ``server/discover`` in the stateless one."""
        request_id = f"ping-{next(self._ids)}"
        if self.initialized and self.rng.random() < 0.5:
            message = {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
        else:
            message = {"jsonrpc": "2.0", "id": request_id, "method": "server/discover", "params": self._modern({})}
        line = dumps(message)
        self.ledger.expect(request_id, 1, 1, line)
        return request_id, line

    def answers(self) -> list[bytes]:
        """Fuzzed answers to the server's questions seen so far (and forget them)."""
        lines = []
        while self.questions:
            question = self.questions.popleft()
            lines.append(dumps(self._answer_to(question)))
        return lines

    def closing(self) -> list[bytes]:
        """Cancels for every listen stream still open (they never answer on their own)."""
        lines = [self._cancel_line(request_id) for request_id in self.listens]
        self.listens.clear()
        return lines

    def saw(self, message: dict[str, Any]) -> None:
        """Feed each message the server wrote: questions to answer, rounds to retry."""
        if "method" in message:
            if "id" in message:
                self.questions.append(message)
            return
        known = self.ledger.answered(message)
        result = message.get("result")
        if (
            known is not None
            and known.method is not None
            and known.params is not None
            and isinstance(result, dict)
            and result.get("resultType") == "input_required"
        ):
            self.rounds.append((known.method, known.params, result))

    # -------------------------------------------------------------- builders

    def _new_id(self) -> int | str:
        number = next(self._ids)
        roll = self.rng.random()
        if roll < 0.6:
            return number
        if roll < 0.9:
            return f"r{number}"
        # The same digits as an earlier integer id: a different request ("7" is not 7).
        earlier = [item for item in self.recent if isinstance(item, int)]
        candidate = str(self.rng.choice(earlier)) if earlier else f"s{number}"
        return candidate if key_of(candidate) not in self.ledger.expected else f"s{number}"

    def _request(
        self, method: str, params: dict[str, Any] | None, *, low: int = 1, high: int = 1, track: bool = False
    ) -> list[bytes]:
        request_id = self._new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        line = self._encode(message)
        if line is None:
            return []
        if depth_of(message) > MAX_DEPTH:
            return [line]  # refused whole, with id null: no answer to this id
        if method == "subscriptions/listen":
            low = 0  # a granted listen stream is never answered: only a cancel ends it
            self.listens.append(request_id)
        keep = track and isinstance(params, dict) and "_meta" in params
        self.ledger.expect(request_id, low, high, line, method if keep else None, params if keep else None)
        self.recent.append(request_id)
        return [line]

    def _encode(self, message: Any) -> bytes | None:
        line = dumps(message)
        if len(line) > self.max_line:
            return None  # oversized lines are made on purpose by _garbage, with their own expectation
        return line

    def _method_and_params(self) -> tuple[str, dict[str, Any]]:
        modern = self.rng.random() < 0.5 or not self.initialized
        methods = MODERN_METHODS if modern else LEGACY_METHODS
        method = self.rng.choice(methods)
        params = BUILDERS.get(method, _empty)(self)
        if modern:
            params = self._modern(params)
        elif self.rng.random() < 0.1:
            params["_meta"] = {"progressToken": self._token()}
        return method, params

    def _modern(self, params: dict[str, Any]) -> dict[str, Any]:
        meta: dict[str, Any] = {
            M.PROTOCOL_VERSION: MODERN if self.rng.random() < 0.95 else self.rng.choice(("2025-11-25", "2099-01-01")),
            M.CLIENT_CAPABILITIES: self.capabilities(),
        }
        if self.rng.random() < 0.7:
            meta[M.CLIENT_INFO] = {"name": "fuzzer", "version": "1"}
        if self.rng.random() < 0.3:
            meta[M.LOG_LEVEL] = self.rng.choice(LEVELS)
        if self.rng.random() < 0.2:
            meta["progressToken"] = self._token()
        return {**params, "_meta": meta}

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.rng.random() < 0.6:
            caps["elicitation"] = self.rng.choice(({}, {"form": {}}, {"url": {}}, {"form": {}, "url": {}}))
        if self.rng.random() < 0.5:
            caps["roots"] = self.rng.choice(({}, {"listChanged": True}))
        if self.rng.random() < 0.5:
            caps["sampling"] = self.rng.choice(({}, {"tools": {}}))
        return caps

    def _token(self) -> int | str:
        return self.rng.choice((next(self._ids), f"t{next(self._ids)}"))

    # ------------------------------------------------------------ frame kinds

    def _good_request(self) -> list[bytes]:
        method, params = self._method_and_params()
        return self._request(method, params, track=method in MRTR_METHODS)

    def _mutated_request(self) -> list[bytes]:
        method, params = self._method_and_params()
        for _ in range(self.rng.choice((1, 1, 1, 2, 3))):
            self._mutate(params)
        return self._request(method, params, track=method in MRTR_METHODS)

    def _retry_round(self) -> list[bytes]:
        if not self.rounds:
            return self._good_request()
        method, params, result = self.rng.choice(self.rounds)
        params = copy.deepcopy(params)  # mutations below must not reach the stored original
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        requests = result.get("inputRequests")
        if isinstance(requests, dict):
            retry["inputResponses"] = {
                key: self._answer_body(question if isinstance(question, dict) else {})
                for key, question in requests.items()
            }
        state = result.get("requestState")
        if isinstance(state, str):
            roll = self.rng.random()
            if roll < 0.7:
                retry["requestState"] = state
            elif roll < 0.8:
                retry["requestState"] = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
            elif roll < 0.9:
                retry["requestState"] = state + "="
            else:
                retry["arguments"] = {"changed": self.value(2)}  # the state is bound to the old arguments
                retry["requestState"] = state
        if self.rng.random() < 0.3:
            self._mutate(retry)
        return self._request(method, retry, track=True)

    def _envelope(self) -> list[bytes]:
        """A request with the envelope itself broken; the answer (if any) follows the JSON-RPC rules."""
        request_id = self._new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
        choice = self.rng.randrange(9)
        if choice == 0:
            message["jsonrpc"] = self.rng.choice(("1.0", 2.0, None, [], {}, ""))
        elif choice == 1:
            message["id"] = self.rng.choice((1.5, True, False, None, [], {}, [1], {"a": 1}, -0.0))
        elif choice == 2:
            message["method"] = self.value(1)
        elif choice == 3:
            message["params"] = self.rng.choice(([], "x", 3, True, [1, 2], 1.5))
        elif choice == 4:
            del message["jsonrpc"]
        elif choice == 5:
            message["result"] = {}
            del message["method"]
        elif choice == 6:
            message["error"] = self.value(2)
            del message["method"]
        elif choice == 7:
            message.update({"result": {}, "error": {"code": 1, "message": "x"}})
        else:
            message[self.rng.choice(("extra", "ID", "Method", ""))] = self.value(2)
        line = self._encode(message)
        if line is None:
            return []
        valid_id = type(message.get("id")) in (int, str)
        if valid_id and depth_of(message) <= MAX_DEPTH:
            self.ledger.expect(message["id"], 0, 1, line)
            self.recent.append(message["id"])
        return [line]

    def _notification(self) -> list[bytes]:
        modern = self.rng.random() < 0.3
        method = self.rng.choice(NOTIFICATIONS)
        params: dict[str, Any] = NOTIFICATION_BUILDERS.get(method, _empty)(self)
        if modern:
            params = self._modern(params)
        if self.rng.random() < 0.6:
            self._mutate(params)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params or self.rng.random() < 0.5:
            message["params"] = params
        line = self._encode(message)
        return [] if line is None else [line]

    def _cancel(self) -> list[bytes]:
        if self.recent and self.rng.random() < 0.8:
            target: Any = self.rng.choice(self.recent)
        else:
            target = self.value(1)
        return [self._cancel_line(target)]

    def _cancel_line(self, target: Any) -> bytes:
        self.ledger.loosen(target)
        params: dict[str, Any] = {"requestId": target}
        if self.rng.random() < 0.5:
            params["reason"] = self.rng.choice(("fuzz", self.value(1)))
        return dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})

    def _stray_response(self) -> list[bytes]:
        request_id = self.rng.choice((self.rng.randrange(1, 10_000), f"x{self.rng.randrange(1000)}", None, 1.5))
        if self.rng.random() < 0.5:
            body: dict[str, Any] = {"result": self.rng.choice(({}, self.value(2), {"roots": self.value(1)}))}
        else:
            body = {"error": self.rng.choice(({"code": -32000, "message": "no"}, self.value(2), "x"))}
        return [dumps({"jsonrpc": "2.0", "id": request_id, **body})]

    def _duplicate(self) -> list[bytes]:
        """Two requests with the same id in a row: each is answered once (the second may be refused)."""
        method, params = self._method_and_params()
        request_id = self._new_id()
        line = self._encode({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        if line is None or method == "subscriptions/listen" or depth_of(params) >= MAX_DEPTH:
            return []
        self.ledger.expect(request_id, 1, 1, line)
        self.ledger.expect(request_id, 0, 1, line)
        self.recent.append(request_id)
        return [line, line]

    def _garbage(self) -> list[bytes]:
        """Lines that are no JSON-RPC message at all; each is refused with id null or dropped."""
        choice = self.rng.randrange(10)
        if choice == 0:
            return [b"{not json"]
        if choice == 1:
            return [b'"\\ud800"']  # a lone surrogate
        if choice == 2:
            return [b"\xff\xfe{}"]
        if choice == 3:
            return [dumps(self.rng.choice((1, "x", None, True, 1.5)))]
        if choice == 4:
            return [dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])]
        if choice == 5:
            return [b"   \t  "]
        if choice == 6:
            return [b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}']
        if choice == 7 and self.huge and self.rng.random() < 0.1:
            return [b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"' + b"a" * self.max_line + b'"}}']
        if choice == 8:
            return [b'{"jsonrpc":"2.0","jsonrpc":"1.0","id":"dupkey","method":"ping"}'[: self.rng.randrange(10, 60)]]
        return [dumps({"jsonrpc": "2.0"})]

    def _deep(self) -> list[bytes]:
        """Nesting on both sides of the decoder's limit: accepted below it, -32700 above."""
        request_id = self._new_id()
        depth = self.rng.choice((50, MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, 1000, 5000))
        where = self.rng.randrange(3)
        if where == 0:
            return [deep_json(depth).encode()]
        body = deep_json(depth, '"leaf"')
        head = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},'
        if where == 1:
            text = head + f'"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{body}}}}}}}'
        else:
            meta = json.dumps({M.PROTOCOL_VERSION: MODERN, M.CLIENT_CAPABILITIES: {}})
            text = head + f'"method":"tools/list","params":{{"_meta":{meta},"x":{body}}}}}'
        line = text.encode()
        if depth + (3 if where == 1 else 2) <= MAX_DEPTH:  # the levels above the value: message, params(, arguments)
            self.ledger.expect(request_id, 1, 1, line)  # under the limit: an ordinary request
            self.recent.append(request_id)
        return [line]

    def _listen_then_cancel(self) -> list[bytes]:
        lines = self._request("subscriptions/listen", self._modern(build_listen(self)))
        if self.listens and self.rng.random() < 0.5:
            lines.append(self._cancel_line(self.listens.pop(0)))
        return lines

    # -------------------------------------------------------------- mutation

    def _mutate(self, params: dict[str, Any]) -> None:
        """Change one place of ``params``: a value of another JSON type, a key removed or added."""
        places = list(_places(params, self.meta_types))
        container, key = self.rng.choice(places)
        roll = self.rng.random()
        if key is None or roll < 0.15:
            if isinstance(container, dict):
                container[self.string(8)] = self.value(3)
            else:
                container.append(self.value(2))
        elif roll < 0.3:
            del container[key]
        else:
            container[key] = self.value(4)

    def value(self, depth: int = 3) -> Any:
        """Any JSON value: every type, sometimes nested, large or odd."""
        roll = self.rng.randrange(14 if depth > 0 else 10)
        if roll == 0:
            return None
        if roll == 1:
            return self.rng.random() < 0.5
        if roll == 2:
            return self.rng.choice((0, 1, -1, 2**31, -(2**63), 2**64, 10**30, 7))
        if roll == 3:
            return self.rng.choice((0.0, -0.0, 1.5, 1e308, -1e-300, 3.0))
        if roll in (4, 5, 6):
            return self.string()
        if roll == 7:
            return self.rng.choice(UNUSUAL)
        if roll == 8:
            return self.rng.choice(LEVELS + TOOLS + PROMPTS + TEMPLATES + (MODERN, LEGACY))
        if roll == 9:
            return self.huge_string() if self.huge else self.string()
        if roll in (10, 11):
            return [self.value(depth - 1) for _ in range(self.rng.randrange(4))]
        if roll == 12:
            return {self.string(6): self.value(depth - 1) for _ in range(self.rng.randrange(4))}
        return json.loads(deep_json(self.rng.choice((10, 40, 90))))

    def string(self, length: int | None = None) -> str:
        size = self.rng.randrange(12) if length is None else length
        if self.rng.random() < 0.7:
            return "".join(self.rng.choices(string.ascii_letters + string.digits + "/:?#&=%{}.", k=size))
        return "".join(chr(self.rng.choice(_CODEPOINTS)) for _ in range(size))

    def huge_string(self) -> str:
        size = self.rng.choice((4096, 65536, self.huge_bytes))
        return self.rng.choice(("x", "é", "\U0001f600", "{", "%")) * (size // 4)

    # -------------------------------------------------------------- answers

    def _answer_to(self, question: dict[str, Any]) -> dict[str, Any]:
        request_id = question.get("id")
        roll = self.rng.random()
        if roll < 0.1:
            # Only well-formed refusals: the server passes a client's error on to the call that asked,
            # and a malformed one reads as -32603, which the ledger (rightly) reports.
            error = {"code": self.rng.choice((-32601, -32602, -32600)), "message": "no"}
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        if roll < 0.15:
            return {"jsonrpc": "2.0", "id": request_id, "result": self.value(2)}
        return {"jsonrpc": "2.0", "id": request_id, "result": self._answer_body(question)}

    def _answer_body(self, question: dict[str, Any]) -> Any:
        method = question.get("method")
        if method == "elicitation/create":
            body: dict[str, Any] = self.rng.choice(
                (
                    {"action": "accept", "content": {"name": "Ada", "age": 36}},
                    {"action": "accept", "content": {"name": "Ada"}},
                    {"action": "decline"},
                    {"action": "cancel"},
                )
            )
            body = json.loads(json.dumps(body))
        elif method == "roots/list":
            body = {"roots": [{"uri": self.rng.choice(ROOT_URIS), "name": "fuzz"}]}
        elif method == "sampling/createMessage":
            body = {
                "role": "assistant",
                "content": {"type": "text", "text": "hi"},
                "model": "m",
                "stopReason": "endTurn",
            }
        else:
            body = {}
        if self.rng.random() < 0.4:
            self._mutate(body)
        return body


#: Roots a client may claim: a plain one, and the kinds that name no local directory.
ROOT_URIS = (
    "file:///tmp/fuzz-root",
    "file:///tmp/fuzz-root",
    "file:///tmp/%00nul",
    "\u202e\x00",
    "relative/path",
    "file://remote.example/share",
    "file://[::1/x",
    "https://example.com/",
    "",
)
_CODEPOINTS = [*range(0x20, 0x7F), *range(0xA0, 0x300), 0x0, 0x7, 0x1B, 0x200B, 0x202E, 0xFEFF, 0x1F600, 0x10FFFF]


def _places(value: Any, meta_types: bool) -> Any:
    """Every (container, key) of a JSON value, the root as (value, None)."""
    yield value, None
    stack = [value]
    while stack:
        current = stack.pop()
        items = current.items() if isinstance(current, dict) else enumerate(current)
        for key, item in list(items):
            if key == "_meta" and not meta_types:
                yield from _meta_places(item)
                continue
            yield current, key
            if isinstance(item, dict | list):
                stack.append(item)


def _meta_places(meta: Any) -> Any:
    """Without ``meta_types``: only ``progressToken``, which the session checked from the start."""
    if isinstance(meta, dict) and "progressToken" in meta:
        yield meta, "progressToken"


# ------------------------------------------------------------------ params of each method


def _empty(maker: FrameMaker) -> dict[str, Any]:
    return {}


def build_initialize(maker: FrameMaker) -> dict[str, Any]:
    return {
        "protocolVersion": maker.rng.choice((LEGACY, "2025-03-26", MODERN, "1999-01-01")),
        "capabilities": maker.capabilities(),
        "clientInfo": {"name": "fuzzer", "version": "1"},
    }


def build_list(maker: FrameMaker, method: str) -> dict[str, Any]:
    if maker.rng.random() < 0.5:
        return {}
    kind = LIST_KINDS[method] if maker.rng.random() < 0.7 else maker.rng.choice(list(LIST_KINDS.values()))
    offset = maker.rng.choice(("2", "4", "0", "-1", "x", "99999999999999999999999", "2.5", ""))
    cursor = base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode()
    return {"cursor": cursor if maker.rng.random() < 0.8 else maker.string()}


def build_call(maker: FrameMaker) -> dict[str, Any]:
    name = maker.rng.choice(TOOLS) if maker.rng.random() < 0.9 else maker.string()
    arguments: dict[str, Any] = {
        "echo": lambda: {"text": maker.string()},
        "add": lambda: {"a": maker.rng.randrange(-100, 100), "b": maker.rng.randrange(100)},
        "shapes": lambda: {"items": [1, 2], "table": {"a": 1.5}, "flag": True, "pick": "y"},
        "chatty": lambda: {"level": maker.rng.choice(LEVELS), "steps": maker.rng.randrange(4)},
    }.get(name, dict)()
    return {"name": name, "arguments": arguments}


def build_get_prompt(maker: FrameMaker) -> dict[str, Any]:
    name = maker.rng.choice(PROMPTS)
    arguments = {"name": "apple", "style": "warm"} if name == "greet" else {"topic": maker.string()}
    return {"name": name, "arguments": arguments}


def build_uri(maker: FrameMaker) -> dict[str, Any]:
    uri = maker.rng.choice(
        (
            "fuzz://static/a",
            "fuzz://static/c",
            f"fuzz://items/{maker.string()}",
            "fuzz://files/a/b/c.txt",
            "fuzz://search?q=x&limit=3",
            "fuzz://search",
            "fuzz://asks/topic",
            "fuzz://nope",
            maker.string(),
        )
    )
    return {"uri": uri}


def build_complete(maker: FrameMaker) -> dict[str, Any]:
    if maker.rng.random() < 0.5:
        ref: dict[str, Any] = {"type": "ref/prompt", "name": maker.rng.choice(PROMPTS)}
        argument = maker.rng.choice(("name", "style", "topic", "nope"))
    else:
        ref = {"type": "ref/resource", "uri": maker.rng.choice((*TEMPLATES, "fuzz://static/a", "fuzz://nope"))}
        argument = maker.rng.choice(("id", "path", "q", "nope"))
    params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": maker.string(2)}}
    if maker.rng.random() < 0.5:
        params["context"] = {"arguments": {"style": "x"}}
    return params


def build_set_level(maker: FrameMaker) -> dict[str, Any]:
    return {"level": maker.rng.choice(LEVELS)}


def build_listen(maker: FrameMaker) -> dict[str, Any]:
    filters: dict[str, Any] = {
        "toolsListChanged": maker.rng.random() < 0.5,
        "promptsListChanged": maker.rng.random() < 0.5,
    }
    if maker.rng.random() < 0.5:
        filters["resourceSubscriptions"] = ["fuzz://static/a"]
    return {"notifications": filters}


def build_task(maker: FrameMaker) -> dict[str, Any]:
    return {"taskId": maker.string()}


BUILDERS: dict[str, Callable[[FrameMaker], dict[str, Any]]] = {
    "initialize": build_initialize,
    "tools/call": build_call,
    "prompts/get": build_get_prompt,
    "resources/read": build_uri,
    "resources/subscribe": build_uri,
    "resources/unsubscribe": build_uri,
    "completion/complete": build_complete,
    "logging/setLevel": build_set_level,
    "subscriptions/listen": build_listen,
    "tasks/get": build_task,
    "tasks/result": build_task,
    "tasks/cancel": build_task,
    **{method: (lambda maker, method=method: build_list(maker, method)) for method in LIST_KINDS},
}

_COMMON_METHODS = (
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
    "tasks/get",
    "tasks/list",
    "no/such/method",
    "",
)
#: Every client-to-server method of each era, plus the other era's and unknown ones (-32601).
LEGACY_METHODS = (
    *_COMMON_METHODS,
    "ping",
    "initialize",
    "resources/subscribe",
    "resources/unsubscribe",
    "logging/setLevel",
    "server/discover",
    "elicitation/create",
    "sampling/createMessage",
    "roots/list",
)
MODERN_METHODS = (
    *_COMMON_METHODS,
    "server/discover",
    "subscriptions/listen",
    "ping",
    "initialize",
    "logging/setLevel",
    "resources/subscribe",
)

NOTIFICATIONS = (
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/message",
    "notifications/elicitation/complete",
    "notifications/tasks/status",
    "notifications/unknown",
)
NOTIFICATION_BUILDERS: dict[str, Callable[[FrameMaker], dict[str, Any]]] = {
    "notifications/cancelled": lambda maker: {"requestId": maker.rng.randrange(1, 100), "reason": "fuzz"},
    "notifications/progress": lambda maker: {"progressToken": maker.rng.randrange(1, 100), "progress": 1},
    "notifications/message": lambda maker: {"level": "info", "data": maker.value(2)},
    "notifications/elicitation/complete": lambda maker: {"elicitationId": maker.string()},
}
