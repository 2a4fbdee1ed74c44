"""The metric instruments: the conventions' request and session durations and backchannel's own.

Every hook here but the request ones starts with :func:`instruments`, which is ``None`` when no
meter provider is configured (``activation.meter()``): a hook costs that one check and nothing
else. The request ones (:func:`request_started`, :func:`request_ended`) are given the meter by
``spans.py``, which has checked already; their in-flight counts are plain integers here, read by
the SDK when it collects (:class:`_InFlight`). The instruments are made the first time a
provider is seen and kept for as long as it is the global one (a new provider gets a new set).
docs/observability.md lists each instrument with its unit and attributes, and says which come
from the conventions and which are ours.
"""

from __future__ import annotations

__all__ = [
    "ACTIVE_SESSIONS",
    "CLIENT_SESSION_DURATION",
    "DROP_REASON",
    "DURATION_BUCKETS",
    "ELICITATION_ACTION",
    "ELICITATION_DURATION",
    "ELICITATION_MODE",
    "ELICITATION_OUTCOMES",
    "ERROR_TYPE",
    "LOGS_DROPPED",
    "PERSON_BUCKETS",
    "SERVER_SESSION_DURATION",
    "SESSION_ATTRIBUTES",
    "InFlightKey",
    "Instruments",
    "SessionClock",
    "elicitation_answered",
    "instruments",
    "log_dropped",
    "request_ended",
    "request_started",
    "session_closed",
    "session_opened",
]

import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import activation
from . import conventions as C
from .propagation import api

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, Counter, Histogram, Meter, Observation, UpDownCounter

# The conventions' names are in conventions.py; these are re-exported for the server's hooks.
SERVER_SESSION_DURATION = C.SERVER_SESSION_DURATION
CLIENT_SESSION_DURATION = C.CLIENT_SESSION_DURATION
DURATION_BUCKETS = C.DURATION_BUCKETS
ERROR_TYPE = C.ERROR_TYPE
#: The connection attributes a session duration may carry: low-cardinality ones only (never the
#: session id or a peer's address, which would make a time series per session).
SESSION_ATTRIBUTES = (
    C.NETWORK_TRANSPORT,
    C.NETWORK_PROTOCOL_NAME,
    C.NETWORK_PROTOCOL_VERSION,
    C.SERVER_ADDRESS,
    C.SERVER_PORT,
)

# --- ours ---------------------------------------------------------------------------------
ACTIVE_SESSIONS = "backchannel.server.sessions.active"
ELICITATION_OUTCOMES = "backchannel.elicitation.outcomes"
ELICITATION_DURATION = "backchannel.elicitation.duration"
LOGS_DROPPED = "backchannel.log.dropped"
#: The conventions (v0.1.0) have no elicitation attributes: these are ours.
ELICITATION_MODE = "backchannel.elicitation.mode"
ELICITATION_ACTION = "backchannel.elicitation.action"
DROP_REASON = "backchannel.log.drop_reason"
#: A person's time: from a second to an hour (the default elicitation timeout is 10 minutes).
PERSON_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
_ACTIONS = frozenset(("accept", "decline", "cancel"))


class Instruments:
    """The instruments of one meter (one meter provider)."""

    __slots__ = (
        "active_sessions",
        "client_session_duration",
        "elicitation_duration",
        "elicitation_outcomes",
        "logs_dropped",
        "server_session_duration",
    )

    def __init__(self, meter: Meter) -> None:
        self.server_session_duration: Histogram = meter.create_histogram(
            SERVER_SESSION_DURATION,
            unit="s",
            description="The duration of the MCP session as observed on the MCP server.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.client_session_duration: Histogram = meter.create_histogram(
            CLIENT_SESSION_DURATION,
            unit="s",
            description="The duration of the MCP session as observed on the MCP client.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.active_sessions: UpDownCounter = meter.create_up_down_counter(
            ACTIVE_SESSIONS, unit="{session}", description="MCP sessions open on this server now."
        )
        self.elicitation_outcomes: Counter = meter.create_counter(
            ELICITATION_OUTCOMES,
            unit="{elicitation}",
            description="Elicitations answered or ended, by mode and by what the person did.",
        )
        self.elicitation_duration: Histogram = meter.create_histogram(
            ELICITATION_DURATION,
            unit="s",
            description="The time a person took over an elicitation: from the question to its outcome.",
            explicit_bucket_boundaries_advisory=PERSON_BUCKETS,
        )
        self.logs_dropped: Counter = meter.create_counter(
            LOGS_DROPPED, unit="{message}", description="Log messages for the client that were not sent."
        )


