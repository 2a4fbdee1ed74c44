"""Logging over the wire (issue #6; chapter 18.7), both eras: levels, the server's default,
the stateless era's per-request level, ``data`` and ``logger``, ``ClientLogHandler``,
redaction, and rate limits on both sides. Each test names its CHAPTER-FEATURES lines.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import tracemalloc
from typing import Any

import pytest
from _lifecycle_harness import ERAS, run, serving, settle

from backchannel.redaction.redaction import DEFAULT_KEYS, Redactor
from backchannel.server import Context, Server
from backchannel.server.log_handler import ClientLogHandler
from backchannel.testing import FakeClock
from backchannel.types import meta as M
from backchannel.types.errors import INVALID_PARAMS, RequestError

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def chatty_server(**options: Any) -> Server:
    """A server whose ``chatty`` tool logs once at each of the eight levels."""
    server = Server("logging", **options)

    @server.tool()
    async def chatty(tag: str, ctx: Context) -> str:
        for level in LEVELS:
            await ctx.log(level, {"tag": tag, "level": level}, logger="chatty")
        return tag

    return server


class Logs:
    """An ``on_log`` that keeps what it is given."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, params: dict[str, Any]) -> None:
        self.messages.append(params)

    def levels(self, tag: str | None = None) -> list[str]:
        return [
            m["level"]
            for m in self.messages
            if tag is None or (isinstance(m.get("data"), dict) and m["data"].get("tag") == tag)
        ]


# --------------------------------------------------------------------- levels


@pytest.mark.parametrize("era", ERAS)
def test_set_level_thresholds_for_all_eight_levels_lg02_lg03(era: str) -> None:
    """LG-02, LG-03: at each of the 8 RFC 5424 levels, exactly that level and those above arrive.
    Handshake era: ``logging/setLevel``. Stateless era: the level rides in each request's ``_meta``."""
    server = chatty_server(log_level=None)

    async def main() -> None:
        logs = Logs()
        async with serving(server, era, on_log=logs) as (client, _, wire):
            for rank, level in enumerate(LEVELS):
                await client.set_logging_level(level)  # type: ignore[arg-type]
                await client.call_tool("chatty", {"tag": level})
                assert logs.levels(level) == list(LEVELS[rank:]), level
                call = wire.tool_calls_received("chatty")[-1]
                if era == "stateless":
                    assert call["params"]["_meta"][M.LOG_LEVEL] == level
                else:
                    assert M.LOG_LEVEL not in (call["params"].get("_meta") or {})
            set_level = [m["params"]["level"] for m in wire.received if m.get("method") == "logging/setLevel"]
            assert set_level == (list(LEVELS) if era == "handshake" else [])
            assert {m["logger"] for m in logs.messages} == {"chatty"}

    run(main)


def test_server_default_level_applies_until_set_level_lg04() -> None:
    """LG-04: with no ``setLevel`` yet, the server's configured default decides."""
    server = chatty_server(log_level="warning")

    async def main() -> None:
        logs = Logs()
        async with serving(server, "handshake", on_log=logs) as (client, _, _wire):
            await client.call_tool("chatty", {"tag": "default"})
            assert logs.levels("default") == ["warning", "error", "critical", "alert", "emergency"]
            await client.set_logging_level("debug")
            await client.call_tool("chatty", {"tag": "debug"})
            assert logs.levels("debug") == list(LEVELS)

    run(main)


def test_default_level_none_sends_nothing_until_set_level_lg04() -> None:
    """LG-04: ``Server(log_level=None)``: silent until the client asks."""
    server = chatty_server(log_level=None)

    async def main() -> None:
        logs = Logs()
        async with serving(server, "handshake", on_log=logs) as (client, _, wire):
            await client.call_tool("chatty", {"tag": "quiet"})
            assert wire.notifications_written("notifications/message") == []
            await client.set_logging_level("error")
            await client.call_tool("chatty", {"tag": "loud"})
            assert logs.levels() == ["error", "critical", "alert", "emergency"]

    run(main)


def test_set_level_is_per_session_lg03() -> None:
    """LG-03: one session's ``setLevel`` does not change another's."""
    server = chatty_server(log_level="error")

    async def main() -> None:
        quiet, loud = Logs(), Logs()
        async with (
            serving(server, "handshake", on_log=quiet) as (first, _, _w1),
            serving(server, "handshake", on_log=loud) as (second, _, _w2),
        ):
            await second.set_logging_level("debug")
            await first.call_tool("chatty", {"tag": "a"})
            await second.call_tool("chatty", {"tag": "b"})
            assert quiet.levels() == ["error", "critical", "alert", "emergency"]
            assert loud.levels() == list(LEVELS)

    run(main)


