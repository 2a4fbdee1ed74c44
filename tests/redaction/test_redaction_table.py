"""Redaction of log messages (issue #12, item 5; LG-09, LG-10, LG-15, LG-16): a secret of a
known kind never reaches the wire, whatever container it sits in, and what is not a secret
stays readable. A table of cases for ``Redactor`` (each checked on its JSON encoding, which
must always succeed), the key rule on its own, and the wire: ``ctx.log`` and
``ClientLogHandler`` over the in-memory transport in both eras and over real stdio.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import json
import logging
import subprocess
import sys
import types
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import pydantic
import pytest
from _redaction_server import KEPT, SECRETS, SIGNED
from _redaction_server import server as fixture_server

from _serving import serving
from backchannel.redaction.redaction import DEFAULT_KEYS, Redactor
from backchannel.server import Context, Server
from backchannel.server.log_handler import ClientLogHandler
from backchannel.testing import run

FIXTURE = Path(__file__).with_name("_redaction_server.py")
ERAS = ("handshake", "stateless")


# ------------------------------------------------------------------ containers used in the table


@dataclasses.dataclass
class Account:
    user: str
    password: str
    inner: Any = None


class Pair(NamedTuple):
    user: str
    token: str


class Config(pydantic.BaseModel):
    name: str
    api_key: str


class Record(msgspec.Struct):
    name: str
    refresh_token: str


class Stored(enum.Enum):
    KEY = "ghp_0123456789abcdefghijABCDEFGHIJ012345"


class Opaque:
    """An object whose only view is its default repr: its attributes must not leak."""

    def __init__(self) -> None:
        self.password = "opaque-attr-1"


class Shown:
    def __str__(self) -> str:
        return "Shown(user=kept-user, api_key=shown-key-2)"


class Broken:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        return "Broken(secret=broken-secret-3)"


class Headers(Mapping[str, str]):
    """A mapping that is not a dict."""

    def __init__(self, **items: str) -> None:
        self._items = items

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


def _cyclic_dict() -> dict[str, Any]:
    data: dict[str, Any] = {"name": "kept-cycle", "password": "cycle-pass-4"}
    data["self"] = data
    return data


def _cyclic_list() -> list[Any]:
    data: list[Any] = ["kept-loop", "token=loop-token-5"]
    data.append(data)
    return data


def _deep(levels: int) -> dict[str, Any]:
    data: dict[str, Any] = {"password": "deep-pass-6", "name": "deep-bottom"}
    for _ in range(levels):
        data = {"next": data}
    return data


GHP = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7\nZ2V0IG91dCBvZiBoZXJl\n-----END RSA PRIVATE KEY-----"

# (input, must not appear in the encoded output, must appear in it)
CASES: list[tuple[str, Any, tuple[str, ...], tuple[str, ...]]] = [
    # --- keys: plural and compound names, any case or separator
    ("plural passwords", {"passwords": ["pw-1a", "pw-1b"], "user": "kept-1"}, ("pw-1a", "pw-1b"), ("kept-1",)),
    ("plural secrets", {"secrets": {"db": "sec-2"}}, ("sec-2",), ("secrets",)),
    ("plural tokens", {"tokens": ["tok-3"]}, ("tok-3",), ()),
    ("plural credentials", {"credentials": {"user": "u", "pw": "cred-4"}}, ("cred-4",), ()),
    ("plural cookies", {"cookies": "sid=cookie-5"}, ("cookie-5",), ()),
    ("aws_access_key_id", {"aws_access_key_id": "AKIDEXAMPLE6"}, ("AKIDEXAMPLE6",), ()),
    ("ssh_key", {"ssh_key": "ssh-ed25519 AAAAkey7"}, ("AAAAkey7",), ()),
    ("signing_key", {"signing_key": "signing-8"}, ("signing-8",), ()),
    ("card_number", {"card_number": "4111111111111111"}, ("4111111111111111",), ()),
    ("cvv as a number", {"cvv": 737}, ("737",), ()),
    ("otp", {"otp": "913245"}, ("913245",), ()),
    ("pin as a number", {"pin": 8642}, ("8642",), ()),
    ("ssn", {"ssn": "078-05-1120"}, ("078-05-1120",), ()),
    ("client_secret", {"client_secret": "cs-9"}, ("cs-9",), ()),
    ("refresh_token", {"refresh_token": "rt-10"}, ("rt-10",), ()),
    ("private_key", {"private_key": "pk-11"}, ("pk-11",), ()),
    ("x-api-key header", {"X-Api-Key": "xk-12"}, ("xk-12",), ()),
    ("set-cookie header", {"Set-Cookie": "sid=sc-13; Path=/"}, ("sc-13",), ()),
    (
        "camelCase",
        {"accessToken": "at-14", "dbPassword": "dbp-15", "APIKey": "ak-16"},
        ("at-14", "dbp-15", "ak-16"),
        (),
    ),
    (
        "run-together",
        {"apikey": "ak-17", "authtoken": "at-18", "userpassword": "up-19"},
        ("ak-17", "at-18", "up-19"),
        (),
    ),
    ("value of any type", {"secret": {"nested": ["s-20"]}, "token": 12345678}, ("s-20", "12345678"), ()),
    ("None and booleans tell nothing", {"password": None, "secret": True}, (), ("null", "true")),
    # --- keys that are not secrets stay readable
    (
        "counters and look-alikes",
        {
            "tokens_used": 501,
            "token_count": 502,
            "max_tokens": 503,
            "input_tokens": 504,
            "cache_read_input_tokens": 505,
            "passwordless_enabled": "ple-506",
            "pinned": "pinned-507",
            "spinner": "spin-508",
            "options": "opt-509",
            "shipping": "ship-510",
            "progressToken": "pt-511",
            "token_type": "Bearer",
            "sort_key": "sort-512",
        },
        (),
        (
            "501",
            "502",
            "503",
            "504",
            "505",
            "ple-506",
            "pinned-507",
            "spin-508",
            "opt-509",
            "ship-510",
            "pt-511",
            "sort-512",
        ),
    ),
    # --- values recognisable on their own
    ("basic header", "Authorization: Basic dXNlcjpwYXNz", ("dXNlcjpwYXNz",), ("Authorization",)),
    ("basic in prose", "sent Basic dXNlcjpwYXNz upstream", ("dXNlcjpwYXNz",), ("upstream",)),
    ("the word basic", "a basic example of Basic usage", (), ("a basic example of Basic usage",)),
    ("url credentials", "https://ada:pa55-w0rd@db.example.com/app", ("pa55-w0rd",), ("db.example.com/app",)),
    ("url with a port is not credentials", "http://host.internal:8080/path?x=1", (), ("host.internal:8080/path",)),
    (
        "aws key id",
        "key AKIAIOSFODNN7EXAMPLE then ASIAY34FZKBOKMUTVV7A",
        ("AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A"),
        (),
    ),
    (
        "aws secret key",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY region=eu",
        ("wJalrXUtnFEMI",),
        ("region=eu",),
    ),
    ("github classic", f"pushed with {GHP}", (GHP[4:],), ("pushed with",)),
    (
        "github other kinds",
        "gho_0123456789abcdefghijABCDEFGHIJ012345 ghu_0123456789abcdefghijABCDEFGHIJ012345 "
        "ghs_0123456789abcdefghijABCDEFGHIJ012345 ghr_0123456789abcdefghijABCDEFGHIJ012345 "
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        ("0123456789abcdefghij", "abcdefghijklmnop"),
        (),
    ),
    (
        "slack",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKl xoxp-1234567890-abcdefghij xapp-1-A0123-456-abcdef "
        "https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX",
        ("AbCdEfGhIjKl", "abcdefghij", "456-abcdef", "XXXXsecretXXXX"),
        (),
    ),
    (
        "stripe",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_live_4eC39HqLyjWDarjtT1zdp7dd sk_test_4eC39HqLyjWDarjtT1zdp7de",
        ("4eC39HqLyjWDarjtT1zdp7d",),
        (),
    ),
    (
        "openai and anthropic",
        "sk-abcdefghijklmnopqrstuvwxyz0123 sk-proj-abcdefghijklmnopqrst0123 sk-ant-api03-abcdefghijklmnopqrstuv",
        ("abcdefghijklmnopqrst",),
        (),
    ),
    ("google api key", "key=AIzaSyA1234567890abcdefghijklmnopqrstuv", ("AIzaSyA1234567890",), ()),
    ("pem private key", f"loaded {PEM} from disk", ("MIIEowIBAAKCAQEAx7", "Z2V0IG91dCBvZiBoZXJl"), ("from disk",)),
    (
        "pem cut short",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
        ("b3BlbnNzaC1rZXktdjEAAAAA",),
        (),
    ),
    (
        "query string",
        "GET https://api.example.com/cb?access_token=qs-21&state=kept-22&password=qs-23",
        ("qs-21", "qs-23"),
        ("state=kept-22",),
    ),
    ("key=value prose", "login with password=hunter2 for ada-kept", ("hunter2",), ("ada-kept",)),
    ("key: value prose", "api_key: abc123, token: tk-24; secret=sc-25", ("abc123", "tk-24", "sc-25"), ()),
    ("key is value prose", "the password is swordfish, the user is kept-26", ("swordfish",), ("kept-26",)),
    ("quoted value with spaces", "password = 'correct horse battery'", ("correct", "battery"), ()),
    ("words that are not values", "password is required; token is expired", (), ("required", "expired")),
    ("counters in prose", "max_tokens=1024 tokens_used: 77", (), ("1024", "77")),
    ("json in a string", '{"password": "js-27", "user": "kept-28"}', ("js-27",), ("kept-28",)),
    ("json nested in a string", '{"outer": {"secrets": ["js-29"]}, "n": 1}', ("js-29",), ("outer",)),
    ("json inside prose", 'body {"credentials": {"user": "u", "pw": "js-30"}} sent', ("js-30",), ("sent",)),
    ("python repr", "{'password': 'repr-31', 'user': 'kept-32'}", ("repr-31",), ("kept-32",)),
    ("cookie header", "Cookie: sid=ck-33; theme=ck-34", ("ck-33", "ck-34"), ("Cookie",)),
    ("bearer", "Authorization: Bearer abcDEF123456._~+/=", ("abcDEF123456",), ()),
    ("jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", ("eyJzdWIiOiIxIn0",), ()),
    ("email and phone", "mail ada@example.com or call +1 (555) 123-4567", ("ada@", "123-4567"), ("mail",)),
    ("dates and addresses stay", "released 2025-11-25 on 192.168.1.10", (), ("2025-11-25", "192.168.1.10")),
    # --- containers and objects
    ("dataclass", Account("kept-35", "dc-36", inner={"tokens": ["dc-37"]}), ("dc-36", "dc-37"), ("kept-35",)),
    ("dataclasses in a list", [Account("kept-38", "dc-39")], ("dc-39",), ("kept-38",)),
    ("pydantic model", Config(name="kept-40", api_key="pm-41"), ("pm-41",), ("kept-40",)),
    ("msgspec struct", Record(name="kept-42", refresh_token="ms-43"), ("ms-43",), ("kept-42",)),
    ("named tuple", Pair("kept-44", "nt-45"), ("nt-45",), ("kept-44",)),
    ("set", {GHP, "kept-46"}, (GHP[4:],), ("kept-46",)),
    ("frozenset", frozenset({"password=fs-47", "kept-48"}), ("fs-47",), ("kept-48",)),
    ("tuple", ("Bearer tupletoken49", "kept-50"), ("tupletoken49",), ("kept-50",)),
    ("deque", collections.deque(["secret: dq-51"]), ("dq-51",), ()),
    ("mapping proxy", types.MappingProxyType({"secret": "mp-52", "name": "kept-53"}), ("mp-52",), ("kept-53",)),
    ("ordered dict", collections.OrderedDict(password="od-54"), ("od-54",), ()),
    ("custom mapping", Headers(Authorization="Bearer cm55token", Accept="kept-56"), ("cm55token",), ("kept-56",)),
    ("mapping views", {"a": "password=mv-57"}.values(), ("mv-57",), ()),
    ("bytes", b"password=by-58 and kept-59", ("by-58",), ("kept-59",)),
    ("bytearray", bytearray(b"api_key: ba-60"), ("ba-60",), ("api_key",)),  # text, not base64
    ("invalid utf-8", b"\xff\xfetoken=iv-61", ("iv-61",), ("token=",)),
    ("enum", Stored.KEY, (GHP[4:],), ()),
    ("exception", ValueError("refused password=ex-62"), ("ex-62",), ("ValueError",)),
    ("object with __str__", Shown(), ("shown-key-2",), ("kept-user",)),
    ("object with default repr", Opaque(), ("opaque-attr-1",), ("Opaque object",)),
    ("object whose str fails", Broken(), ("broken-secret-3",), ("Broken",)),
    ("non-string keys", {1: "one", None: "none", 2.5: "x", ("t", GHP): "tuple key"}, (GHP[4:],), ("one", "tuple key")),
    ("secret in a key", {"ada@example.com": 1, f"user {GHP}": 2}, ("ada@", GHP[4:]), ()),
    ("cycle in a dict", _cyclic_dict(), ("cycle-pass-4",), ("kept-cycle", "[REDACTED:cycle]")),
    ("cycle in a list", _cyclic_list(), ("loop-token-5",), ("kept-loop", "[REDACTED:cycle]")),
    ("too deep", _deep(100), ("deep-pass-6", "deep-bottom"), ("too deep",)),
    ("deep but within bounds", _deep(20), ("deep-pass-6",), ("deep-bottom",)),
    (
        "scalars that JSON has no word for",
        {
            "when": datetime.datetime(2025, 11, 25, 10, 30),
            "id": uuid.UUID(int=7),
            "price": decimal.Decimal("9.50"),
            "big": 1 << 80,
            "path": Path("/srv/app"),
        },
        (),
        ("2025-11-25T10:30:00", "00000000-0000-0000-0000-000000000007", "9.50", str(1 << 80), "/srv/app"),
    ),
    ("a generator is not consumed", (x for x in ["gen-63"]), ("gen-63",), ("generator",)),
]


@pytest.mark.parametrize(("data", "hidden", "shown"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_redaction_table_lg09_lg15_lg16(data: Any, hidden: tuple[str, ...], shown: tuple[str, ...]) -> None:
    """LG-09, LG-15, LG-16: each case, encoded as it would leave: none of ``hidden``, all of ``shown``."""
    encoded = msgspec.json.encode(Redactor().redact(data)).decode()
    assert [s for s in hidden if s in encoded] == [], encoded
    assert [s for s in shown if s not in encoded] == [], encoded


SENSITIVE = [
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "secrets",
    "token",
    "tokens",
    "credential",
    "credentials",
    "creds",
    "cookie",
    "cookies",
    "Authorization",
    "Proxy-Authorization",
    "auth",
    "api_key",
    "apiKey",
    "APIKey",
    "X-Api-Key",
    "x_api_key",
    "access_key",
    "secret_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "AccountKey",
    "Ocp-Apim-Subscription-Key",
    "private_key",
    "privateKey",
    "ssh_key",
    "signing_key",
    "encryption_key",
    "client_secret",
    "refresh_token",
    "access_token",
    "id_token",
    "csrf_token",
    "session_id",
    "sessionId",
    "card_number",
    "cardNumber",
    "credit_card",
    "cvv",
    "cvc",
    "otp",
    "totp",
    "pin",
    "pin_code",
    "ssn",
    "iban",
    "account_number",
    "mfa_code",
    "verification_code",
    "seed_phrase",
    "mnemonic",
    "set-cookie",
    "dbpassword",
    "DB_PASSWORD",
    "authtoken",
    "password_hash",
    "api_key_id",
    "github_token",
    "bearer",
    "jwt",
    "key",  # issue #26, item 13: bare key, salt and signature
    "Key",
    "_key",
    "salt",
    "password_salt",
    "signature",
    "request_signature",
    "X-Hub-Signature-256",
    "webhookSignature",
]
NOT_SENSITIVE = [
    "tokens_used",
    "token_count",
    "max_tokens",
    "maxTokens",
    "input_tokens",
    "output_tokens",
    "completion_tokens",
    "total_tokens",
    "cache_read_input_tokens",
    "num_tokens",
    "token_type",
    "progressToken",
    "next_page_token",
    "passwordless_enabled",
    "pinned",
    "spinner",
    "options",
    "shipping",
    "primary_key",
    "sort_key",
    "cache_key",
    "keys",
    "key_count",
    "key_id",
    "keyboard",
    "basalt",
    "salt_rounds",
    "saltRounds",
    "function_signature",
    "typeSignature",
    "signature_algorithm",
    "signature_version",
    "oauth",
    "tokenizer",
    "secretary",
    "bypass",
    "compass",
    "monkey",
    "password_min_length",
    "client_secret_expires_at",
    "authorization_endpoint",
    "token_endpoint",
    "token_endpoint_auth_methods_supported",
    "cookie_name",
    "user",
    "name",
    "id",
    "status",
]


@pytest.mark.parametrize("key", SENSITIVE)
def test_sensitive_key_names_lg09(key: str) -> None:
    """LG-09: plural, compound, camelCase, header-style and run-together names of secrets."""
    assert Redactor().sensitive_key(key)
    assert Redactor().redact({key: "v-1"}) == {key: "[REDACTED]"}


@pytest.mark.parametrize("key", NOT_SENSITIVE)
def test_keys_that_are_not_secrets_stay_readable_lg09(key: str) -> None:
    """LG-09: counters (``max_tokens`` is in every sampling request), look-alike words, and facts
    about a secret (its length, expiry, endpoint) are not secrets."""
    assert not Redactor().sensitive_key(key)
    assert Redactor().redact({key: "v-1"}) == {key: "v-1"}


def test_custom_keys_follow_the_same_word_rule_lg10() -> None:
    """LG-10: a key phrase of one's own is matched the same way (plural, any separator, camelCase)."""
    redactor = Redactor(keys=(*DEFAULT_KEYS, "badge_number"))
    assert redactor.redact({"badgeNumbers": [1], "badge-number": 2, "badge_number_count": 3}) == {
        "badgeNumbers": "[REDACTED]",
        "badge-number": "[REDACTED]",
        "badge_number_count": 3,
    }
    assert redactor.text("badge_number=77 seen") == "badge_number=[REDACTED] seen"