_cache: tuple[object, Instruments] | None = None


def instruments() -> Instruments | None:
    """The instruments of the configured meter provider, or ``None`` when metrics are off."""
    global _cache
    meter = activation.meter()
    if meter is None:
        return None
    cache = _cache
    if cache is not None and cache[0] is meter:  # activation keeps one meter per provider
        return cache[1]
    made = Instruments(meter)
    _cache = (meter, made)
    return made


class SessionClock:
    """A session being timed: made by :func:`session_opened` only while metrics are on, so a
    session costs nothing more when they are off (it holds ``None`` instead)."""

    __slots__ = ("attributes", "ended", "instruments", "role", "started")

    def __init__(self, instruments: Instruments, role: str, attributes: dict[str, Any]) -> None:
        self.instruments = instruments
        self.role = role
        self.attributes = attributes
        self.started = time.monotonic()
        self.ended = False


def session_opened(role: str, attributes: Mapping[str, Any] | None = None) -> SessionClock | None:
    """A session began (``role``: ``"server"`` or ``"client"``); keep the result and hand it to
    :func:`session_closed` when the session ends. ``None`` when metrics are off.

    ``attributes`` are the connection's (``network.transport``...); on the server side the
    active-session count goes up, by ``network.transport``."""
    found = instruments()
    if found is None:
        return None
    kept = _session_attributes(attributes)
    if role == "server":
        found.active_sessions.add(1, _transport_only(kept))
    return SessionClock(found, role, kept)


def session_closed(
    clock: SessionClock | None,
    *,
    version: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    error_type: str | None = None,
) -> None:
    """The session ``clock`` timed ended: record its duration (with its protocol ``version``
    and ``error_type`` when it ended with one, e.g. ``"timeout"``) and, on the server, count
    it out of the active sessions. ``attributes`` known only by now join those given at open.
    A session is recorded once, however often this is called for it."""
    if clock is None or clock.ended:
        return
    clock.ended = True
    found = clock.instruments  # the provider it was counted in, even if another one is set now
    recorded = dict(clock.attributes)
    recorded.update(_session_attributes(attributes))
    if version is not None:
        recorded[C.MCP_PROTOCOL_VERSION] = version
    if error_type is not None:
        recorded[C.ERROR_TYPE] = error_type
    seconds = time.monotonic() - clock.started
    if clock.role == "server":
        found.active_sessions.add(-1, _transport_only(clock.attributes))
        found.server_session_duration.record(seconds, recorded)
    else:
        found.client_session_duration.record(seconds, recorded)


def elicitation_answered(mode: str, action: Any, seconds: float | None) -> None:
    """An elicitation ended with ``action`` (``accept``/``decline``/``cancel``) after ``seconds``
    (None: the time is not known, only the outcome is counted)."""
    found = instruments()
    # ``action`` is the client's value as sent: a list or an object must not raise here (unhashable).
    if found is None or type(action) is not str or action not in _ACTIONS:
        return
    attributes = {ELICITATION_MODE: mode, ELICITATION_ACTION: action}
    found.elicitation_outcomes.add(1, attributes)
    if seconds is not None:
        found.elicitation_duration.record(max(0.0, seconds), attributes)


def log_dropped(reason: str, count: int = 1) -> None:
    """``count`` log messages for the client were not sent, for ``reason`` (``"rate_limit"``)."""
    found = instruments()
    if found is not None:
        found.logs_dropped.add(count, {DROP_REASON: reason})


def _session_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attributes:
        return {}
    return {key: attributes[key] for key in SESSION_ATTRIBUTES if attributes.get(key) is not None}


def _transport_only(attributes: Mapping[str, Any]) -> dict[str, Any]:
    transport = attributes.get(C.NETWORK_TRANSPORT)
    return {C.NETWORK_TRANSPORT: transport} if transport is not None else {}


# --- the request metrics (telemetry/spans.py records them as each request ends) ---------------

#: A request's key in the in-flight counts: (served: True for the peer's requests, method, tool, prompt).
InFlightKey = tuple[bool, str, "str | None", "str | None"]