def test_stateless_era_without_a_level_sends_no_log_messages_lg04() -> None:
    """LG-04 (reversed in the stateless era): no ``logLevel`` in ``_meta`` means no log
    messages, whatever the server's default."""
    server = chatty_server(log_level="debug")

    async def main() -> None:
        logs = Logs()
        async with serving(server, "stateless", on_log=logs) as (client, _, wire):
            await client.call_tool("chatty", {"tag": "none"})
            assert M.LOG_LEVEL not in wire.tool_calls_received("chatty")[0]["params"]["_meta"]
            assert wire.notifications_written("notifications/message") == []
            assert logs.messages == []
            await client.set_logging_level("alert")
            await client.call_tool("chatty", {"tag": "some"})
            assert logs.levels() == ["alert", "emergency"]

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_invalid_level_is_refused_lg05(era: str) -> None:
    """LG-05: an invalid level gets -32602 (``logging/setLevel``, or the request carrying it in
    ``_meta``); the client refuses one locally before sending anything."""
    server = chatty_server()

    async def main() -> None:
        async with serving(server, era) as (client, _, wire):
            before = len(wire.received)
            with pytest.raises(ValueError, match="unknown log level"):
                await client.set_logging_level("loud")  # type: ignore[arg-type]
            assert len(wire.received) == before
            if era == "handshake":
                with pytest.raises(RequestError) as caught:
                    await client.request("logging/setLevel", {"level": "loud"})
            else:
                client.session.log_level = "loud"  # what a careless client would put in _meta
                with pytest.raises(RequestError) as caught:
                    await client.call_tool("chatty", {"tag": "x"})
                client.session.log_level = None
            assert caught.value.code == INVALID_PARAMS
            assert wire.notifications_written("notifications/message") == []

    run(main)


@pytest.mark.parametrize("era", ERAS)
def test_logging_capability_is_declared_lg01(era: str) -> None:
    """LG-01: a server that sends log messages declares ``logging``."""

    async def main() -> None:
        async with serving(chatty_server(), era) as (client, _, _wire):
            assert "logging" in client.server_capabilities

    run(main)


# ------------------------------------------------------------- data and logger


@pytest.mark.parametrize("era", ERAS)
def test_data_is_any_json_value_and_logger_is_optional_lg08_lg09(era: str) -> None:
    """LG-08, LG-09: ``data`` may be an object, array, string, number, boolean or null;
    ``logger`` is sent only when given."""
    server = Server("logging", log_level="debug", log_redactor=None)
    values: list[Any] = [
        {"error": "Connection failed", "details": {"host": "localhost", "port": 5432, "attempt": 3}},
        [1, "two", None, {"three": 3.0}],
        "plain text",
        42,
        2.5,
        True,
        None,
    ]
    problems: list[str] = []

    @server.tool()
    async def kinds(ctx: Context) -> str:
        for i, value in enumerate(values):
            await ctx.log("error" if i == 0 else "info", value, logger="database" if i == 0 else None)
        try:
            await ctx.log("verbose", "no such level")
        except ValueError as exc:
            problems.append(str(exc))
        return "ok"

    async def main() -> None:
        logs = Logs()
        async with serving(server, era, on_log=logs) as (client, _, wire):
            await client.set_logging_level("debug")
            await client.call_tool("kinds")
            assert [m["data"] for m in logs.messages] == values
            assert logs.messages[0] == {"level": "error", "logger": "database", "data": values[0]}
            assert all("logger" not in m for m in logs.messages[1:])
            assert len(wire.notifications_written("notifications/message")) == len(values)
            assert problems and "unknown log level 'verbose'" in problems[0]

    run(main)


# ----------------------------------------------------------- ClientLogHandler