def test_patterns_with_groups_or_flags_still_apply_lg10() -> None:
    """LG-10: a custom pattern with its own groups or a leading inline flag is still applied."""
    redactor = Redactor(keys=(), patterns=(("ticket", r"(?i)tkt-\d+"), ("order", r"(ord)-(\d+)")))
    assert redactor.text("TKT-12 and ord-34") == "[REDACTED:ticket] and [REDACTED:order]"


class Weird:
    __slots__ = ()

    def __str__(self) -> str:
        return "weird"


def test_output_is_always_encodable_and_keeps_the_input_intact() -> None:
    """Whatever a handler logs, the result is plain JSON data (issue #12 item 3 relies on it),
    and the logged object itself is not changed."""
    original = {"password": "p-1", "list": [Account("a", "b")], "set": {1, "x"}}
    values: list[Any] = [
        Weird(),
        object(),
        type,
        print,
        lambda: None,
        range(3),
        float("nan"),
        1 << 100,
        Stored.KEY,
        {frozenset({1}): {b"k": bytearray(b"v")}},
        [[[[{"a": (1, {2, 3})}]]]],
        original,
    ]
    for value in values:
        msgspec.json.encode(Redactor().redact(value))
    assert original == {"password": "p-1", "list": [Account("a", "b")], "set": {1, "x"}}