def request_started(
    found_meter: Meter, attributes: Mapping[str, Any], *, served: bool
) -> tuple[Histogram, InFlightKey]:
    """A request began, served (the peer's) or sent (ours): counted in flight. Returns the duration
    histogram to give :func:`request_ended`, and the request's in-flight key."""
    histogram = _request_instruments(found_meter)[0 if served else 1]
    return histogram, _IN_FLIGHT.started(attributes, served=served)


def request_ended(
    duration: Histogram, in_flight: InFlightKey | None, seconds: float, attributes: Mapping[str, Any]
) -> None:
    """The request :func:`request_started` counted ended after ``seconds``, with its span's
    ``attributes`` (the duration keeps the low-cardinality ones)."""
    duration.record(seconds, {key: value for key, value in attributes.items() if key in C.METRIC_ATTRIBUTES})
    if in_flight is not None:
        _IN_FLIGHT.ended(in_flight)


class _InFlight:
    """The requests in flight, counted here rather than by an SDK ``UpDownCounter.add`` per start
    and end (7-9 µs each in the SDK: its attributes are checked and hashed every time). The SDK
    reads the counts when it collects, through the observable up-down counters
    ``backchannel.{server,client}.requests.in_flight`` (:func:`_request_instruments`). One count per
    (side, method, tool or prompt), kept at zero once reached: a gauge that went back to 0 says so.
    Requests may start and end on several threads' event loops, and the SDK collects on its own
    thread: a lock keeps the counts exact (an uncontended lock is tens of nanoseconds)."""

    def __init__(self) -> None:
        self.counts: dict[InFlightKey, int] = {}
        self.lock = threading.Lock()

    def started(self, attributes: Mapping[str, Any], *, served: bool) -> InFlightKey:
        key = (
            served,
            attributes[C.MCP_METHOD_NAME],
            attributes.get(C.GEN_AI_TOOL_NAME),
            attributes.get(C.GEN_AI_PROMPT_NAME),
        )
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1
        return key

    def ended(self, key: InFlightKey) -> None:
        with self.lock:
            self.counts[key] -= 1

    def observe(self, served: bool) -> list[Observation]:
        observation = api("opentelemetry.metrics").Observation
        with self.lock:
            counts = [(key, count) for key, count in self.counts.items() if key[0] is served]
        return [observation(count, _in_flight_attributes(key)) for key, count in counts]


def _in_flight_attributes(key: InFlightKey) -> dict[str, Any]:
    _, method, tool, prompt = key
    attributes: dict[str, Any] = {C.MCP_METHOD_NAME: method}
    if tool is not None:
        attributes[C.GEN_AI_TOOL_NAME] = tool
    if prompt is not None:
        attributes[C.GEN_AI_PROMPT_NAME] = prompt
    return attributes


_IN_FLIGHT = _InFlight()


def _served_in_flight(options: CallbackOptions) -> list[Observation]:
    return _IN_FLIGHT.observe(True)


def _awaited_in_flight(options: CallbackOptions) -> list[Observation]:
    return _IN_FLIGHT.observe(False)


_request_cache: tuple[Meter, tuple[Histogram, Histogram]] | None = None


def _request_instruments(found_meter: Meter) -> tuple[Histogram, Histogram]:
    """The request duration histograms (server, client) of ``found_meter``'s provider, made with the
    in-flight gauges the first time it is seen. A provider set later gets its own; the counts are
    the process's, so its gauges report the requests already in flight too."""
    global _request_cache
    cache = _request_cache
    if cache is not None and cache[0] is found_meter:
        return cache[1]
    buckets = list(C.DURATION_BUCKETS)
    made = (
        found_meter.create_histogram(
            C.SERVER_OPERATION_DURATION,
            unit=C.DURATION_UNIT,
            description="The duration of an MCP request as observed by its receiver, read to answer.",
            explicit_bucket_boundaries_advisory=buckets,
        ),
        found_meter.create_histogram(
            C.CLIENT_OPERATION_DURATION,
            unit=C.DURATION_UNIT,
            description="The duration of an MCP request as observed by its sender, sent to answer.",
            explicit_bucket_boundaries_advisory=buckets,
        ),
    )
    found_meter.create_observable_up_down_counter(
        C.SERVER_REQUESTS_IN_FLIGHT, [_served_in_flight], unit="{request}", description="MCP requests being served."
    )
    found_meter.create_observable_up_down_counter(
        C.CLIENT_REQUESTS_IN_FLIGHT,
        [_awaited_in_flight],
        unit="{request}",
        description="MCP requests awaiting their answer.",
    )
    _request_cache = (found_meter, made)
    return made