@pytest.mark.parametrize("era", ERAS)
def test_client_log_handler_forwards_to_the_requesting_client_only_lg03_lg09(era: str) -> None:
    """LG-03, LG-09: Python logging inside a handler goes to the client whose request is running,
    even with two clients' calls in flight at once; levels map onto RFC 5424, the logger name
    is kept, the text is redacted, and a record logged outside any handler is ignored."""
    server = Server("logging", log_level="debug")
    app_log = logging.getLogger("lifecycle.app")
    handler = ClientLogHandler()
    both_running = asyncio.Event()
    running = 0

    @server.tool()
    async def work(tag: str) -> str:
        nonlocal running
        running += 1
        if running == 2:
            both_running.set()
        await both_running.wait()
        app_log.warning("working on %s", tag)
        app_log.debug("detail for %s", tag)
        await asyncio.sleep(0)  # a yield, not a wait: the other call's logs interleave with these
        app_log.error("%s failed; mail ops@example.com", tag)
        return tag

    async def main() -> None:
        logs_a, logs_b = Logs(), Logs()
        async with (
            serving(server, era, on_log=logs_a) as (a, _, _wa),
            serving(server, era, on_log=logs_b) as (b, _, _wb),
        ):
            await a.set_logging_level("info")
            await b.set_logging_level("debug")
            app_log.warning("nobody's request")  # outside a handler: ignored
            await asyncio.gather(a.call_tool("work", {"tag": "A"}), b.call_tool("work", {"tag": "B"}))
            assert logs_a.messages == [
                {"level": "warning", "logger": "lifecycle.app", "data": {"message": "working on A"}},
                {"level": "error", "logger": "lifecycle.app", "data": {"message": "A failed; mail [REDACTED:email]"}},
            ]
            assert logs_b.messages == [
                {"level": "warning", "logger": "lifecycle.app", "data": {"message": "working on B"}},
                {"level": "debug", "logger": "lifecycle.app", "data": {"message": "detail for B"}},
                {"level": "error", "logger": "lifecycle.app", "data": {"message": "B failed; mail [REDACTED:email]"}},
            ]

    app_log.addHandler(handler)
    app_log.setLevel(logging.DEBUG)
    app_log.propagate = False
    try:
        run(main)
    finally:
        app_log.removeHandler(handler)
        app_log.propagate = True
        app_log.setLevel(logging.NOTSET)


# ----------------------------------------------------------------- redaction

SECRETS = {
    "password": "hunter2",
    "Secret": "s3cr3t-value",
    "token": "tok-123",
    "api_key": "key-456",
    "Authorization": "Basic dXNlcjpwYXNz",
    "cookie": "session=abc",
    "X-Api-Key": "key-789",
    "refresh_token": "rt-000",
}


@pytest.mark.parametrize("era", ERAS)
def test_default_redaction_of_keys_and_patterns_lg10_lg15_lg16(era: str) -> None:
    """LG-10, LG-15, LG-16: values under sensitive keys (at any depth, any case) and strings that
    look like bearer tokens, JWTs, e-mail addresses or phone numbers never reach the wire."""
    server = Server("logging", log_level="debug")
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    data = {
        **SECRETS,
        "nested": {"db_password": "pw-nested", "items": [{"session_id": "sid-1"}, "ok"]},
        "header": "Authorization: Bearer abcDEF123456._~+/=",
        "raw": f"token was {jwt}",  # (a key naming a JWT, "raw_jwt", is redacted whole)
        "contact": "write to ada.lovelace@example.com or call +1 (555) 123-4567",
        "safe": "nothing to hide",
        "released": "2025-11-25",
        "count": 3,
    }

    @server.tool()
    async def leak(ctx: Context) -> str:
        await ctx.log("error", data, logger="auth")
        await ctx.log("info", f"user ada@example.com sent Bearer {jwt}")
        return "ok"

    async def main() -> None:
        logs = Logs()
        async with serving(server, era, on_log=logs) as (client, _, wire):
            await client.set_logging_level("debug")
            await client.call_tool("leak")
            first, second = (m["data"] for m in logs.messages)
            for key in SECRETS:
                assert first[key] == "[REDACTED]", key
            assert first["nested"] == {"db_password": "[REDACTED]", "items": [{"session_id": "[REDACTED]"}, "ok"]}
            assert first["header"] == "Authorization: [REDACTED:bearer]"
            assert first["raw"] == "token was [REDACTED:jwt]"
            assert first["contact"] == "write to [REDACTED:email] or call [REDACTED:phone]"
            assert first["safe"] == "nothing to hide"
            assert first["released"] == "2025-11-25"  # a date is not a phone number
            assert first["count"] == 3
            assert second == "user [REDACTED:email] sent [REDACTED:bearer]"
            on_the_wire = json.dumps(wire.written)
            leaked = [
                s
                for s in (*SECRETS.values(), "pw-nested", "sid-1", jwt, "abcDEF123456", "ada", "555")
                if s in on_the_wire
            ]
            assert leaked == []

    run(main)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("bearer", "got bearer abc.DEF-123", "got [REDACTED:bearer]"),
        ("jwt", "jwt eyJabcdefgh.eyJijklmnop.sig-nature_1", "jwt [REDACTED:jwt]"),
        ("email", "from first.last+tag@mail.example.org", "from [REDACTED:email]"),
        ("phone", "phone 555-123-4567", "phone [REDACTED:phone]"),
        ("phone", "phone +44 20 7946 0958", "phone [REDACTED:phone]"),
    ],
)
def test_each_default_pattern_lg15_lg16(pattern: str, text: str, expected: str) -> None:
    """LG-15, LG-16: each default pattern on its own, over the wire."""
    server = Server("logging", log_level="debug")

    @server.tool()
    async def say(ctx: Context) -> str:
        await ctx.info(text)
        return "ok"

    async def main() -> None:
        logs = Logs()
        async with serving(server, on_log=logs) as (client, _, _wire):
            await client.call_tool("say")
            assert [m["data"] for m in logs.messages] == [expected]

    run(main)