# --------------------------------------------------------------------------- on the wire


class Logs:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, params: dict[str, Any]) -> None:
        self.messages.append(params)


@pytest.mark.parametrize("era", ERAS)
def test_no_secret_reaches_the_wire_from_ctx_log_or_client_log_handler_lg09_lg15(era: str) -> None:
    """LG-09, LG-15: a tool logs ``payload()`` (a secret in each container: dataclass, pydantic
    model, named tuple, set, frozenset, tuple, mapping proxy, bytes, JSON in a string, an object,
    a tuple key, a cycle) under a logger named with an e-mail address, and then ``password=``,
    ``api_key:``, a named ``%(password)s`` argument and a traceback through ``ClientLogHandler``.
    What the server writes (encoded as it leaves) carries none of the secrets, and the counters
    and ordinary values are still there."""

    async def main() -> None:
        logs = Logs()
        async with serving(fixture_server, era, on_log=logs) as (client, _, wire):
            await client.set_logging_level("debug")
            await client.call_tool("leak")
            sent = wire.notifications_written("notifications/message")
            assert len(sent) == 5
            on_the_wire = msgspec.json.encode(sent).decode()
            assert [s for s in SECRETS if s in on_the_wire] == []
            assert [s for s in KEPT if s not in on_the_wire] == []
            received = json.dumps(logs.messages)
            assert [s for s in SECRETS if s in received] == []
            first, *handled = logs.messages
            assert first["logger"] == "[REDACTED:email]"  # "billing.ada@..." is one address
            assert first["data"]["usage"] == {"max_tokens": 4096, "tokens_used": 12}
            hidden = {"key", "salt", "signature"}  # bare; the look-alikes arrive as they were
            assert first["data"]["signed"] == {k: "[REDACTED]" if k in hidden else v for k, v in SIGNED.items()}
            assert first["data"]["dataclass"] == [{"user": "ada-the-user", "password": "[REDACTED]"}]
            assert [m["logger"] for m in handled] == ["redaction.app"] * 4
            assert [m["data"]["message"].splitlines()[0] for m in handled] == [
                "login with password=[REDACTED]",
                "api_key: [REDACTED]",
                "ada-the-user signed in with [REDACTED]",
                "call failed",
            ]
            assert "RuntimeError: refused token=[REDACTED]" in handled[3]["data"]["message"]

    run(main)