def test_custom_redaction_rules_and_no_redaction_lg10() -> None:
    """LG-10: rules are configurable: ``Redactor(keys=..., patterns=...)`` replaces the defaults
    (extend them with ``DEFAULT_KEYS``); ``log_redactor=None`` sends data as it is."""
    card = ("card", r"\b(?:\d{4}[ -]?){3}\d{4}\b")
    data = {"ssn": "123-45-6789", "password": "visible-here", "note": "card 4111 1111 1111 1111"}
    servers = {
        "custom": Server("logging", log_level="debug", log_redactor=Redactor(keys=("ssn",), patterns=(card,))),
        "extended": Server(
            "logging", log_level="debug", log_redactor=Redactor(keys=(*DEFAULT_KEYS, "ssn"), patterns=(card,))
        ),
        "none": Server("logging", log_level="debug", log_redactor=None),
    }
    for server in servers.values():

        @server.tool()
        async def leak(ctx: Context) -> str:
            await ctx.warning(data)
            return "ok"

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for name, server in servers.items():
            logs = Logs()
            async with serving(server, on_log=logs) as (client, _, _wire):
                await client.call_tool("leak")
                [seen[name]] = [m["data"] for m in logs.messages]
        return seen

    seen = run(main)
    assert seen["custom"] == {"ssn": "[REDACTED]", "password": "visible-here", "note": "card [REDACTED:card]"}
    assert seen["extended"] == {"ssn": "[REDACTED]", "password": "[REDACTED]", "note": "card [REDACTED:card]"}
    assert seen["none"] == data


# ---------------------------------------------------------------- rate limits


@pytest.mark.parametrize("era", ERAS)
def test_server_rate_limit_drops_a_burst_and_reports_the_count_lg07_lg18(era: str) -> None:
    """LG-07, LG-18: 10,000 log calls pass at most ``log_burst`` + elapsed x ``log_rate`` (+1);
    a later message reports how many were dropped, and delivered + dropped == 10,000."""
    rate, burst, total = 100.0, 50, 10_000
    clock = FakeClock()
    server = Server("logging", log_level="debug", log_rate=rate, log_burst=burst, clock=clock)

    @server.tool()
    async def flood(ctx: Context) -> dict[str, float]:
        started = clock()
        for i in range(total):
            await ctx.log("info", {"i": i}, logger="flood")
        elapsed = clock() - started
        clock.advance(3 / rate)  # the bucket refills a little
        await ctx.log("notice", "after the flood", logger="flood")
        return {"elapsed": elapsed}

    async def main() -> None:
        logs = Logs()
        async with serving(server, era, on_log=logs, log_rate=1e9, log_burst=10**9) as (client, _, _wire):
            await client.set_logging_level("debug")
            result = await client.call_tool("flood")
            assert result.structured_content is not None
            elapsed = result.structured_content["elapsed"]
            delivered = [m for m in logs.messages if isinstance(m["data"], dict) and "i" in m["data"]]
            assert burst <= len(delivered) <= burst + elapsed * rate + 1
            # Each report rides just ahead of the next message the limit lets through (one
            # during the flood too, if a token came back meanwhile); together they count every drop.
            notes = [i for i, m in enumerate(logs.messages) if m.get("logger") == "backchannel"]
            assert notes
            dropped = 0
            for i in notes:
                note = logs.messages[i]
                assert note["level"] == "warning"
                assert f"{note['data']['dropped']} log messages were dropped" in note["data"]["message"]
                assert logs.messages[i + 1].get("logger") == "flood"
                dropped += note["data"]["dropped"]
            assert len(delivered) + dropped == total
            assert logs.messages[-1] == {"level": "notice", "logger": "flood", "data": "after the flood"}
            assert client.dropped_log_messages == 0  # the client's own limit was not involved

    run(main)