def test_no_secret_reaches_stdout_over_stdio_lg09_lg15() -> None:
    """LG-09, LG-15: the same tool in a real stdio server process; the bytes on its stdout carry
    none of the secrets, and the tool's answer arrives (the log lines were encodable)."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "debug"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "leak", "arguments": {}}},
    ]
    done = subprocess.run(
        [sys.executable, str(FIXTURE)],
        input=b"".join(json.dumps(line).encode() + b"\n" for line in lines),
        capture_output=True,
        timeout=30,
        check=False,
    )
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    answer = [m for m in messages if m.get("id") == 3]
    assert answer and answer[0]["result"]["content"] == [{"type": "text", "text": "ok"}], done.stderr.decode()
    assert len([m for m in messages if m.get("method") == "notifications/message"]) == 5
    stdout = done.stdout.decode()
    assert [s for s in SECRETS if s in stdout] == []
    assert [s for s in KEPT if s not in stdout] == []


def test_client_log_handler_keeps_the_record_for_other_handlers() -> None:
    """Redacting named arguments for the client does not change what other handlers of the same
    record (the server's own log file, say) receive."""
    server = Server("redaction", log_level="debug")
    log = logging.getLogger("lifecycle.redaction.shared")
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    @server.tool()
    async def work(ctx: Context) -> str:
        log.info("pin %(pin)s for %(user)s", {"pin": "4321", "user": "kept-ada"})
        log.info("code %(pin)d", {"pin": 4321})  # the placeholder is no number: the template is sent
        return "ok"

    async def main() -> list[dict[str, Any]]:
        logs = Logs()
        async with serving(server, on_log=logs) as (client, _, _wire):
            await client.call_tool("work")
        return logs.messages

    handlers = [ClientLogHandler(), Keep()]
    for handler in handlers:
        log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        messages = run(main)
    finally:
        for handler in handlers:
            log.removeHandler(handler)
        log.propagate = True
        log.setLevel(logging.NOTSET)
    assert [m["data"]["message"] for m in messages] == [
        "pin [REDACTED] for kept-ada",
        "code %(pin)d [arguments redacted]",
    ]
    assert seen == ["pin 4321 for kept-ada", "code 4321"]