def test_the_rate_limit_is_per_session_lg07() -> None:
    """LG-07: one session's flood does not use up another's allowance."""
    server = Server("logging", log_level="debug", log_rate=10.0, log_burst=20)

    @server.tool()
    async def flood(ctx: Context) -> str:
        for i in range(1000):
            await ctx.debug(i)
        return "ok"

    server.add_tool(_chatty, name="chatty")

    async def main() -> None:
        flooder, bystander = Logs(), Logs()
        async with (
            serving(server, on_log=flooder) as (a, _, _wa),
            serving(server, on_log=bystander) as (b, _, _wb),
        ):
            await a.call_tool("flood")
            await b.call_tool("chatty", {"tag": "b"})
            assert len(flooder.messages) <= 21
            assert bystander.levels("b") == list(LEVELS)

    run(main)


async def _chatty(tag: str, ctx: Context) -> str:
    for level in LEVELS:
        await ctx.log(level, {"tag": tag, "level": level}, logger="chatty")
    return tag


def test_client_survives_a_flood_counts_the_drops_and_keeps_no_messages_lg18() -> None:
    """LG-18 (chapter 18.7.3, the client side): a server sending 10,000 messages as fast as it
    can costs the client a counter, not memory: ``on_log`` sees at most its bucket's allowance,
    ``dropped_log_messages`` counts the rest, and memory does not grow with the flood."""
    total = 10_000
    client_rate, client_burst = 20.0, 100
    server = Server("logging", log_level="debug", log_rate=1e9, log_burst=10**9, log_redactor=None)

    @server.tool()
    async def flood(ctx: Context) -> str:
        for i in range(total):
            await ctx.info({"i": i, "padding": "x" * 100})
        return "ok"

    async def main() -> None:
        delivered = 0

        def on_log(params: dict[str, Any]) -> None:
            nonlocal delivered
            delivered += 1

        options = {"on_log": on_log, "log_rate": client_rate, "log_burst": client_burst}
        async with serving(server, record=False, **options) as (client, _, _wire):
            loop = asyncio.get_running_loop()
            started = loop.time()
            await client.call_tool("flood")
            elapsed = loop.time() - started
            assert client_burst <= delivered <= client_burst + elapsed * client_rate + 1
            assert delivered + client.dropped_log_messages == total
            await settle(client)
            # More floods: memory stays flat (nothing per message is kept).
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                for _ in range(3):
                    await client.call_tool("flood")
                await settle(client)
                gc.collect()
                grown = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
            assert delivered + client.dropped_log_messages == 4 * total
            assert grown < 256 * 1024, f"{grown} bytes kept after {3 * total} messages"

    run(main, timeout=30.0)


def test_a_failing_log_callback_does_not_break_the_connection_lg11() -> None:
    """LG-11: showing logs is the client's business; a bug in it must not end the session."""

    called: list[dict[str, Any]] = []

    def broken(params: dict[str, Any]) -> None:
        called.append(params)
        raise RuntimeError("log callback bug")

    async def main() -> None:
        async with serving(chatty_server(log_level="debug"), on_log=broken) as (client, _, _wire):
            first = await client.call_tool("chatty", {"tag": "x"})
            second = await client.call_tool("chatty", {"tag": "y"})
            assert not first.is_error and not second.is_error
            assert [block.text for block in second.content] == ["y"]  # type: ignore[union-attr]
            await settle(client)
        assert called, "the callback was never given a log message"

    run(main)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("released 2025-11-25", True),
        ("host 192.168.1.10", True),
        ("bytes 1048576000", True),
        ("version v1.2.3", True),
        ("call +49 151 1234 5678", False),
        ("call 555.123.4567", False),
        ("call (030) 1234 5678", False),
        ("call +4915112345678", False),
    ],
)
def test_phone_pattern_spares_dates_ips_and_counts_lg09(text: str, kept: bool) -> None:
    """LG-09: personal data is redacted, but ordinary numbers are not mistaken for phone numbers."""
    assert (Redactor().redact(text) == text) is kept


def test_sensitive_keys_match_words_not_substrings_lg09() -> None:
    """LG-09: secrets under sensitive keys go, in any spelling; look-alike keys stay."""
    redacted = Redactor().redact(
        {"tokens_used": 5, "access_token": "a", "accessToken": "b", "X-Api-Key": "c", "Cookie": "d", "session_id": "e"}
    )
    assert redacted == {
        "tokens_used": 5,
        "access_token": "[REDACTED]",
        "accessToken": "[REDACTED]",
        "X-Api-Key": "[REDACTED]",
        "Cookie": "[REDACTED]",
        "session_id": "[REDACTED]",
    }
